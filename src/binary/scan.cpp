#include "binary/scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "binary/build_id.hpp"
#include "binary/mapped_file.hpp"
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

// Files are read once the walk is over, biggest first (parallel_for hands out indices in
// order): on the H100 machine's cold disk, reading files while the walk still found them
// slowed the walk of `scan /opt /usr/local/cuda-13.0` from 0.22 to 0.74 s (directory reads
// queued behind the files'), and the biggest archive, found last, then finished last: 2.0 s
// in all. The walk gives one name per inode, a real name over a link to it, so notes name
// the file. By the time it ends, check's question (the GPUs: ReadFocus, from the driver
// child) is usually set; a file read before it is set is read whole.
//
// Copies of one build are read once: a file of at least 1 MiB whose size and GNU build-id are
// those of a file taken earlier gets that file's answer (`copy_of`). Files of one size are
// next to each other in the order taken, and each registers its build-id before it waits on
// any earlier one's, so which copy is read does not depend on the threads' timing.
struct Read {
  std::vector<BinaryScan> results;            // per file; empty for a copy
  std::vector<std::optional<size_t>> copy_of;  // the file whose answer a copy has
};

Read read_files(const std::vector<WalkedFile>& files, const ScanOptions& opts, bin::RunBudget& budget) {
  constexpr uint64_t kSameBuildAtLeast = 1 << 20;  // smaller files cost less to read than to compare
  Read out;
  out.results.resize(files.size());
  out.copy_of.resize(files.size());
  std::vector<size_t> order(files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return files[a].size > files[b].size; });
  std::vector<std::optional<std::string>> ids(files.size());  // build-ids, set once read ("" without one)
  std::mutex mutex;
  std::condition_variable id_set;
  size_t done = 0;
  auto progress = [&](const WalkedFile& f) {  // under the lock
    if (opts.progress) opts.progress(++done, files.size(), f.path);
  };
  // Whether the k-th file taken is a copy of one taken before it (then it is answered by that one).
  auto same_build = [&](size_t k, const bin::MappedFile& file) {
    size_t i = order[k];
    std::string id = file.ok() && file.bytes().size() == files[i].size ? bin::gnu_build_id(file.fd()) : "";
    std::unique_lock lock(mutex);
    ids[i] = id;
    id_set.notify_all();
    if (id.empty()) return false;
    size_t first = k;
    while (first > 0 && files[order[first - 1]].size == files[i].size) --first;
    for (size_t q = first; q < k; ++q) {
      size_t j = order[q];
      id_set.wait(lock, [&] { return ids[j].has_value(); });
      if (*ids[j] == id) {  // the first of an id is never a copy
        out.copy_of[i] = j;
        progress(files[i]);
        return true;
      }
    }
    return false;
  };
  parallel_for(order.size(), opts.threads, [&](size_t k) {
    const WalkedFile& f = files[order[k]];
    // Opened through the root's descriptor: open_path had no link below --root's prefix when
    // walked, and one swapped in since is resolved inside the root, never followed out of it.
    bin::MappedFile file(opts.root, opts.root.inner_path(f.open_path));
    if (f.size >= kSameBuildAtLeast && same_build(k, file)) return;
    BinaryScan r = summarize(f.open_path, bin::scan_file(file, f.open_path, opts.kernels, &budget, opts.focus));
    std::lock_guard lock(mutex);
    out.results[order[k]] = std::move(r);
    progress(f);
  });
  return out;
}

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
  Read read = read_files(walked.files, opts, budget);

  // One answer per file the walk kept (a real name over a link to it).
  std::vector<BinaryScan> results(walked.files.size());
  std::vector<bool> named(walked.files.size(), false);
  for (size_t i = 0; i < walked.files.size(); ++i) {
    const WalkedFile& f = walked.files[i];
    named[i] = std::find(paths.begin(), paths.end(), f.path) != paths.end();
    results[i] = read.results[read.copy_of[i].value_or(i)];
    results[i].path = f.path;
    results[i].package = package_of(f.open_path);
    if (read.copy_of[i]) results[i].same_build_as = walked.files[*read.copy_of[i]].path;
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
