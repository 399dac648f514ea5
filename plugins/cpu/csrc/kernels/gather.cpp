// Gathers: gather (np.take along an axis), embedding (rows of a table), gather_nd (rows
// addressed by index tuples) and take_along_axis (np.take_along_axis, broadcasting).
//
// gather, embedding and gather_nd check every index first, then copy whole rows: the
// dimensions after the indexed ones are one contiguous run, copied with memcpy (a plain
// element gather when the run has length 1), and the rows are split over the pool.
// take_along_axis walks the output with offset tables worked out at compile time for the
// broadcast dimensions before and after the axis, checking each index as it reads it.  An
// out-of-range index raises the reference's error, naming the first one.  Elements are moved
// by size only, so every dtype shares one instantiation per element size.
#include "mskernel_cpu/indexing.hpp"

namespace mskernel_cpu {
namespace {

// Bytes moved per thread range: enough for tens of microseconds of copying.
constexpr int64_t kMinRangeBytes = 1 << 18;
// Rows fetched ahead of the copy when rows are long enough for their latency to matter.
constexpr int64_t kPrefetchDistance = 4;

// out row r (of `width` elements) = x row source_row(r), for r in [0, rows).
template <class E, class SourceRow>
void copy_rows(const E* x, E* out, int64_t rows, int64_t width, SourceRow&& source_row) {
  const int64_t grain = std::max<int64_t>(1, kMinRangeBytes / (width * int64_t(sizeof(E)) + 8));
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    if (width == 1) {
      for (int64_t r = begin; r < end; ++r) out[r] = x[source_row(r)];
      return;
    }
    const int64_t row_bytes = width * int64_t(sizeof(E));
    for (int64_t r = begin; r < end; ++r) {
      if (r + kPrefetchDistance < end) {  // rows sit at random places: fetch ahead
        const char* ahead = reinterpret_cast<const char*>(x + source_row(r + kPrefetchDistance) *
                                                                  width);
        for (int64_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(ahead + b);
      }
      std::memcpy(out + r * width, x + source_row(r) * width, row_bytes);
    }
  });
}

// out[o, j, :] = x[o, indices[j], :] with x viewed as [outer, size, inner] around the axis.
// A range of rows is walked as runs of j at one o: a run of single elements is a plain
// (vectorisable) gather, longer rows are copied whole.
Kernel take_rows(KernelContext& ctx, const IndexSite& site, const std::string& dim,
                 const AxisSplit& lines) {
  const int64_t outer = lines.outer, size = lines.extent, inner = lines.inner;
  const int64_t count = ctx.input(1).numel();
  if (ctx.output(0).numel() == 0 && count == 0) return [](const Args&) {};
  return dispatch_bytes(ctx.input(0).dtype, [&](auto element) -> Kernel {
    using E = typename decltype(element)::type;
    return dispatch_index(ctx.input(1).dtype, [&](auto index) -> Kernel {
      using I = typename decltype(index)::type;
      return [=](const Args& args) {
        const I* indices = args.in<I>(1);
        check_indices(site, indices, count, dim, size);
        if (inner == 0) return;
        const E* x = args.in<E>(0);
        E* out = args.out<E>(0);
        if (inner > 1) {
          copy_rows(x, out, outer * count, inner, [&](int64_t r) {
            const int64_t o = r / count;
            return o * size + static_cast<int64_t>(indices[r - o * count]);
          });
          return;
        }
        parallel_for(outer * count, 1 << 15, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end;) {
            const int64_t o = r / count, j0 = r - o * count;
            const int64_t j1 = std::min(count, j0 + (end - r));
            const E* from = x + o * size;
            E* to = out + o * count;
            for (int64_t j = j0; j < j1; ++j) to[j] = from[static_cast<int64_t>(indices[j])];
            r += j1 - j0;
          }
        });
      };
    });
  });
}

Kernel gather(KernelContext& ctx) {
  const int axis = normalize_axis(ctx.attrs.get_int("axis"), ctx.input(0).rank());
  const IndexSite site{"gather", "indices", ctx.input(1).shape};
  return take_rows(ctx, site, "axis " + std::to_string(axis),
                   split_axes(ctx.input(0).shape, axis, axis + 1));
}

Kernel embedding(KernelContext& ctx) {
  const IndexSite site{"embedding", "ids", ctx.input(1).shape};
  return take_rows(ctx, site, "the table's rows", split_axes(ctx.input(0).shape, 0, 1));
}

// x viewed as [prod(x.shape[:k]), rest]; tuple t of indices[..., k] picks one row.
Kernel gather_nd(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const std::vector<int64_t>& index_shape = ctx.input(1).shape;
  const int64_t k = index_shape.back();
  const int64_t tuples = dims_product(index_shape, 0, index_shape.size() - 1);
  const int64_t width = dims_product(shape, k, shape.size());
  std::vector<int64_t> row_strides(k, 1);  // rows of x per step of each tuple component
  for (int64_t i = k - 1; i > 0; --i) row_strides[i - 1] = row_strides[i] * shape[i];
  std::vector<std::string> dims(k);
  for (int64_t i = 0; i < k; ++i) dims[i] = "dimension " + std::to_string(i);
  const IndexSite site{"gather_nd", "indices", index_shape};
  return dispatch_bytes(ctx.input(0).dtype, [&](auto element) -> Kernel {
    using E = typename decltype(element)::type;
    return dispatch_index(ctx.input(1).dtype, [&](auto index) -> Kernel {
      using I = typename decltype(index)::type;
      return [=](const Args& args) {
        const I* indices = args.in<I>(1);
        for (int64_t i = 0; i < k; ++i) {
          check_indices(site, indices, tuples, dims[i], shape[i], i, k);
        }
        if (width == 0) return;
        copy_rows(args.in<E>(0), args.out<E>(0), tuples, width, [&](int64_t t) {
          int64_t row = 0;
          for (int64_t i = 0; i < k; ++i) {
            row += static_cast<int64_t>(indices[t * k + i]) * row_strides[i];
          }
          return row;
        });
      };
    });
  });
}

// out[p, j, q] = x[p', indices[p'', j, q''], q'] where p', p'' (q', q'') are the positions
// the broadcast output position p (q) reads in x and indices.
Kernel take_along_axis(KernelContext& ctx) {
  const std::vector<int64_t>& xs = ctx.input(0).shape;
  const std::vector<int64_t>& is = ctx.input(1).shape;
  const std::vector<int64_t>& os = ctx.output(0).shape;
  const int rank = ctx.input(0).rank();
  const int axis = normalize_axis(ctx.attrs.get_int("axis"), rank);
  auto head = [&](const std::vector<int64_t>& s) {
    return std::vector<int64_t>(s.begin(), s.begin() + axis);
  };
  auto tail = [&](const std::vector<int64_t>& s) {
    return std::vector<int64_t>(s.begin() + axis + 1, s.end());
  };
  const int64_t size = xs[axis], picks = is[axis];
  const int64_t x_inner = dims_product(xs, axis + 1, rank);
  const int64_t i_inner = dims_product(is, axis + 1, rank);
  const int64_t count = ctx.input(1).numel();
  const IndexSite site{"take_along_axis", "indices", is};
  const std::string dim = "axis " + std::to_string(axis);
  if (ctx.output(0).numel() == 0) {
    return dispatch_index(ctx.input(1).dtype, [&](auto index) -> Kernel {
      using I = typename decltype(index)::type;
      return [=](const Args& args) { check_indices(site, args.in<I>(1), count, dim, size); };
    });
  }
  const OffsetTable before(head(xs), size * x_inner, head(is), picks * i_inner, head(os));
  const OffsetTable after(tail(xs), 1, tail(is), 1, tail(os));
  const int64_t width = static_cast<int64_t>(after.first.size());
  return dispatch_bytes(ctx.input(0).dtype, [&](auto element) -> Kernel {
    using E = typename decltype(element)::type;
    return dispatch_index(ctx.input(1).dtype, [&](auto index) -> Kernel {
      using I = typename decltype(index)::type;
      return [=](const Args& args) {
        const I* indices = args.in<I>(1);
        if (size == 0) check_indices(site, indices, count, dim, size);
        const E* x = args.in<E>(0);
        E* out = args.out<E>(0);
        const int64_t rows = static_cast<int64_t>(before.first.size()) * picks;
        const int64_t grain = std::max<int64_t>(1, (1 << 15) / width);
        std::atomic<bool> any_bad{false};
        parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
          bool bad = false;  // every index is read at least once: check as we go
          for (int64_t r = begin; r < end;) {  // runs of j at one position p before the axis
            const int64_t p = r / picks, j0 = r - p * picks;
            const int64_t j1 = std::min(picks, j0 + (end - r));
            const E* x_row = x + before.first[p];
            const I* i_row = indices + before.second[p];
            E* o = out + (r - j0) * width;
            if (width == 1) {  // the axis is the last: a plain gather
              for (int64_t j = j0; j < j1; ++j) o[j] = x_row[checked_index(i_row[j], size, bad)];
            } else {
              for (int64_t j = j0; j < j1; ++j) {
                for (int64_t q = 0; q < width; ++q) {
                  const int64_t picked =
                      checked_index(i_row[j * i_inner + after.second[q]], size, bad);
                  o[j * width + q] = x_row[picked * x_inner + after.first[q]];
                }
              }
            }
            r += j1 - j0;
          }
          if (bad) any_bad.store(true, std::memory_order_relaxed);
        });
        if (any_bad.load()) check_indices(site, indices, count, dim, size);
      };
    });
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("gather", kAll, gather);
MSKERNEL_CPU_KERNEL("embedding", kAll, embedding);
MSKERNEL_CPU_KERNEL("gather_nd", kAll, gather_nd);
MSKERNEL_CPU_KERNEL("take_along_axis", kAll, take_along_axis);

}  // namespace mskernel_cpu
