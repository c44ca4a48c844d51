// Issue 12 #17: the tool's own children (driver, verify, Python) get CUDA_CACHE_DISABLE=1
// and PYTHONDONTWRITEBYTECODE=1 whatever our environment says, so the driver's JIT cache
// and .pyc files are never written; the user's command (explain -- CMD) keeps theirs.
#include <gtest/gtest.h>

#include <stdlib.h>

#include "util/subprocess.hpp"

namespace {

std::string child_env(const cd::ProcessOptions& o) { return "\n" + cd::run_process({"/usr/bin/env"}, o).out; }

}  // namespace

TEST(ChildEnvironment, ToolChildrenNeverWriteCaches) {
  setenv("CUDA_CACHE_DISABLE", "0", 1);
  setenv("PYTHONDONTWRITEBYTECODE", "", 1);
  cd::ProcessOptions o;
  o.env_set["CUDA_CACHE_DISABLE"] = "0";  // not even a caller turns it back on
  std::string env = child_env(o);
  EXPECT_NE(env.find("\nCUDA_CACHE_DISABLE=1\n"), std::string::npos) << env;
  EXPECT_NE(env.find("\nPYTHONDONTWRITEBYTECODE=1\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("CUDA_CACHE_DISABLE=0"), std::string::npos) << env;
  EXPECT_EQ(env.find("CUDA_CACHE_PATH="), std::string::npos) << "no other place to write";
  unsetenv("CUDA_CACHE_DISABLE");
  unsetenv("PYTHONDONTWRITEBYTECODE");
}

TEST(ChildEnvironment, TheUsersCommandKeepsTheUsersEnvironment) {
  setenv("CUDA_CACHE_DISABLE", "0", 1);
  unsetenv("PYTHONDONTWRITEBYTECODE");
  cd::ProcessOptions o;
  o.tool_child = false;
  std::string env = child_env(o);
  EXPECT_NE(env.find("\nCUDA_CACHE_DISABLE=0\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("PYTHONDONTWRITEBYTECODE"), std::string::npos) << env;
  unsetenv("CUDA_CACHE_DISABLE");
}
