#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "facts/facts.hpp"
#include "util/errors.hpp"

using namespace cd;

TEST(FactsJson, RoundTripsEveryLayer) {
  Facts f;
  f.host.hostname = "node1";
  f.env["CUDA_VISIBLE_DEVICES"] = "0,1";
  f.driver.module_version = "580.159.04";
  f.driver.cuda_driver_version = 13000;
  GpuInfo g;
  g.name = "NVIDIA H200";
  g.cc_major = 9;
  g.memory_total_mib = 143771;
  f.driver.gpus.push_back(g);
  Toolkit t;
  t.root = "/usr/local/cuda-13.0";
  t.selected_by = {"PATH", "CUDA_HOME"};
  f.toolkit.toolkits.push_back(t);
  PythonEnv py;
  py.torch.version = "2.11.0+cu130";
  f.pythons.push_back(py);

  Facts back = facts_from_json_text(facts_to_json_text(f), "test");
  EXPECT_EQ(back.host.hostname, "node1");
  EXPECT_EQ(back.env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(back.driver.cuda_driver_version, 13000);
  ASSERT_EQ(back.driver.gpus.size(), 1u);
  EXPECT_EQ(back.driver.gpus[0].cc_major * 10 + back.driver.gpus[0].cc_minor, 90);
  EXPECT_EQ(back.driver.gpus[0].memory_total_mib, 143771u);
  EXPECT_EQ(back.toolkit.toolkits.at(0).selected_by.at(1), "CUDA_HOME");
  EXPECT_EQ(back.pythons.at(0).torch.version, "2.11.0+cu130");
}

TEST(FactsJson, MissingKeysKeepDefaults) {
  Facts back = facts_from_json_text(R"({"schema":"cuda-doctor/facts/v1","driver":{"module_version":"535.1"}})", "t");
  EXPECT_EQ(back.driver.module_version, "535.1");
  EXPECT_EQ(back.driver.cu_init_status, -1);
  EXPECT_TRUE(back.pythons.empty());
}

TEST(FactsJson, RejectsGarbageWithOneLineErrors) {
  auto message = [](const std::string& text) {
    try {
      facts_from_json_text(text, "f.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("{not json"), "f.json: not valid JSON");
  EXPECT_EQ(message("[1,2]"), "f.json: expected a JSON object");
  EXPECT_NE(message(R"({"schema":"other"})").find("not a cuda-doctor facts file"), std::string::npos);
  EXPECT_NE(message(R"({"schema":"cuda-doctor/facts/v9"})").find("not supported"), std::string::npos);
  std::string wrong_type = message(R"({"schema":"cuda-doctor/facts/v1","driver":{"gpus":"many"}})");
  EXPECT_NE(wrong_type.find("malformed facts"), std::string::npos);
  EXPECT_EQ(wrong_type.find('\n'), std::string::npos);
}

// Issue 12 #8: a file or kernel name with bytes that are not UTF-8 (0xff, a lone
// continuation byte, a truncated sequence) used to abort every JSON document
// ("type_error.316"). They become U+FFFD; the rest of the string is kept.
TEST(FactsJson, InvalidUtf8IsReplacedNotFatal) {
  Facts f;
  BinaryScan b;
  b.path = "/opt/lib\xff" "cuda.so";
  b.package = "torch\x80";
  ContainerGroup g;
  g.kernels = {"_Z6kernel\xc3", "ok_kernel"};
  b.groups.push_back(g);
  f.binaries.push_back(b);
  f.env["CUDA_HOME"] = "/usr/local/cuda\xe2\x82";

  std::string text;
  ASSERT_NO_THROW(text = facts_to_json_text(f));
  Facts back = facts_from_json_text(text, "t");
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(back.binaries.at(0).path, "/opt/lib" + fffd + "cuda.so");
  EXPECT_EQ(back.binaries.at(0).package, "torch" + fffd);
  EXPECT_EQ(back.binaries.at(0).groups.at(0).kernels.at(0), "_Z6kernel" + fffd);
  EXPECT_EQ(back.binaries.at(0).groups.at(0).kernels.at(1), "ok_kernel");
  EXPECT_EQ(back.env.at("CUDA_HOME").substr(0, 15), "/usr/local/cuda");
  EXPECT_NE(back.env.at("CUDA_HOME").find(fffd), std::string::npos);
}

TEST(FactsJson, JsonTextReplacesInsteadOfThrowing) {
  nlohmann::json j = {{"name", std::string("a\xff" "b")}, {"list", {std::string("\xc0\xaf")}}};
  std::string text;
  ASSERT_NO_THROW(text = json_text(j));
  EXPECT_EQ(nlohmann::json::parse(text)["name"], "a\xef\xbf\xbd" "b");
}

// Valid UTF-8, controls and every field of a recorded machine survive write → read →
// write unchanged.
TEST(FactsJson, RecordedMachineRoundTripsExactly) {
  std::ifstream in(std::string(CD_FIXTURES) + "/h200/facts.json", std::ios::binary);
  ASSERT_TRUE(in);
  std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Facts first = facts_from_json_text(original, "h200");
  first.host.hostname = "h\xc3\xa9te \xe2\x9c\x93 \x1b[2J\ttab\n\"q\" \xf0\x9f\x98\x80";
  std::string once = facts_to_json_text(first);
  Facts second = facts_from_json_text(once, "once");
  EXPECT_EQ(second.host.hostname, first.host.hostname);
  EXPECT_EQ(facts_to_json_text(second), once);
  // Against the recorded file: every value that Facts still holds is kept (fields newer
  // than the recording are added with defaults, fields since moved to derive are dropped).
  nlohmann::json a = nlohmann::json::parse(once), b = nlohmann::json::parse(original);
  a.erase("host");
  b.erase("host");
  for (const auto& op : nlohmann::json::diff(b, a)) EXPECT_NE(op["op"], "replace") << op.dump().substr(0, 300);
}

namespace {

std::string facts_error(const std::string& json_body) {
  try {
    facts_from_json_text(R"({"schema":"cuda-doctor/facts/v1",)" + json_body + "}", "f.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// Issue 12 #13: a bad field is named by its JSON path, numbers never wrap, and the
// values that become names (sm_XY) have their real range.
TEST(FactsJson, BadFieldsAreNamedByTheirPath) {
  EXPECT_EQ(facts_error(R"("driver":{"gpus":[{"cc_major":9},{"cc_major":2147483648}]})"),
            "f.json: malformed facts: driver.gpus[1].cc_major: 2147483648 is out of range (-2147483648 … 2147483647)");
  EXPECT_EQ(facts_error(R"("driver":{"gpus":[{"memory_total_mib":-5}]})"),
            "f.json: malformed facts: driver.gpus[0].memory_total_mib: -5 is out of range (0 … 18446744073709551615)");
  EXPECT_EQ(facts_error(R"("driver":{"gpus":[{"cc_major":100}]})"),
            "f.json: malformed facts: driver.gpus[0].cc_major: 100 is out of range (0 … 99)");
  EXPECT_EQ(facts_error(R"("driver":{"gpus":[{"name":5}]})"),
            "f.json: malformed facts: driver.gpus[0].name: expected a string, got a number");
  EXPECT_EQ(facts_error(R"("driver":{"gpus":"many"})"),
            "f.json: malformed facts: driver.gpus: expected an array, got a string");
  EXPECT_EQ(facts_error(R"("env":{"CUDA_HOME":1})"), "f.json: malformed facts: env.CUDA_HOME: expected a string, got a number");
  EXPECT_EQ(facts_error(R"("driver":{"cc":1,"module_loaded":"yes"})"),
            "f.json: malformed facts: driver.module_loaded: expected true or false, got a string");
  EXPECT_EQ(facts_error(R"("driver":{"gpus":[{"cc_major":9.5}]})"),
            "f.json: malformed facts: driver.gpus[0].cc_major: expected an integer, got 9.5");
  EXPECT_EQ(facts_error(R"("binaries":[{"images":[{"arch":90},{"arch":-90}]}])"),
            "f.json: malformed facts: binaries[0].images[1].arch: -90 is out of range (0 … 9999)");
  EXPECT_EQ(facts_error(R"("binaries":[{"images":[{"ptx_major":99999999}]}])"),
            "f.json: malformed facts: binaries[0].images[0].ptx_major: 99999999 is out of range (0 … 99)");
  EXPECT_EQ(facts_error(R"("log":{"counts":{"oom":-1}})"),
            "f.json: malformed facts: log.counts.oom: -1 is out of range (0 … 18446744073709551615)");
  EXPECT_EQ(facts_error(R"("host":[])"), "f.json: malformed facts: host: expected an object, got an array");
  EXPECT_EQ(facts_error(R"("pythons":[{},{"packages":[{"name":null}]}])"),
            "f.json: malformed facts: pythons[1].packages[0].name: expected a string, got null");
}

TEST(FactsJson, WholeNumbersInAnyNotationAreAccepted) {
  EXPECT_EQ(facts_error(R"("driver":{"gpus":[{"cc_major":9.0,"memory_total_mib":1.4e5}]})"), "no error");
  Facts f = facts_from_json_text(R"({"schema":"cuda-doctor/facts/v1","driver":{"gpus":[{"cc_major":9.0,"cc_minor":0}]}})", "t");
  EXPECT_EQ(f.driver.gpus.at(0).cc_major, 9);
}

// A schema that is not a string used to escape as "internal error".
TEST(FactsJson, NonStringSchemaIsOneLine) {
  auto message = [](const std::string& text) {
    try {
      facts_from_json_text(text, "f.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(R"({"schema":5})"), "f.json: schema: expected a string, got a number");
  EXPECT_EQ(message(R"({"schema":["cuda-doctor/facts/v1"]})"), "f.json: schema: expected a string, got an array");
}
