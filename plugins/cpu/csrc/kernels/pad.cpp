// pad in the modes of np.pad (constant, reflect, edge), negative pads cropping first.  At
// compile time each axis gets an index map from output index to source index, or -1 for the
// fill value: the kept range maps straight through, the pads clamp (edge), mirror with period
// 2(n - 1) (reflect, which is what np.pad's repeated reflections amount to) or fill
// (constant).  At run time each output row (last axis) either is all fill, or is a memcpy of
// its source row's kept range between two short gathered ends.  Moves elements by size.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/strided_copy.hpp"

namespace mskernel_cpu {
namespace {

constexpr int64_t kFill = -1;
constexpr int kMaxPadRank = 32;

std::vector<int64_t> pad_index_map(int64_t size, int64_t low, int64_t high,
                                   const std::string& mode) {
  const int64_t cropped = std::max<int64_t>(-low, 0);
  const int64_t kept = size + std::min<int64_t>(low, 0) + std::min<int64_t>(high, 0);
  const int64_t grown = std::max<int64_t>(low, 0);
  std::vector<int64_t> map(static_cast<size_t>(grown + kept + std::max<int64_t>(high, 0)));
  for (int64_t j = 0; j < static_cast<int64_t>(map.size()); ++j) {
    int64_t m = j - grown;
    if (m >= 0 && m < kept) {
      map[j] = cropped + m;
    } else if (mode == "constant" || kept == 0) {
      map[j] = kFill;
    } else if (mode == "edge" || kept == 1) {
      map[j] = cropped + std::clamp<int64_t>(m, 0, kept - 1);
    } else {  // reflect
      const int64_t period = 2 * (kept - 1);
      m %= period;
      if (m < 0) m += period;
      map[j] = cropped + (m < kept ? m : period - m);
    }
  }
  return map;
}

struct PadPlan {
  std::vector<int64_t> outer_shape;             // the output's axes but the last
  std::vector<std::vector<int64_t>> row_maps;   // per outer axis: source offset or kFill
  std::vector<int64_t> column_map;              // the last axis: source index or kFill
  int64_t rows = 0, length = 0;                 // output rows and their length
  int64_t middle_begin = 0, middle_length = 0;  // columns copied from the source row...
  int64_t middle_source = 0;                    // ...starting at this source column
};

template <class E>
void pad_rows(const PadPlan& plan, const E* x, E* y, E value, int64_t begin, int64_t end) {
  const int outer_rank = static_cast<int>(plan.outer_shape.size());
  int64_t index[kMaxPadRank];
  int64_t rest = begin;
  for (int d = outer_rank - 1; d >= 0; --d) {
    index[d] = rest % plan.outer_shape[d];
    rest /= plan.outer_shape[d];
  }
  const int64_t* columns = plan.column_map.data();
  const int64_t middle_end = plan.middle_begin + plan.middle_length;
  const auto gather = [&](E* out, const E* row, int64_t from, int64_t to) {
    for (int64_t j = from; j < to; ++j) out[j] = columns[j] == kFill ? value : row[columns[j]];
  };
  for (int64_t r = begin; r < end; ++r) {
    E* out = y + r * plan.length;
    int64_t source = 0;
    bool fill = false;
    for (int d = 0; d < outer_rank; ++d) {
      const int64_t offset = plan.row_maps[d][index[d]];
      fill = fill || offset == kFill;
      source += offset;
    }
    if (fill) {
      std::fill_n(out, plan.length, value);
    } else {
      const E* row = x + source;
      gather(out, row, 0, plan.middle_begin);
      std::memcpy(out + plan.middle_begin, row + plan.middle_source,
                  static_cast<size_t>(plan.middle_length) * sizeof(E));
      gather(out, row, middle_end, plan.length);
    }
    for (int d = outer_rank - 1; d >= 0; --d) {
      if (++index[d] < plan.outer_shape[d]) break;
      index[d] = 0;
    }
  }
}

Kernel pad(KernelContext& ctx) {
  const std::string& mode = ctx.attrs.get_str("mode");
  const std::vector<int64_t>& pads = ctx.attrs.get_ints("pads");
  std::vector<int64_t> shape = ctx.input(0).shape;
  std::vector<int64_t> widths = pads;
  if (shape.empty()) {  // a scalar: one element, copied
    shape = {1};
    widths = {0, 0};
  }
  if (shape.size() > kMaxPadRank) throw Error(ErrorKind::Value, "pad: rank above 32");
  const std::vector<int64_t> strides = contiguous_strides(shape);
  auto plan = std::make_shared<PadPlan>();
  const size_t last = shape.size() - 1;
  for (size_t d = 0; d < last; ++d) {
    std::vector<int64_t> map = pad_index_map(shape[d], widths[2 * d], widths[2 * d + 1], mode);
    for (int64_t& m : map) m = m == kFill ? kFill : m * strides[d];
    plan->outer_shape.push_back(static_cast<int64_t>(map.size()));
    plan->row_maps.push_back(std::move(map));
  }
  const int64_t low = widths[2 * last], high = widths[2 * last + 1];
  plan->column_map = pad_index_map(shape[last], low, high, mode);
  plan->length = static_cast<int64_t>(plan->column_map.size());
  plan->rows = dims_product(plan->outer_shape, 0, last);
  plan->middle_begin = std::max<int64_t>(low, 0);
  plan->middle_length = std::max<int64_t>(
      0, shape[last] + std::min<int64_t>(low, 0) + std::min<int64_t>(high, 0));
  plan->middle_source = std::max<int64_t>(-low, 0);
  if (plan->length == 0) plan->rows = 0;
  const DType dtype = ctx.input(0).dtype;
  const ElementBytes value =
      element_bytes(dtype, mode == "constant" ? ctx.attrs.get_float("value") : 0.0);
  return dispatch_element_size(itemsize(dtype), [&](auto tag) -> Kernel {
    using E = typename decltype(tag)::type;
    const E fill = element_from<E>(value);
    const int64_t row_bytes = std::max<int64_t>(1, plan->length * int64_t(sizeof(E)));
    const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes / row_bytes);
    return [plan, fill, grain](const Args& args) {
      parallel_for(plan->rows, grain, [&](int64_t begin, int64_t end) {
        pad_rows(*plan, args.in<E>(0), args.out<E>(0), fill, begin, end);
      });
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("pad", kAll, pad);

}  // namespace mskernel_cpu
