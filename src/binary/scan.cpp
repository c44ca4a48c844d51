#include "binary/scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <mutex>
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

// Copies of one build are read once: for each file, the index of the first file of the same
// size and GNU build-id (itself when none). Only sizes that occur twice are looked at (a
// build-id costs a few small reads), and only files of at least 1 MiB: small ones cost less
// to read than to compare.
std::vector<size_t> same_builds(const std::vector<WalkedFile>& files, const Root& root) {
  std::vector<size_t> same(files.size());
  std::map<uint64_t, std::vector<size_t>> by_size;
  for (size_t i = 0; i < files.size(); ++i) {
    same[i] = i;
    if (files[i].size >= (1u << 20)) by_size[files[i].size].push_back(i);
  }
  for (const auto& [size, list] : by_size) {
    if (list.size() < 2) continue;
    std::map<std::string, size_t> first;
    for (size_t i : list) {
      RegularFile file(root, root.inner_path(files[i].open_path));
      std::string id = file.ok() && file.size() == size ? bin::gnu_build_id(file.fd()) : "";
      if (!id.empty()) same[i] = first.emplace(id, i).first->second;
    }
  }
  return same;
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
  std::vector<bool> named(walked.files.size(), false);
  for (size_t i = 0; i < walked.files.size(); ++i)
    named[i] = std::find(paths.begin(), paths.end(), walked.files[i].path) != paths.end();

  // Biggest files first, so the long ones start early on the thread pool.
  std::vector<size_t> order(walked.files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return walked.files[a].size > walked.files[b].size; });

  std::vector<size_t> same = same_builds(walked.files, opts.root);

  std::vector<BinaryScan> results(walked.files.size());
  std::mutex progress_mutex;
  size_t done = 0;
  bin::RunBudget budget(opts.limits);  // shared by the threads
  parallel_for(order.size(), opts.threads, [&](size_t k) {
    size_t i = order[k];
    if (same[i] != i) return;  // a copy: its answer is the first copy's, below
    // Opened through the root's descriptor: open_path had no link below --root's prefix when
    // walked, and one swapped in since is resolved inside the root, never followed out of it.
    const std::string& host = walked.files[i].open_path;
    results[i] = summarize(host, bin::scan_path(opts.root, opts.root.inner_path(host), host, opts.kernels, &budget, opts.focus));
    results[i].path = walked.files[i].path;
    if (opts.progress) {
      std::lock_guard lock(progress_mutex);
      opts.progress(++done, order.size(), walked.files[i].path);
    }
  });

  for (size_t i = 0; i < results.size(); ++i) {
    if (same[i] == i) continue;
    results[i] = results[same[i]];
    results[i].path = walked.files[i].path;
    results[i].package = package_of(walked.files[i].path);
    results[i].same_build_as = walked.files[same[i]].path;
    if (opts.progress) opts.progress(++done, order.size(), walked.files[i].path);
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
