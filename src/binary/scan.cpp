#include "binary/scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "binary/build_id.hpp"
#include "util/regular_file.hpp"
#include "util/strings.hpp"
#include "util/thread_pool.hpp"
#include "util/trace.hpp"
#include "util/walk.hpp"

namespace cd {
namespace {

using ImageKey = std::tuple<std::string, int, std::string, int, int, std::string>;

ImageKey key_of(const bin::FatbinEntry& e) {
  bool ptx = e.kind == bin::EntryKind::ptx;
  return {bin::kind_name(e.kind), e.arch, e.suffix ? std::string(1, e.suffix) : "", ptx ? e.major : 0,
          ptx ? e.minor : 0, bin::compression_name(e.compression)};
}

}  // namespace

BinaryScan summarize(const std::string& path, bin::FileScan raw) {
  BinaryScan out;
  out.path = path;
  out.package = package_of(path);
  out.format = raw.format;
  out.error = std::move(raw.error);
  out.notes = std::move(raw.notes);
  out.problems = static_cast<int>(std::min<uint64_t>(raw.problems, INT32_MAX));
  out.containers_cut = static_cast<int>(std::min<uint64_t>(raw.containers_cut, INT32_MAX));
  out.dispatch_cut = raw.table_cut;
  out.cut_for = std::move(raw.cut_for);
  std::map<ImageKey, int> image_index, dispatch_index;
  std::map<std::vector<int>, int> group_index;
  for (auto& c : raw.containers) {
    if (c.dispatch_table) {
      ++out.dispatch_containers;
      for (const auto& e : c.entries) {
        auto [it, fresh] = dispatch_index.emplace(key_of(e), static_cast<int>(out.dispatch_images.size()));
        if (fresh) {
          const auto& [kind, arch, suffix, major, minor, compression] = it->first;
          out.dispatch_images.push_back(KernelImage{kind, arch, suffix, major, minor, compression, 0, 0, 0});
        }
        ++out.dispatch_images[it->second].count;
      }
      continue;
    }
    ++out.containers;
    std::vector<int> members;
    for (const auto& e : c.entries) {
      auto [it, fresh] = image_index.emplace(key_of(e), static_cast<int>(out.images.size()));
      if (fresh) {
        const auto& [kind, arch, suffix, major, minor, compression] = it->first;
        out.images.push_back(KernelImage{kind, arch, suffix, major, minor, compression, 0, 0, 0});
      }
      KernelImage& img = out.images[it->second];
      ++img.count;
      img.size += e.data_size();
      img.uncompressed_size += e.uncompressed_size;
      members.push_back(it->second);
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    auto [git, gfresh] = group_index.emplace(members, static_cast<int>(out.groups.size()));
    if (gfresh) out.groups.push_back(ContainerGroup{0, members, {}});
    ContainerGroup& g = out.groups[git->second];
    ++g.count;
    g.kernels.insert(g.kernels.end(), std::make_move_iterator(c.kernels.begin()), std::make_move_iterator(c.kernels.end()));
  }
  for (auto& g : out.groups) {
    std::sort(g.kernels.begin(), g.kernels.end());
    g.kernels.erase(std::unique(g.kernels.begin(), g.kernels.end()), g.kernels.end());
  }
  return out;
}

BinaryScan scan_binary(const std::string& path, bool kernels, bin::RunBudget* budget) {
  return summarize(path, bin::scan_path(path, kernels, budget));
}

bool loadable_name(std::string_view name, bool executable) {
  if (name.ends_with(".so") || contains(name, ".so.")) return true;  // libcublas.so.13
  // Executables without an extension (not scripts with one, e.g. foo.py / foo.sh).
  return executable && name.find('.') == std::string_view::npos;
}

bool candidate_name(std::string_view name, bool executable) {
  for (std::string_view ext : {".o", ".a", ".cubin", ".fatbin", ".ptx"})
    if (name.ends_with(ext)) return true;
  return loadable_name(name, executable);
}

std::string package_of(const std::string& path) {
  auto parts = split(path, '/');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] != "site-packages" && parts[i] != "dist-packages") continue;
    std::string top = parts[i + 1];
    if (top.ends_with(".libs")) top.resize(top.size() - 5);  // auditwheel's torch.libs
    if (top == "nvidia" && i + 3 < parts.size()) return "nvidia/" + parts[i + 2];
    return i + 2 < parts.size() ? top : "";  // a module file directly in site-packages
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (parts[i].starts_with("cuda") && (parts[i + 1] == "lib64" || parts[i + 1] == "targets" || parts[i + 1] == "lib"))
      return "CUDA toolkit /" + join(std::vector<std::string>(parts.begin(), parts.begin() + static_cast<long>(i) + 1), "/");
  return "";
}

namespace {

using Inode = std::pair<uint64_t, uint64_t>;

// Files are read once the walk is over, biggest first (the first found among equals): on the
// H100 machine's cold disk, reading files while the walk still found them slowed the walk
// of `scan /opt /usr/local/cuda-13.0` from 0.22 to 0.74 s (directory reads queued behind
// the files'), and the biggest archive, found last, then finished last: 2.0 s in all. The
// walk gives one name per inode, a real name over a link to it, so notes name the file. By
// the time it ends, check's question (the GPUs: ReadFocus, from the driver child) is
// usually set; a file read before it is set is read whole.
//
// Copies of one build are read once: a file of at least 1 MiB whose size and GNU build-id are
// those of a file taken earlier gets that file's answer. Among files of one size the order
// taken is the order found, and each registers its build-id before it waits on any other's,
// so which copy is read does not depend on the threads' timing.
class Readers {
 public:
  // Reads every file and returns when all are read.
  Readers(const std::vector<WalkedFile>& files, const ScanOptions& opts, bin::RunBudget& budget)
      : opts_(opts), budget_(budget), files_(files), jobs_(files.size()) {
    for (size_t i = 0; i < files_.size(); ++i) {
      first_.emplace(Inode{files_[i].dev, files_[i].ino}, i);
      waiting_.push({files_[i].size, ~i});  // biggest first, then the first found
    }
    size_t n = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < std::min(n, files_.size()); ++i) threads.emplace_back([this] { work(); });
    for (auto& t : threads) t.join();
  }

  // The answer for a file the walk found (by inode), or null.
  const BinaryScan* answer(const WalkedFile& f) const {
    auto it = first_.find(Inode{f.dev, f.ino});
    if (it == first_.end()) return nullptr;
    const Job& job = jobs_[it->second];
    return job.copy_of ? &jobs_[*job.copy_of].result : &job.result;
  }
  // The file whose answer this one has (a copy of one build), or null.
  const WalkedFile* copy_of(const WalkedFile& f) const {
    auto it = first_.find(Inode{f.dev, f.ino});
    if (it == first_.end() || !jobs_[it->second].copy_of) return nullptr;
    return &files_[*jobs_[it->second].copy_of];
  }

 private:
  struct Job {
    BinaryScan result;
    std::optional<std::string> build_id;  // set once read ("" without one)
    std::optional<size_t> copy_of;
  };

  void work() {
    for (;;) {
      size_t i = 0;
      {
        std::lock_guard lock(mutex_);
        if (waiting_.empty()) return;
        i = ~waiting_.top().second;
        waiting_.pop();
        if (files_[i].size >= kSameBuildAtLeast) taken_[files_[i].size].push_back(i);
      }
      read(i);
    }
  }

  void read(size_t i) {
    const WalkedFile& f = files_[i];
    // Opened through the root's descriptor: open_path had no link below --root's prefix when
    // walked, and one swapped in since is resolved inside the root, never followed out of it.
    std::string inner = opts_.root.inner_path(f.open_path);
    if (f.size >= kSameBuildAtLeast && same_build(i, f, inner)) return;
    BinaryScan r = summarize(f.open_path, bin::scan_path(opts_.root, inner, f.open_path, opts_.kernels, &budget_, opts_.focus));
    std::lock_guard lock(mutex_);
    jobs_[i].result = std::move(r);
    if (opts_.progress) opts_.progress(++done_, files_.size(), f.path);
  }

  // Whether file i is a copy of one taken before it (then it is answered by that one).
  bool same_build(size_t i, const WalkedFile& f, const std::string& inner) {
    RegularFile file(opts_.root, inner);
    std::string id = file.ok() && file.size() == f.size ? bin::gnu_build_id(file.fd()) : "";
    std::unique_lock lock(mutex_);
    jobs_[i].build_id = id;
    ids_.notify_all();
    if (id.empty()) return false;
    for (size_t j : taken_[f.size]) {
      if (j == i) break;  // only those taken before
      ids_.wait(lock, [&] { return jobs_[j].build_id.has_value(); });
      if (*jobs_[j].build_id == id && !jobs_[j].copy_of) {
        jobs_[i].copy_of = j;
        if (opts_.progress) opts_.progress(++done_, files_.size(), f.path);
        return true;
      }
    }
    return false;
  }

  static constexpr uint64_t kSameBuildAtLeast = 1 << 20;  // smaller files cost less to read than to compare

  const ScanOptions& opts_;
  bin::RunBudget& budget_;
  std::mutex mutex_;
  std::condition_variable ids_;
  std::map<Inode, size_t> first_;           // inode -> index in files_
  const std::vector<WalkedFile>& files_;    // as found, one per inode
  std::vector<Job> jobs_;                   // one per file
  std::priority_queue<std::pair<uint64_t, size_t>> waiting_;  // (size, ~index): biggest, then first found
  std::map<uint64_t, std::vector<size_t>> taken_;  // size -> files of that size in the order taken
  size_t done_ = 0;
};

}  // namespace

std::vector<BinaryScan> scan_paths(const std::vector<std::string>& paths, const ScanOptions& opts, ScanStats* stats) {
  // Files named directly are always reported, even without CUDA code; the walk keeps only
  // directories and regular files, so anything else named directly is reported here.
  std::vector<BinaryScan> special;
  std::vector<std::string> walkable;
  for (const auto& p : paths) {
    struct stat st;
    if (stat(p.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
      BinaryScan b;
      b.path = p;
      b.package = package_of(p);
      b.error = fmt::format("{}: not read: {}", p, file_type_name(st.st_mode));
      special.push_back(std::move(b));
    } else {
      walkable.push_back(p);
    }
  }
  WalkOptions wo;
  wo.want = opts.loadable_only ? loadable_name : candidate_name;
  wo.root = opts.root;
  WalkResult walked = walk_files(walkable, wo);
  if (trace_enabled()) trace(fmt::format("scan: walked, {} candidate files", walked.files.size()));
  bin::RunBudget budget(opts.limits);  // shared by the threads
  Readers readers(walked.files, opts, budget);

  // One answer per file the walk kept (a real name over a link to it).
  std::vector<BinaryScan> results(walked.files.size());
  std::vector<bool> named(walked.files.size(), false);
  for (size_t i = 0; i < walked.files.size(); ++i) {
    const WalkedFile& f = walked.files[i];
    named[i] = std::find(paths.begin(), paths.end(), f.path) != paths.end();
    if (const BinaryScan* a = readers.answer(f)) results[i] = *a;
    results[i].path = f.path;
    results[i].package = package_of(f.open_path);
    if (const WalkedFile* c = readers.copy_of(f)) results[i].same_build_as = c->path;
  }
  if (trace_enabled()) trace("scan: files read");
  if (stats) {
    stats->files_examined = walked.files.size();
    for (const auto& f : walked.files) stats->bytes += f.size;
    stats->walk_errors = walked.errors;
  }
  std::vector<BinaryScan> out = std::move(special);
  for (size_t i = 0; i < results.size(); ++i) {
    BinaryScan& r = results[i];
    if (named[i] || r.containers > 0 || !r.notes.empty() || !r.error.empty()) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace cd
