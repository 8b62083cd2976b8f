#include "sim/thread_pool.h"

namespace rlt {

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  m_num_threads = num_threads < 1 ? 1 : num_threads;
  for (int t = 1; t < m_num_threads; ++t) m_workers.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  for (auto& w : m_workers) w.join();
}

// Claims and runs tasks of the current job until none are left. Called with the lock held.
void ThreadPool::drain() {
  std::unique_lock<std::mutex> lock(m_mutex, std::adopt_lock);
  while (m_task != nullptr && m_next_task < m_num_tasks) {
    const int t = m_next_task++;
    const auto* task = m_task;
    lock.unlock();
    (*task)(t);
    lock.lock();
    if (++m_tasks_finished == m_num_tasks) m_done.notify_all();
  }
  lock.release();
}

void ThreadPool::worker_loop() {
  unsigned seen = 0;
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
    if (m_stop) return;
    seen = m_generation;
    lock.release();  // drain() takes over the held lock and leaves it held
    drain();
    lock = std::unique_lock<std::mutex>(m_mutex, std::adopt_lock);
  }
}

void ThreadPool::run(int num_tasks, const std::function<void(int)>& task) {
  if (num_tasks <= 0) return;
  if (m_workers.empty() || num_tasks == 1) {
    for (int t = 0; t < num_tasks; ++t) task(t);
    return;
  }
  std::unique_lock<std::mutex> lock(m_mutex);
  m_task = &task;
  m_num_tasks = num_tasks;
  m_next_task = 0;
  m_tasks_finished = 0;
  ++m_generation;
  m_wake.notify_all();
  lock.release();  // drain() takes over the held lock and leaves it held
  drain();
  lock = std::unique_lock<std::mutex>(m_mutex, std::adopt_lock);
  m_done.wait(lock, [&] { return m_tasks_finished == m_num_tasks; });
  m_task = nullptr;
}

}  // namespace rlt
