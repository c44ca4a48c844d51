// Issue 12 #16: a knowledge base directory that does not exist or holds no tables is
// an error (one line), not an empty knowledge base that knows nothing.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "kb/kb.hpp"
#include "util/errors.hpp"

namespace {

std::string load_error(const std::string& dir) {
  try {
    cd::Kb::from_dir(dir);
  } catch (const cd::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(KnowledgeBaseDir, MissingDirectoryIsAnError) {
  EXPECT_EQ(load_error("/nonexistent/cuda-doctor-data"), "knowledge base /nonexistent/cuda-doctor-data: not a directory");
  EXPECT_EQ(load_error("/etc/hostname"), "knowledge base /etc/hostname: not a directory");
}

TEST(KnowledgeBaseDir, DirectoryWithoutTablesIsAnError) {
  char tmpl[] = "/tmp/cd-kb-empty-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  EXPECT_EQ(load_error(dir), "knowledge base " + dir + ": no *.toml tables in it");
  rmdir(tmpl);
}

TEST(KnowledgeBaseDir, TheProjectDataDirectoryLoads) {
  EXPECT_EQ(load_error(std::string(CD_SOURCE_DIR) + "/data"), "no error");
}
