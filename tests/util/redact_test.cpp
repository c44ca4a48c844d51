#include "util/redact.hpp"

#include <gtest/gtest.h>

namespace cd {
namespace {

TEST(Redact, SecretNames) {
  for (const char* n : {"NVIDIA_API_KEY", "HF_TOKEN", "db_password", "MY_PASSWD", "GOOGLE_APPLICATION_CREDENTIALS",
                        "NCCL_AUTH", "aws_secret_access_key"})
    EXPECT_TRUE(secret_name(n)) << n;
  for (const char* n : {"PATH", "CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "LD_LIBRARY_PATH"}) EXPECT_FALSE(secret_name(n)) << n;
  EXPECT_EQ(redact_variable("VLLM_API_KEY", "sk-1"), "<redacted>");
  EXPECT_EQ(redact_variable("CUDA_HOME", "/usr/local/cuda"), "/usr/local/cuda");
}

TEST(Redact, UrlUserinfoAndCondaTokens) {
  EXPECT_EQ(redact_value("https://u:p@h.example/x"), "https://<redacted>@h.example/x");
  EXPECT_EQ(redact_value("https://ghp_abc@github.com"), "https://<redacted>@github.com");
  EXPECT_EQ(redact_value("https://h.example:8443/simple"), "https://h.example:8443/simple");
  EXPECT_EQ(redact_value("a=https://x:y@h1/p b=ftp://q@h2"), "a=https://<redacted>@h1/p b=ftp://<redacted>@h2");
  EXPECT_EQ(redact_value("https://conda.anaconda.org/t/ab-1234-cd/nvidia"),
            "https://conda.anaconda.org/t/<redacted>/nvidia");
  EXPECT_EQ(redact_value("/opt/t/bin:/home/t/x"), "/opt/t/bin:/home/t/x");
  EXPECT_EQ(redact_value("user@host"), "user@host");  // not a URL
  EXPECT_EQ(redact_value(""), "");
}

}  // namespace
}  // namespace cd
