// binary/stream_ahead on a real file evicted from the page cache: a walk in small steps
// gets the next pages read ahead of it; a walk in big jumps, or over pages already in
// memory, gets no reads at all.
#include "binary/stream_ahead.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "binary/prefetch.hpp"

namespace cd::bin {
namespace {

constexpr uint64_t kSize = 64 << 20;
constexpr uint64_t kPage = 4096;

class StreamAheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // On the build tree's disk: tmpfs keeps pages whatever posix_fadvise says.
    path_ = std::filesystem::current_path() / ("stream_ahead_" + std::to_string(getpid()) + ".bin");
    int w = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(w, 0);
    std::vector<uint8_t> block(1 << 20, 0x5a);
    for (uint64_t at = 0; at < kSize; at += block.size()) ASSERT_EQ(write(w, block.data(), block.size()), ssize_t(block.size()));
    fsync(w);
    close(w);
    fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd_, 0);
    void* p = mmap(nullptr, kSize, PROT_READ, MAP_PRIVATE, fd_, 0);
    ASSERT_NE(p, MAP_FAILED);
    map_ = static_cast<const uint8_t*>(p);
    advise(Bytes(map_, kSize), MADV_RANDOM);
  }
  void TearDown() override {
    if (map_) munmap(const_cast<uint8_t*>(map_), kSize);
    if (fd_ >= 0) close(fd_);
    std::filesystem::remove(path_);
  }
  bool evict() {
    posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
    return resident_pages(0, kSize) == 0;
  }
  uint64_t resident_pages(uint64_t begin, uint64_t end) const {
    std::vector<unsigned char> in((end - begin) / kPage);
    if (mincore(const_cast<uint8_t*>(map_ + begin), end - begin, in.data()) != 0) return UINT64_MAX;
    uint64_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
  }
  // Waits (up to 10 s) until every page of [begin, end) is in memory. (Not bytes_read(): the
  // kernel's own read-ahead behind a pread may bring a chunk in before its turn, which is then skipped.)
  bool wait_resident(uint64_t begin, uint64_t end) const {
    for (int i = 0; i < 1000 && resident_pages(begin, end) < (end - begin) / kPage; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return resident_pages(begin, end) == (end - begin) / kPage;
  }

  std::filesystem::path path_;
  int fd_ = -1;
  const uint8_t* map_ = nullptr;
};

TEST_F(StreamAheadTest, SmallStepsGetTheLeadReadAhead) {
  if (!evict()) GTEST_SKIP() << "this filesystem keeps the file's pages in memory";
  StreamAhead s(fd_, Bytes(map_, kSize), 0);
  for (uint64_t at = 0; at <= 4 * kPage; at += kPage) s.at(at);
  EXPECT_TRUE(wait_resident(4 * kPage, 4 * kPage + StreamAhead::kLead)) << s.bytes_read();
  s.stop();
  EXPECT_GT(s.bytes_read(), 0u);
  EXPECT_LE(s.bytes_read(), StreamAhead::kLead);  // never past the lead it was given
  EXPECT_EQ(resident_pages(kSize - 16 * kPage, kSize), 0u);  // nothing near the end
}

TEST_F(StreamAheadTest, BigJumpsReadNothing) {
  if (!evict()) GTEST_SKIP() << "this filesystem keeps the file's pages in memory";
  StreamAhead s(fd_, Bytes(map_, kSize), 0);
  for (uint64_t at = 0; at < kSize; at += 2 * StreamAhead::kDenseStep) s.at(at);
  s.stop();
  EXPECT_EQ(s.bytes_read(), 0u);
  EXPECT_EQ(resident_pages(0, kSize), 0u);
}

// An archive's stream follows its members whatever their size.
TEST_F(StreamAheadTest, EveryStepStreamsBigStepsToo) {
  if (!evict()) GTEST_SKIP() << "this filesystem keeps the file's pages in memory";
  StreamAhead s(fd_, Bytes(map_, kSize), 0, true);
  uint64_t at = 3 * StreamAhead::kDenseStep;
  s.at(at);
  EXPECT_TRUE(wait_resident(at, at + StreamAhead::kLead)) << s.bytes_read();
  s.stop();
  EXPECT_EQ(resident_pages(0, 2 * StreamAhead::kDenseStep), 0u);  // nothing behind the walk
}

TEST_F(StreamAheadTest, PagesInMemoryAreNotReadAgain) {
  std::vector<uint8_t> buffer(kSize);
  ASSERT_EQ(pread(fd_, buffer.data(), kSize, 0), ssize_t(kSize));  // warm
  StreamAhead s(fd_, Bytes(map_, kSize), 0);
  for (uint64_t at = 0; at < 64 * kPage; at += kPage) s.at(at);
  s.stop();
  EXPECT_EQ(s.bytes_read(), 0u);
}

// A file an earlier run read in part: the walk through its warm start reads nothing, and the
// stream starts where the cold part begins.
TEST_F(StreamAheadTest, StartsWhereTheColdPartBegins) {
  if (!evict()) GTEST_SKIP() << "this filesystem keeps the file's pages in memory";
  uint64_t warm = 24ull << 20;
  std::vector<uint8_t> buffer(warm);
  ASSERT_EQ(pread(fd_, buffer.data(), warm, 0), ssize_t(warm));
  StreamAhead s(fd_, Bytes(map_, kSize), 0);
  for (uint64_t at = 0; at < warm - StreamAhead::kLead; at += kPage) s.at(at);
  EXPECT_EQ(s.bytes_read(), 0u);  // every lead so far was in memory
  for (uint64_t at = warm - StreamAhead::kLead; at <= warm + kPage; at += kPage) s.at(at);
  EXPECT_TRUE(wait_resident(warm, warm + StreamAhead::kLead)) << s.bytes_read();
  s.stop();
  EXPECT_GT(s.bytes_read(), 0u);
}

TEST_F(StreamAheadTest, FollowsTheWalkAfterAJump) {
  if (!evict()) GTEST_SKIP() << "this filesystem keeps the file's pages in memory";
  StreamAhead s(fd_, Bytes(map_, kSize), 0);
  uint64_t far = 40ull << 20;
  s.at(0);
  s.at(far);  // a jump: no stream
  s.at(far + kPage);
  EXPECT_TRUE(wait_resident(far + kPage, far + kPage + StreamAhead::kLead)) << s.bytes_read();
  s.stop();
  EXPECT_EQ(resident_pages(kPage, far - StreamAhead::kChunk), 0u);  // what it jumped over stays unread
}

}  // namespace
}  // namespace cd::bin
