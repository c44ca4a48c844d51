// Issue 12 #4: the loader's readers open a FIFO (or a device) without blocking and refuse
// it (main's open(2) waited for a writer forever). Each read runs in a detached thread, so
// a regression fails the test instead of hanging it.
#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "loader/elf_dyn.hpp"
#include "loader/elf_fixtures.hpp"
#include "loader/elf_symbols.hpp"
#include "loader/read_file.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

using namespace cd::testing;

// What `read` says (its exception text, or "ok"), or "hung" after 10 s.
std::string within_10s(std::function<std::string()> read) {
  auto done = std::make_shared<std::promise<std::string>>();
  auto result = done->get_future();
  std::thread([done, read] {
    try {
      done->set_value(read());
    } catch (const std::exception& e) {
      done->set_value(e.what());
    }
  }).detach();
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return "hung";
  return result.get();
}

TEST(LoaderFifo, ReadersRefuseAFifo) {
  TempDir t;
  std::string fifo = t / "libfifo.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(within_10s([fifo] { read_elf_symbols(fifo); return std::string("ok"); }),
            fifo + ": not a regular file (a FIFO)");
  EXPECT_NE(within_10s([fifo] { read_elf_dyn(fifo); return std::string("ok"); }).find("not a regular file (a FIFO)"),
            std::string::npos);
  EXPECT_EQ(within_10s([fifo] { return read_file_sized(Root(), fifo, 1024).has_value() ? std::string("read") : "none"; }),
            "none");
}

TEST(LoaderFifo, ReadFileStillReadsRegularFiles) {
  TempDir t;
  write_file(t / "f", "hello");
  EXPECT_EQ(read_file_sized(Root(), t / "f", 1024).value_or(""), "hello");
  EXPECT_EQ(read_file_sized(Root(), t / "f", 3).value_or(""), "hel");
}

}  // namespace
}  // namespace cd
