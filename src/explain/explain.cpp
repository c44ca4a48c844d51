#include "explain/explain.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "kb/errors.hpp"
#include "util/errors.hpp"

namespace cd {

const Matcher& matcher_for(const Kb& kb) {
  // Kb views need copyable values; the matcher is shared instead.
  using Ptr = std::shared_ptr<const Matcher>;
  const Ptr& m = kb.view<Ptr>("explain.matcher", [](const Kb& k) {
    return std::make_shared<const Matcher>(error_signatures(k));
  });
  return *m;
}

// Regular files are mapped rather than read: no copy into a buffer, and the scanner
// still sees bounded slices (memory stays bounded; the page cache holds the file).
static bool scan_mapped(int fd, LogScanner& scanner) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return false;
  auto size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return false;
  (void)madvise(map, size, MADV_SEQUENTIAL);
  const char* base = static_cast<const char*>(map);
  constexpr size_t kSlice = 4u << 20;
  for (size_t off = 0; off < size; off += kSlice) {
    size_t n = std::min(kSlice, size - off);
    scanner.feed(std::string_view(base + off, n));
    (void)madvise(const_cast<char*>(base + off), n, MADV_DONTNEED);  // done with these pages
  }
  munmap(map, size);
  return true;
}

LogFacts scan_fd(int fd, const std::string& source, const Matcher& matcher, ScanLimits limits, std::string* head) {
#ifdef POSIX_FADV_SEQUENTIAL
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  LogScanner scanner(matcher, limits);
  std::vector<char> buf(scan_mapped(fd, scanner) ? 0 : 1 << 20);
  while (!buf.empty()) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("cannot read {}: {}", source, std::strerror(errno)));
    if (n == 0) break;
    scanner.feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  scanner.finish();
  LogFacts facts = scanner.take();
  if (head) *head = scanner.take_head();
  facts.source = source;
  return facts;
}

LogFacts scan_file(const std::string& path, const Matcher& matcher, ScanLimits limits, std::string* head) {
  if (path == "-") return scan_fd(STDIN_FILENO, "-", matcher, limits, head);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  try {
    LogFacts facts = scan_fd(fd, path, matcher, limits, head);
    ::close(fd);
    return facts;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

LogFacts scan_text(std::string_view text, const Matcher& matcher, ScanLimits limits) {
  LogScanner scanner(matcher, limits);
  scanner.feed(text);
  scanner.finish();
  return scanner.take();
}

}  // namespace cd
