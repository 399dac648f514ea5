// matmul: x[..., n, k] @ y[..., k, m] with broadcast batch dimensions and NumPy's 1-D rules.
//
// float32/float64/complex go through OpenBLAS (scipy-openblas32) gemm; float16 and bfloat16
// are widened to float32 in the workspace, multiplied by sgemm and rounded back (the
// reference also accumulates them in float32); integer types use a wrapping loop.
//
// Threading: OpenBLAS is set to one thread, and the rows of all products are split over the
// backend's own pool, each range calling gemm on its block of rows.  Products whose y is shared
// by every batch (a linear layer) become one product with batch * n rows.
#include <cblas.h>

#include <cstring>

#include "mskernel_cpu/broadcast.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

// Rows per thread range: enough that a range does at least this many multiply-adds.
constexpr int64_t kMinRangeFlops = 1 << 21;

struct Products {
  int64_t batch = 1, n = 0, k = 0, m = 0;
  std::vector<int64_t> x_offsets, y_offsets;  // element offsets of each product's operands

  int64_t rows() const { return batch * n; }
  int64_t grain() const {
    return std::max<int64_t>(1, kMinRangeFlops / std::max<int64_t>(1, k * m));
  }

  // Call f(x_offset, y_offset, out_offset, rows) for each block of rows in [begin, end) of the
  // flattened (product, row) index.
  template <class F> void for_each_block(int64_t begin, int64_t end, F&& f) const {
    while (begin < end) {
      const int64_t b = begin / n, row = begin % n;
      const int64_t count = std::min(n - row, end - begin);
      f(x_offsets[b] + row * k, y_offsets[b], (b * n + row) * m, count);
      begin += count;
    }
  }
};

std::vector<int64_t> batch_dims(const std::vector<int64_t>& shape) {
  return std::vector<int64_t>(shape.begin(), shape.end() - 2);
}

Products plan_products(const KernelContext& ctx) {
  std::vector<int64_t> xs = ctx.inputs[0].shape, ys = ctx.inputs[1].shape;
  if (xs.size() == 1) xs.insert(xs.begin(), 1);  // a row [1, k]
  if (ys.size() == 1) ys.push_back(1);           // a column [k, 1]
  Products p;
  p.n = xs[xs.size() - 2];
  p.k = xs.back();
  p.m = ys.back();
  const std::vector<int64_t> bx = batch_dims(xs), by = batch_dims(ys);
  std::vector<int64_t> batch = bx.size() >= by.size() ? bx : by;
  const size_t rank = batch.size();
  for (size_t i = 0; i < rank; ++i) {  // broadcast the batch shapes (validated by infer)
    const int64_t dx = i + bx.size() >= rank ? bx[i + bx.size() - rank] : 1;
    const int64_t dy = i + by.size() >= rank ? by[i + by.size() - rank] : 1;
    batch[i] = dx == 1 ? dy : dx;
  }
  // Offsets through a broadcast over batch "elements" of n*k and k*m values.
  const Broadcast<2> layout(bx, by, batch);
  p.batch = layout.numel();
  p.x_offsets.reserve(p.batch);
  p.y_offsets.reserve(p.batch);
  layout.for_each_run(0, p.batch, [&](const int64_t* offsets, int64_t, int64_t count,
                                      const int64_t* steps) {
    for (int64_t i = 0; i < count; ++i) {
      p.x_offsets.push_back((offsets[0] + i * steps[0]) * p.n * p.k);
      p.y_offsets.push_back((offsets[1] + i * steps[1]) * p.k * p.m);
    }
  });
  const bool shared_y = std::all_of(p.y_offsets.begin(), p.y_offsets.end(),
                                    [&](int64_t o) { return o == p.y_offsets[0]; });
  bool dense_x = true;
  for (int64_t b = 0; b < p.batch && dense_x; ++b) dense_x = p.x_offsets[b] == b * p.n * p.k;
  if (p.batch > 1 && shared_y && dense_x) {  // one product with batch * n rows
    p.n *= p.batch;
    p.batch = 1;
    p.x_offsets.assign(1, 0);
    p.y_offsets.resize(1);
  }
  return p;
}

// ---- BLAS -------------------------------------------------------------------------------

void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
  scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f,
                    C, N);
}

void gemm(int M, int N, int K, const double* A, const double* B, double* C) {
  scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, A, K, B, N, 0.0,
                    C, N);
}

void gemm(int M, int N, int K, const std::complex<float>* A, const std::complex<float>* B,
          std::complex<float>* C) {
  const std::complex<float> one(1), zero(0);
  scipy_cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, &one, A, K, B, N, &zero,
                    C, N);
}

void gemm(int M, int N, int K, const std::complex<double>* A, const std::complex<double>* B,
          std::complex<double>* C) {
  const std::complex<double> one(1), zero(0);
  scipy_cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, &one, A, K, B, N, &zero,
                    C, N);
}

void check_blas_dims(const Products& p) {
  constexpr int64_t limit = 2147483647;
  if (p.n > limit || p.k > limit || p.m > limit) {
    throw Error("matmul: a dimension exceeds the 32-bit BLAS limit");
  }
}

template <class T>
void blas_products(const Products& p, const T* x, const T* y, T* out) {
  if (p.k == 0) {
    std::fill(out, out + p.rows() * p.m, T(0));
    return;
  }
  parallel_for(p.rows(), p.grain(), [&](int64_t begin, int64_t end) {
    p.for_each_block(begin, end, [&](int64_t xo, int64_t yo, int64_t oo, int64_t rows) {
      gemm(int(rows), int(p.m), int(p.k), x + xo, y + yo, out + oo);
    });
  });
}

template <class T>
Kernel blas_kernel(const Products& p) {
  check_blas_dims(p);
  return [p](const Args& args) { blas_products(p, args.in<T>(0), args.in<T>(1), args.out<T>(0)); };
}

// float16/bfloat16: widen both operands into the workspace, sgemm, round the result.
template <class H>
Kernel widened_kernel(KernelContext& ctx, const Products& p) {
  check_blas_dims(p);
  const int64_t nx = ctx.inputs[0].numel(), ny = ctx.inputs[1].numel();
  const int64_t no = ctx.outputs[0].numel();
  ctx.workspace_bytes = sizeof(float) * static_cast<size_t>(nx + ny + no);
  ctx.detail = "widened to float32, sgemm";
  return [p, nx, ny, no](const Args& args) {
    float* xf = args.scratch<float>();
    float* yf = xf + nx;
    float* of = yf + ny;
    const H* x = args.in<H>(0);
    const H* y = args.in<H>(1);
    H* out = args.out<H>(0);
    parallel_for(nx, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) xf[i] = to_float(x[i]);
    });
    parallel_for(ny, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) yf[i] = to_float(y[i]);
    });
    blas_products(p, xf, yf, of);
    parallel_for(no, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = convert<H>(of[i]);
    });
  };
}

// Integers: out[i, :] = sum_p x[i, p] * y[p, :], wrapping.
template <class T>
Kernel integer_kernel(KernelContext& ctx, const Products& p) {
  ctx.detail = "integer loop";
  return [p](const Args& args) {
    const T* x = args.in<T>(0);
    const T* y = args.in<T>(1);
    T* out = args.out<T>(0);
    parallel_for(p.rows(), p.grain(), [&](int64_t begin, int64_t end) {
      p.for_each_block(begin, end, [&](int64_t xo, int64_t yo, int64_t oo, int64_t rows) {
        for (int64_t i = 0; i < rows; ++i) {
          T* o = out + oo + i * p.m;
          std::fill(o, o + p.m, T(0));
          for (int64_t q = 0; q < p.k; ++q) {
            const T a = x[xo + i * p.k + q];
            const T* yr = y + yo + q * p.m;
            for (int64_t j = 0; j < p.m; ++j) o[j] = wrap_add(o[j], wrap_mul(a, yr[j]));
          }
        }
      });
    });
  };
}

Kernel matmul(KernelContext& ctx) {
  const Products p = plan_products(ctx);
  if (p.rows() == 0 || p.m == 0) return [](const Args&) {};
  return dispatch<kNumeric>(ctx.inputs[0].dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    if constexpr (is_half_v<T>) {
      return widened_kernel<T>(ctx, p);
    } else if constexpr (std::is_integral_v<T>) {
      return integer_kernel<T>(ctx, p);
    } else {
      ctx.detail = p.batch == 1 ? "gemm" : "gemm per product";
      return blas_kernel<T>(p);
    }
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("matmul", kNumeric, matmul);

}  // namespace mskernel_cpu
