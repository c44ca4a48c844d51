#include "explain/explain.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

LogFacts scan_fd(int fd, const std::string& source, const Matcher& matcher, ScanLimits limits) {
#ifdef POSIX_FADV_SEQUENTIAL
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  LogScanner scanner(matcher, limits);
  std::vector<char> buf(1 << 20);
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("cannot read {}: {}", source, std::strerror(errno)));
    if (n == 0) break;
    scanner.feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  scanner.finish();
  LogFacts facts = scanner.take();
  facts.source = source;
  return facts;
}

LogFacts scan_file(const std::string& path, const Matcher& matcher, ScanLimits limits) {
  if (path == "-") return scan_fd(STDIN_FILENO, "-", matcher, limits);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  try {
    LogFacts facts = scan_fd(fd, path, matcher, limits);
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
