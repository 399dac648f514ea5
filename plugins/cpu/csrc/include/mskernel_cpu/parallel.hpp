// Multi-threading for kernels: one process-wide pool of worker threads that sleep (block on a
// condition variable) when idle, so they never spin on a shared machine.
//
//   parallel_for(n, grain, [&](int64_t begin, int64_t end) { ... });
//
// splits [0, n) into at most num_threads() contiguous ranges of at least `grain` items and runs
// the body on them concurrently (the calling thread takes one).  It runs the body inline, once
// over [0, n), when n < 2 * grain, when one thread is configured, when called from inside a
// parallel body, or while another thread is using the pool.  Exceptions thrown by a body are
// re-thrown in the caller.  Pick `grain` so one range is worth tens of microseconds: about
// 32768 simple elementwise operations, fewer for expensive ones.
#pragma once

#include <cstdint>
#include <type_traits>

namespace mskernel_cpu {

int num_threads();
// Set the number of threads (>= 1), including the caller.  Set from MSKERNEL_NUM_THREADS when
// the extension loads (default: the CPUs this process may run on).
void set_num_threads(int n);

using RangeBody = void (*)(void* context, int64_t begin, int64_t end);
void parallel_run(int64_t n, int64_t grain, RangeBody body, void* context);

template <class F>
void parallel_for(int64_t n, int64_t grain, F&& body) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n < 2 * grain || num_threads() == 1) {
    body(int64_t(0), n);
    return;
  }
  using Body = std::remove_reference_t<F>;
  parallel_run(
      n, grain,
      [](void* context, int64_t begin, int64_t end) { (*static_cast<Body*>(context))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace mskernel_cpu
