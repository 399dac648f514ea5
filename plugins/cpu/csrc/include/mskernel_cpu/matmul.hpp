// Matmul as OpenBLAS gemm over blocks of rows, for the matmul kernel and for fused kernels built
// on it (a per-column bias add and an activation applied to each block by an Epilogue: a linear
// layer's x @ w + b).
//
//   MatmulPlan plan = plan_matmul(ctx);             // factory: products, workspace
//   ctx.workspace_bytes = plan.workspace_bytes;
//   matmul_forward<T>(plan, x, y, epilogue, out, args.workspace);   // closure
//
// float32/float64 multiply in place; float16/bfloat16 are widened to float32 in the workspace,
// multiplied by sgemm and rounded once by the epilogue.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mskernel_cpu/epilogue.hpp"
#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

// The products of x[..., n, k] @ y[..., k, m] after broadcasting the batch dims (NumPy's 1-D
// rules applied): `batch` products of [n, k] by [k, m] at the given element offsets.  Products
// sharing y over a dense x (a linear layer) are merged into one with batch * n rows.  An
// operand may be stored transposed (cpu.matmul_bias_act's transpose_a/transpose_b: x stored
// [..., k, n], y stored [..., m, k]); BLAS reads it so, with leading dimensions x_ld and y_ld.
struct Products {
  int64_t batch = 1, n = 0, k = 0, m = 0;
  std::vector<int64_t> x_offsets, y_offsets;
  bool x_transposed = false, y_transposed = false;
  int64_t x_ld = 0, y_ld = 0;

  int64_t rows() const { return batch * n; }

  // Rows per thread range: enough that a range does a few million multiply-adds.
  int64_t grain() const {
    constexpr int64_t kMinRangeFlops = 1 << 21;
    return std::max<int64_t>(1, kMinRangeFlops / std::max<int64_t>(1, k * m));
  }

  // Call f(x_offset, y_offset, out_offset, rows) for each block of rows in [begin, end) of the
  // flattened (product, row) index.
  template <class F> void for_each_block(int64_t begin, int64_t end, F&& f) const {
    while (begin < end) {
      const int64_t b = begin / n, row = begin % n;
      const int64_t count = std::min(n - row, end - begin);
      f(x_offsets[b] + row * (x_transposed ? 1 : k), y_offsets[b], (b * n + row) * m, count);
      begin += count;
    }
  }
};

// The products of a matmul node; cpu.matmul_bias_act's transpose_a/transpose_b attributes
// say that an operand is stored with its last two dims swapped.
Products plan_products(const KernelContext& ctx);

struct MatmulPlan {
  Products products;
  int64_t x_numel = 0, y_numel = 0, out_numel = 0;  // the widened copies (half types)
  size_t workspace_bytes = 0;
  bool bf16_native = false;  // bfloat16 on AVX-512 BF16: packed B and float32 results only
};

// The plan of a matmul node with float32/float64/float16/bfloat16 operands.
MatmulPlan plan_matmul(const KernelContext& ctx);

// out = epilogue(x @ y), the bias indexed by the output column, for T in float, double,
// f16_t, bf16_t.
template <class T>
void matmul_forward(const MatmulPlan& plan, const T* x, const T* y, const Epilogue<T>& epilogue,
                    T* out, void* workspace);

extern template void matmul_forward<float>(const MatmulPlan&, const float*, const float*,
                                           const Epilogue<float>&, float*, void*);
extern template void matmul_forward<double>(const MatmulPlan&, const double*, const double*,
                                            const Epilogue<double>&, double*, void*);
extern template void matmul_forward<f16_t>(const MatmulPlan&, const f16_t*, const f16_t*,
                                           const Epilogue<f16_t>&, f16_t*, void*);
extern template void matmul_forward<bf16_t>(const MatmulPlan&, const bf16_t*, const bf16_t*,
                                            const Epilogue<bf16_t>&, bf16_t*, void*);

}  // namespace mskernel_cpu
