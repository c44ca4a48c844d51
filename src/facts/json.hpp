#pragma once
// nlohmann-json glue shared by every facts header: std::optional support and the
// macro every struct uses (missing keys keep their defaults, so old facts files load).
#include <optional>

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

// Field lists stay next to each struct, but the (heavy) serialisers are compiled in
// one place: facts/json_impl.cpp defines CD_FACTS_JSON_IMPL and includes every
// facts header; everywhere else CD_JSON only declares them.
#ifdef CD_FACTS_JSON_IMPL
#define CD_JSON(Type, ...)                                                                  \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {             \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                \
  }                                                                                         \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {           \
    Type nlohmann_json_default_obj;                                                         \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__)) \
  }
#else
#define CD_JSON(Type, ...)                              \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t); \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t);
#endif
