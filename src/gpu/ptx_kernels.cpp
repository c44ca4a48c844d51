#include "gpu/ptx_kernels.hpp"

namespace cd::gpu {

// Hand-written PTX, JIT-compiled by the driver for whatever GPU runs it (ISA 7.0 /
// sm_70 loads on Volta and newer: the PTX ISA reference, "PTX ISA Version" and ".target",
// docs.nvidia.com/cuda/parallel-thread-execution/). Every kernel uses a grid-stride loop,
// so any grid size covers any n.
//
// cd_copy_v4(dst, src, n16): copies n16 16-byte vectors. Four independent loads are
//   in flight per thread before the stores (memory-level parallelism on HBM).
// cd_fill(dst, n, seed, and_mask, or_mask): dst[i] = (fmix32(i * 0x9E3779B1 + seed)
//   & and_mask) | or_mask, the murmur3 finaliser; host_fill_value() is the same.
// cd_axpy(out, x, y, n, a): out[i] = a * x[i] + y[i] on u32 (wrapping: exact).
const char* verify_ptx() {
  return R"PTX(
.version 7.0
.target sm_70
.address_size 64

.visible .entry cd_copy_v4(.param .u64 p_dst, .param .u64 p_src, .param .u64 p_n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<24>;
  ld.param.u64 %rd1, [p_dst];
  ld.param.u64 %rd2, [p_src];
  ld.param.u64 %rd3, [p_n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd4, %r1, %r2;
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd4, %rd4, %rd5;          // i
  mul.wide.u32 %rd6, %r4, %r2;       // stride (vectors)
  shl.b64 %rd7, %rd6, 4;             // stride (bytes)
  mul.lo.u64 %rd8, %rd6, 3;          // 3 * stride
  shl.b64 %rd9, %rd6, 2;             // 4 * stride
MAIN:
  add.u64 %rd10, %rd4, %rd8;
  setp.ge.u64 %p1, %rd10, %rd3;
  @%p1 bra TAIL;
  shl.b64 %rd11, %rd4, 4;
  add.u64 %rd12, %rd2, %rd11;
  add.u64 %rd13, %rd1, %rd11;
  add.u64 %rd14, %rd12, %rd7;
  add.u64 %rd15, %rd14, %rd7;
  add.u64 %rd16, %rd15, %rd7;
  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd12];
  ld.global.v4.u32 {%r9, %r10, %r11, %r12}, [%rd14];
  ld.global.v4.u32 {%r13, %r14, %r15, %r16}, [%rd15];
  ld.global.v4.u32 {%r17, %r18, %r19, %r20}, [%rd16];
  add.u64 %rd17, %rd13, %rd7;
  add.u64 %rd18, %rd17, %rd7;
  add.u64 %rd19, %rd18, %rd7;
  st.global.v4.u32 [%rd13], {%r5, %r6, %r7, %r8};
  st.global.v4.u32 [%rd17], {%r9, %r10, %r11, %r12};
  st.global.v4.u32 [%rd18], {%r13, %r14, %r15, %r16};
  st.global.v4.u32 [%rd19], {%r17, %r18, %r19, %r20};
  add.u64 %rd4, %rd4, %rd9;
  bra MAIN;
TAIL:
  setp.ge.u64 %p2, %rd4, %rd3;
  @%p2 bra DONE;
  shl.b64 %rd11, %rd4, 4;
  add.u64 %rd12, %rd2, %rd11;
  add.u64 %rd13, %rd1, %rd11;
  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd12];
  st.global.v4.u32 [%rd13], {%r5, %r6, %r7, %r8};
  add.u64 %rd4, %rd4, %rd6;
  bra TAIL;
DONE:
  ret;
}

.visible .entry cd_fill(.param .u64 p_dst, .param .u64 p_n, .param .u32 p_seed,
                        .param .u32 p_and, .param .u32 p_or)
{
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [p_dst];
  ld.param.u64 %rd2, [p_n];
  ld.param.u32 %r10, [p_seed];
  ld.param.u32 %r11, [p_and];
  ld.param.u32 %r12, [p_or];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd3, %r1, %r2;
  cvt.u64.u32 %rd4, %r3;
  add.u64 %rd3, %rd3, %rd4;          // i
  mul.wide.u32 %rd5, %r4, %r2;       // stride
LOOP:
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  cvt.u32.u64 %r5, %rd3;
  mad.lo.u32 %r5, %r5, -1640531535, %r10;   // i * 0x9E3779B1 + seed
  shr.u32 %r6, %r5, 16;
  xor.b32 %r5, %r5, %r6;
  mul.lo.u32 %r5, %r5, -2048144789;         // 0x85EBCA6B
  shr.u32 %r6, %r5, 13;
  xor.b32 %r5, %r5, %r6;
  mul.lo.u32 %r5, %r5, -1028477387;         // 0xC2B2AE35
  shr.u32 %r6, %r5, 16;
  xor.b32 %r5, %r5, %r6;
  and.b32 %r5, %r5, %r11;
  or.b32 %r5, %r5, %r12;
  shl.b64 %rd6, %rd3, 2;
  add.u64 %rd7, %rd1, %rd6;
  st.global.u32 [%rd7], %r5;
  add.u64 %rd3, %rd3, %rd5;
  bra LOOP;
DONE:
  ret;
}

.visible .entry cd_axpy(.param .u64 p_out, .param .u64 p_x, .param .u64 p_y, .param .u64 p_n,
                        .param .u32 p_a)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_x];
  ld.param.u64 %rd3, [p_y];
  ld.param.u64 %rd4, [p_n];
  ld.param.u32 %r10, [p_a];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd5, %r1, %r2;
  cvt.u64.u32 %rd6, %r3;
  add.u64 %rd5, %rd5, %rd6;          // i
  mul.wide.u32 %rd7, %r4, %r2;       // stride
LOOP:
  setp.ge.u64 %p1, %rd5, %rd4;
  @%p1 bra DONE;
  shl.b64 %rd8, %rd5, 2;
  add.u64 %rd9, %rd2, %rd8;
  add.u64 %rd10, %rd3, %rd8;
  add.u64 %rd11, %rd1, %rd8;
  ld.global.u32 %r5, [%rd9];
  ld.global.u32 %r6, [%rd10];
  mad.lo.u32 %r7, %r5, %r10, %r6;
  st.global.u32 [%rd11], %r7;
  add.u64 %rd5, %rd5, %rd7;
  bra LOOP;
DONE:
  ret;
}
)PTX";
}

std::uint32_t host_fill_value(std::uint64_t i, std::uint32_t seed, std::uint32_t and_mask, std::uint32_t or_mask) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 0x9E3779B1u + seed;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return (x & and_mask) | or_mask;
}

}  // namespace cd::gpu
