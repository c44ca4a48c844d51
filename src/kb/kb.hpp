#pragma once
// The knowledge base: the TOML tables of data/, parsed once. Typed views live in
// kb/<topic>.hpp (gpus, drivers, pytorch, …); each parses its table on first use
// and caches the result here. Every row of every table names its `source`.
#include <any>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cd {

class Kb {
 public:
  // The tables embedded at build time; CUDA_DOCTOR_DATA=DIR reads DIR/*.toml instead.
  static const Kb& get();
  // Loads DIR/*.toml (tests, --data). Throws InputError on a parse error.
  static std::shared_ptr<Kb> from_dir(const std::string& dir);
  // Parses the given (name, text) pairs. Throws InputError on a parse error.
  static std::shared_ptr<Kb> from_texts(const std::vector<std::pair<std::string, std::string>>& files);

  // File names without ".toml": "gpus", "cuda_drivers", …
  std::vector<std::string> names() const;

  // A typed view, built once per Kb by `build` and cached under `key`.
  template <class T>
  const T& view(const std::string& key, const std::function<T(const Kb&)>& build) const {
    std::lock_guard lock(mutex_);  // recursive: a view may build on another view
    auto it = views_.find(key);
    if (it == views_.end()) it = views_.emplace(key, std::any(build(*this))).first;
    return std::any_cast<const T&>(it->second);
  }

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  static std::shared_ptr<Kb> from_embedded();  // the tables compiled in, parsed on first use
  std::shared_ptr<Impl> impl_;
  mutable std::recursive_mutex mutex_;
  mutable std::map<std::string, std::any> views_;
};

}  // namespace cd
