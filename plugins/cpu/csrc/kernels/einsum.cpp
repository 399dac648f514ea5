// einsum: NumPy's subscript language (ellipsis, diagonals, implicit output, size-1 subscripts
// broadcast) over any number of operands.
//
// The equation is parsed at compile time into labels: letters, plus one label per dimension
// under the ellipsis (right-aligned across operands).  Each operand becomes a stride per label
// (a repeated label sums its strides: the diagonal; a broadcast size-1 dimension has stride 0).
//
// Two float or complex operands are contracted as a batched GEMM: labels split into batch
// (both operands and the output), rows (first operand and output), columns (second operand
// and output) and the summed inner dimension (both operands only).  An operand already laid out
// as [batch, rows, inner] or [batch, inner, rows] is handed to BLAS as it is (transposed if
// need be); otherwise it is first rearranged into scratch, which also takes diagonals, sums
// labels no other term uses and widens float16/bfloat16 to float32.  The product lands in the
// output directly when the output is [batch, rows, columns], else in scratch and then permuted.
// BLAS is single-threaded; the pool splits the rows of all products.
//
// Everything else (integers, one operand, three or more) runs the general contraction: for
// each output element, the sum over the summed labels of the product of the operands, with
// floats accumulated in double, complex in complex<double> and integers wrapping.
#include <cblas.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "mskernel_cpu/broadcast.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

constexpr int kLetters = 52;  // 'A'..'Z' then 'a'..'z': label order is ASCII order
constexpr int kMaxLabels = kLetters + kMaxRank;
constexpr int kMaxOperands = 32;

using Labels = std::vector<int>;
using LabelStrides = std::array<int64_t, kMaxLabels>;

// ---- parsing ----------------------------------------------------------------------------

struct Equation {
  std::vector<Labels> inputs;  // one label per dimension of each operand
  Labels output;
  std::array<int64_t, kMaxLabels> sizes;  // broadcast size of each label (-1: unused)
};

constexpr int kEllipsisMark = -1;

// The labels of one term, with kEllipsisMark where "..." stands.
Labels parse_term(const std::string& term) {
  Labels labels;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      labels.push_back(kEllipsisMark);
      i += 2;
    } else {
      const char c = term[i];
      labels.push_back(c <= 'Z' ? c - 'A' : 26 + (c - 'a'));
    }
  }
  return labels;
}

// Replace the ellipsis mark by `count` labels ending at the last ellipsis label of `total`.
Labels expand_ellipsis(const Labels& term, int count, int total) {
  Labels labels;
  for (int label : term) {
    if (label != kEllipsisMark) {
      labels.push_back(label);
      continue;
    }
    for (int j = 0; j < count; ++j) labels.push_back(kLetters + total - count + j);
  }
  return labels;
}

Equation parse_equation(const std::string& equation, const std::vector<TensorInfo>& operands) {
  std::string text;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  }
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<Labels> terms;
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    terms.push_back(parse_term(lhs.substr(begin, comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  std::vector<int> spreads(terms.size());
  int batch_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int named = static_cast<int>(
        std::count_if(terms[i].begin(), terms[i].end(), [](int l) { return l >= 0; }));
    spreads[i] = operands[i].rank() - named;
    batch_rank = std::max(batch_rank, spreads[i]);
  }
  if (batch_rank > kMaxRank) throw Error(ErrorKind::Value, "einsum: '...' spans too many dims");
  Equation eq;
  eq.sizes.fill(-1);
  std::array<int, kMaxLabels> uses{};
  for (size_t i = 0; i < terms.size(); ++i) {
    eq.inputs.push_back(expand_ellipsis(terms[i], spreads[i], batch_rank));
    for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const int label = eq.inputs[i][d];
      const int64_t size = operands[i].shape[d];
      if (eq.sizes[label] == -1 || eq.sizes[label] == 1) eq.sizes[label] = size;
      ++uses[label];
    }
  }
  if (arrow != std::string::npos) {
    eq.output = expand_ellipsis(parse_term(text.substr(arrow + 2)), batch_rank, batch_rank);
  } else {  // the ellipsis, then the letters used exactly once, in ASCII order
    for (int j = 0; j < batch_rank; ++j) eq.output.push_back(kLetters + j);
    for (int label = 0; label < kLetters; ++label) {
      if (uses[label] == 1) eq.output.push_back(label);
    }
  }
  return eq;
}

// Element strides of an operand per label: repeated labels add up, broadcast dims give 0.
LabelStrides label_strides(const Labels& labels, const std::vector<int64_t>& shape) {
  LabelStrides strides{};
  int64_t stride = 1;
  for (size_t d = labels.size(); d-- > 0;) {
    if (shape[d] != 1) strides[labels[d]] += stride;
    stride *= shape[d];
  }
  return strides;
}

bool contains_label(const Labels& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// ---- the general contraction ------------------------------------------------------------

template <class T>
using acc_t = std::conditional_t<std::is_integral_v<T>, T,
                                 std::conditional_t<is_complex_v<T>, std::complex<double>,
                                                    double>>;

// out[o] = sum over the summed labels of prod_i operand_i[...], all as strides per dimension.
struct Contraction {
  int operands = 0;
  std::vector<int64_t> out_sizes, sum_sizes;
  std::vector<int64_t> out_strides, sum_strides;  // [dim * operands + operand]
  int64_t out_numel = 1, sum_numel = 1;

  Contraction(const std::vector<LabelStrides>& strides, const Labels& out, const Labels& summed,
              const std::array<int64_t, kMaxLabels>& sizes)
      : operands(static_cast<int>(strides.size())) {
    for (int label : out) add(label, strides, sizes, out_sizes, out_strides, out_numel);
    for (int label : summed) add(label, strides, sizes, sum_sizes, sum_strides, sum_numel);
  }

  int64_t grain() const {
    return std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, sum_numel * operands));
  }

  // Writes out[begin, end) in Out, reading the operands as In.  The output is walked in
  // runs along its last dimension; a run of a single operand with nothing to sum (a permuted,
  // diagonal or broadcast copy) is a plain strided loop.
  template <class In, class Out>
  void run(const In* const* x, Out* out, int64_t begin, int64_t end) const {
    using A = acc_t<In>;
    int64_t base[kMaxOperands] = {};
    const int out_rank = static_cast<int>(out_sizes.size());
    if (out_rank == 0) {  // a single element
      out[0] = convert<Out>(sum_at<In, A>(x, base));
      return;
    }
    const int last = out_rank - 1;
    const int64_t length = out_sizes[last];
    const int64_t* steps = &out_strides[last * operands];
    int64_t coord[kMaxLabels];
    int64_t rest = begin;
    for (int d = last; d >= 0; --d) {
      coord[d] = rest % out_sizes[d];
      rest /= out_sizes[d];
      for (int i = 0; i < operands; ++i) base[i] += coord[d] * out_strides[d * operands + i];
    }
    const bool copy = operands == 1 && sum_sizes.empty();
    for (int64_t f = begin; f < end;) {
      const int64_t column = coord[last];
      const int64_t count = std::min(end - f, length - column);
      if (copy) {
        const In* from = x[0] + base[0];
        for (int64_t t = 0; t < count; ++t) out[f + t] = convert<Out>(load(from[t * steps[0]]));
      } else {
        int64_t at[kMaxOperands];
        for (int i = 0; i < operands; ++i) at[i] = base[i];
        for (int64_t t = 0; t < count; ++t) {
          out[f + t] = convert<Out>(sum_at<In, A>(x, at));
          for (int i = 0; i < operands; ++i) at[i] += steps[i];
        }
      }
      f += count;
      if (f >= end) break;
      // The run ended at the end of the last dimension: carry into the outer ones.
      for (int i = 0; i < operands; ++i) base[i] -= column * steps[i];
      coord[last] = 0;
      for (int d = last - 1; d >= 0; --d) {
        for (int i = 0; i < operands; ++i) base[i] += out_strides[d * operands + i];
        if (++coord[d] < out_sizes[d]) break;
        for (int i = 0; i < operands; ++i) {
          base[i] -= out_sizes[d] * out_strides[d * operands + i];
        }
        coord[d] = 0;
      }
    }
  }

 private:
  static void add(int label, const std::vector<LabelStrides>& strides,
                  const std::array<int64_t, kMaxLabels>& sizes, std::vector<int64_t>& dims,
                  std::vector<int64_t>& dim_strides, int64_t& numel) {
    dims.push_back(sizes[label]);
    numel *= sizes[label];
    for (const LabelStrides& s : strides) dim_strides.push_back(s[label]);
  }

  template <class In, class A>
  A product_at(const In* const* x, const int64_t* offset) const {
    A p = A(load(x[0][offset[0]]));
    for (int i = 1; i < operands; ++i) p = wrap_mul(p, A(load(x[i][offset[i]])));
    return p;
  }

  template <class In, class A>
  A sum_at(const In* const* x, const int64_t* base) const {
    const int sum_rank = static_cast<int>(sum_sizes.size());
    if (sum_rank == 0) return product_at<In, A>(x, base);
    A total = A(0);
    if (sum_numel == 0) return total;
    int64_t coord[kMaxLabels] = {};
    int64_t offset[kMaxOperands];
    for (int i = 0; i < operands; ++i) offset[i] = base[i];
    const int inner = sum_rank - 1;
    const int64_t length = sum_sizes[inner];
    for (;;) {
      int64_t at[kMaxOperands];
      for (int i = 0; i < operands; ++i) at[i] = offset[i];
      for (int64_t t = 0; t < length; ++t) {
        total = wrap_add(total, product_at<In, A>(x, at));
        for (int i = 0; i < operands; ++i) at[i] += sum_strides[inner * operands + i];
      }
      int d = inner - 1;
      for (; d >= 0; --d) {
        for (int i = 0; i < operands; ++i) offset[i] += sum_strides[d * operands + i];
        if (++coord[d] < sum_sizes[d]) break;
        for (int i = 0; i < operands; ++i) {
          offset[i] -= sum_sizes[d] * sum_strides[d * operands + i];
        }
        coord[d] = 0;
      }
      if (d < 0) return total;
    }
  }
};

template <class In, class Out>
void contract(const Contraction& c, const In* const* x, Out* out) {
  parallel_for(c.out_numel, c.grain(),
               [&](int64_t begin, int64_t end) { c.run(x, out, begin, end); });
}

// ---- BLAS -------------------------------------------------------------------------------

// One product block: C[rows, n] = op(A)[rows, k] @ op(B)[k, n], row-major.
struct Gemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int lda() const { return int(trans_a ? m : k); }
  int ldb() const { return int(trans_b ? k : n); }
};

void gemm(const Gemm& g, int rows, const float* a, const float* b, float* c) {
  scipy_cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                    g.trans_b ? CblasTrans : CblasNoTrans, rows, int(g.n), int(g.k), 1.0f, a,
                    g.lda(), b, g.ldb(), 0.0f, c, int(g.n));
}

void gemm(const Gemm& g, int rows, const double* a, const double* b, double* c) {
  scipy_cblas_dgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                    g.trans_b ? CblasTrans : CblasNoTrans, rows, int(g.n), int(g.k), 1.0, a,
                    g.lda(), b, g.ldb(), 0.0, c, int(g.n));
}

void gemm(const Gemm& g, int rows, const std::complex<float>* a, const std::complex<float>* b,
          std::complex<float>* c) {
  const std::complex<float> one(1), zero(0);
  scipy_cblas_cgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                    g.trans_b ? CblasTrans : CblasNoTrans, rows, int(g.n), int(g.k), &one, a,
                    g.lda(), b, g.ldb(), &zero, c, int(g.n));
}

void gemm(const Gemm& g, int rows, const std::complex<double>* a,
          const std::complex<double>* b, std::complex<double>* c) {
  const std::complex<double> one(1), zero(0);
  scipy_cblas_zgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                    g.trans_b ? CblasTrans : CblasNoTrans, rows, int(g.n), int(g.k), &one, a,
                    g.lda(), b, g.ldb(), &zero, c, int(g.n));
}

// ---- the GEMM plan ----------------------------------------------------------------------

constexpr int64_t kMinRangeFlops = 1 << 21;

// How one operand reaches BLAS: as it is, or rearranged into scratch first.
struct Staging {
  bool direct = false;
  std::optional<Contraction> rearrange;  // into [batch, rows, inner] order, when not direct
  size_t scratch_offset = 0;
};

struct GemmPlan {
  int64_t batch = 1;
  Gemm g;
  Staging a, b;
  bool direct_out = false;
  std::optional<Contraction> permute_out;  // [batch, m, n] scratch -> output
  size_t out_offset = 0;

  int64_t grain() const {
    return std::max<int64_t>(1, kMinRangeFlops / std::max<int64_t>(1, g.k * g.n));
  }
};

int64_t product_of(const Labels& labels, const std::array<int64_t, kMaxLabels>& sizes) {
  int64_t n = 1;
  for (int label : labels) n *= sizes[label];
  return n;
}

Labels concat(const Labels& a, const Labels& b, const Labels& c) {
  Labels out(a);
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

size_t aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Stage one operand whose labels should read [batch, first, second] (or, when `may_swap`,
// [batch, second, first] with *transposed set): directly when its layout already is that.
Staging stage(const Labels& labels, const std::vector<int64_t>& shape, const Equation& eq,
              const Labels& batch, const Labels& first, const Labels& second, bool widen,
              bool* transposed, size_t element_size, size_t* scratch) {
  Staging s;
  bool plain = !widen;
  for (size_t d = 0; d < labels.size() && plain; ++d) {
    plain = shape[d] == eq.sizes[labels[d]] &&
            std::count(labels.begin(), labels.end(), labels[d]) == 1;
  }
  if (plain && labels == concat(batch, first, second)) {
    s.direct = true;
    return s;
  }
  if (plain && labels == concat(batch, second, first)) {
    s.direct = true;
    *transposed = true;
    return s;
  }
  const Labels target = concat(batch, first, second);
  Labels summed;
  for (int label : labels) {
    if (!contains_label(target, label) && !contains_label(summed, label)) summed.push_back(label);
  }
  s.rearrange.emplace(std::vector<LabelStrides>{label_strides(labels, shape)}, target, summed,
                      eq.sizes);
  s.scratch_offset = *scratch;
  *scratch += aligned(element_size * static_cast<size_t>(product_of(target, eq.sizes)));
  return s;
}

GemmPlan plan_gemm(const Equation& eq, const std::vector<TensorInfo>& operands, bool widen,
                   size_t element_size, size_t* scratch) {
  const Labels& la = eq.inputs[0];
  const Labels& lb = eq.inputs[1];
  const Labels& lo = eq.output;
  Labels batch, rows, cols, inner;
  for (int label : lo) {
    const bool in_a = contains_label(la, label), in_b = contains_label(lb, label);
    (in_a && in_b ? batch : in_a ? rows : cols).push_back(label);
  }
  for (int label : la) {
    if (contains_label(lb, label) && !contains_label(lo, label) && !contains_label(inner, label)) {
      inner.push_back(label);
    }
  }
  GemmPlan p;
  p.batch = product_of(batch, eq.sizes);
  p.g.m = product_of(rows, eq.sizes);
  p.g.n = product_of(cols, eq.sizes);
  p.g.k = product_of(inner, eq.sizes);
  p.a = stage(la, operands[0].shape, eq, batch, rows, inner, widen, &p.g.trans_a, element_size,
              scratch);
  p.b = stage(lb, operands[1].shape, eq, batch, inner, cols, widen, &p.g.trans_b, element_size,
              scratch);
  const Labels product = concat(batch, rows, cols);
  p.direct_out = !widen && lo == product;
  if (!p.direct_out) {
    std::array<int64_t, kMaxLabels> sizes = eq.sizes;
    LabelStrides strides{};
    int64_t stride = 1;
    for (size_t d = product.size(); d-- > 0;) {
      strides[product[d]] = sizes[product[d]] == 1 ? 0 : stride;
      stride *= sizes[product[d]];
    }
    p.permute_out.emplace(std::vector<LabelStrides>{strides}, lo, Labels{}, sizes);
    p.out_offset = *scratch;
    *scratch += aligned(element_size * static_cast<size_t>(p.batch * p.g.m * p.g.n));
  }
  return p;
}

// T: the operands' storage type; C: the type BLAS computes in (float for half types).
template <class T, class C>
Kernel gemm_kernel(KernelContext& ctx, const Equation& eq) {
  size_t scratch = 0;
  const GemmPlan p = plan_gemm(eq, ctx.inputs, !std::is_same_v<T, C>, sizeof(C), &scratch);
  constexpr int64_t limit = 2147483647;
  if (p.g.m > limit || p.g.n > limit || p.g.k > limit) {
    throw Error("einsum: a dimension exceeds the 32-bit BLAS limit");
  }
  ctx.workspace_bytes = scratch;
  ctx.detail = std::string("batched gemm") + (p.a.direct ? "" : ", staged x0") +
               (p.b.direct ? "" : ", staged x1") + (p.direct_out ? "" : ", permuted out");
  auto staged = [](const Staging& s, const Args& args, int i) -> const C* {
    if (s.direct) return static_cast<const C*>(args.inputs[i]);
    C* buffer = reinterpret_cast<C*>(args.scratch<unsigned char>() + s.scratch_offset);
    const T* x[1] = {args.in<T>(i)};
    contract(*s.rearrange, x, buffer);
    return buffer;
  };
  return [p, staged](const Args& args) {
    const C* a = staged(p.a, args, 0);
    const C* b = staged(p.b, args, 1);
    C* c = p.direct_out ? reinterpret_cast<C*>(args.out<T>(0))
                        : reinterpret_cast<C*>(args.scratch<unsigned char>() + p.out_offset);
    const int64_t a_size = p.g.m * p.g.k, b_size = p.g.k * p.g.n, c_size = p.g.m * p.g.n;
    parallel_for(p.batch * p.g.m, p.grain(), [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t product = begin / p.g.m, row = begin % p.g.m;
        const int64_t rows = std::min(p.g.m - row, end - begin);
        const C* a_rows = a + product * a_size + (p.g.trans_a ? row : row * p.g.k);
        gemm(p.g, int(rows), a_rows, b + product * b_size, c + product * c_size + row * p.g.n);
        begin += rows;
      }
    });
    if (!p.direct_out) {
      const C* product[1] = {c};
      contract(*p.permute_out, product, args.out<T>(0));
    }
  };
}

// ---- the general kernel -----------------------------------------------------------------

template <class T>
Kernel general_kernel(KernelContext& ctx, const Equation& eq) {
  std::vector<LabelStrides> strides;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    strides.push_back(label_strides(eq.inputs[i], ctx.input(i).shape));
  }
  Labels summed;
  for (const Labels& term : eq.inputs) {
    for (int label : term) {
      if (!contains_label(eq.output, label) && !contains_label(summed, label)) {
        summed.push_back(label);
      }
    }
  }
  const Contraction c(strides, eq.output, summed, eq.sizes);
  const int operands = static_cast<int>(eq.inputs.size());
  ctx.detail = "general contraction";
  return [c, operands](const Args& args) {
    const T* x[kMaxOperands];
    for (int i = 0; i < operands; ++i) x[i] = args.in<T>(i);
    contract(c, x, args.out<T>(0));
  };
}

Kernel einsum(KernelContext& ctx) {
  if (ctx.inputs.size() > size_t(kMaxOperands)) {
    throw Error(ErrorKind::Value, "einsum: more than 32 operands");
  }
  const Equation eq = parse_equation(ctx.attrs.get_str("equation"), ctx.inputs);
  if (ctx.output(0).numel() == 0) return [](const Args&) {};
  bool empty_label = false;
  for (int64_t size : eq.sizes) empty_label = empty_label || size == 0;
  const bool two_operands = ctx.inputs.size() == 2 && !empty_label;
  return dispatch<kNumeric>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return general_kernel<T>(ctx, eq);
    } else {
      if (!two_operands) return general_kernel<T>(ctx, eq);
      return gemm_kernel<T, compute_t<T>>(ctx, eq);
    }
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("einsum", kNumeric, einsum);

}  // namespace mskernel_cpu
