// libFuzzer target: any bytes as a file (ELF shared object / object / archive, cubin,
// fatbin, PTX) through the whole scan, with --kernels decompression and cubin symbol
// reading. It must never crash, hang or read out of bounds (run under ASan/UBSan), never
// write to its input (mapped read-only here, as MappedFile maps a file), and stay within
// its limits for any input: notes per file and per run, decompressed bytes per file and
// per run (binary/budget.hpp). Small limits make the fuzzer reach them quickly.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "binary/budget.hpp"
#include "binary/file_scan.hpp"
#include "binary/prefetch.hpp"
#include "binary/scan.hpp"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fatbin_fuzz: limit broken: %s\n", what);
  std::abort();
}

// The input in a read-only mapping: anything that writes through it faults.
struct ReadOnlyCopy {
  void* p = nullptr;
  size_t n = 0;
  ReadOnlyCopy(const uint8_t* data, size_t size) : n(size ? size : 1) {
    p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    std::memcpy(p, data, size);
    mprotect(p, n, PROT_READ);
  }
  ~ReadOnlyCopy() { munmap(p, n); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ReadOnlyCopy ro(data, size);
  cd::bin::Bytes bytes(static_cast<const uint8_t*>(ro.p), size);

  cd::bin::ScanLimits limits;
  limits.notes_per_file = 4;
  limits.notes_per_run = 6;
  limits.decompressed_per_file = 1 << 20;
  limits.decompressed_per_run = 1536 << 10;
  limits.decompressed_at_once = 1 << 20;
  cd::bin::RunBudget run(limits);
  size_t notes = 0;
  for (const char* name : {"input.so", "input.ptx"}) {
    uint64_t before = run.decompressed();
    cd::bin::FileScan raw = cd::bin::scan_bytes(bytes, name, true, &run);
    check(raw.notes.size() <= limits.notes_per_file + 1, "notes per file (+ the 'N more' line)");
    check(run.decompressed() - before <= limits.decompressed_per_file, "decompressed bytes per file");
    notes += raw.notes.size();
    cd::summarize(name, std::move(raw));
  }
  check(notes <= limits.notes_per_run + 2, "notes per run (+ one 'N more' line per file)");
  check(run.decompressed() <= limits.decompressed_per_run, "decompressed bytes per run");
  check(run.peak_held() <= limits.decompressed_per_file, "bytes held at once");

  // The read-ahead of registered containers: the input as both the wrapper table and the
  // section (offsets anywhere in it), with the residency shortcut off so the chains are read.
  auto offsets = cd::bin::registered_containers(bytes, 0, size);
  check(offsets.size() <= size / 24, "one registered container per wrapper at most");
  // The same with the input as the relocations too (lld's pointers): still one per wrapper.
  check(cd::bin::registered_containers(bytes, 0, size, 0, {bytes}).size() <= size / 24,
        "one registered container per wrapper at most, relocations or not");
  auto ahead = cd::bin::prefetch_containers(bytes, offsets, 2, false);
  check(ahead.headers <= offsets.size() * 4097, "headers read ahead per container");

  // The archive read-ahead, on the input as a file (a memfd: libelf reads its descriptor),
  // with the residency shortcut off: symbol table offsets anywhere, members of any shape.
  auto members = cd::bin::armap_members(bytes);
  check(members.size() <= size / 4, "one member offset per 4 bytes of symbol table at most");
  if (int fd = memfd_create("fuzz.a", MFD_CLOEXEC); fd >= 0) {
    if (size > 0 && write(fd, data, size) == static_cast<ssize_t>(size)) {
      auto archive = cd::bin::prefetch_archive(bytes, fd, 2, false);
      check(archive.members <= members.size(), "members read ahead that the table does not list");
    }
    close(fd);
  }

  cd::bin::FatbinParse p = cd::bin::parse_fatbin(bytes, 0);
  check(p.notes.size() <= cd::bin::kMaxParseNotes, "notes per parse");
  // How far the walk has come (a table's window ahead): forward only, inside the input, and the
  // same walk as without being told.
  uint64_t last = 0;
  bool forward = true;
  cd::bin::Reached reached = [&](uint64_t at) {
    forward &= at >= last && at <= size;
    last = at;
  };
  cd::bin::FatbinParse told = cd::bin::parse_fatbin(bytes, 0, cd::bin::kMaxParseNotes, nullptr, false, &reached);
  check(forward, "the walk said it went back, or past the end");
  check(told.containers.size() == p.containers.size(), "told the way, the walk changed");
  for (const auto& c : p.containers) check(!c.entries.empty(), "a container without entries kept");

  // check's partial reads (ReadFocus): stopping at sm_90 SASS reads a prefix of what the full
  // walk reads, container by container, and the read-ahead never reads more than without it.
  cd::bin::Enough at_sm90 = [](const std::vector<cd::bin::FatbinEntry>& seen) {
    return seen.back().kind == cd::bin::EntryKind::sass && seen.back().arch == 90;
  };
  for (bool whole_table : {false, true}) {
    cd::bin::FatbinParse cut = cd::bin::parse_fatbin(bytes, 0, cd::bin::kMaxParseNotes, &at_sm90, whole_table);
    check(cut.containers.size() <= p.containers.size(), "more containers when reading less");
    for (size_t i = 0; i < cut.containers.size(); ++i) {
      const auto &a = cut.containers[i], &b = p.containers[i];
      check(a.offset == b.offset && a.entries.size() <= b.entries.size(), "a partial walk strayed");
      for (size_t k = 0; k < a.entries.size(); ++k) check(a.entries[k].offset == b.entries[k].offset, "entries differ");
    }
  }
  // check's probes of a table: whatever they find is a container whose entries answer, and the
  // walk from there starts with it; their reads stay bounded per probe.
  size_t asked = 0;
  cd::bin::Enough counted = [&](const std::vector<cd::bin::FatbinEntry>& seen) { return ++asked, at_sm90(seen); };
  auto points = cd::bin::probe_points(size, 16);
  check(points.size() <= 16, "more probe points than asked");
  if (auto hit = cd::bin::probe_fatbin(bytes, 0, points, 4096, counted)) {
    check(*hit < size, "a probe hit past the end");
    cd::bin::FatbinParse from = cd::bin::parse_fatbin(bytes.subspan(*hit), *hit, cd::bin::kMaxParseNotes, &at_sm90, true);
    check(!from.containers.empty() && from.containers[0].offset == 0 && from.containers[0].answered,
          "the walk from a probe's hit does not start with an answering container");
  }
  check(asked <= points.size() * (4096 / 8 + 1) * 256, "probes read unbounded entries");
  check(cd::bin::prefetch_containers(bytes, offsets, 2, false, &at_sm90).headers <= ahead.headers,
        "the read-ahead read more when asked less");
  return 0;
}
