// The worker pool behind parallel_for (see parallel.hpp).
//
// Workers block on a condition variable between jobs (no spinning).  A job is split into
// `parts` ranges claimed through an atomic counter by the workers and the submitting thread.
// One job runs at a time; a second submitter runs its body inline instead of waiting.  After
// fork() the child abandons the parent's pool state (its threads do not exist there) and
// starts a fresh pool on first use.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "mskernel_cpu/parallel.hpp"

namespace mskernel_cpu {
namespace {

thread_local bool inside_parallel_body = false;
std::atomic<bool> forked_child{false};

struct Job {
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable finished;
  bool stop = false;
  uint64_t generation = 0;
  RangeBody body = nullptr;
  void* context = nullptr;
  int64_t n = 0;
  int64_t parts = 0;
  std::atomic<int64_t> next{0};
  int64_t done = 0;
  std::exception_ptr error;
  std::vector<std::thread> workers;

  // Claim and run ranges until none is left.
  void work() {
    inside_parallel_body = true;
    for (;;) {
      int64_t part = next.fetch_add(1);
      if (part >= parts) break;
      std::exception_ptr failure;
      try {
        body(context, n * part / parts, n * (part + 1) / parts);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (failure && !error) error = failure;
      if (++done == parts) finished.notify_one();
    }
    inside_parallel_body = false;
  }

  void worker_loop(uint64_t seen) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
      }
      work();
    }
  }
};

class Pool {
 public:
  int threads() const { return threads_.load(std::memory_order_relaxed); }

  void set_threads(int n) {
    std::lock_guard<std::mutex> submit(submit_);
    retire();
    threads_.store(std::max(1, n), std::memory_order_relaxed);
  }

  // Runs the job on the pool; false when the caller should run it inline instead.
  bool run(int64_t n, int64_t grain, RangeBody body, void* context) {
    if (inside_parallel_body) return false;
    std::unique_lock<std::mutex> submit(submit_, std::try_to_lock);
    if (!submit.owns_lock()) return false;
    if (forked_child.exchange(false)) job_ = nullptr;  // the parent's threads are gone: leak
    const int64_t parts = std::min<int64_t>(threads(), n / grain);
    if (parts < 2) return false;
    Job& job = ensure_workers(threads() - 1);
    {
      std::lock_guard<std::mutex> lock(job.mutex);
      job.body = body;
      job.context = context;
      job.n = n;
      job.parts = parts;
      job.done = 0;
      job.error = nullptr;
      job.next.store(0);
      ++job.generation;
    }
    job.wake.notify_all();
    job.work();
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(job.mutex);
      job.finished.wait(lock, [&] { return job.done == job.parts; });
      error = job.error;
    }
    if (error) std::rethrow_exception(error);
    return true;
  }

 private:
  Job& ensure_workers(int count) {
    if (job_ != nullptr && static_cast<int>(job_->workers.size()) == count) return *job_;
    retire();
    job_ = new Job();
    for (int i = 0; i < count; ++i) {
      Job* job = job_;
      job->workers.emplace_back([job] { job->worker_loop(0); });
    }
    return *job_;
  }

  void retire() {
    if (job_ == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(job_->mutex);
      job_->stop = true;
    }
    job_->wake.notify_all();
    for (std::thread& worker : job_->workers) worker.join();
    delete job_;
    job_ = nullptr;
  }

  std::atomic<int> threads_{1};
  std::mutex submit_;
  Job* job_ = nullptr;
};

Pool& pool() {
  static Pool* instance = [] {
    pthread_atfork(nullptr, nullptr, [] { forked_child.store(true); });
    return new Pool();  // never destroyed: workers may still exist at process exit
  }();
  return *instance;
}

}  // namespace

int num_threads() { return pool().threads(); }

void set_num_threads(int n) { pool().set_threads(n); }

void parallel_run(int64_t n, int64_t grain, RangeBody body, void* context) {
  if (!pool().run(n, grain, body, context)) body(context, 0, n);
}

}  // namespace mskernel_cpu
