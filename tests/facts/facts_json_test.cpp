#include <gtest/gtest.h>

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
