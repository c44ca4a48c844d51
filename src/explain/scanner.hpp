#pragma once
// Streaming log scanner: fed chunks of any size (a file read loop, or a child's
// stdout/stderr as it arrives), it splits lines, cleans them and runs the matcher
// over blocks of lines. Memory stays bounded whatever the input: lines are cut at
// `max_line` (head and tail kept), events are capped per signature, and at most two
// blocks wait for the matcher, which runs on its own thread (reading and cleaning
// overlap with matching).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "explain/clean.hpp"
#include "explain/matcher.hpp"
#include "facts/log.hpp"

namespace cd {

struct ScanLimits {
  size_t max_line = 64 * 1024;       // longer lines keep their first and last half of this
  size_t block = 256 * 1024;         // bytes of cleaned text matched in one set pass
  size_t events_per_signature = 3;   // further matches are only counted
  size_t max_events = 1000;
  size_t max_ranks = 1024;
  size_t keep_head = 0;  // bytes of the raw input kept for the report parsers (explain/report.hpp)
};

class LogScanner {
 public:
  explicit LogScanner(const Matcher& matcher, ScanLimits limits = {});
  ~LogScanner();
  LogScanner(const LogScanner&) = delete;
  LogScanner& operator=(const LogScanner&) = delete;

  // Feeds raw bytes of stream 0 (stdout / a file) or 1 (stderr); each has its own partial line.
  void feed(std::string_view chunk, int stream = 0);
  // Completes partial lines and matches what is left. Call once, at the end.
  void finish();

  // Complete only after finish().
  const LogFacts& facts() const { return facts_; }
  LogFacts take() { return std::move(facts_); }
  // The first limits.keep_head raw bytes fed (stream 0 and 1 in arrival order).
  std::string take_head() { return std::move(head_); }
  // An error-severity signature (not context) matched (complete after finish()).
  bool found_error() const { return found_error_; }

 private:
  struct Stream {
    std::string head;  // the line so far (or its first half once too long)
    std::string tail;  // the last bytes of a too-long line
    bool overflow = false;
  };
  struct LineRef {
    uint32_t offset, length;
    uint64_t line;
    std::string rank;
    std::shared_ptr<const std::string> frame;
    std::string source;   // the aggregator's service or unit the line came from
    uint64_t chain = 0;   // lines that continue one another share a chain
    bool joined = false;  // the chain's lines so far joined into one message
  };
  struct Frame {
    std::shared_ptr<const std::string> file;
    uint64_t line = 0;
  };

  void append_partial(Stream& s, std::string_view data);
  void complete_line(std::string_view raw, std::string_view tail = {});
  void add_segments(std::string_view raw, uint64_t line);
  void add_segment(std::string_view seg, uint64_t line);
  void add_ref(std::string_view text, LineRef ref);
  void extend_joined(std::string_view prev, std::string_view cur, Continuation k);
  void emit_joined();
  struct Block {
    std::string text;
    std::vector<LineRef> refs;
  };
  void flush_block();
  void match_block(const Block& b);
  void worker_loop();
  void stop_worker();
  void record(const SignatureMatch& m, const LineRef& ref, std::string_view text);

  const Matcher& matcher_;
  ScanLimits limits_;
  LogFacts facts_;
  Stream streams_[2];
  std::string block_;
  std::vector<LineRef> refs_;
  std::string scratch_;
  std::string head_;
  // Line joining (main thread): the last line of the previous block (the previous line is
  // read from the block otherwise), the length of the line before the previous one, and the
  // chain of continued lines joined so far.
  std::string prev_text_, prev_rank_, prev_source_, joined_, joined_rank_;
  std::shared_ptr<const std::string> joined_frame_;
  size_t prev_prev_size_ = 0;
  uint64_t chain_ = 0, chain_line_ = 0;
  size_t chain_lines_ = 1;
  // Line joining (matcher thread): signatures already matched in the current chain, so a
  // joined line reports only what its parts did not.
  uint64_t matched_chain_ = 0;
  std::vector<const ErrorSignature*> chain_signatures_;
  std::unordered_map<std::string, Frame> frames_;  // by rank ("" = none)
  std::unordered_map<std::string, size_t> stored_;  // events kept per signature (matcher thread)
  std::atomic<bool> found_error_ = false;
  bool finished_ = false;
  // Blocks handed to the matcher thread. The main thread writes lines/bytes/ranks of
  // facts_, the matcher thread events/counts: separate members, no shared writes.
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Block> queue_;
  bool closing_ = false;
  std::thread worker_;
};

}  // namespace cd
