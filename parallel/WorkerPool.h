#pragma once
// WorkerPool: N persistent threads that run one task per phase, fork-join style, for
// ParallelWrapper. The coordinator (the thread that called fit) starts a phase with start(task);
// every worker runs task(workerIndex) once; wait() returns when all have finished and rethrows
// the first exception any of them threw.
//
// Workers never wait for each other, only for the coordinator, so a failing worker cannot leave
// the others stuck at a barrier: the phase still completes, and the failure surfaces in wait().
// Worker w is always the same thread, so per-worker state (a model replica, its DeviceContext,
// the OpenMP thread budget, a CUDA device) stays on one thread for the pool's lifetime.
//
// A worker that has finished a phase polls for the next one for up to kSpin before it sleeps,
// yielding its core to any other runnable thread meanwhile. ParallelWrapper starts the next phase
// within that time (averaging follows training, training follows averaging), and a thread that
// sleeps is woken late on a virtual machine whose idle vCPUs halt, a delay every phase of a short
// training round would pay (bench/worker_pool.cpp measures it).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dl4cpp::parallel {

class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();  // finishes a running phase, then joins every thread
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  // Starts a phase: each worker calls task(w). The task must stay valid until wait() returns.
  // Calling start() while a phase runs is a logic error (throws std::logic_error).
  void start(std::function<void(int)> task);
  // Blocks until the phase has finished on every worker; rethrows the first exception.
  void wait();
  // wait() that never throws (for cleanup paths); returns the exception, if any.
  std::exception_ptr waitNoThrow();
  void run(std::function<void(int)> task) {
    start(std::move(task));
    wait();
  }

 private:
  static constexpr std::chrono::microseconds kSpin{1000};

  void loop(int worker);
  // Polls, for up to kSpin, for a phase (or the exit) after generation `seen`.
  void awaitBriefly(uint64_t seen) const;

  std::mutex mutex_;
  std::condition_variable workReady_;
  std::condition_variable phaseDone_;
  std::function<void(int)> task_;
  // Advanced under mutex_ by start() and by the destructor; polled without it by awaitBriefly.
  std::atomic<uint64_t> generation_{0};
  int pending_ = 0;
  bool exiting_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace dl4cpp::parallel
