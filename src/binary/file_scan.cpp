// One file -> its containers. ELF input goes through libelf (sections, archive members):
// from the file's descriptor in libelf's read mode, which reads the ELF and section
// headers with pread (a cold page cache then costs a few pages, not the read-around
// window of a mapping's fault), or from a private copy for bytes in memory, so nothing
// ever writes to the caller's mapping. Section names and fatbins are read from our own
// read-only mapping, marked MADV_RANDOM: the scan touches scattered headers, and
// binary/prefetch reads a library's registered containers ahead on many threads, and an
// archive's member headers (from its symbol table's offsets); a kernel table (.ldata), which
// is searched byte by byte, is asked for a window ahead of its walk.
// check asks less than everything (ReadFocus): once the driver child has named the GPUs, each
// container's entries are read only until SASS that runs natively on all of them is found —
// nothing after it changes check's verdict, and from a cold disk each entry header is a read.
// Problems are notes (counted, capped per file and per run: binary/budget.hpp);
// --kernels decompresses one image per container within the per-file and per-run byte
// budgets.
#include "binary/file_scan.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <chrono>

#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "binary/cubin.hpp"
#include "binary/decompress.hpp"
#include "binary/elf_handle.hpp"
#include "binary/elf_sections.hpp"
#include "binary/mapped_file.hpp"
#include "binary/prefetch.hpp"
#include "binary/ptx.hpp"
#include "util/trace.hpp"

namespace cd::bin {
namespace {

// A library with one registered container is walked as it comes (one chain either way); from
// two on, the chains are read ahead side by side (the walk of other files goes on beside them):
// the device's cold check showed libcurand's 11 containers as 47 faults one after another.
constexpr size_t kPrefetchAtLeast = 2;
// 64: on the device (virtio disk, 128 KiB read-ahead) libcublasLt's 2,782 containers
// took 1.06 s cold with 16 threads, each walking ~170 entry-header chains one read at a time.
constexpr size_t kPrefetchThreads = 64;
// An archive's members are read ahead as one chain of dependent reads per thread (member header,
// ELF and section headers, names, fatbin headers): libcublasLt_static.a's 4,013 members are the cold
// scan's last file. On the device's slower disk moments 256 threads took the scan from 3.90 to 3.49 s
// (median of 5, 2026-12-07 15:02 UTC) and from 2.73 to 2.47 s (06:35 UTC).
constexpr size_t kArchiveThreads = 256;
// How far ahead of a table's walk the disk is asked for its pages.
constexpr uint64_t kTableWindow = 32 << 20;
// check probes a table this large at kProbes points, kProbeWindow bytes each, before walking it
// (fatbin.hpp probe_fatbin): cuFFT's first sm_90 container lies 162 MiB into its table; 256
// probes of 64 KiB are 16 MiB, read all at once.
constexpr uint64_t kProbeTableAtLeast = 16 << 20;
constexpr size_t kProbes = 256;
constexpr uint64_t kProbeWindow = 64 << 10;

class Scanner {
 public:
  Scanner(std::string_view name, bool kernels, int fd, RunBudget& budget, FileScan& out, const ReadFocus* focus)
      : name_(name), kernels_(kernels), fd_(fd), budget_(budget), out_(out), focus_(focus) {
    // Asked per entry: the question may arrive while this file is read.
    if (focus)
      enough_ = [focus](const std::vector<FatbinEntry>& entries) {
        auto q = focus->get();
        return q && q->enough(entries);
      };
  }

  void any(Bytes b) {
    if (b.size() >= 4 && std::memcmp(b.data(), "\x7f" "ELF", 4) == 0) return elf_file(b);
    if (b.size() >= 8 && std::memcmp(b.data(), "!<arch>\n", 8) == 0) return elf_file(b);
    if (b.size() >= 16 && load<uint32_t>(b, 0) == kFatbinMagic) {
      if (fd_ >= 0) advise(b, MADV_NORMAL);  // a chain from the first byte: read-around helps
      out_.format = "fatbin";
      region(b, 0);
      return;
    }
    if (name_.ends_with(".ptx")) return ptx_file(b);
  }

  // The line that stands for the notes beyond the limits.
  void finish() {
    if (out_.containers_cut > 0 || out_.table_cut)
      if (auto q = focus_->get()) out_.cut_for = q->sms;
    if (dropped_ > 0)
      out_.notes.push_back(fmt::format("{} more problems in {} not shown (at most {} notes per file, {} per run)",
                                       dropped_, name_, budget_.limits().notes_per_file,
                                       budget_.limits().notes_per_run));
  }

 private:
  // A malformed region: counted always, described while the file's and the run's notes last.
  void note(uint64_t offset, std::string_view what, std::string_view kind = "fatbin") {
    ++out_.problems;
    keep(fmt::format("malformed {} in {} at offset {:#x}: {}", kind, name_, offset, what));
  }
  void keep(std::string text) {
    if (out_.notes.size() < budget_.limits().notes_per_file && budget_.take_note()) out_.notes.push_back(std::move(text));
    else ++dropped_;
  }

  // libelf reads the file's descriptor read-only, or a private copy of bytes in memory.
  void elf_file(Bytes b) {
    static const bool init = elf_version(EV_CURRENT) != EV_NONE;
    std::vector<char> copy;
    Elf* raw = nullptr;
    if (init && fd_ >= 0) {
      raw = elf_begin(fd_, ELF_C_READ, nullptr);
    } else if (init) {
      copy.assign(b.begin(), b.end());
      raw = elf_memory(copy.data(), copy.size());
    }
    ElfPtr elf(raw);
    if (!elf) return note(0, fmt::format("not a readable ELF file ({})", elf_errmsg(-1)), "ELF");
    if (elf_kind(elf.get()) == ELF_K_AR) return archive(elf.get(), b);
    one_elf(elf.get(), b, 0);
  }

  void archive(Elf* ar, Bytes file) {
    out_.format = "archive";
    // A member's command must be its parent's: elf_memory's parent is ELF_C_READ_MMAP.
    Elf_Cmd cmd = fd_ >= 0 ? ELF_C_READ : ELF_C_READ_MMAP;
    if (fd_ >= 0) {
      ArchivePrefetch ahead = prefetch_archive(file, fd_, kArchiveThreads);
      archive_read_ahead_ = ahead.resident || ahead.members > 0;
      if (trace_enabled())
        trace(fmt::format("read ahead {}: {} members, {}", name_, ahead.members,
                          ahead.resident ? "in memory already" : fmt::format("{} headers", ahead.headers)));
    }
    uint64_t next = 8;  // where the next member header should be: after "!<arch>\n", then after each member
    // libelf ends the walk quietly at a member header it cannot read: the walk must reach
    // the end of the file (an odd byte of padding aside), or the rest was lost.
    while (Elf* raw = elf_begin(-1, cmd, ar)) {
      ElfPtr member(raw);
      int64_t at = elf_getaroff(member.get());
      const Elf_Arhdr* h = elf_getarhdr(member.get());
      if (at < 0 || !h) break;
      if (!ar_member_size(file, static_cast<uint64_t>(at))) {
        next = static_cast<uint64_t>(at);  // libelf reads some garbage sizes as 0: stop here
        break;
      }
      next = static_cast<uint64_t>(at) + 60 + h->ar_size + (h->ar_size & 1);
      if (elf_kind(member.get()) == ELF_K_ELF) {
        int64_t base = elf_getbase(member.get());
        if (base >= 0 && static_cast<uint64_t>(base) <= file.size())
          one_elf(member.get(), file.subspan(static_cast<uint64_t>(base)), static_cast<uint64_t>(base));
      }
      cmd = elf_next(member.get());
    }
    if (next + 1 < file.size())
      note(next, fmt::format("bad member header; the {} bytes from here on are not read", file.size() - next), "archive");
  }

  // A host ELF (or archive member) whose bytes start at file offset `base`.
  void one_elf(Elf* elf, Bytes b, uint64_t base) {
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh)) return note(base, fmt::format("bad ELF header: {}", elf_errmsg(-1)), "ELF");
    if (eh.e_machine == kEmCuda) return cubin(b, base);
    if (out_.format.empty())
      out_.format = eh.e_type == ET_REL ? "object" : eh.e_type == ET_EXEC ? "executable" : "shared library";
    if (eh.e_shoff != 0 && !fits(b.size(), eh.e_shoff, uint64_t{eh.e_shnum} * eh.e_shentsize))
      return note(base + eh.e_shoff, fmt::format("truncated: the section headers lie past the end ({} bytes)", b.size()),
                  "ELF");
    ElfSections listed = list_sections(elf, b, eh.e_type != ET_REL);
    if (!listed.error.empty()) return note(base, listed.error, "ELF");
    // Any section cut short means the file is (noted once); a fatbin section cut short is skipped.
    if (listed.cut)
      note(base + listed.cut->sh.sh_offset, fmt::format("truncated: section {} runs past the end of the file ({} bytes)",
                                                        listed.cut->name.empty() ? "?" : listed.cut->name, b.size()),
           "ELF");
    const std::vector<ElfSection>& sections = listed.fatbin;
    const std::vector<Bytes>& relas = listed.relas;
    const ElfSection* segment = nullptr;
    for (const auto& s : sections)
      if (s.name == ".nvFatBinSegment") segment = &s;
    // The modules first, then the large-model sections a library may keep its own kernel table in
    // (cuFFT's .ldata): a table only adds "some container serves this GPU" to the verdict, so once a
    // module serves every local GPU natively check need not search those sections (cuBLASLt's hold
    // 106 MiB and no container).
    bool served = false;
    for (bool tables : {false, true})
      for (const auto& [sh, sname] : sections) {
        if (!fatbin_section(sname) || table_section(sname) != tables) continue;
        // A linked binary keeps its -rdc inputs in __nv_relfatbin, but the runtime loads the
        // device-linked image in .nv_fatbin (cuobjdump lists only that one too).
        if (eh.e_type != ET_REL && sname == "__nv_relfatbin") continue;
        if (tables && served) {
          out_.table_cut = true;
          continue;
        }
        Bytes section = b.subspan(sh.sh_offset, sh.sh_size);
        if (segment && sname == ".nv_fatbin" && eh.e_type != ET_REL) read_ahead(section, sh, segment->sh, b, relas);
        // An unregistered walk: the chain alone, read-around helps — except in an archive whose
        // members' chains were read ahead (prefetch_archive): there it would read the images too —
        // and in a table, read a window ahead of its walk instead (region).
        else if (fd_ >= 0 && !archive_read_ahead_ && !tables) advise(section, MADV_NORMAL);
        served |= region(section, base + sh.sh_offset, sh.sh_offset, tables) && !tables;
      }
  }

  // The registered containers of a mapped library, read ahead on many threads (binary/prefetch).
  void read_ahead(Bytes section, const GElf_Shdr& sh, const GElf_Shdr& segment, Bytes b, const std::vector<Bytes>& relas) {
    if (fd_ < 0) return;
    std::vector<uint64_t> offsets = registered_containers(b.subspan(segment.sh_offset, segment.sh_size), sh.sh_addr,
                                                          sh.sh_size, segment.sh_addr, relas);
    if (offsets.size() < kPrefetchAtLeast) return;
    Prefetch p = prefetch_containers(section, offsets, kPrefetchThreads, true, enough());
    if (trace_enabled())
      trace(fmt::format("read ahead {}: {} registered containers, {}", name_, offsets.size(),
                        p.resident ? "in memory already" : fmt::format("{} headers", p.headers)));
  }

  // A table is searched from its start up to the container that answers (to its end for scan), every
  // byte: the disk is asked for it a window ahead of the walk (MADV_WILLNEED, whole MiBs), so its pages
  // come as a queue of large reads, never much more than the walk will reach.
  static Reached window_ahead(Bytes table) {
    return [table, asked = uint64_t{0}](uint64_t at) mutable {
      constexpr uint64_t kMiB = 1 << 20;
      uint64_t until = std::min<uint64_t>(table.size(), (at + kTableWindow + kMiB - 1) / kMiB * kMiB);
      if (until < asked + kMiB && until < table.size()) return;
      if (until <= asked) return;
      advise(table.subspan(asked, until - asked), MADV_WILLNEED);
      asked = until;
    };
  }

  // Containers in `b`, which starts at file offset `base` and at `align_base` within its ELF image.
  // Returns whether one of them answered ReadFocus.
  bool region(Bytes b, uint64_t base, uint64_t align_base = 0, bool dispatch_table = false) {
    size_t room = budget_.limits().notes_per_file - std::min(out_.notes.size(), budget_.limits().notes_per_file);
    // A kernel table the library dispatches itself serves a GPU through any one container (judge_binary):
    // the first that serves every GPU ends its walk, and a probe may find one far from the start.
    uint64_t from = dispatch_table ? probe(b, align_base) : 0;
    out_.table_cut |= from > 0;
    b = b.subspan(from);
    base += from;
    Reached ahead = window_ahead(b);
    FatbinParse parse = parse_fatbin(b, align_base + from, room, enough(), dispatch_table,
                                     dispatch_table && fd_ >= 0 ? &ahead : nullptr);
    out_.table_cut |= parse.stopped;
    for (const auto& n : parse.notes) note(base + n.offset, n.message);
    out_.problems += parse.notes_dropped;
    dropped_ += parse.notes_dropped;
    bool answered = false;
    for (auto& c : parse.containers) {
      out_.containers_cut += c.cut;
      answered |= c.answered;
      FoundContainer fc{base + c.offset, dispatch_table, std::move(c.entries), {}};
      if (kernels_) fc.kernels = kernel_names(b, fc, base);
      out_.containers.push_back(std::move(fc));
    }
    return answered;
  }

  // Where check starts the walk of a large table: at a container a probe found to serve the GPUs
  // (its windows asked of the disk together, then read), else at its start. scan reads every one.
  uint64_t probe(Bytes table, uint64_t align_base) {
    if (!enough_ || table.size() < kProbeTableAtLeast || !focus_->get()) return 0;
    std::vector<uint64_t> points = probe_points(table.size(), kProbes);
    if (fd_ >= 0)
      for (uint64_t p : points) advise(table.subspan(p, std::min(kProbeWindow, table.size() - p)), MADV_WILLNEED);
    std::optional<uint64_t> hit = probe_fatbin(table, align_base, points, kProbeWindow, enough_);
    if (trace_enabled())
      trace(fmt::format("probed a kernel table of {}: {} points, {}", name_, points.size(),
                        hit ? fmt::format("a container at +{:#x} answers", *hit) : std::string("none answers")));
    return hit.value_or(0);
  }

  // Kernels of a container, read from one image (all images of a container come
  // from the same translation unit): the first SASS, else the first PTX.
  std::vector<std::string> kernel_names(Bytes b, const FoundContainer& c, uint64_t base) {
    for (EntryKind want : {EntryKind::sass, EntryKind::ptx})
      for (const auto& e : c.entries) {
        if (e.kind != want) continue;
        std::string error;
        auto size = decompressed_size(b, e, error);
        if (!size) {
          note(base + e.offset, fmt::format("{} image: {}", entry_arch_name(e), error));
          continue;
        }
        if (!afford(*size)) return {};
        Held held{budget_, *size};
        if (fd_ >= 0 && fits(b.size(), e.payload_offset(), e.data_size()))
          advise(b.subspan(e.payload_offset(), e.data_size()), MADV_WILLNEED);  // read whole
        auto payload = entry_payload(b, e, error);
        if (!payload) {
          note(base + e.offset, fmt::format("{} image: {}", entry_arch_name(e), error));
          continue;
        }
        if (want == EntryKind::ptx) {
          std::string_view text(reinterpret_cast<const char*>(payload->bytes.data()), payload->bytes.size());
          return parse_ptx(text, true).entries;
        }
        CubinDetails d;
        if (read_cubin_details(payload->bytes, d, error)) return d.kernels;
        note(base + e.offset, fmt::format("{} image: {}", entry_arch_name(e), error));
      }
    return {};
  }

  // Bytes decompressed and not yet released to the run's budget.
  struct Held {
    RunBudget& budget;
    uint64_t n;
    ~Held() {
      if (n) budget.release(n);
    }
  };

  // Takes `n` decompressed bytes from the file's and the run's budgets (0 is free); once
  // either is spent the remaining kernels are not named, said once.
  bool afford(uint64_t n) {
    if (n == 0) return true;
    if (spent_) return false;
    const ScanLimits& l = budget_.limits();
    if (decompressed_ + n <= l.decompressed_per_file && budget_.acquire(n)) {
      decompressed_ += n;
      return true;
    }
    spent_ = true;
    bool file = decompressed_ + n > l.decompressed_per_file;
    keep(fmt::format("{}: kernels not named beyond {} MiB decompressed per {} (--kernels)", name_,
                     (file ? l.decompressed_per_file : l.decompressed_per_run) >> 20, file ? "file" : "run"));
    return false;
  }

  // A bare cubin: one container holding one SASS image.
  void cubin(Bytes b, uint64_t base) {
    CubinHeader h;
    if (fd_ >= 0) advise(b, MADV_WILLNEED);  // its sections and symbols are read too
    if (!read_cubin_header(b, h)) return note(base, "truncated cubin header", "cubin");
    if (out_.format.empty()) out_.format = "cubin";
    FatbinEntry e;
    e.kind = EntryKind::sass;
    e.raw_kind = 2;
    e.arch = h.sm;
    e.major = 1;
    e.minor = h.abi_version;
    e.payload_size = b.size();
    CubinDetails d;
    std::string error;
    if (read_cubin_details(b, d, error) && d.arch_specific) e.suffix = 'a';
    FoundContainer fc{base, false, {e}, {}};
    if (kernels_) fc.kernels = std::move(d.kernels);
    out_.containers.push_back(std::move(fc));
  }

  void ptx_file(Bytes b) {
    if (fd_ >= 0) advise(b, MADV_WILLNEED);  // read whole
    std::string_view text(reinterpret_cast<const char*>(b.data()), b.size());
    PtxInfo info = parse_ptx(text, kernels_);
    if (!info.ok()) return note(0, info.problem.empty() ? "no .version/.target" : info.problem, "PTX");
    out_.format = "ptx";
    FatbinEntry e;
    e.kind = EntryKind::ptx;
    e.raw_kind = 1;
    e.arch = info.arch;
    e.suffix = info.suffix;
    e.major = info.major;
    e.minor = info.minor;
    e.payload_size = b.size();
    out_.containers.push_back({0, false, {e}, std::move(info.entries)});
  }

  const Enough* enough() const { return enough_ ? &enough_ : nullptr; }

  std::string_view name_;
  bool kernels_;
  int fd_;  // -1: bytes in memory
  RunBudget& budget_;
  FileScan& out_;
  uint64_t dropped_ = 0;       // notes not kept
  uint64_t decompressed_ = 0;  // bytes taken from the file's budget
  bool spent_ = false;         // a decompression budget ran out
  bool archive_read_ahead_ = false;  // this archive's members were read ahead
  const ReadFocus* focus_;     // null: every entry is read
  Enough enough_;              // asks focus_ at each entry
};

FileScan scan(Bytes bytes, std::string_view name, bool kernels, int fd, RunBudget* budget,
              const ReadFocus* focus = nullptr) {
  RunBudget own;
  FileScan out;
  Scanner scanner(name, kernels, fd, budget ? *budget : own, out, focus);
  scanner.any(bytes);
  scanner.finish();
  return out;
}

}  // namespace

FileScan scan_bytes(Bytes bytes, std::string_view name, bool kernels, RunBudget* budget) {
  return scan(bytes, name, kernels, -1, budget);
}

FileScan scan_file(const MappedFile& file, const std::string& shown, bool kernels, RunBudget* budget,
                   const ReadFocus* focus) {
  if (!file.ok()) {
    FileScan out;
    out.error = fmt::format("{}: {}", shown, file.error());
    return out;
  }
  // Headers are scattered: each fault reads its page, not the device's read-around window,
  // and each pread (libelf's headers) what it asks for, not a window the kernel guesses.
  advise(file.bytes(), MADV_RANDOM);
  posix_fadvise(file.fd(), 0, 0, POSIX_FADV_RANDOM);
  if (!trace_enabled()) return scan(file.bytes(), shown, kernels, file.fd(), budget, focus);
  // CUDA_DOCTOR_TRACE: what this file cost this thread (the read-ahead threads' reads are theirs).
  rusage before{}, after{};
  getrusage(RUSAGE_THREAD, &before);
  auto t0 = std::chrono::steady_clock::now();
  FileScan out = scan(file.bytes(), shown, kernels, file.fd(), budget, focus);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  getrusage(RUSAGE_THREAD, &after);
  trace(fmt::format("scan file {:.1f} ms, read {} KiB, {} major faults, {} containers ({} cut), {} MiB: {}", ms,
                    (after.ru_inblock - before.ru_inblock) / 2, after.ru_majflt - before.ru_majflt,
                    out.containers.size(), out.containers_cut, file.bytes().size() >> 20, shown));
  return out;
}

FileScan scan_path(const std::string& path, bool kernels, RunBudget* budget) {
  MappedFile file(path);
  return scan_file(file, path, kernels, budget);
}

FileScan scan_path(const Root& root, std::string_view path, const std::string& shown, bool kernels,
                   RunBudget* budget, const ReadFocus* focus) {
  MappedFile file(root, path);
  return scan_file(file, shown, kernels, budget, focus);
}

}  // namespace cd::bin
