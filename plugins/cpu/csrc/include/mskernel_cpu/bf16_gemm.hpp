// bfloat16 GEMM with float32 accumulation on AMX tiles (tdpbf16ps) or AVX-512 BF16
// (vdpbf16ps), chosen at run time.
//
//   if (bf16_gemm_available()) {
//     Bf16PackedB packed = ...;                   // workspace of bf16_packed_b_bytes(k, n)
//     bf16_pack_b(shape, b, ldb, packed, 0, bf16_panels(n));  // once per B (any panel range)
//     bf16_gemm_rows(shape, a, lda, packed, c, ldc, row_begin, row_end);  // any row range
//   }
//
// c[m, n] (float32) = a[m, k] @ b[k, n], a and b bfloat16, stored as they are or transposed
// (GemmShape's layouts).  B is packed once into column panels of pairs of k (the layout
// vdpbf16ps multiplies), so threads splitting the rows share it; each row range packs its
// rows of A itself.  Every product of two bfloat16 values is exact in float32 and the sums
// are float32, as the reference computes bfloat16 matmuls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mskernel_cpu/dtype.hpp"
#include "mskernel_cpu/gemm.hpp"

namespace mskernel_cpu {

// Whether this CPU runs the kernels (AMX-BF16 usable by this process, or AVX512F +
// AVX512_BF16), checked once; which of the two runs them.
bool bf16_gemm_available();
const char* bf16_gemm_engine();

// The panels of columns of the packed B of n columns, and its bytes for k rows.
int64_t bf16_panels(int64_t n);
size_t bf16_packed_b_bytes(int64_t k, int64_t n);

// Pack panels [panel_begin, panel_end) of b (k x n as the shape's layout says, leading
// dimension ldb) into `packed`; threads may pack disjoint ranges.
void bf16_pack_b(const GemmShape& shape, const bf16_t* b, int64_t ldb, void* packed,
                 int64_t panel_begin, int64_t panel_end);

// Rows [row_begin, row_end) of c = a @ b, from b packed by bf16_pack_b.
void bf16_gemm_rows(const GemmShape& shape, const bf16_t* a, int64_t lda, const void* packed,
                    float* c, int64_t ldc, int64_t row_begin, int64_t row_end);

}  // namespace mskernel_cpu
