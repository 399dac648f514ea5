// What every kernel translation unit shares: a plain complex type and the sweeps over a
// Layout's groups.  Included by the per-instruction-set kernel files only, so everything
// here lands in that build's namespace (see kernels.hpp for why nothing is shared).
#pragma once

#include <type_traits>

#include "kernels.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef MSQ_ISA
#error "compile the kernels with -DMSQ_ISA=<namespace>"
#endif

namespace msq {
namespace MSQ_ISA {
namespace {

template <class T>
struct Cx {
  T re, im;
};

template <class T>
inline Cx<T> operator+(Cx<T> a, Cx<T> b) { return {a.re + b.re, a.im + b.im}; }
template <class T>
inline Cx<T> operator*(Cx<T> a, Cx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// conj(a) * b in double precision
template <class T>
inline Cx<double> conj_mul(Cx<T> a, Cx<T> b) {
  const double ar = a.re, ai = a.im, br = b.re, bi = b.im;
  return {ar * br + ai * bi, ar * bi - ai * br};
}
inline Cx<double>& operator+=(Cx<double>& a, Cx<double> b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}

template <class T>
Cx<T>* cx(std::complex<T>* p) { return reinterpret_cast<Cx<T>*>(p); }
template <class T>
const Cx<T>* cx(const std::complex<T>* p) { return reinterpret_cast<const Cx<T>*>(p); }

inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

inline index_t group_base(const Layout& L, index_t i) {
  for (int f = 0; f < L.n_fixed; ++f) {
    const int p = L.fixed[f];
    i = ((i >> p) << (p + 1)) | (i & ((index_t(1) << p) - 1));
  }
  return i | L.ctrl_mask;
}

// Runs shorter than this are visited group by group (the base computed for each), longer
// ones as strided streams.
constexpr index_t kMinRun = 8;

// chunk_body(c, first, count): chunk c, `count` counters from `first`.  Threads take chunks
// as they become free: on a shared machine a descheduled thread then delays its region by
// one chunk, not by its whole share.  Sums are kept per chunk (see `partials`), so results
// do not depend on which thread took which chunk.
template <class ChunkBody>
void for_each_chunk(const Layout& L, ChunkBody&& chunk_body) {
  const std::int64_t n = std::int64_t(L.n_chunks);
#pragma omp parallel for schedule(dynamic) num_threads(L.threads) if (L.threads > 1)
  for (std::int64_t c = 0; c < n; ++c) chunk_body(index_t(c), index_t(c) * L.chunk, L.chunk);
}

// body(base, length, unit): `length` groups with bases base + j * L.stride, for the counters
// [first, first + count); `unit` is std::true_type when the stride is 1 and the run long.
template <class Body>
inline void for_each_run(const Layout& L, index_t first, index_t count, Body&& body) {
  const index_t length = L.run < count ? L.run : count;
  if (length < kMinRun) {
    for (index_t i = first; i < first + count; ++i) body(group_base(L, i), 1, std::false_type{});
  } else if (L.stride == 1) {
    for (index_t i = first; i < first + count; i += length)
      body(group_base(L, i), length, std::true_type{});
  } else {
    for (index_t i = first; i < first + count; i += length)
      body(group_base(L, i), length, std::false_type{});
  }
}

}  // namespace
}  // namespace MSQ_ISA
}  // namespace msq
