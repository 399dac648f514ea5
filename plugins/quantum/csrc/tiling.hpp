// Cache blocking: a run of gates on one or two qubits applied tile by tile.
//
// A tile is the 2^t amplitudes whose index agrees outside the low qubits 0..kLowQubits-1 and
// up to kTileQubits - kLowQubits other ("high") qubits: 2^h contiguous segments of 2^low
// amplitudes.  Each tile is copied into a per-thread buffer that stays in the core's cache,
// every gate of the group is applied there (the high qubits renumbered low + i), and the
// tile is written back: a group of g gates costs one pass over memory instead of g.  Gates
// are grouped greedily in order while their high qubits number at most kTileQubits -
// kLowQubits; a group of one gate, and states of at most kTileQubits qubits, are swept
// directly.
#pragma once

#include <complex>
#include <vector>

#include "kernels.hpp"

namespace msq {

constexpr int kTileQubits = 16;  // 1 MiB of complex128 per thread
constexpr int kLowQubits = 10;   // 16 KiB contiguous segments

// One gate of a run: a 2x2 or 4x4 row-major matrix (index bit j: targets[j]), no controls.
struct RunGate {
  std::vector<int> targets;
  std::vector<std::complex<double>> matrix;
};

// psi <- G_m ... G_1 psi for the gates in order; targets are checked by the caller.
template <class T>
void apply_run(const KernelTable<T>& kernels, std::complex<T>* psi, int n_qubits,
               const std::vector<RunGate>& gates, int threads);

}  // namespace msq
