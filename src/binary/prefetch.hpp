#pragma once
// Reading a library's fatbin headers from a cold disk, many at a time.
//
// The container walk (binary/fatbin) is a chain: each header's sizes say where the next
// header is, so from a cold page cache every header is one read, waited for before the
// next is asked (13,000 containers over 5.5 GB on the H200 machine: most of a cold
// `check`). A linked library also lists every container it registers with the CUDA
// runtime: one __fatBinC_Wrapper_t per container in .nvFatBinSegment, whose data pointer
// is the container's virtual address. From those addresses the containers' header chains
// are read by many threads at once, so the disk has a deep queue instead of one read in
// flight; the sequential walk that follows then finds its pages in memory and gives the
// same answer as ever (this only changes when pages arrive, never what is read).
// The scanner maps files MADV_RANDOM (binary/file_scan): each header costs its own page,
// not the device's whole read-around window (8 MiB per fault on a virtio disk, measured).
#include <cstdint>
#include <vector>

#include "binary/bytes.hpp"
#include "binary/fatbin.hpp"

namespace cd::bin {

// The containers .nvFatBinSegment registers that lie in the fatbin section mapped at
// virtual address `fatbin_addr`: their offsets within that section, sorted, distinct.
// Wrappers with another magic or pointing elsewhere are ignored.
//
// GNU ld writes each wrapper's data pointer into the section; LLVM's lld (JAX's and XLA's
// plugins) leaves it 0 and puts the address only in the dynamic relocation that the loader
// applies there (a RELATIVE one, symbol 0, the address as its addend). `relas` are the
// library's SHT_RELA sections the loader applies (Elf64_Rela), `segment_addr` the wrapper
// table's virtual address: read only when some wrapper's pointer is 0.
std::vector<uint64_t> registered_containers(Bytes segment, uint64_t fatbin_addr, uint64_t fatbin_size,
                                            uint64_t segment_addr = 0, const std::vector<Bytes>& relas = {});

// madvise over the pages that hold `range` of a file mapping (MADV_RANDOM, MADV_NORMAL,
// MADV_WILLNEED): how the kernel reads the pages a parser is about to touch. MADV_WILLNEED
// reads all of the range (in steps: one call reads at most the device's read-ahead window).
void advise(Bytes range, int advice);

struct Prefetch {
  bool resident = false;  // every container's first page was in memory already: nothing done
  uint64_t headers = 0;   // container and entry headers read ahead
};

// Reads ahead the header chain of each container at `offsets` in `section` (a part of a
// read-only file mapping) on `threads` threads. Bounded by the headers the walk itself
// would read: at most 4096 entries per container. `when_cold`: do nothing when the first
// page of every container is in memory already (mincore), as on a warm second run.
// `enough`: each chain stops where the walk will (parse_fatbin with the same predicate).
Prefetch prefetch_containers(Bytes section, const std::vector<uint64_t>& offsets, size_t threads, bool when_cold = true,
                             const Enough* enough = nullptr);

struct ArchivePrefetch {
  bool resident = false;  // every listed member's header page was in memory already: nothing done
  uint64_t members = 0;   // members whose headers were read ahead
  uint64_t headers = 0;   // container and entry headers read ahead
};

// A static archive is members one after another, each a relocatable object whose fatbins
// sit in its own sections: a walk member by member is a chain of small reads the length of
// the archive (libcublasLt_static.a: 1,332 members, 917 MiB). The archive's symbol table
// (armap) names the offset of every member that defines a symbol, so those members' ELF and
// section headers and their fatbin header chains are read on `threads` threads at once
// through libelf on `fd` and the read-only mapping `file` of the same file; the member walk
// that follows finds its pages in memory. Members the armap does not list are left to it.
// `when_cold`: do nothing when every listed member's header page is in memory (mincore).
ArchivePrefetch prefetch_archive(Bytes file, int fd, size_t threads, bool when_cold = true);

// The member offsets a System V / GNU archive's symbol table lists, in its order (a member
// once per symbol it defines): the first member, named "/" (32-bit offsets) or "/SYM64/"
// (64-bit), holds a big-endian count, that many offsets of member headers, then the names.
// Only the offsets are read — libelf's elf_getarsym reads the names too (58 MB of
// libcublasLt_static.a's 917 MiB). Offsets past the end of `file` are dropped; empty when
// the archive has no such table or its count does not fit.
std::vector<uint64_t> armap_members(Bytes file);

}  // namespace cd::bin
