#pragma once
// nlohmann-json glue shared by every facts header: std::optional support, the macro
// every struct uses, and the one way JSON text is written (json_text).
//
// Reading is strict about types and ranges: each field is read by read_value(),
// which accepts only its own JSON type and a number that fits the C++ type without
// wrapping (2^31 into an int, -5 into a uint64_t are errors), and a failure names
// the JSON path of the bad field ("driver.gpus[0].cc_major: …"), as a
// FactsFieldError, which is a nlohmann::json::exception so callers that already
// catch those keep working. Missing keys keep their defaults, so old facts files load.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) v.reset();
    else v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace cd {

// JSON text of j. Strings from input (file names, kernel names, dist-info names) may
// hold invalid UTF-8: those bytes become U+FFFD instead of aborting the whole document.
// Every JSON the tool writes goes through here (indent -1: one line).
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A field of the wrong type or out of range; path() is the JSON path ("driver.gpus[0].cc_major").
class FactsFieldError : public nlohmann::json::exception {
 public:
  FactsFieldError(std::string path, std::string problem)
      : nlohmann::json::exception(0, (path + ": " + problem).c_str()), path_(std::move(path)), problem_(std::move(problem)) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  // The same problem one level up: "gpus[0].cc_major" inside "driver".
  FactsFieldError inside(const std::string& parent) const {
    return FactsFieldError(path_.empty() || path_.front() == '[' ? parent + path_ : parent + "." + path_, problem_);
  }

 private:
  std::string path_, problem_;
};

namespace json_read {

inline std::string type_of(const nlohmann::json& v) {
  if (v.is_number()) return "a number";
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "true or false";
  return (v.is_array() || v.is_object() ? "an " : "a ") + std::string(v.type_name());
}
[[noreturn]] inline void fail(const std::string& problem) { throw FactsFieldError("", problem); }
inline void expect(bool ok, const char* what, const nlohmann::json& v) {
  if (!ok) fail(std::string("expected ") + what + ", got " + type_of(v));
}

inline void read_value(const nlohmann::json& v, std::string& out) {
  expect(v.is_string(), "a string", v);
  out = v.get_ref<const std::string&>();
}
inline void read_value(const nlohmann::json& v, bool& out) {
  expect(v.is_boolean(), "true or false", v);
  out = v.get<bool>();
}
inline void read_value(const nlohmann::json& v, double& out) {
  expect(v.is_number(), "a number", v);
  out = v.get<double>();
  if (!std::isfinite(out)) fail(v.dump() + " is out of range");  // 1e400 parses as inf; written back it would be null
}
// Integers: the JSON number must be whole and fit T; nlohmann's get<T>() would wrap.
template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
void read_value(const nlohmann::json& v, T& out) {
  expect(v.is_number(), "an integer", v);
  using L = std::numeric_limits<T>;
  auto range = [] { return "out of range (" + std::to_string(L::min()) + " … " + std::to_string(L::max()) + ")"; };
  if (v.is_number_unsigned()) {
    uint64_t n = v.get<uint64_t>();
    if (n > static_cast<uint64_t>(L::max())) fail(json_text(v) + " is " + range());
    out = static_cast<T>(n);
  } else if (v.is_number_integer()) {
    int64_t n = v.get<int64_t>();
    if ((L::is_signed ? n < static_cast<int64_t>(L::min()) : n < 0) ||
        (n > 0 && static_cast<uint64_t>(n) > static_cast<uint64_t>(L::max())))
      fail(json_text(v) + " is " + range());
    out = static_cast<T>(n);
  } else {
    double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) fail("expected an integer, got " + json_text(v));
    if (d < static_cast<double>(L::min()) || d >= std::ldexp(1.0, L::digits)) fail(json_text(v) + " is " + range());
    out = static_cast<T>(d);
  }
}
// Enums (Severity) keep nlohmann's string mapping, but only from a string.
template <typename T, std::enable_if_t<std::is_enum_v<T>, int> = 0>
void read_value(const nlohmann::json& v, T& out) {
  expect(v.is_string(), "a string", v);
  out = v.get<T>();
}
// Structs: their CD_JSON from_json (found by ADL), which reads field by field.
template <typename T, std::enable_if_t<std::is_class_v<T>, int> = 0>
void read_value(const nlohmann::json& v, T& out) {
  expect(v.is_object(), "an object", v);
  from_json(v, out);
}
template <typename T>
void read_value(const nlohmann::json& v, std::optional<T>& out);
template <typename T>
void read_value(const nlohmann::json& v, std::vector<T>& out);
template <typename T>
void read_value(const nlohmann::json& v, std::map<std::string, T>& out);

template <typename T>
void read_value(const nlohmann::json& v, std::optional<T>& out) {
  if (v.is_null()) return out.reset();
  T value{};
  read_value(v, value);
  out = std::move(value);
}
template <typename T>
void read_value(const nlohmann::json& v, std::vector<T>& out) {
  expect(v.is_array(), "an array", v);
  out.clear();
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    T value{};
    try {
      read_value(v[i], value);
    } catch (const FactsFieldError& e) {
      throw e.inside("[" + std::to_string(i) + "]");
    }
    out.push_back(std::move(value));
  }
}
template <typename T>
void read_value(const nlohmann::json& v, std::map<std::string, T>& out) {
  expect(v.is_object(), "an object", v);
  out.clear();
  for (const auto& [key, item] : v.items()) {
    try {
      read_value(item, out[key]);
    } catch (const FactsFieldError& e) {
      throw e.inside(key);
    }
  }
}

// One field of a struct: absent keeps the default; present must read cleanly.
template <typename T>
void read_field(const nlohmann::json& j, const char* key, T& out, const T& fallback) {
  auto it = j.find(key);
  if (it == j.end()) {
    out = fallback;
    return;
  }
  try {
    read_value(*it, out);
  } catch (const FactsFieldError& e) {
    throw e.inside(key);
  }
}

}  // namespace json_read
}  // namespace cd

// Field lists stay next to each struct, but the (heavy) serialisers are compiled in
// one place: facts/json_impl.cpp defines CD_FACTS_JSON_IMPL and includes every
// facts header; everywhere else CD_JSON only declares them.
#ifdef CD_FACTS_JSON_IMPL
#define CD_JSON_READ_FIELD(v1) \
  ::cd::json_read::read_field(nlohmann_json_j, #v1, nlohmann_json_t.v1, nlohmann_json_default_obj.v1);
#define CD_JSON(Type, ...)                                                                  \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {             \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                \
  }                                                                                         \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {           \
    ::cd::json_read::expect(nlohmann_json_j.is_object(), "an object", nlohmann_json_j);     \
    Type nlohmann_json_default_obj;                                                         \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(CD_JSON_READ_FIELD, __VA_ARGS__))              \
  }
#else
#define CD_JSON(Type, ...)                              \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t); \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t);
#endif
