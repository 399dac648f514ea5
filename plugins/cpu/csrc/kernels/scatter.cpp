// Scatters: scatter (PyTorch's scatter/scatter_reduce along an axis, include_self) and
// scatter_nd (updates land on rows addressed by index tuples), as updated copies of x.
//
// Every index is checked first, then x is copied to the output and the updates combined into
// it.  Updates that may land on one element are always applied by one thread in row-major
// order of the indices, so "none" keeps the last and add/mul/max/min combine in the order
// NumPy's ufunc.at does.  scatter splits the work over the positions before the axis and
// blocks of positions after it (each such slice owns its targets); scatter_nd splits the
// columns of the rows it updates.
#include "mskernel_cpu/indexing.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

// ---- how an update combines with its target ---------------------------------------------

struct Replace {
  static constexpr DTypeSet kDTypes = kAll;
  template <class T> static T apply(T, T update) { return update; }
};

struct Add {
  static constexpr DTypeSet kDTypes = kNumeric;
  template <class T> static T apply(T a, T b) {
    if constexpr (is_half_v<T>) {
      return convert<T>(load(a) + load(b));
    } else {
      return wrap_add(a, b);
    }
  }
};

struct Multiply {
  static constexpr DTypeSet kDTypes = kNumeric;
  template <class T> static T apply(T a, T b) {
    if constexpr (is_half_v<T>) {
      return convert<T>(load(a) * load(b));
    } else {
      return wrap_mul(a, b);
    }
  }
};

template <bool Largest> struct Extreme {
  static constexpr DTypeSet kDTypes = kReal;
  template <class T> static T apply(T a, T b) {
    const compute_t<T> x = load(a), y = load(b);
    bool keep = Largest ? x >= y : x <= y;
    if constexpr (std::is_floating_point_v<compute_t<T>>) keep = keep || std::isnan(x);
    return keep ? a : b;  // NaN propagates, as np.maximum/np.minimum
  }
};

// Calls f(Reducer{}) for the `reduce` attribute.
template <class F>
Kernel with_reducer(const std::string& reduce, F&& f) {
  if (reduce == "none") return f(Replace{});
  if (reduce == "add") return f(Add{});
  if (reduce == "mul") return f(Multiply{});
  if (reduce == "max") return f(Extreme<true>{});
  if (reduce == "min") return f(Extreme<false>{});
  throw Error(ErrorKind::Value, "scatter: unknown reduce '" + reduce + "'");
}

// ---- layout helpers ---------------------------------------------------------------------

// Offsets (with `strides`) of every position of a box of `sizes`, in row-major order.
std::vector<int64_t> box_offsets(const std::vector<int64_t>& sizes,
                                 const std::vector<int64_t>& strides) {
  std::vector<int64_t> offsets{0};
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * sizes[d]);
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < sizes[d]; ++i) next.push_back(base + i * strides[d]);
    }
    offsets.swap(next);
  }
  return offsets;
}

void copy_input(const Args& args, size_t bytes) {
  const auto* x = args.in<unsigned char>(0);
  auto* out = args.out<unsigned char>(0);
  constexpr int64_t kBlock = 1 << 18;
  const int64_t blocks = (static_cast<int64_t>(bytes) + kBlock - 1) / kBlock;
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    const size_t first = begin * kBlock, last = std::min<size_t>(bytes, end * kBlock);
    std::memcpy(out + first, x + first, last - first);
  });
}

// ---- scatter along an axis --------------------------------------------------------------

// Positions after the axis per task: short enough to give every thread work when the axis
// is the first, long enough for contiguous runs.
constexpr int64_t kChunk = 128;

Kernel scatter(KernelContext& ctx) {
  const std::vector<int64_t>& xs = ctx.input(0).shape;
  const std::vector<int64_t>& is = ctx.input(1).shape;
  const int rank = ctx.input(0).rank();
  const int axis = normalize_axis(ctx.attrs.get_int("axis"), rank);
  const std::vector<int64_t> x_strides = ctx.input(0).strides();
  auto part = [](const std::vector<int64_t>& v, int begin, int end) {
    return std::vector<int64_t>(v.begin() + begin, v.begin() + end);
  };
  // Targets of the positions before and after the axis; sources are dense.
  const std::vector<int64_t> before = box_offsets(part(is, 0, axis), part(x_strides, 0, axis));
  const std::vector<int64_t> after =
      box_offsets(part(is, axis + 1, rank), part(x_strides, axis + 1, rank));
  const int64_t picks = is[axis], width = static_cast<int64_t>(after.size());
  const int64_t size = xs[axis], axis_stride = x_strides[axis];
  const int64_t count = ctx.input(1).numel();
  const int64_t chunk = std::min<int64_t>(std::max<int64_t>(width, 1), kChunk);
  const int64_t chunks = (width + chunk - 1) / chunk;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, picks * chunk));
  const size_t bytes = ctx.input(0).nbytes();
  const IndexSite site{"scatter", "indices", is};
  const std::string dim = "axis " + std::to_string(axis);
  return with_reducer(ctx.attrs.get_str("reduce"), [&](auto reducer) -> Kernel {
    using R = decltype(reducer);
    return dispatch<R::kDTypes>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
      using T = typename decltype(tag)::type;
      return dispatch_index(ctx.input(1).dtype, [&](auto index) -> Kernel {
        using I = typename decltype(index)::type;
        return [=](const Args& args) {
          const I* indices = args.in<I>(1);
          check_indices(site, indices, count, dim, size);
          copy_input(args, bytes);
          if (count == 0) return;
          const T* updates = args.in<T>(2);
          T* out = args.out<T>(0);
          parallel_for(int64_t(before.size()) * chunks, grain, [&](int64_t begin, int64_t end) {
            for (int64_t task = begin; task < end; ++task) {
              const int64_t p = task / chunks, q0 = (task - p * chunks) * chunk;
              const int64_t q1 = std::min(width, q0 + chunk);
              T* slice = out + before[p];
              const I* picked = indices + p * picks * width;
              const T* update = updates + p * picks * width;
              if (width == 1) {  // the axis is the last
                for (int64_t j = 0; j < picks; ++j) {
                  T& target = slice[static_cast<int64_t>(picked[j]) * axis_stride];
                  target = R::apply(target, update[j]);
                }
                continue;
              }
              for (int64_t j = 0; j < picks; ++j, picked += width, update += width) {
                for (int64_t q = q0; q < q1; ++q) {
                  T& target = slice[static_cast<int64_t>(picked[q]) * axis_stride + after[q]];
                  target = R::apply(target, update[q]);
                }
              }
            }
          });
        };
      });
    });
  });
}

// ---- scatter by index tuples ------------------------------------------------------------

Kernel scatter_nd(KernelContext& ctx) {
  const std::vector<int64_t>& xs = ctx.input(0).shape;
  const std::vector<int64_t>& is = ctx.input(1).shape;
  const int64_t k = is.back();
  const int64_t tuples = dims_product(is, 0, is.size() - 1);
  const int64_t width = dims_product(xs, k, xs.size());
  std::vector<int64_t> row_strides(k, 1);
  for (int64_t i = k - 1; i > 0; --i) row_strides[i - 1] = row_strides[i] * xs[i];
  std::vector<std::string> dims(k);
  for (int64_t i = 0; i < k; ++i) dims[i] = "dimension " + std::to_string(i);
  const int64_t chunk = std::max<int64_t>(64, (1 << 15) / std::max<int64_t>(1, tuples));
  const int64_t chunks = (width + chunk - 1) / chunk;
  const size_t bytes = ctx.input(0).nbytes();
  const IndexSite site{"scatter_nd", "indices", is};
  return with_reducer(ctx.attrs.get_str("reduce"), [&](auto reducer) -> Kernel {
    using R = decltype(reducer);
    return dispatch<R::kDTypes>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
      using T = typename decltype(tag)::type;
      return dispatch_index(ctx.input(1).dtype, [&](auto index) -> Kernel {
        using I = typename decltype(index)::type;
        return [=](const Args& args) {
          const I* indices = args.in<I>(1);
          for (int64_t i = 0; i < k; ++i) {
            check_indices(site, indices, tuples, dims[i], xs[i], i, k);
          }
          copy_input(args, bytes);
          const T* updates = args.in<T>(2);
          T* out = args.out<T>(0);
          parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
            const int64_t c0 = begin * chunk, c1 = std::min(width, end * chunk);
            for (int64_t t = 0; t < tuples; ++t) {
              int64_t row = 0;
              for (int64_t i = 0; i < k; ++i) {
                row += static_cast<int64_t>(indices[t * k + i]) * row_strides[i];
              }
              T* target = out + row * width;
              const T* source = updates + t * width;
              for (int64_t c = c0; c < c1; ++c) target[c] = R::apply(target[c], source[c]);
            }
          });
        };
      });
    });
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("scatter", kAll, scatter);
MSKERNEL_CPU_KERNEL("scatter_nd", kAll, scatter_nd);

}  // namespace mskernel_cpu
