// A fixed pool of worker threads; the calling thread takes part in every job.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rlt {

class ThreadPool {
 public:
  // num_threads <= 0 means one per hardware thread.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return m_num_threads; }

  // Calls task(t) for every t in [0, num_tasks), spread over the threads; returns when all are
  // done. Tasks are claimed dynamically, so callers must not rely on which thread runs which task.
  void run(int num_tasks, const std::function<void(int)>& task);

 private:
  void worker_loop();
  void drain();

  int m_num_threads = 1;
  std::vector<std::thread> m_workers;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::condition_variable m_done;
  const std::function<void(int)>* m_task = nullptr;
  int m_num_tasks = 0;
  int m_next_task = 0;
  int m_tasks_finished = 0;
  unsigned m_generation = 0;
  bool m_stop = false;
};

}  // namespace rlt
