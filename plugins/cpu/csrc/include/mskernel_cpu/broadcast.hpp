// NumPy broadcasting of N contiguous inputs to an output shape, worked out once at compile
// time and walked as runs along the innermost dimension at run time.
//
//   Broadcast<2> layout(ctx.input(0).shape, ctx.input(1).shape, ctx.output(0).shape);
//   layout.for_each_run(begin, end, [&](const int64_t* offsets, int64_t out, int64_t count,
//                                       const int64_t* steps) {
//     // output elements [out, out + count) read input i at offsets[i] + k * steps[i]
//   });
//
// Dimensions of size 1 in the output are dropped and neighbouring dimensions that every
// operand walks contiguously are merged, so the common cases (same shapes, a scalar operand,
// a bias along the last axis) become a single run per range.  Inner steps are 0 or 1.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "mskernel_cpu/error.hpp"
#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

constexpr int kMaxRank = 16;

template <int N>
class Broadcast {
 public:
  template <class... Shapes>
  explicit Broadcast(const Shapes&... shapes_then_output) {
    static_assert(sizeof...(Shapes) == N + 1, "Broadcast<N> takes N input shapes and the output");
    const std::vector<int64_t>* all[] = {&shapes_then_output...};
    init(all);
  }

  int64_t numel() const { return numel_; }
  int rank() const { return rank_; }
  // The innermost step of input i (0: broadcast along the run, 1: contiguous).
  int64_t inner_step(int i) const { return strides_[i][rank_ - 1]; }
  // True when every run is the whole tensor (rank 1 after merging).
  bool single_run() const { return rank_ == 1; }

  template <class F>
  void for_each_run(int64_t begin, int64_t end, F&& run) const {
    if (begin >= end) return;
    const int last = rank_ - 1;
    const int64_t length = shape_[last];
    int64_t index[kMaxRank];
    int64_t row = begin / length;
    int64_t column = begin % length;
    for (int d = last - 1; d >= 0; --d) {
      index[d] = row % shape_[d];
      row /= shape_[d];
    }
    std::array<int64_t, N> base{};
    std::array<int64_t, N> inner{};
    for (int i = 0; i < N; ++i) {
      for (int d = 0; d < last; ++d) base[i] += index[d] * strides_[i][d];
      inner[i] = strides_[i][last];
    }
    int64_t position = begin;
    while (position < end) {
      const int64_t count = std::min(length - column, end - position);
      std::array<int64_t, N> offsets;
      for (int i = 0; i < N; ++i) offsets[i] = base[i] + column * inner[i];
      run(offsets.data(), position, count, inner.data());
      position += count;
      column = 0;
      for (int d = last - 1; d >= 0; --d) {  // advance the outer index like an odometer
        for (int i = 0; i < N; ++i) base[i] += strides_[i][d];
        if (++index[d] < shape_[d]) break;
        index[d] = 0;
        for (int i = 0; i < N; ++i) base[i] -= shape_[d] * strides_[i][d];
      }
    }
  }

 private:
  void init(const std::vector<int64_t>* const* all) {
    const std::vector<int64_t>& out = *all[N];
    const int out_rank = static_cast<int>(out.size());
    for (int i = 0; i < N; ++i) {
      if (!broadcasts_to(*all[i], out)) {
        throw Error(ErrorKind::Value, "input " + std::to_string(i) + " of shape " +
                                          shape_text(*all[i]) + " does not broadcast to the "
                                          "output's shape " + shape_text(out));
      }
    }
    numel_ = 1;
    for (int64_t d : out) numel_ *= d;
    // Contiguous strides of each input, aligned to the output's trailing dimensions.
    std::vector<std::vector<int64_t>> in_strides(N, std::vector<int64_t>(out_rank, 0));
    for (int i = 0; i < N; ++i) {
      const std::vector<int64_t>& shape = *all[i];
      const int offset = out_rank - static_cast<int>(shape.size());
      int64_t stride = 1;
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        in_strides[i][offset + d] = shape[d] == 1 ? 0 : stride;
        stride *= shape[d];
      }
    }
    rank_ = 0;
    for (int d = 0; d < out_rank; ++d) {
      if (out[d] == 1) continue;
      bool merge = rank_ > 0;
      for (int i = 0; i < N && merge; ++i) {
        merge = strides_[i][rank_ - 1] == in_strides[i][d] * out[d];
      }
      if (merge) {
        shape_[rank_ - 1] *= out[d];
        for (int i = 0; i < N; ++i) strides_[i][rank_ - 1] = in_strides[i][d];
        continue;
      }
      if (rank_ == kMaxRank) {
        throw Error("broadcasting needs more than 16 dimensions after merging");
      }
      shape_[rank_] = out[d];
      for (int i = 0; i < N; ++i) strides_[i][rank_] = in_strides[i][d];
      ++rank_;
    }
    if (rank_ == 0) {  // a single element
      shape_[0] = 1;
      for (int i = 0; i < N; ++i) strides_[i][0] = 0;
      rank_ = 1;
    }
  }

  int rank_ = 0;
  int64_t numel_ = 0;
  int64_t shape_[kMaxRank] = {};
  int64_t strides_[N][kMaxRank] = {};
};

}  // namespace mskernel_cpu
