#include "facts/facts.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace cd {

Facts facts_from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw InputError(fmt::format("{}: not valid JSON", origin));
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", origin));
  std::string schema = j.value("schema", "");
  if (schema.rfind("cuda-doctor/facts/", 0) != 0)
    throw InputError(fmt::format("{}: not a cuda-doctor facts file (schema \"{}\")", origin, schema));
  if (schema != kFactsSchema)
    throw InputError(fmt::format("{}: facts schema {} is not supported (this build reads {})", origin, schema, kFactsSchema));
  try {
    return j.get<Facts>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed facts: {}", origin, e.what()));
  }
}

std::string facts_to_json_text(const Facts& facts) { return nlohmann::json(facts).dump(2); }

}  // namespace cd
