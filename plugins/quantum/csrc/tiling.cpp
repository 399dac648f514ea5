// Cache blocking (see tiling.hpp).
#include "tiling.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "layout.hpp"

namespace msq {

namespace {

// The qubits of `gate` outside the low ones.
void add_high(const RunGate& gate, std::vector<int>& high) {
  for (int q : gate.targets)
    if (q >= kLowQubits && std::find(high.begin(), high.end(), q) == high.end())
      high.push_back(q);
}

template <class T>
void sweep(const KernelTable<T>& kernels, std::complex<T>* psi, int n_qubits,
           const RunGate& gate, int threads) {
  const auto plan = plan_lanes(n_qubits, gate.targets, {}, gate.matrix.data(), kernels.lanes,
                               threads);
  if (!plan) {  // a state smaller than a group of registers
    const OwnedLayout owned(n_qubits, gate.targets, {}, threads);
    const std::vector<std::complex<T>> m(gate.matrix.begin(), gate.matrix.end());
    std::vector<std::complex<T>> scratch(std::size_t(owned.layout.threads) * 3 *
                                         std::size_t(owned.layout.group_size));
    kernels.apply_matrix(psi, owned.layout, m.data(), scratch.data());
    return;
  }
  const std::vector<std::complex<T>> m(plan->matrix.begin(), plan->matrix.end());
  kernels.apply_lanes(psi, plan->owned.layout, m.data(), plan->map);
}

// The gates [first, last) on every tile over the high qubits `high` (ascending).
template <class T>
void apply_tiled(const KernelTable<T>& kernels, std::complex<T>* psi, int n_qubits,
                 const std::vector<RunGate>& gates, std::size_t first, std::size_t last,
                 const std::vector<int>& high, int threads) {
  const int h = int(high.size()), t = kLowQubits + h;
  std::vector<std::unique_ptr<LanePlan>> plans;
  std::vector<std::vector<std::complex<T>>> matrices;
  for (std::size_t g = first; g < last; ++g) {
    std::vector<int> local;
    for (int q : gates[g].targets)
      local.push_back(q < kLowQubits ? q
                                     : kLowQubits + int(std::find(high.begin(), high.end(), q) -
                                                        high.begin()));
    plans.push_back(plan_lanes(t, local, {}, gates[g].matrix.data(), kernels.lanes, 1));
    matrices.emplace_back(plans.back()->matrix.begin(), plans.back()->matrix.end());
  }
  index_t spread[1 << (kTileQubits - kLowQubits)];
  for (index_t s = 0; s < (index_t(1) << h); ++s) {
    spread[s] = 0;
    for (int i = 0; i < h; ++i)
      if ((s >> i) & 1) spread[s] |= index_t(1) << high[std::size_t(i)];
  }
  const std::int64_t tiles = std::int64_t(1) << (n_qubits - t);
  const std::size_t segment = std::size_t(1) << kLowQubits;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<std::complex<T>> tile(std::size_t(1) << t);
#pragma omp for schedule(dynamic)
    for (std::int64_t x = 0; x < tiles; ++x) {
      index_t base = index_t(x) << kLowQubits;
      for (int p : high) base = ((base >> p) << (p + 1)) | (base & ((index_t(1) << p) - 1));
      for (index_t s = 0; s < (index_t(1) << h); ++s)
        std::memcpy(&tile[s * segment], psi + base + spread[s], segment * sizeof(tile[0]));
      for (std::size_t g = 0; g < plans.size(); ++g)
        kernels.apply_lanes(tile.data(), plans[g]->owned.layout, matrices[g].data(),
                            plans[g]->map);
      for (index_t s = 0; s < (index_t(1) << h); ++s)
        std::memcpy(psi + base + spread[s], &tile[s * segment], segment * sizeof(tile[0]));
    }
  }
}

}  // namespace

template <class T>
void apply_run(const KernelTable<T>& kernels, std::complex<T>* psi, int n_qubits,
               const std::vector<RunGate>& gates, int threads) {
  if (n_qubits <= kTileQubits) {
    for (const RunGate& gate : gates) sweep(kernels, psi, n_qubits, gate, threads);
    return;
  }
  const int max_high = kTileQubits - kLowQubits;
  std::size_t first = 0;
  std::vector<int> high;
  auto flush = [&](std::size_t last) {
    if (last - first == 1) {
      sweep(kernels, psi, n_qubits, gates[first], threads);
    } else if (last > first) {
      std::sort(high.begin(), high.end());
      apply_tiled(kernels, psi, n_qubits, gates, first, last, high, threads);
    }
    first = last;
    high.clear();
  };
  for (std::size_t g = 0; g < gates.size(); ++g) {
    std::vector<int> grown(high);
    add_high(gates[g], grown);
    if (int(grown.size()) > max_high) {
      flush(g);
      add_high(gates[g], high);
    } else {
      high = std::move(grown);
    }
  }
  flush(gates.size());
}

template void apply_run(const KernelTable<double>&, std::complex<double>*, int,
                        const std::vector<RunGate>&, int);
template void apply_run(const KernelTable<float>&, std::complex<float>*, int,
                        const std::vector<RunGate>&, int);

}  // namespace msq
