// Gates on one or two targets, vectorised: a register holds W consecutive amplitudes
// (interleaved real and imaginary parts) and a group of the gate is `streams` registers (see
// LaneMap in kernels.hpp).  Output stream o is
//
//     y_o = sum over streams s, lane patterns J of C[o][s][J] * permute_J(x_s)
//
// where permute_J moves lane l ^ J to lane l and C[o][s][J] holds, per lane, the matrix entry
// that pairs the lane's row with its partner's column.  J runs over the subsets of the lane
// mask (targets inside a register), so a gate costs d complex multiply-adds per amplitude
// whichever qubits it acts on.  Diagonal matrices keep only o = s, J = 0: element-wise phases.
//
// Written with GCC/Clang vector extensions and compiled once per instruction set (MSQ_ISA):
// the register is 64 bytes under AVX-512, 32 under AVX and 16 otherwise (SSE2, NEON, or
// plain scalar code where the target has no vectors).
#include <cstring>
#include <utility>

#include "lane_kernels.hpp"
#include "sweep.hpp"

namespace msq {
namespace MSQ_ISA {
namespace {

#if defined(__AVX512F__)
constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif

template <class T>
struct Lanes {
  typedef T V __attribute__((vector_size(kVectorBytes)));
  static constexpr int reals = kVectorBytes / int(sizeof(T));
  static constexpr int width = reals / 2;  // complex amplitudes per register
};

// Groups handled per block of the adjoint sweep: psi's block stays in the first-level cache
// while every co-state passes over it, and the accumulators are flushed into double precision.
constexpr index_t kBlock = 32;

constexpr int popcount(int x) { return x ? (x & 1) + popcount(x >> 1) : 0; }

// J's bits gathered from the positions set in mask (its index among mask's subsets).
constexpr int compact(int j, int mask) {
  int index = 0, bit = 0;
  for (int b = 0; b < 8; ++b)
    if ((mask >> b) & 1) {
      if ((j >> b) & 1) index |= 1 << bit;
      ++bit;
    }
  return index;
}

// f(J) for every J < W whose bits lie in Mask.
template <int Mask, int W, int J = 0, class F>
inline void for_each_subset(F&& f) {
  if constexpr (J < W) {
    if constexpr ((J & ~Mask) == 0) f(std::integral_constant<int, J>{});
    for_each_subset<Mask, W, J + 1>(f);
  }
}

// Lane l of the result is lane l ^ J of v; Swap also exchanges real and imaginary parts.
template <int J, bool Swap, class V, std::size_t... I>
inline V permute(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, int(2 * ((I / 2) ^ J) + ((I % 2) ^ Swap))...);
}
template <class T, int J, bool Swap>
inline typename Lanes<T>::V permute(typename Lanes<T>::V v) {
  return permute<J, Swap>(v, std::make_index_sequence<Lanes<T>::reals>{});
}

template <class T>
inline typename Lanes<T>::V load(const Cx<T>* p) {
  typename Lanes<T>::V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void store(Cx<T>* p, typename Lanes<T>::V v) { std::memcpy(p, &v, sizeof v); }

// A complex factor per lane, split for fused multiply-adds:
// c * x = re * x + im * swap(x) with re = (c.re, c.re), im = (-c.im, c.im) per lane.
template <class T>
struct Factor {
  typename Lanes<T>::V re, im;
};

// The factors C[o][s][compact(J)] of a gate matrix (row-major, d x d) for Streams streams.
template <class T, int K, int Mask>
struct Factors {
  static constexpr int W = Lanes<T>::width;
  static constexpr int streams = 1 << (K - popcount(Mask));
  static constexpr int patterns = 1 << popcount(Mask);
  Factor<T> c[streams][streams][patterns];

  Factors(const Cx<T>* m, const LaneMap& map) {
    constexpr int d = 1 << K;
    for (int o = 0; o < streams; ++o)
      for (int s = 0; s < streams; ++s)
        for_each_subset<Mask, W>([&](auto J) {
          Factor<T>& f = c[o][s][compact(J, Mask)];
          for (int l = 0; l < W; ++l) {
            const Cx<T> v = m[map.row[o * W + l] * d + map.row[s * W + (l ^ J)]];
            f.re[2 * l] = f.re[2 * l + 1] = v.re;
            f.im[2 * l] = -v.im;
            f.im[2 * l + 1] = v.im;
          }
        });
  }

  // y = M x on one group of registers.
  template <bool Diagonal>
  inline void apply(const typename Lanes<T>::V* x, typename Lanes<T>::V* y) const {
    for (int o = 0; o < streams; ++o) {
      if constexpr (Diagonal) {
        const Factor<T>& f = c[o][o][0];
        y[o] = f.re * x[o] + f.im * permute<T, 0, true>(x[o]);
      } else {
        typename Lanes<T>::V acc{};
        for (int s = 0; s < streams; ++s)
          for_each_subset<Mask, W>([&](auto J) {
            const Factor<T>& f = c[o][s][compact(J, Mask)];
            acc += f.re * permute<T, J, false>(x[s]) + f.im * permute<T, J, true>(x[s]);
          });
        y[o] = acc;
      }
    }
  }
};

template <class T, int K, int Mask, bool Diagonal>
void apply_gate(Cx<T>* psi, const Layout& L, const Cx<T>* m, const LaneMap& map) {
  using V = typename Lanes<T>::V;
  using F = Factors<T, K, Mask>;
  constexpr int W = Lanes<T>::width;
  const F factors(m, map);
  index_t offset[F::streams];
  for (int s = 0; s < F::streams; ++s) offset[s] = L.offsets[s * W];
  const index_t stride = L.stride;
  for_each_chunk(L, [&](index_t, index_t first, index_t count) {
    for_each_run(L, first, count, [&](index_t base, index_t length, auto) {
      for (index_t j = 0; j < length; ++j) {
        Cx<T>* p = psi + base + j * stride;
        V x[F::streams], y[F::streams];
        for (int s = 0; s < F::streams; ++s) x[s] = load(p + offset[s]);
        factors.template apply<Diagonal>(x, y);
        for (int s = 0; s < F::streams; ++s) store(p + offset[s], y[s]);
      }
    });
  });
}

// conj(lam) * psi for one output stream o (row), accumulated lane by lane as lam * psi (re:
// the sum of a lane's pair) and lam * swap(psi) (im: the first of the pair minus the second),
// then added into `outer` in double precision.  One row at a time keeps 2d accumulators in
// registers.
template <class T, int K, int Mask>
struct RowSums {
  using V = typename Lanes<T>::V;
  using F = Factors<T, K, Mask>;
  static constexpr int W = Lanes<T>::width;
  V re[F::streams][F::patterns] = {};
  V im[F::streams][F::patterns] = {};

  inline void add(V lam, const V* psi) {
    for (int s = 0; s < F::streams; ++s)
      for_each_subset<Mask, W>([&](auto J) {
        constexpr int p = compact(J, Mask);
        re[s][p] += lam * permute<T, J, false>(psi[s]);
        im[s][p] += lam * permute<T, J, true>(psi[s]);
      });
  }

  // outer[r][c] (row-major d x d) += the sums of row stream o.
  void flush(const LaneMap& map, int o, Cx<double>* outer) const {
    constexpr int d = 1 << K;
    for (int s = 0; s < F::streams; ++s)
      for_each_subset<Mask, W>([&](auto J) {
        constexpr int p = compact(J, Mask);
        for (int l = 0; l < W; ++l) {
          Cx<double>& slot = outer[map.row[o * W + l] * d + map.row[s * W + (l ^ J)]];
          slot.re += double(re[s][p][2 * l]) + double(re[s][p][2 * l + 1]);
          slot.im += double(im[s][p][2 * l]) - double(im[s][p][2 * l + 1]);
        }
      });
  }
};

template <class T, int K, int Mask>
void adjoint_gate(Cx<T>* psi, Cx<T>* const* lams, int n_lams, const Layout& L,
                  const Cx<T>* inverse, const LaneMap& map, std::complex<double>* outer,
                  std::size_t outer_stride) {
  using V = typename Lanes<T>::V;
  using F = Factors<T, K, Mask>;
  constexpr int W = Lanes<T>::width;
  constexpr int d2 = (1 << K) * (1 << K);
  const F inv(inverse, map);
  index_t offset[F::streams];
  for (int s = 0; s < F::streams; ++s) offset[s] = L.offsets[s * W];
  const index_t stride = L.stride;
  for_each_chunk(L, [&](index_t chunk, index_t first, index_t count) {
    Cx<double>* slots = cx(outer + chunk * outer_stride);
    for_each_run(L, first, count, [&](index_t base, index_t length, auto) {
      for (index_t b = 0; b < length; b += kBlock) {
        const index_t end = b + kBlock < length ? b + kBlock : length;
        for (index_t j = b; j < end; ++j) {
          Cx<T>* p = psi + base + j * stride;
          V x[F::streams], y[F::streams];
          for (int s = 0; s < F::streams; ++s) x[s] = load(p + offset[s]);
          inv.template apply<false>(x, y);
          for (int s = 0; s < F::streams; ++s) store(p + offset[s], y[s]);
        }
        for (int h = 0; h < n_lams; ++h) {
          Cx<T>* lam = lams[h];
          for (int o = 0; o < F::streams; ++o) {  // the sums, with lam before its update
            RowSums<T, K, Mask> sums;
            for (index_t j = b; j < end; ++j) {
              const index_t at = base + j * stride;
              V x[F::streams];
              for (int s = 0; s < F::streams; ++s) x[s] = load(psi + at + offset[s]);
              sums.add(load(lam + at + offset[o]), x);
            }
            sums.flush(map, o, slots + h * d2);
          }
          for (index_t j = b; j < end; ++j) {
            Cx<T>* p = lam + base + j * stride;
            V u[F::streams], v[F::streams];
            for (int s = 0; s < F::streams; ++s) u[s] = load(p + offset[s]);
            inv.template apply<false>(u, v);
            for (int s = 0; s < F::streams; ++s) store(p + offset[s], v[s]);
          }
        }
      }
    });
  });
}

// f(K, Mask) with the map's target count and lane mask as compile-time constants.
template <class T, int Mask = 0, class F>
inline void dispatch(const LaneMap& map, F&& f) {
  if constexpr (Mask < Lanes<T>::width) {
    if (map.lane_mask != Mask) return dispatch<T, Mask + 1>(map, f);
    if constexpr (popcount(Mask) <= 1)
      if (map.targets == 1) return f(std::integral_constant<int, 1>{},
                                     std::integral_constant<int, Mask>{});
    if constexpr (popcount(Mask) <= 2)
      if (map.targets == 2) return f(std::integral_constant<int, 2>{},
                                     std::integral_constant<int, Mask>{});
  }
}

}  // namespace

template <class T>
int lane_width() { return Lanes<T>::width; }

template <class T>
void apply_lanes(std::complex<T>* psi, const Layout& L, const std::complex<T>* matrix,
                 const LaneMap& map) {
  dispatch<T>(map, [&](auto k, auto mask) {
    if (map.diagonal)
      apply_gate<T, k, mask, true>(cx(psi), L, cx(matrix), map);
    else
      apply_gate<T, k, mask, false>(cx(psi), L, cx(matrix), map);
  });
}

template <class T>
void adjoint_lanes(std::complex<T>* psi, std::complex<T>* const* lams, int n_lams,
                   const Layout& L, const std::complex<T>* inverse, const LaneMap& map,
                   std::complex<double>* outer, std::size_t outer_stride) {
  dispatch<T>(map, [&](auto k, auto mask) {
    adjoint_gate<T, k, mask>(cx(psi), reinterpret_cast<Cx<T>* const*>(lams), n_lams, L,
                             cx(inverse), map, outer, outer_stride);
  });
}

template int lane_width<double>();
template int lane_width<float>();
template void apply_lanes(std::complex<double>*, const Layout&, const std::complex<double>*,
                          const LaneMap&);
template void apply_lanes(std::complex<float>*, const Layout&, const std::complex<float>*,
                          const LaneMap&);
template void adjoint_lanes(std::complex<double>*, std::complex<double>* const*, int,
                            const Layout&, const std::complex<double>*, const LaneMap&,
                            std::complex<double>*, std::size_t);
template void adjoint_lanes(std::complex<float>*, std::complex<float>* const*, int,
                            const Layout&, const std::complex<float>*, const LaneMap&,
                            std::complex<double>*, std::size_t);

}  // namespace MSQ_ISA
}  // namespace msq
