// Facts file reading and writing. Reading checks, in order: valid JSON, an object,
// a string "schema" of this version, then every field's type and C++ range
// (facts/json.hpp read_value), then the few ranges the rules build names and sums from
// (compute capability, sm / PTX ISA numbers: "sm_" + cc_major must stay a real arch).
// Any failure is one InputError line naming the JSON path of the bad field.
#include "facts/facts.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace cd {
namespace {

void check_range(long long value, long long lo, long long hi, const std::string& path) {
  if (value < lo || value > hi) throw FactsFieldError(path, fmt::format("{} is out of range ({} … {})", value, lo, hi));
}

void check_images(const std::vector<KernelImage>& images, const std::string& path) {
  for (size_t i = 0; i < images.size(); ++i) {
    std::string at = fmt::format("{}[{}].", path, i);
    check_range(images[i].arch, 0, 9999, at + "arch");
    check_range(images[i].ptx_major, 0, 99, at + "ptx_major");
    check_range(images[i].ptx_minor, 0, 99, at + "ptx_minor");
  }
}

// Ranges beyond the C++ type: the values that become names ("sm_90") or arithmetic.
void check_domain_ranges(const Facts& f) {
  for (size_t i = 0; i < f.driver.gpus.size(); ++i) {
    check_range(f.driver.gpus[i].cc_major, 0, 99, fmt::format("driver.gpus[{}].cc_major", i));
    check_range(f.driver.gpus[i].cc_minor, 0, 99, fmt::format("driver.gpus[{}].cc_minor", i));
  }
  for (size_t b = 0; b < f.binaries.size(); ++b) {
    check_images(f.binaries[b].images, fmt::format("binaries[{}].images", b));
    check_images(f.binaries[b].dispatch_images, fmt::format("binaries[{}].dispatch_images", b));
  }
}

}  // namespace

Facts facts_from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw InputError(fmt::format("{}: not valid JSON", origin));
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", origin));
  auto s = j.find("schema");
  if (s != j.end() && !s->is_string()) throw InputError(fmt::format("{}: schema: expected a string, got {}", origin, json_read::type_of(*s)));
  std::string schema = s == j.end() ? "" : s->get<std::string>();
  if (schema.rfind("cuda-doctor/facts/", 0) != 0)
    throw InputError(fmt::format("{}: not a cuda-doctor facts file (schema \"{}\")", origin, schema));
  if (schema != kFactsSchema)
    throw InputError(fmt::format("{}: facts schema {} is not supported (this build reads {})", origin, schema, kFactsSchema));
  try {
    Facts facts = j.get<Facts>();
    check_domain_ranges(facts);
    return facts;
  } catch (const FactsFieldError& e) {
    throw InputError(fmt::format("{}: malformed facts: {}: {}", origin, e.path(), e.problem()));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed facts: {}", origin, e.what()));
  }
}

std::string facts_to_json_text(const Facts& facts) { return json_text(nlohmann::json(facts), 2); }

}  // namespace cd
