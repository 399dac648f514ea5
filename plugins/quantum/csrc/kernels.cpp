// The state-vector kernels.  This file is compiled once per instruction set, with MSQ_ISA
// naming the namespace of that build (see kernels.hpp for why nothing here is shared).
//
// Gates on one target (the common case, with diagonal and anti-diagonal matrices apart) and
// applications of two-target gates are written out; the rest are written once over the group
// size D, a compile-time constant for two and three targets (the loops unroll) and 0 for
// larger gates, which keep their groups in per-thread scratch.  Complex numbers are a local
// plain struct so that no std::complex code is instantiated here.
#include <cstdlib>
#include <new>

#include "lane_kernels.hpp"
#include "sweep.hpp"

namespace msq {
namespace MSQ_ISA {
namespace {

// A group of D amplitudes (D = 0: size known at run time, stored in scratch).
template <class T, int D>
struct Group {
  Cx<T> v[D];
  explicit Group(Cx<T>*) {}
  Cx<T>& operator[](int i) { return v[i]; }
  const Cx<T>& operator[](int i) const { return v[i]; }
};
template <class T>
struct Group<T, 0> {
  Cx<T>* v;
  explicit Group(Cx<T>* storage) : v(storage) {}
  Cx<T>& operator[](int i) { return v[i]; }
  const Cx<T>& operator[](int i) const { return v[i]; }
};

template <class T, int D>
inline void load(const Cx<T>* p, const index_t* off, int d, Group<T, D>& g) {
  for (int r = 0; r < d; ++r) g[r] = p[off[r]];
}
template <class T, int D>
inline void store(Cx<T>* p, const index_t* off, int d, const Group<T, D>& g) {
  for (int r = 0; r < d; ++r) p[off[r]] = g[r];
}
template <class T, int D>
inline void matvec(const Cx<T>* m, int d, const Group<T, D>& in, Group<T, D>& out) {
  for (int r = 0; r < d; ++r) {
    Cx<T> acc = m[r * d] * in[0];
    for (int s = 1; s < d; ++s) acc = acc + m[r * d + s] * in[s];
    out[r] = acc;
  }
}
template <class T, int D>
inline Cx<double> dot(const Group<T, D>& a, const Group<T, D>& b, int d) {
  Cx<double> acc{0, 0};
  for (int r = 0; r < d; ++r) acc += conj_mul(a[r], b[r]);
  return acc;
}

template <class F>
inline void with_group_size(int d, F&& f) {
  switch (d) {
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    default: f(std::integral_constant<int, 0>{});
  }
}

// ---------------------------------------------------------------------------------------------

template <class T>
struct Matrix2 {
  Cx<T> m0, m1, m2, m3;
  Matrix2() = default;
  explicit Matrix2(const Cx<T>* m) : m0(m[0]), m1(m[1]), m2(m[2]), m3(m[3]) {}
  // (x, y) <- M (x, y)
  inline void apply(Cx<T>& x, Cx<T>& y) const {
    const Cx<T> nx = m0 * x + m1 * y;
    y = m2 * x + m3 * y;
    x = nx;
  }
};

// ---------------------------------------------------------------------------------------------
// one target: groups are pairs (base, base + half), written out for speed

// body(a, b, k) for every pair (a[k], b[k]) of the gate, a and b the two halves' streams.
template <class T, class Body>
inline void for_each_pair(Cx<T>* psi, const Layout& L, Body&& body) {
  const index_t half = L.offsets[1], stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      Cx<T>* a = psi + base;
      Cx<T>* b = a + half;
      for (index_t j = 0; j < length; ++j)
        body(a, b, decltype(unit)::value ? j : j * stride);
    });
  });
}

template <class T>
inline bool is_zero(Cx<T> z) { return z.re == 0 && z.im == 0; }

// Diagonal (RZ, phases) and anti-diagonal (X, Y, CNOT) matrices need half the products.
template <class T>
void apply_matrix_2(Cx<T>* psi, const Layout& L, const Cx<T>* m) {
  const Matrix2<T> M(m);
  if (is_zero(M.m1) && is_zero(M.m2)) {
    for_each_pair(psi, L, [&](Cx<T>* a, Cx<T>* b, index_t k) {
      a[k] = M.m0 * a[k];
      b[k] = M.m3 * b[k];
    });
  } else if (is_zero(M.m0) && is_zero(M.m3)) {
    for_each_pair(psi, L, [&](Cx<T>* a, Cx<T>* b, index_t k) {
      const Cx<T> x = a[k];
      a[k] = M.m1 * b[k];
      b[k] = M.m2 * x;
    });
  } else {
    for_each_pair(psi, L, [&](Cx<T>* a, Cx<T>* b, index_t k) { M.apply(a[k], b[k]); });
  }
}

// Two targets, written out: four streams and the 4x4 matrix in registers.
template <class T>
void apply_matrix_4(Cx<T>* psi, const Layout& L, const Cx<T>* m) {
  Cx<T> r[16];
  for (int i = 0; i < 16; ++i) r[i] = m[i];
  const index_t o1 = L.offsets[1], o2 = L.offsets[2], o3 = L.offsets[3], stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      Cx<T>* p = psi + base;
      for (index_t j = 0; j < length; ++j) {
        const index_t k = decltype(unit)::value ? j : j * stride;
        const Cx<T> v0 = p[k], v1 = p[k + o1], v2 = p[k + o2], v3 = p[k + o3];
        p[k] = r[0] * v0 + r[1] * v1 + r[2] * v2 + r[3] * v3;
        p[k + o1] = r[4] * v0 + r[5] * v1 + r[6] * v2 + r[7] * v3;
        p[k + o2] = r[8] * v0 + r[9] * v1 + r[10] * v2 + r[11] * v3;
        p[k + o3] = r[12] * v0 + r[13] * v1 + r[14] * v2 + r[15] * v3;
      }
    });
  });
}

template <class T>
void inner_matrix_2(const Cx<T>* bra, const Cx<T>* ket, const Layout& L, const Cx<T>* m,
                    std::complex<double>* partials) {
  const Matrix2<T> M(m);
  const index_t half = L.offsets[1], stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    Cx<double> acc{0, 0};
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      for (index_t j = 0; j < length; ++j) {
        const index_t k = base + (decltype(unit)::value ? j : j * stride);
        Cx<T> x = ket[k], y = ket[k + half];
        M.apply(x, y);
        acc += conj_mul(bra[k], x);
        acc += conj_mul(bra[k + half], y);
      }
    });
    *cx(partials + c * kPartialStride) += acc;
  });
}

// psi <- U^dag psi; outer[r][s] = sum over groups of conj(lam_r) psi_s; lam <- U^dag lam.
// (The derivative sums are contracted from `outer` by the caller.)
template <class T>
void adjoint_step_2(Cx<T>* psi, Cx<T>* lam, const Layout& L, const Cx<T>* inverse,
                    std::complex<double>* outer, std::size_t outer_stride) {
  const Matrix2<T> inv(inverse);
  const index_t half = L.offsets[1], stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    double s[8] = {};  // outer[0][0], [0][1], [1][0], [1][1] as (re, im)
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      Cx<T>* pa = psi + base;
      Cx<T>* pb = pa + half;
      Cx<T>* la = lam + base;
      Cx<T>* lb = la + half;
      double s0r = 0, s0i = 0, s1r = 0, s1i = 0, s2r = 0, s2i = 0, s3r = 0, s3i = 0;
#pragma omp simd reduction(+ : s0r, s0i, s1r, s1i, s2r, s2i, s3r, s3i)
      for (index_t j = 0; j < length; ++j) {
        const index_t k = decltype(unit)::value ? j : j * stride;
        Cx<T> x = pa[k], y = pb[k];
        inv.apply(x, y);
        pa[k] = x;
        pb[k] = y;
        Cx<T> u = la[k], v = lb[k];
        const Cx<double> ux = conj_mul(u, x), uy = conj_mul(u, y);
        const Cx<double> vx = conj_mul(v, x), vy = conj_mul(v, y);
        s0r += ux.re; s0i += ux.im; s1r += uy.re; s1i += uy.im;
        s2r += vx.re; s2i += vx.im; s3r += vy.re; s3i += vy.im;
        inv.apply(u, v);
        la[k] = u;
        lb[k] = v;
      }
      const double add[8] = {s0r, s0i, s1r, s1i, s2r, s2i, s3r, s3i};
      for (int i = 0; i < 8; ++i) s[i] += add[i];
    });
    Cx<double>* mine = cx(outer + c * outer_stride);
    for (int i = 0; i < 4; ++i) mine[i] += Cx<double>{s[2 * i], s[2 * i + 1]};
  });
}

// ---------------------------------------------------------------------------------------------
// any number of targets: groups through the offsets table

template <class T, int D>
void apply_matrix_n(Cx<T>* psi, const Layout& L, const Cx<T>* m, Cx<T>* scratch) {
  const int d = L.group_size;
  const index_t* off = L.offsets;
  const index_t stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    Cx<T>* mine = scratch + std::size_t(thread_id()) * 3 * d;
    Group<T, D> in(mine), out(mine + d);
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      for (index_t j = 0; j < length; ++j) {
        Cx<T>* p = psi + base + (decltype(unit)::value ? j : j * stride);
        load(p, off, d, in);
        matvec(m, d, in, out);
        store(p, off, d, out);
      }
    });
  });
}

template <class T, int D>
void inner_matrix_n(const Cx<T>* bra, const Cx<T>* ket, const Layout& L, const Cx<T>* m,
                    Cx<T>* scratch, std::complex<double>* partials) {
  const int d = L.group_size;
  const index_t* off = L.offsets;
  const index_t stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    Cx<T>* mine = scratch + std::size_t(thread_id()) * 3 * d;
    Group<T, D> b(mine), k(mine + d), mk(mine + 2 * d);
    Cx<double> acc{0, 0};
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      for (index_t j = 0; j < length; ++j) {
        const index_t at = base + (decltype(unit)::value ? j : j * stride);
        load(bra + at, off, d, b);
        load(ket + at, off, d, k);
        matvec(m, d, k, mk);
        acc += dot(b, mk, d);
      }
    });
    *cx(partials + c * kPartialStride) += acc;
  });
}

template <class T, int D>
void adjoint_step_n(Cx<T>* psi, Cx<T>* lam, const Layout& L, const Cx<T>* inv, Cx<T>* scratch,
                    std::complex<double>* outer, std::size_t outer_stride) {
  const int d = L.group_size;
  const index_t* off = L.offsets;
  const index_t stride = L.stride;
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    Cx<T>* mine = scratch + std::size_t(thread_id()) * 3 * d;
    Group<T, D> a(mine), b(mine + d), t(mine + 2 * d);
    Cx<double>* sums = cx(outer + c * outer_stride);
    for_each_run(L, first, count, [&](index_t base, index_t length, auto unit) {
      for (index_t j = 0; j < length; ++j) {
        const index_t at = base + (decltype(unit)::value ? j : j * stride);
        load(psi + at, off, d, t);
        matvec(inv, d, t, a);
        store(psi + at, off, d, a);
        load(lam + at, off, d, b);
        for (int r = 0; r < d; ++r)
          for (int c = 0; c < d; ++c) sums[r * d + c] += conj_mul(b[r], a[c]);
        matvec(inv, d, b, t);
        store(lam + at, off, d, t);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// the table entries: dispatch on the group size

template <class T>
void apply_matrix(std::complex<T>* psi, const Layout& L, const std::complex<T>* matrix,
                  std::complex<T>* scratch) {
  if (L.group_size == 2) return apply_matrix_2(cx(psi), L, cx(matrix));
  if (L.group_size == 4) return apply_matrix_4(cx(psi), L, cx(matrix));
  with_group_size(L.group_size, [&](auto size) {
    apply_matrix_n<T, decltype(size)::value>(cx(psi), L, cx(matrix), cx(scratch));
  });
}

template <class T>
void inner_matrix(const std::complex<T>* bra, const std::complex<T>* ket, const Layout& L,
                  const std::complex<T>* matrix, std::complex<T>* scratch,
                  std::complex<double>* partials) {
  if (L.group_size == 2) return inner_matrix_2(cx(bra), cx(ket), L, cx(matrix), partials);
  with_group_size(L.group_size, [&](auto size) {
    inner_matrix_n<T, decltype(size)::value>(cx(bra), cx(ket), L, cx(matrix), cx(scratch),
                                             partials);
  });
}

template <class T>
void adjoint_step(std::complex<T>* psi, std::complex<T>* lam, const Layout& L,
                  const std::complex<T>* inverse, std::complex<T>* scratch,
                  std::complex<double>* outer, std::size_t outer_stride) {
  if (L.group_size == 2)
    return adjoint_step_2(cx(psi), cx(lam), L, cx(inverse), outer, outer_stride);
  with_group_size(L.group_size, [&](auto size) {
    adjoint_step_n<T, decltype(size)::value>(cx(psi), cx(lam), L, cx(inverse), cx(scratch),
                                             outer, outer_stride);
  });
}

// (-1)^popcount(bits), without a branch (the parities of a sweep are unpredictable)
template <class T>
inline T parity_sign(index_t bits) { return T(1) - T(2) * T(__builtin_parityll(bits)); }

// Signed sums of Pauli-term coefficients, weight(j) = sum_t c_t (-1)^popcount(j & z_t), for
// a block of `block` consecutive indices at a time.  The sign splits into the parity of j's
// bits above the block (one sign per term and block) and of its bits inside (a table per term
// computed once), so a block's weights are one vectorised multiply-add per term and index.
constexpr index_t kSignBlock = 1024;

template <class R>
class TermWeights {
 public:
  TermWeights(const index_t* zmasks, const Cx<R>* coeffs, int terms, index_t block)
      : zmasks_(zmasks), coeffs_(coeffs), terms_(terms), block_(block),
        // plain malloc: no template code shared with the other kernel builds
        signs_(static_cast<R*>(std::malloc(sizeof(R) * std::size_t(terms) * block))) {
    if (signs_ == nullptr) throw std::bad_alloc();
    for (int t = 0; t < terms; ++t)
      for (index_t i = 0; i < block; ++i) signs_[t * block + i] = parity_sign<R>(i & zmasks[t]);
  }
  ~TermWeights() { std::free(signs_); }
  TermWeights(const TermWeights&) = delete;
  TermWeights& operator=(const TermWeights&) = delete;

  index_t block() const { return block_; }

  // re[i], im[i] = weight(high + i) over terms [first, last); high a multiple of the block.
  void fill(index_t high, int first, int last, R* re, R* im) const {
    for (index_t i = 0; i < block_; ++i) re[i] = im[i] = 0;
    for (int t = first; t < last; ++t) {
      const R sign = parity_sign<R>(high & zmasks_[t]);
      const R a = sign * coeffs_[t].re, b = sign * coeffs_[t].im;
      const R* s = signs_ + t * block_;
#pragma omp simd
      for (index_t i = 0; i < block_; ++i) {
        re[i] += a * s[i];
        im[i] += b * s[i];
      }
    }
  }

 private:
  const index_t* zmasks_;
  const Cx<R>* coeffs_;
  int terms_;
  index_t block_;
  R* signs_;
};

inline index_t sign_block(const Layout& L) { return L.chunk < kSignBlock ? L.chunk : kSignBlock; }

template <class T>
void pauli_expectation(const std::complex<T>* state, const Layout& L, index_t xmask,
                       const index_t* zmasks, const std::complex<double>* coeffs, int terms,
                       std::complex<double>* partials) {
  const Cx<T>* psi = cx(state);
  const TermWeights<double> weights(zmasks, cx(coeffs), terms, sign_block(L));
  const index_t block = weights.block();
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    double re[kSignBlock], im[kSignBlock];
    Cx<double> acc{0, 0};
    for (index_t k0 = first; k0 < first + count; k0 += block) {
      weights.fill(k0, 0, terms, re, im);
      for (index_t i = 0; i < block; ++i) {
        const index_t j = k0 + i;
        acc += conj_mul(psi[j ^ xmask], psi[j]) * Cx<double>{re[i], im[i]};
      }
    }
    *cx(partials + c * kPartialStride) += acc;
  });
}

// Terms arrive sorted by X mask; each run of equal masks shares one amplitude, so its signed
// coefficients are summed before the multiplication.
template <class T>
void apply_pauli_sum(const std::complex<T>* state, std::complex<T>* result, const Layout& L,
                     const index_t* xmasks, const index_t* zmasks, const std::complex<T>* coeffs,
                     int terms) {
  const Cx<T>* psi = cx(state);
  Cx<T>* out = cx(result);
  const TermWeights<T> weights(zmasks, cx(coeffs), terms, sign_block(L));
  const index_t block = weights.block();
  for_each_chunk(L, [&](index_t c, index_t first, index_t count) {
    T re[kSignBlock], im[kSignBlock];
    Cx<T> acc[kSignBlock];
    for (index_t k0 = first; k0 < first + count; k0 += block) {
      for (index_t i = 0; i < block; ++i) acc[i] = Cx<T>{0, 0};
      for (int t = 0; t < terms;) {  // out[k0 + i] += weight(j) psi[j], j = (k0 + i) ^ x
        const index_t x = xmasks[t], low = x & (block - 1), high = (k0 ^ x) & ~(block - 1);
        int end = t;
        while (end < terms && xmasks[end] == x) ++end;
        weights.fill(high, t, end, re, im);
        for (index_t m = 0; m < block; ++m)
          acc[m ^ low] = acc[m ^ low] + Cx<T>{re[m], im[m]} * psi[high + m];
        t = end;
      }
      for (index_t i = 0; i < block; ++i) out[k0 + i] = acc[i];
    }
  });
}

template <class T>
KernelTable<T> table() {
  return {&apply_matrix<T>,  &inner_matrix<T>,   &adjoint_step<T>,   &pauli_expectation<T>,
          &apply_pauli_sum<T>, lane_width<T>(), &apply_lanes<T>, &adjoint_lanes<T>};
}

}  // namespace

#define MSQ_STRINGIFY2(x) #x
#define MSQ_STRINGIFY(x) MSQ_STRINGIFY2(x)

const KernelSet& kernel_set() {
  static const KernelSet set{MSQ_STRINGIFY(MSQ_ISA), table<double>(), table<float>()};
  return set;
}

}  // namespace MSQ_ISA
}  // namespace msq
