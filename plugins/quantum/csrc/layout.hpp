// A Layout with the storage it points to, built and checked from a gate's qubits.
#pragma once

#include <complex>
#include <memory>
#include <vector>

#include "kernels.hpp"

namespace msq {

struct OwnedLayout {
  Layout layout;
  std::vector<index_t> offsets;

  // Throws std::invalid_argument for a qubit outside the state or used twice.
  OwnedLayout(int n_qubits, const std::vector<int>& targets, const std::vector<int>& controls,
              int threads);
  OwnedLayout(const OwnedLayout&) = delete;
  OwnedLayout& operator=(const OwnedLayout&) = delete;
};

// A gate laid out for the vector kernels (LaneMap in kernels.hpp): the Layout over the lane
// qubits and the targets outside a register, and the gate's matrix with the controls inside a
// register folded in (a 2x2 or 4x4, row-major).
struct LanePlan {
  OwnedLayout owned;
  LaneMap map;
  std::vector<std::complex<double>> matrix;
  LanePlan(int n_qubits, const std::vector<int>& layout_targets,
           const std::vector<int>& controls, int threads)
      : owned(n_qubits, layout_targets, controls, threads), map() {}
};

// The plan for `matrix` (2^k x 2^k, row-major) on checked targets and controls, or null when
// the vector kernels do not fit: more than two targets once register controls are folded in,
// or a state too small to hold a whole group of registers.
std::unique_ptr<LanePlan> plan_lanes(int n_qubits, const std::vector<int>& targets,
                                     const std::vector<int>& controls,
                                     const std::complex<double>* matrix, int lanes, int threads);

}  // namespace msq
