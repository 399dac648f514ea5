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

}  // namespace msq
