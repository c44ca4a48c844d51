#include "explain/scanner.hpp"

#include <algorithm>
#include <cstring>

#include "explain/clean.hpp"

namespace cd {
namespace {

constexpr size_t kEventText = 400;          // bytes of the line kept in an event
constexpr uint64_t kFrameReach = 200;       // a traceback frame explains lines this close after it
constexpr std::string_view kTraceback = "Traceback (most recent call last)";
constexpr size_t kMaxChainLines = 6;        // a joined message spans at most this many lines
constexpr size_t kMaxJoined = 2048;         // and this many bytes

}  // namespace

LogScanner::LogScanner(const Matcher& matcher, ScanLimits limits) : matcher_(matcher), limits_(limits) {
  block_.reserve(limits_.block + limits_.max_line + 16);
  worker_ = std::thread([this] { worker_loop(); });
}

LogScanner::~LogScanner() { stop_worker(); }

void LogScanner::stop_worker() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void LogScanner::worker_loop() {
  while (true) {
    Block b;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing and drained
      b = std::move(queue_.front());
      queue_.pop_front();
    }
    cv_.notify_all();  // room for the producer
    match_block(b);
  }
}

void LogScanner::append_partial(Stream& s, std::string_view data) {
  if (!s.overflow) {
    s.head.append(data);
    if (s.head.size() <= limits_.max_line) return;
    s.overflow = true;
    s.tail.assign(s.head, limits_.max_line / 2, std::string::npos);
    s.head.resize(limits_.max_line / 2);
  } else {
    s.tail.append(data);
  }
  if (s.tail.size() > limits_.max_line) s.tail.erase(0, s.tail.size() - limits_.max_line / 2);
}

void LogScanner::feed(std::string_view chunk, int stream) {
  Stream& s = streams_[stream == 1 ? 1 : 0];
  facts_.bytes += chunk.size();
  if (head_.size() < limits_.keep_head)
    head_.append(chunk.substr(0, std::min(chunk.size(), limits_.keep_head - head_.size())));
  while (!chunk.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    if (nl == nullptr) {
      append_partial(s, chunk);
      return;
    }
    std::string_view piece = chunk.substr(0, static_cast<size_t>(static_cast<const char*>(nl) - chunk.data()));
    chunk.remove_prefix(piece.size() + 1);
    if (s.head.empty() && !s.overflow) {  // the common case: the whole line is in this chunk
      complete_line(piece);
      continue;
    }
    append_partial(s, piece);
    if (s.overflow) complete_line(s.head, s.tail);
    else complete_line(s.head);
    s.head.clear();
    s.tail.clear();
    s.overflow = false;
  }
}

void LogScanner::complete_line(std::string_view raw, std::string_view tail) {
  uint64_t line = ++facts_.lines;
  if (!tail.empty()) {  // already cut by append_partial
    ++facts_.long_lines;
    add_segments(raw, line);
    add_segments(tail, line);
    return;
  }
  if (raw.size() > limits_.max_line) {  // cut a long line that arrived whole
    ++facts_.long_lines;
    add_segments(raw.substr(0, limits_.max_line / 2), line);
    add_segments(raw.substr(raw.size() - limits_.max_line / 2), line);
    return;
  }
  add_segments(raw, line);
}

// A carriage return inside a line starts a new visible line on a terminal (progress
// bars); each piece is matched on its own, under the same line number.
void LogScanner::add_segments(std::string_view raw, uint64_t line) {
  while (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  while (true) {
    const void* cr = std::memchr(raw.data(), '\r', raw.size());
    if (cr == nullptr) break;
    size_t n = static_cast<size_t>(static_cast<const char*>(cr) - raw.data());
    if (n > 0) add_segment(raw.substr(0, n), line);
    raw.remove_prefix(n + 1);
  }
  if (!raw.empty()) add_segment(raw, line);
}

void LogScanner::add_segment(std::string_view seg, uint64_t line) {
  CleanLine c = clean_line(seg, scratch_);
  std::string rank(c.rank);
  if (!rank.empty() && (facts_.ranks.empty() || facts_.ranks.back() != rank) && facts_.ranks.size() < limits_.max_ranks &&
      std::find(facts_.ranks.begin(), facts_.ranks.end(), rank) == facts_.ranks.end())
    facts_.ranks.push_back(rank);

  // Python tracebacks: remember the innermost frame's file per rank (cheap prefix tests).
  std::shared_ptr<const std::string> frame;
  if (c.text.starts_with(kTraceback)) {
    frames_.erase(rank);
  } else if (std::string_view file = traceback_frame_file(c.text); !file.empty()) {
    if (frames_.size() < limits_.max_ranks || frames_.count(rank))
      frames_[rank] = Frame{std::make_shared<const std::string>(file), line};
  }
  if (!frames_.empty()) {
    auto it = frames_.find(rank);
    if (it != frames_.end() && line - it->second.line <= kFrameReach) frame = it->second.file;
  }

  LineRef ref{0, 0, line, std::move(rank), std::move(frame), std::string(c.source)};
  // The previous line is the last one in the block (copied aside when a block is flushed).
  std::string_view prev = prev_text_, prev_rank = prev_rank_, prev_source = prev_source_;
  if (!refs_.empty()) {
    prev = std::string_view(block_.data() + refs_.back().offset, refs_.back().length);
    prev_rank = refs_.back().rank;
    prev_source = refs_.back().source;
  }
  // Lines of different ranks or of different services never continue one another.
  Continuation k = ref.rank == prev_rank && ref.source == prev_source ? continuation_of(prev, c.text, prev_prev_size_)
                                                                      : Continuation::none;
  bool join = k != Continuation::none && chain_lines_ < kMaxChainLines;
  if (!join) {
    emit_joined();
    ++chain_;
    chain_line_ = line;
    joined_.clear();
  } else {
    extend_joined(prev, c.text, k);
    joined_rank_ = ref.rank;  // reported with the last line's rank and frame
    joined_frame_ = ref.frame;
  }
  ref.chain = chain_;
  prev_prev_size_ = prev.size();
  add_ref(c.text, std::move(ref));
  if (block_.size() >= limits_.block) flush_block();
}

void LogScanner::extend_joined(std::string_view prev, std::string_view cur, Continuation k) {
  if (chain_lines_ == 1) joined_ = prev;
  ++chain_lines_;
  if (joined_.size() > kMaxJoined) return;  // too long to be one message: not matched joined
  if (k == Continuation::spaced) {
    while (!joined_.empty() && (joined_.back() == ' ' || joined_.back() == '\t')) joined_.pop_back();
    joined_ += ' ';
  }
  joined_.append(continuation_text(cur, prev));
}

// The chain's lines joined are matched once, after its last line, reported at the line
// where the message starts. Each line is thus matched at most twice.
void LogScanner::emit_joined() {
  if (chain_lines_ > 1 && joined_.size() <= kMaxJoined)
    add_ref(joined_, LineRef{0, 0, chain_line_, joined_rank_, joined_frame_, {}, chain_, true});
  chain_lines_ = 1;
}

void LogScanner::add_ref(std::string_view text, LineRef ref) {
  ref.offset = static_cast<uint32_t>(block_.size());
  ref.length = static_cast<uint32_t>(text.size());
  refs_.push_back(std::move(ref));
  block_.append(text);
  block_ += '\n';
}

void LogScanner::flush_block() {
  if (refs_.empty()) return;
  // The next line may continue the last one of this block (a joined line never ends a block).
  prev_text_.assign(block_, refs_.back().offset, refs_.back().length);
  prev_rank_ = refs_.back().rank;
  prev_source_ = refs_.back().source;
  Block b{std::move(block_), std::move(refs_)};
  block_ = std::string();
  block_.reserve(limits_.block + limits_.max_line + 16);
  refs_.clear();
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return queue_.size() < 2; });  // bounded: at most two blocks waiting
  queue_.push_back(std::move(b));
  lock.unlock();
  cv_.notify_all();
}

void LogScanner::match_block(const Block& b) {
  if (!matcher_.may_match(b.text)) return;
  std::vector<SignatureMatch> matches;
  for (const LineRef& ref : b.refs) {
    std::string_view text(b.text.data() + ref.offset, ref.length);
    matches.clear();
    matcher_.match_line(text, matches);
    if (ref.chain != matched_chain_) {
      matched_chain_ = ref.chain;
      chain_signatures_.clear();
    }
    for (const auto& m : matches) {
      bool seen = std::find(chain_signatures_.begin(), chain_signatures_.end(), m.signature) != chain_signatures_.end();
      if (ref.joined && seen) continue;  // the parts already reported it
      if (!seen) chain_signatures_.push_back(m.signature);
      record(m, ref, text);
    }
  }
}

void LogScanner::record(const SignatureMatch& m, const LineRef& ref, std::string_view text) {
  const ErrorSignature& sig = *m.signature;
  ++facts_.counts[sig.name];
  if (sig.severity == Severity::error && sig.role != SignatureRole::context) found_error_ = true;
  size_t& kept = stored_[sig.name];
  if (kept >= limits_.events_per_signature || facts_.events.size() >= limits_.max_events) {
    ++facts_.events_dropped;
    return;
  }
  ++kept;
  LogEvent e;
  e.id = sig.id;
  e.signature = sig.name;
  e.line = ref.line;
  e.rank = ref.rank;
  e.text = to_valid_utf8(text, kEventText);
  for (const auto& [k, v] : m.captures) e.captures[k] = to_valid_utf8(v, kEventText);
  if (ref.frame) e.frame = to_valid_utf8(*ref.frame, kEventText);
  facts_.events.push_back(std::move(e));
}

void LogScanner::finish() {
  if (finished_) return;
  finished_ = true;
  for (Stream& s : streams_) {
    if (s.head.empty() && !s.overflow) continue;
    if (s.overflow) complete_line(s.head, s.tail);
    else complete_line(s.head);
    s.head.clear();
    s.tail.clear();
  }
  emit_joined();
  flush_block();
  stop_worker();  // drains the queue, then joins
}

}  // namespace cd
