// A Layout with the storage it points to, built and checked from a gate's qubits.
#pragma once

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

}  // namespace msq
