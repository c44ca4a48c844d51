#pragma once
// A fixed set of worker threads for independent jobs (scanning files in parallel).
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace cd {

class ThreadPool {
 public:
  // threads == 0: one per hardware thread (at least 1).
  explicit ThreadPool(size_t threads = 0);
  ~ThreadPool();  // finishes queued jobs, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> job);
  // Blocks until every submitted job has finished.
  void wait();
  size_t size() const { return workers_.size(); }

 private:
  void work();

  std::vector<std::thread> workers_;
  std::queue<std::function<void()>> jobs_;
  std::mutex mutex_;
  std::condition_variable has_job_;
  std::condition_variable idle_;
  size_t running_ = 0;
  bool stopping_ = false;
};

// Calls fn(i) for i in [0, n) on up to `threads` threads; jobs must not throw.
// Indices are handed out in order, so put the biggest jobs first.
void parallel_for(size_t n, size_t threads, const std::function<void(size_t)>& fn);

}  // namespace cd
