// matmul: x[..., n, k] @ y[..., k, m] with broadcast batch dimensions and NumPy's 1-D rules.
//
// float32/float64/complex go through OpenBLAS (scipy-openblas32) gemm; bfloat16 runs on the
// AMX or AVX-512 BF16 kernels of bf16_gemm.cpp where the CPU has them; float16 and bfloat16 otherwise
// are widened to float32 in the workspace, multiplied by sgemm and rounded back (the
// reference also accumulates them in float32); integer types use a wrapping loop.  The
// float paths (matmul_forward, see matmul.hpp) finish each block of rows with an Epilogue.
//
// Threading: OpenBLAS is set to one thread, and the rows of all products are split over the
// backend's own pool, each range calling gemm on its block of rows.  Products whose y is shared
// by every batch (a linear layer) become one product with batch * n rows.
#include "mskernel_cpu/matmul.hpp"

#include "mskernel_cpu/bf16_gemm.hpp"
#include "mskernel_cpu/broadcast.hpp"
#include "mskernel_cpu/gemm.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

bool transposed_attr(const KernelContext& ctx, const char* name) {
  return ctx.attrs.has(name) && ctx.attrs.get_bool(name);
}

std::vector<int64_t> batch_dims(const std::vector<int64_t>& shape) {
  return std::vector<int64_t>(shape.begin(), shape.end() - 2);
}

void check_blas_dims(const Products& p) {
  for (int64_t v : {p.n, p.k, p.m}) check_blas_size("matmul", v);
}

// gemm over the blocks of rows of every product; finish(out_offset, rows) runs on each block
// of `out` right after it is computed.
template <class T, class Finish>
void blas_products(const Products& p, const T* x, const T* y, T* out, Finish&& finish) {
  if (p.rows() == 0 || p.m == 0) return;
  if (p.k == 0) {
    std::fill(out, out + p.rows() * p.m, T(0));
    finish(int64_t(0), p.rows());
    return;
  }
  parallel_for(p.rows(), p.grain(), [&](int64_t begin, int64_t end) {
    p.for_each_block(begin, end, [&](int64_t xo, int64_t yo, int64_t oo, int64_t rows) {
      const GemmShape shape{rows, p.m, p.k, gemm_layout(p.x_transposed),
                            gemm_layout(p.y_transposed)};
      gemm(shape, x + xo, p.x_ld, y + yo, p.y_ld, out + oo, p.m);
      finish(oo, rows);
    });
  });
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

}  // namespace

Products plan_products(const KernelContext& ctx) {
  std::vector<int64_t> xs = ctx.input(0).shape, ys = ctx.input(1).shape;
  if (xs.size() == 1) xs.insert(xs.begin(), 1);  // a row [1, k]
  if (ys.size() == 1) ys.push_back(1);           // a column [k, 1]
  Products p;
  p.x_transposed = transposed_attr(ctx, "transpose_a");
  p.y_transposed = transposed_attr(ctx, "transpose_b");
  if (p.x_transposed) std::swap(xs[xs.size() - 2], xs.back());
  if (p.y_transposed) std::swap(ys[ys.size() - 2], ys.back());
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
  if (p.batch > 1 && shared_y && dense_x && !p.x_transposed) {  // one product, batch * n rows
    p.n *= p.batch;
    p.batch = 1;
    p.x_offsets.assign(1, 0);
    p.y_offsets.resize(1);
  }
  p.x_ld = p.x_transposed ? p.n : p.k;
  p.y_ld = p.y_transposed ? p.k : p.m;
  return p;
}

MatmulPlan plan_matmul(const KernelContext& ctx) {
  MatmulPlan plan;
  plan.products = plan_products(ctx);
  check_blas_dims(plan.products);
  const DType dtype = ctx.input(0).dtype;
  const Products& p = plan.products;
  if (dtype == DType::BFloat16 && bf16_gemm_available()) {
    plan.bf16_native = true;
    plan.out_numel = ctx.output(0).numel();
    const size_t results = (sizeof(float) * static_cast<size_t>(plan.out_numel) + 63) / 64 * 64;
    plan.workspace_bytes = results + bf16_packed_b_bytes(p.k, p.m);
  } else if (dtype == DType::Float16 || dtype == DType::BFloat16) {
    plan.x_numel = ctx.input(0).numel();
    plan.y_numel = ctx.input(1).numel();
    plan.out_numel = ctx.output(0).numel();
    plan.workspace_bytes =
        sizeof(float) * static_cast<size_t>(plan.x_numel + plan.y_numel + plan.out_numel);
  }
  return plan;
}

namespace {

// bfloat16 products on AVX-512 BF16: each product's y packed once, its rows split over the
// pool, each block of float32 results finished (epilogue, rounding) right after.
void bf16_products(const MatmulPlan& plan, const bf16_t* x, const bf16_t* y,
                   const Epilogue<bf16_t>& epilogue, bf16_t* out, void* workspace) {
  const Products& p = plan.products;
  float* of = static_cast<float*>(workspace);
  char* packed = static_cast<char*>(workspace) +
                 (sizeof(float) * static_cast<size_t>(plan.out_numel) + 63) / 64 * 64;
  const GemmShape shape{p.n, p.m, p.k, gemm_layout(p.x_transposed), gemm_layout(p.y_transposed)};
  for (int64_t b = 0; b < p.batch; ++b) {
    const bf16_t* yb = y + p.y_offsets[b];
    parallel_for(bf16_panels(p.m), std::max<int64_t>(1, 4096 / std::max<int64_t>(p.k, 1)),
                 [&](int64_t begin, int64_t end) {
                   bf16_pack_b(shape, yb, p.y_ld, packed, begin, end);
                 });
    float* ob = of + b * p.n * p.m;
    parallel_for(p.n, p.grain(), [&](int64_t begin, int64_t end) {
      bf16_gemm_rows(shape, x + p.x_offsets[b], p.x_ld, packed, ob, p.m, begin, end);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t at = (b * p.n + r) * p.m;
        finish_row(epilogue, 0, of + at, out + at, p.m);
      }
    });
  }
}

}  // namespace

template <class T>
void matmul_forward(const MatmulPlan& plan, const T* x, const T* y, const Epilogue<T>& epilogue,
                    T* out, void* workspace) {
  const Products& p = plan.products;
  if constexpr (std::is_same_v<T, bf16_t>) {
    if (plan.bf16_native) {
      bf16_products(plan, x, y, epilogue, out, workspace);
      return;
    }
  }
  if constexpr (is_half_v<T>) {
    float* xf = static_cast<float*>(workspace);
    float* yf = xf + plan.x_numel;
    float* of = yf + plan.y_numel;
    widen_to_float(x, xf, plan.x_numel);
    widen_to_float(y, yf, plan.y_numel);
    blas_products(p, xf, yf, of, [&](int64_t offset, int64_t rows) {
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t at = offset + r * p.m;
        finish_row(epilogue, 0, of + at, out + at, p.m);
      }
    });
  } else {
    blas_products(p, x, y, out, [&](int64_t offset, int64_t rows) {
      if (epilogue.trivial()) return;
      for (int64_t r = 0; r < rows; ++r) {
        T* row = out + offset + r * p.m;
        finish_row(epilogue, 0, row, row, p.m);
      }
    });
  }
}

template void matmul_forward<float>(const MatmulPlan&, const float*, const float*,
                                    const Epilogue<float>&, float*, void*);
template void matmul_forward<double>(const MatmulPlan&, const double*, const double*,
                                     const Epilogue<double>&, double*, void*);
template void matmul_forward<f16_t>(const MatmulPlan&, const f16_t*, const f16_t*,
                                    const Epilogue<f16_t>&, f16_t*, void*);
template void matmul_forward<bf16_t>(const MatmulPlan&, const bf16_t*, const bf16_t*,
                                     const Epilogue<bf16_t>&, bf16_t*, void*);

namespace {

Kernel matmul(KernelContext& ctx) {
  const Products p = plan_products(ctx);
  if (p.rows() == 0 || p.m == 0) return [](const Args&) {};
  return dispatch<kNumeric>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return integer_kernel<T>(ctx, p);
    } else if constexpr (is_complex_v<T>) {
      check_blas_dims(p);
      ctx.detail = p.batch == 1 ? "gemm" : "gemm per product";
      return [p](const Args& args) {
        blas_products(p, args.in<T>(0), args.in<T>(1), args.out<T>(0), [](int64_t, int64_t) {});
      };
    } else {
      const MatmulPlan plan = plan_matmul(ctx);
      ctx.workspace_bytes = plan.workspace_bytes;
      ctx.detail = plan.bf16_native ? bf16_gemm_engine()
                   : is_half_v<T> ? "widened to float32, sgemm"
                                : (p.batch == 1 ? "gemm" : "gemm per product");
      return [plan](const Args& args) {
        matmul_forward<T>(plan, args.in<T>(0), args.in<T>(1), Epilogue<T>{}, args.out<T>(0),
                          args.workspace);
      };
    }
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("matmul", kNumeric, matmul);

}  // namespace mskernel_cpu
