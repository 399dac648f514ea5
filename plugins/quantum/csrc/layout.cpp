// Building and checking a Layout (see kernels.hpp) from a gate's qubits.
#include "layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace msq {

namespace {

// Below this many groups a kernel runs on the calling thread: waking a team costs more.
constexpr index_t kParallelThreshold = index_t(1) << 13;

index_t floor_pow2(index_t x) {
  index_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace

OwnedLayout::OwnedLayout(int n_qubits, const std::vector<int>& targets,
                         const std::vector<int>& controls, int threads) {
  if (n_qubits > kMaxQubits)
    throw std::invalid_argument("at most " + std::to_string(kMaxQubits) + " qubits");
  std::vector<int> fixed(targets);
  fixed.insert(fixed.end(), controls.begin(), controls.end());
  std::sort(fixed.begin(), fixed.end());
  for (std::size_t i = 0; i < fixed.size(); ++i) {
    if (fixed[i] < 0 || fixed[i] >= n_qubits)
      throw std::invalid_argument("qubit " + std::to_string(fixed[i]) +
                                  " is outside a state of " + std::to_string(n_qubits) +
                                  " qubits");
    if (i > 0 && fixed[i] == fixed[i - 1])
      throw std::invalid_argument("qubit " + std::to_string(fixed[i]) +
                                  " is used twice by one gate");
  }
  offsets.assign(std::size_t(1) << targets.size(), 0);
  for (std::size_t r = 0; r < offsets.size(); ++r)
    for (std::size_t j = 0; j < targets.size(); ++j)
      if ((r >> j) & 1) offsets[r] |= index_t(1) << targets[j];

  Layout& L = layout;
  L.n_qubits = n_qubits;
  L.n_fixed = int(fixed.size());
  std::copy(fixed.begin(), fixed.end(), L.fixed);
  L.ctrl_mask = 0;
  for (int c : controls) L.ctrl_mask |= index_t(1) << c;
  L.group_size = int(offsets.size());
  L.offsets = offsets.data();
  // Fixed positions 0..z-1 spread consecutive counters `stride` = 2^z apart, up to the next
  // fixed position: a run of 2^(p_z - z) counters.
  int z = 0;
  while (z < L.n_fixed && L.fixed[z] == z) ++z;
  const index_t total = index_t(1) << (n_qubits - L.n_fixed);
  const index_t run = z < L.n_fixed ? std::min(total, index_t(1) << (L.fixed[z] - z)) : total;
  L.stride = index_t(1) << z;
  L.run = run;
  L.threads = total >= kParallelThreshold ? std::max(1, threads) : 1;
  L.chunk = L.threads > 1 ? floor_pow2(std::max<index_t>(1, total / (16 * index_t(L.threads))))
                          : total;
  L.n_chunks = total / L.chunk;
}

std::unique_ptr<LanePlan> plan_lanes(int n_qubits, const std::vector<int>& targets,
                                     const std::vector<int>& controls,
                                     const std::complex<double>* matrix, int lanes, int threads) {
  const int w = __builtin_ctz(unsigned(lanes));
  std::vector<int> gate_targets(targets), outer_controls;
  for (int c : controls) (c < w ? gate_targets : outer_controls).push_back(c);
  const int k = int(gate_targets.size());
  if (k < 1 || k > 2) return nullptr;
  std::vector<int> layout_targets;
  for (int q = 0; q < w; ++q) layout_targets.push_back(q);
  for (int t : gate_targets)
    if (t >= w) layout_targets.push_back(t);
  if (n_qubits < int(layout_targets.size() + outer_controls.size())) return nullptr;

  auto plan = std::make_unique<LanePlan>(n_qubits, layout_targets, outer_controls, threads);
  // Fold the register controls: bits k0.. of the row index are theirs, and the matrix acts
  // where they are all 1 (the identity elsewhere).
  const int k0 = int(targets.size()), d = 1 << k, d0 = 1 << k0;
  const int folded = (d - 1) & ~(d0 - 1);
  plan->matrix.assign(std::size_t(d * d), 0.0);
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) {
      if ((r & folded) != (c & folded)) continue;
      plan->matrix[std::size_t(r * d + c)] =
          (r & folded) == folded ? matrix[(r & (d0 - 1)) * d0 + (c & (d0 - 1))]
                                 : std::complex<double>(r == c ? 1.0 : 0.0);
    }
  LaneMap& map = plan->map;
  map.targets = k;
  map.streams = 1 << (int(layout_targets.size()) - w);
  map.lane_mask = 0;
  for (int t : gate_targets)
    if (t < w) map.lane_mask |= 1 << t;
  map.diagonal = true;
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c)
      if (r != c && plan->matrix[std::size_t(r * d + c)] != 0.0) map.diagonal = false;
  for (int s = 0; s < map.streams; ++s)
    for (int l = 0; l < lanes; ++l) {
      int row = 0, stream_bit = 0;
      for (int j = 0; j < k; ++j) {
        const int t = gate_targets[std::size_t(j)];
        const int bit = t < w ? (l >> t) & 1 : (s >> stream_bit++) & 1;
        row |= bit << j;
      }
      map.row[s * lanes + l] = row;
    }
  return plan;
}

}  // namespace msq
