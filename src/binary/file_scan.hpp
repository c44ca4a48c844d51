#pragma once
// One file -> its fatbin containers: ELF shared objects, executables and objects
// (sections .nv_fatbin / __nv_relfatbin, via libelf), static archives (each member),
// bare .cubin, .fatbin and .ptx files. Anything else is "not CUDA" at the first bytes.
// Malformed input is counted in `problems` and described in notes, within the limits of
// binary/budget.hpp: a file keeps at most ScanLimits::notes_per_file notes plus one line
// saying how many more there were, and --kernels decompression draws on a byte budget.
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "binary/budget.hpp"
#include "binary/bytes.hpp"
#include "binary/fatbin.hpp"
#include "util/root.hpp"

namespace cd::bin {

class MappedFile;

struct FoundContainer {
  uint64_t file_offset = 0;  // of the container header in the file
  // Found in a large-model data section (.ldata): a library's own kernel table that it
  // dispatches per GPU at run time (cuFFT), not a module the CUDA runtime registers.
  bool dispatch_table = false;
  std::vector<FatbinEntry> entries;
  std::vector<std::string> kernels;  // --kernels
};

// What the caller asks of each container, when it asks less than everything: check asks only
// whether the local GPUs run it. The question is set once it is known (the GPUs come from the
// driver child while the scan already runs); containers walked after that stop reading their
// entries as soon as `enough` says the answer is settled. Shared by the scan's threads.
class ReadFocus {
 public:
  struct Question {
    std::vector<int> sms;  // the GPUs asked about (90 = sm_90), for the notes and the facts
    Enough enough;
  };
  void set(Question q) { question_.store(std::make_shared<const Question>(std::move(q))); }
  // Asked at every entry a focused walk reads, on many threads: no mutex.
  std::shared_ptr<const Question> get() const { return question_.load(); }

 private:
  std::atomic<std::shared_ptr<const Question>> question_;
};

struct FileScan {
  std::string format;  // "" (not CUDA-capable), "shared library", "executable", "object", "archive", "cubin", "fatbin", "ptx"
  std::vector<FoundContainer> containers;
  std::vector<std::string> notes;  // "malformed fatbin in FILE at offset X: …" (bounded, see above)
  uint64_t problems = 0;           // malformed regions met (corrupt input), noted or not
  std::string error;               // the file could not be read (permissions, not a regular file)
  uint64_t containers_cut = 0;     // containers whose entries were read only until ReadFocus was answered
  // A library's own kernel table read only until a container answered ReadFocus, or not searched
  // for: a module had answered it already.
  bool table_cut = false;
  std::vector<int> cut_for;        // the GPUs that answer was about
};

// Scans bytes already in memory (libelf reads ELF input from a private copy). `name` is
// used in notes and to recognise .ptx files. Without a `budget` the file gets its own.
FileScan scan_bytes(Bytes bytes, std::string_view name, bool kernels, RunBudget* budget = nullptr);

// Opens `path` (regular files only, never blocking: util/regular_file), maps it
// read-only and scans it; libelf reads the same descriptor in its read-only mode.
FileScan scan_path(const std::string& path, bool kernels, RunBudget* budget = nullptr);
// The same for the in-root `path` under `root`, opened through the root's descriptor, so a
// link swapped into the path after the walk cannot lead out of the root. Notes name `shown`.
FileScan scan_path(const Root& root, std::string_view path, const std::string& shown, bool kernels,
                   RunBudget* budget = nullptr, const ReadFocus* focus = nullptr);
// The same for a file the caller has mapped already (binary/scan reads its build-id first).
FileScan scan_file(const MappedFile& file, const std::string& shown, bool kernels, RunBudget* budget = nullptr,
                   const ReadFocus* focus = nullptr);

}  // namespace cd::bin
