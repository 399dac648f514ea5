// Row-major OpenBLAS gemm (scipy-openblas32), C = op(A) op(B), for float, double and complex,
// with leading dimensions so that blocks of larger matrices can be multiplied in place, and the
// widening of float16/bfloat16 operands to float32 for sgemm.  OpenBLAS runs single-threaded
// (module.cpp); callers split the work over the backend's pool.
#pragma once

#include <cblas.h>

#include <complex>
#include <cstdint>
#include <string>

#include "mskernel_cpu/convert.hpp"
#include "mskernel_cpu/error.hpp"
#include "mskernel_cpu/parallel.hpp"

namespace mskernel_cpu {

// Whether an operand is read as stored or transposed: A as stored is [M, K] (lda >= K),
// transposed it is stored [K, M] (lda >= M); B as stored is [K, N] (ldb >= N), transposed it
// is stored [N, K] (ldb >= K).
enum class GemmLayout { AsIs, Transposed };

struct GemmShape {
  int64_t m, n, k;
  GemmLayout a = GemmLayout::AsIs;
  GemmLayout b = GemmLayout::AsIs;
};

inline GemmLayout gemm_layout(bool transposed) {
  return transposed ? GemmLayout::Transposed : GemmLayout::AsIs;
}

inline CBLAS_TRANSPOSE blas_trans(GemmLayout layout) {
  return layout == GemmLayout::AsIs ? CblasNoTrans : CblasTrans;
}

inline void gemm(const GemmShape& s, const float* A, int64_t lda, const float* B, int64_t ldb,
                 float* C, int64_t ldc) {
  scipy_cblas_sgemm(CblasRowMajor, blas_trans(s.a), blas_trans(s.b), int(s.m), int(s.n),
                    int(s.k), 1.0f, A, int(lda), B, int(ldb), 0.0f, C, int(ldc));
}

inline void gemm(const GemmShape& s, const double* A, int64_t lda, const double* B,
                 int64_t ldb, double* C, int64_t ldc) {
  scipy_cblas_dgemm(CblasRowMajor, blas_trans(s.a), blas_trans(s.b), int(s.m), int(s.n),
                    int(s.k), 1.0, A, int(lda), B, int(ldb), 0.0, C, int(ldc));
}

inline void gemm(const GemmShape& s, const std::complex<float>* A, int64_t lda,
                 const std::complex<float>* B, int64_t ldb, std::complex<float>* C,
                 int64_t ldc) {
  const std::complex<float> one(1), zero(0);
  scipy_cblas_cgemm(CblasRowMajor, blas_trans(s.a), blas_trans(s.b), int(s.m), int(s.n),
                    int(s.k), &one, A, int(lda), B, int(ldb), &zero, C, int(ldc));
}

inline void gemm(const GemmShape& s, const std::complex<double>* A, int64_t lda,
                 const std::complex<double>* B, int64_t ldb, std::complex<double>* C,
                 int64_t ldc) {
  const std::complex<double> one(1), zero(0);
  scipy_cblas_zgemm(CblasRowMajor, blas_trans(s.a), blas_trans(s.b), int(s.m), int(s.n),
                    int(s.k), &one, A, int(lda), B, int(ldb), &zero, C, int(ldc));
}

// BLAS takes 32-bit sizes: refuse (at compile time of the node) anything larger.
inline void check_blas_size(const char* op, int64_t value) {
  if (value > 2147483647) {
    throw Error(std::string(op) + ": a dimension of " + std::to_string(value) +
                " exceeds the 32-bit BLAS limit of 2147483647");
  }
}

// to[i] = float(from[i]) for i < count (a half-type operand widened for sgemm).
template <class H>
void widen_to_float(const H* from, float* to, int64_t count) {
  parallel_for(count, 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) to[i] = load(from[i]);
  });
}

}  // namespace mskernel_cpu
