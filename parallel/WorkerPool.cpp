#include "parallel/WorkerPool.h"

#include <stdexcept>
#include <thread>
#include <utility>

namespace dl4cpp::parallel {

WorkerPool::WorkerPool(int workers) {
  if (workers < 1) throw std::invalid_argument("WorkerPool: needs at least one worker");
  threads_.reserve(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { loop(w); });
}

WorkerPool::~WorkerPool() {
  waitNoThrow();
  {
    std::lock_guard lock(mutex_);
    exiting_ = true;
    ++generation_;
  }
  workReady_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::start(std::function<void(int)> task) {
  {
    std::lock_guard lock(mutex_);
    if (pending_ > 0) throw std::logic_error("WorkerPool::start: a phase is still running");
    task_ = std::move(task);
    error_ = nullptr;
    pending_ = size();
    ++generation_;
  }
  workReady_.notify_all();
}

std::exception_ptr WorkerPool::waitNoThrow() {
  std::unique_lock lock(mutex_);
  phaseDone_.wait(lock, [this] { return pending_ == 0; });
  return std::exchange(error_, nullptr);
}

void WorkerPool::wait() {
  if (std::exception_ptr error = waitNoThrow()) std::rethrow_exception(error);
}

void WorkerPool::awaitBriefly(uint64_t seen) const {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (generation_.load(std::memory_order_acquire) == seen &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
}

void WorkerPool::loop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* task = nullptr;
    awaitBriefly(seen);
    {
      std::unique_lock lock(mutex_);
      workReady_.wait(lock, [&] { return exiting_ || generation_ != seen; });
      if (exiting_) return;
      seen = generation_;
      task = &task_;
    }
    std::exception_ptr error;
    try {
      (*task)(worker);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      // Hand the exception over (or drop it) under the lock, so the coordinator always holds the
      // last reference and no worker touches it after wait() returns.
      if (error && !error_) error_ = std::move(error);
      error = nullptr;
      if (--pending_ == 0) phaseDone_.notify_all();
    }
  }
}

}  // namespace dl4cpp::parallel
