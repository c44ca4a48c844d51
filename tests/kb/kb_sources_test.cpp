// The knowledge base's own promises: every embedded table parses, and every row of
// every table names where its fact comes from.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kb/embedded.hpp"
#include "kb/kb.hpp"
#include "util/errors.hpp"

namespace {

// Walks arrays of tables (the rows) and collects the paths of rows without `source`.
void rows_without_source(const toml::node& node, const std::string& path, std::vector<std::string>& bad) {
  if (const toml::table* t = node.as_table()) {
    for (const auto& [k, v] : *t) rows_without_source(v, path + "." + std::string(k.str()), bad);
  } else if (const toml::array* a = node.as_array()) {
    for (size_t i = 0; i < a->size(); ++i) {
      const toml::node& item = *a->get(i);
      if (const toml::table* row = item.as_table()) {
        if (!row->contains("source")) bad.push_back(path + "[" + std::to_string(i) + "]");
        rows_without_source(item, path + "[" + std::to_string(i) + "]", bad);
      }
    }
  }
}

}  // namespace

TEST(KnowledgeBase, EmbeddedTablesParse) {
  const cd::Kb& kb = cd::Kb::get();
  EXPECT_EQ(kb.names().size(), cd::kb::embedded_files().size());
}

TEST(KnowledgeBase, EveryRowNamesItsSource) {
  for (const auto& f : cd::kb::embedded_files()) {
    toml::table t = toml::parse(f.text, std::string(f.name));
    std::vector<std::string> bad;
    rows_without_source(t, std::string(f.name), bad);
    EXPECT_TRUE(bad.empty()) << f.name << ": rows without source: " << (bad.empty() ? "" : bad.front()) << " (+"
                             << (bad.empty() ? 0 : bad.size() - 1) << " more)";
  }
}

TEST(KnowledgeBase, ParseErrorsAreOneLine) {
  try {
    cd::Kb::from_texts({{"broken.toml", "[[gpu]]\nname = \"x\nsource = 1\n"}});
    FAIL() << "expected an error";
  } catch (const cd::InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("broken.toml:"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

namespace {

// The team's private notes: a user of the repository does not have them, so no source may
// point there (name the public original, or the machine, date and command of a measurement).
const std::vector<std::string> kPrivateNotes = {"../shared", "shared/reference", "compat_data.md", "fatbin_and_arch.md",
                                                "verify_and_libs.md", "env_report_anchors.md", "h200_machine.md",
                                                "build_notes.md", "debian_nvidia_packages.md"};

std::string private_note_in(const std::string& text) {
  for (const auto& n : kPrivateNotes)
    if (text.find(n) != std::string::npos) return n;
  return {};
}

}  // namespace

TEST(KnowledgeBase, SourcesNameThePublicOriginal) {
  for (const auto& f : cd::kb::embedded_files()) {
    std::istringstream in{std::string(f.text)};
    std::string l;
    for (int line = 1; std::getline(in, l); ++line) {
      std::string note = private_note_in(l);
      EXPECT_TRUE(note.empty()) << f.name << ":" << line << " cites " << note << ": " << l;
    }
  }
}

TEST(KnowledgeBase, DocsNameThePublicOriginal) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files = {fs::path(CD_SOURCE_DIR) / "README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(CD_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  ASSERT_GT(files.size(), 3u);
  for (const auto& p : files) {
    std::ifstream in(p);
    std::string l;
    for (int line = 1; std::getline(in, l); ++line) {
      std::string note = private_note_in(l);
      EXPECT_TRUE(note.empty()) << p.filename().string() << ":" << line << " cites " << note << ": " << l;
    }
  }
}

// The code cites public originals too: a comment that sends a reader to the private notes
// sends them nowhere (this file names the notes only to look for them).
TEST(KnowledgeBase, CodeNamesThePublicOriginal) {
  namespace fs = std::filesystem;
  const fs::path top(CD_SOURCE_DIR);
  const std::vector<std::string> exts = {".cpp", ".hpp", ".h", ".cmake", ".txt", ".sh", ".py", ".md", ".toml"};
  std::vector<fs::path> files = {top / "CMakeLists.txt", top / "dev.sh"};
  for (const char* dir : {"src", "cmake", "fuzz", "scripts", "bench", "tests", "data"})
    for (const auto& e : fs::recursive_directory_iterator(top / dir))
      if (e.is_regular_file() && e.path().filename() != "kb_sources_test.cpp" &&
          std::find(exts.begin(), exts.end(), e.path().extension().string()) != exts.end())
        files.push_back(e.path());
  ASSERT_GT(files.size(), 100u);
  for (const auto& p : files) {
    std::ifstream in(p);
    ASSERT_TRUE(in.good()) << p;
    std::string l;
    for (int line = 1; std::getline(in, l); ++line) {
      std::string note = private_note_in(l);
      EXPECT_TRUE(note.empty()) << fs::relative(p, top).string() << ":" << line << " cites " << note << ": " << l;
    }
  }
}
