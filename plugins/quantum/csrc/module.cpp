// The Python binding of the native state-vector kernels: mskernel_quantum._native.
//
// Every function takes state vectors as 1-D C-contiguous complex64 or complex128 NumPy arrays
// (one dtype per call, never converted here: an in-place update of a converted copy would be
// lost), gate matrices as complex128 arrays, qubit lists and a thread count.  The GIL is
// released while a kernel runs.  The kernels come from the build of kernels.cpp for the best
// instruction set this CPU has (`isa`); `use_isa` switches, for tests and benchmarks.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "layout.hpp"
#include "tiling.hpp"

namespace py = pybind11;
using msq::index_t;

namespace {

std::vector<const msq::KernelSet*> available_sets() {
  std::vector<const msq::KernelSet*> sets{&msq::base::kernel_set()};
#ifdef MSQ_HAVE_X86_64_V3
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    sets.push_back(&msq::x86_64_v3::kernel_set());
#endif
#ifdef MSQ_HAVE_X86_64_V4
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
    sets.push_back(&msq::x86_64_v4::kernel_set());
#endif
  return sets;
}

// The best build, or the one MSKERNEL_QUANTUM_ISA names.
const msq::KernelSet* initial_set() {
  const auto sets = available_sets();
  const char* forced = std::getenv("MSKERNEL_QUANTUM_ISA");
  if (forced == nullptr || *forced == '\0') return sets.back();
  std::string names;
  for (const auto* set : sets) {
    if (set->isa == std::string(forced)) return set;
    names += names.empty() ? set->isa : std::string(", ") + set->isa;
  }
  throw std::invalid_argument("MSKERNEL_QUANTUM_ISA=" + std::string(forced) +
                              ": this CPU runs the kernel builds " + names);
}

const msq::KernelSet* active = nullptr;

template <class T>
const msq::KernelTable<T>& kernels();
template <>
const msq::KernelTable<double>& kernels<double>() { return active->f64; }
template <>
const msq::KernelTable<float>& kernels<float>() { return active->f32; }

template <class T>
using C = std::complex<T>;
template <class T>
using State = py::array_t<C<T>, py::array::c_style>;
using Matrix = py::array_t<C<double>, py::array::c_style | py::array::forcecast>;

int qubits_of(const py::array& state) {
  if (state.ndim() != 1) throw std::invalid_argument("a state vector must be 1-D");
  const auto size = index_t(state.shape(0));
  if (size == 0 || (size & (size - 1)) != 0)
    throw std::invalid_argument("a state vector's length must be a power of two, got " +
                                std::to_string(size));
  return __builtin_ctzll(size);
}

template <class T>
int same_qubits(const State<T>& a, const State<T>& b) {
  const int n = qubits_of(a);
  if (qubits_of(b) != n) throw std::invalid_argument("the two state vectors differ in length");
  return n;
}

// `m` as `count` matrices of side d in precision T (count 1: a plain 2-D matrix).
template <class T>
std::vector<C<T>> matrices(const Matrix& m, int d, std::size_t count, const char* what) {
  const bool one = count == 1 && m.ndim() == 2 && m.shape(0) == d && m.shape(1) == d;
  const bool stack = m.ndim() == 3 && std::size_t(m.shape(0)) == count && m.shape(1) == d &&
                     m.shape(2) == d;
  if (!one && !stack && !(count == 0 && m.size() == 0))
    throw std::invalid_argument(std::string(what) + " must be " + std::to_string(d) + "x" +
                                std::to_string(d) + " for " +
                                std::to_string(__builtin_ctz(unsigned(d))) + " target qubit(s)");
  return std::vector<C<T>>(m.data(), m.data() + m.size());
}

template <class T>
std::vector<C<T>> scratch(const msq::Layout& L) {
  return std::vector<C<T>>(std::size_t(L.threads) * 3 * std::size_t(L.group_size));
}

std::vector<C<double>> partial_sums(const msq::Layout& L) {
  return std::vector<C<double>>(std::size_t(L.n_chunks) * msq::kPartialStride);
}

// The first `count` sums of every chunk's slot, added up in chunk order.
std::vector<C<double>> sum_partials(const std::vector<C<double>>& partials, std::size_t count) {
  std::vector<C<double>> sums(count);
  for (std::size_t i = 0; i < partials.size(); ++i)
    if (i % msq::kPartialStride < count) sums[i % msq::kPartialStride] += partials[i];
  return sums;
}

template <class T>
void apply_matrix(State<T> state, const Matrix& matrix, const std::vector<int>& targets,
                  const std::vector<int>& controls, int threads) {
  const int n = qubits_of(state);
  const msq::OwnedLayout owned(n, targets, controls, threads);
  const msq::Layout& L = owned.layout;
  const auto exact = matrices<double>(matrix, L.group_size, 1, "the matrix");
  C<T>* psi = state.mutable_data();
  const auto& kernel = kernels<T>();
  if (const auto plan = msq::plan_lanes(n, targets, controls, exact.data(), kernel.lanes,
                                        threads)) {
    const std::vector<C<T>> m(plan->matrix.begin(), plan->matrix.end());
    py::gil_scoped_release unlocked;
    kernel.apply_lanes(psi, plan->owned.layout, m.data(), plan->map);
    return;
  }
  const std::vector<C<T>> m(exact.begin(), exact.end());
  auto buffer = scratch<T>(L);
  py::gil_scoped_release unlocked;
  kernel.apply_matrix(psi, L, m.data(), buffer.data());
}

template <class T>
void apply_run(State<T> state, const std::vector<Matrix>& gate_matrices,
               const std::vector<std::vector<int>>& targets, int threads) {
  if (gate_matrices.size() != targets.size())
    throw std::invalid_argument("a run needs one target list per matrix");
  const int n = qubits_of(state);
  std::vector<msq::RunGate> gates;
  for (std::size_t i = 0; i < gate_matrices.size(); ++i) {
    if (targets[i].empty() || targets[i].size() > 2)
      throw std::invalid_argument("a run holds gates on one or two targets");
    const msq::OwnedLayout checked(n, targets[i], {}, 1);
    gates.push_back({targets[i], matrices<double>(gate_matrices[i], checked.layout.group_size, 1,
                                                  "each matrix")});
  }
  C<T>* psi = state.mutable_data();
  py::gil_scoped_release unlocked;
  msq::apply_run(kernels<T>(), psi, n, gates, threads);
}

template <class T>
C<double> inner_matrix(const State<T>& bra, const State<T>& ket, const Matrix& matrix,
                       const std::vector<int>& targets, const std::vector<int>& controls,
                       int threads) {
  const msq::OwnedLayout owned(same_qubits(bra, ket), targets, controls, threads);
  const msq::Layout& L = owned.layout;
  const auto m = matrices<T>(matrix, L.group_size, 1, "the matrix");
  auto buffer = scratch<T>(L);
  auto partials = partial_sums(L);
  {
    py::gil_scoped_release unlocked;
    kernels<T>().inner_matrix(bra.data(), ket.data(), L, m.data(), buffer.data(),
                              partials.data());
  }
  return sum_partials(partials, 1)[0];
}

// The d x d sums outer[h][r][s] = sum conj(lam_h r) (U^dag psi)_s for every co-state, with
// psi <- U^dag psi and each lam_h <- U^dag lam_h: one sweep where the vector kernels fit,
// else one step per co-state from a copy of psi.
template <class T>
std::vector<C<double>> adjoint_outer(C<T>* psi, const std::vector<C<T>*>& lams, int n,
                                     const std::vector<int>& targets,
                                     const std::vector<int>& controls,
                                     const std::vector<C<double>>& inverse, int threads) {
  const msq::OwnedLayout owned(n, targets, controls, threads);
  const msq::Layout& L = owned.layout;
  const std::size_t d2 = std::size_t(L.group_size) * std::size_t(L.group_size);
  const std::size_t h = lams.size();
  std::vector<C<double>> total(h * d2);
  const auto& kernel = kernels<T>();
  const auto plan = msq::plan_lanes(n, targets, controls, inverse.data(), kernel.lanes, threads);
  if (plan && plan->matrix.size() == d2) {  // no register control folded in
    const msq::Layout& V = plan->owned.layout;
    const std::size_t stride = std::max<std::size_t>(h * d2, msq::kPartialStride);
    std::vector<C<double>> outer(std::size_t(V.n_chunks) * stride);
    const std::vector<C<T>> inv(plan->matrix.begin(), plan->matrix.end());
    {
      py::gil_scoped_release unlocked;
      kernel.adjoint_lanes(psi, lams.data(), int(h), V, inv.data(), plan->map, outer.data(),
                           stride);
    }
    for (std::size_t c = 0; c < std::size_t(V.n_chunks); ++c)
      for (std::size_t i = 0; i < h * d2; ++i) total[i] += outer[c * stride + i];
    return total;
  }
  const std::vector<C<T>> inv(inverse.begin(), inverse.end());
  auto buffer = scratch<T>(L);
  const std::size_t stride = std::max<std::size_t>(d2, msq::kPartialStride);
  std::vector<C<double>> outer(std::size_t(L.n_chunks) * stride);
  const std::size_t size = std::size_t(1) << n;
  std::vector<C<T>> before;
  if (h > 1) before.assign(psi, psi + size);
  py::gil_scoped_release unlocked;
  for (std::size_t i = 0; i < h; ++i) {
    if (i > 0) std::copy(before.begin(), before.end(), psi);
    std::fill(outer.begin(), outer.end(), C<double>());
    kernel.adjoint_step(psi, lams[i], L, inv.data(), buffer.data(), outer.data(), stride);
    for (std::size_t c = 0; c < std::size_t(L.n_chunks); ++c)
      for (std::size_t j = 0; j < d2; ++j) total[i * d2 + j] += outer[c * stride + j];
  }
  return total;
}

// psi <- U^dag psi; sums[h][q] = <lam_h| dU_q |U^dag psi>; lam_h <- U^dag lam_h.
template <class T>
py::array_t<C<double>> adjoint_step(State<T> psi, std::vector<State<T>> lams,
                                    const Matrix& inverse, const Matrix& derivatives,
                                    const std::vector<int>& targets,
                                    const std::vector<int>& controls, int threads) {
  const int n = qubits_of(psi);
  std::vector<C<T>*> lam_data;
  for (auto& lam : lams) {
    same_qubits(psi, lam);
    if (lam.data() == psi.data()) throw std::invalid_argument("a co-state aliases psi");
    lam_data.push_back(lam.mutable_data());
  }
  const int d = 1 << targets.size();
  const auto inv = matrices<double>(inverse, d, 1, "the inverse");
  const std::size_t count = derivatives.ndim() == 3 ? std::size_t(derivatives.shape(0)) : 0;
  const auto der = matrices<double>(derivatives, d, count, "each derivative");
  const auto outer = adjoint_outer<T>(psi.mutable_data(), lam_data, n, targets, controls, inv,
                                      threads);
  const std::size_t d2 = std::size_t(d) * std::size_t(d);
  py::array_t<C<double>> sums({lams.size(), count});  // sum_rs dU_q[r][s] outer[h][r][s]
  auto out = sums.mutable_unchecked<2>();
  for (std::size_t h = 0; h < lams.size(); ++h)
    for (std::size_t q = 0; q < count; ++q) {
      C<double> acc = 0;
      for (std::size_t i = 0; i < d2; ++i) acc += der[q * d2 + i] * outer[h * d2 + i];
      out(h, q) = acc;
    }
  return sums;
}

template <class T>
C<double> pauli_expectation(const State<T>& state, index_t xmask,
                            const std::vector<index_t>& zmasks,
                            const std::vector<C<double>>& coeffs, int threads) {
  if (zmasks.size() != coeffs.size())
    throw std::invalid_argument("one coefficient per Z mask is needed");
  const int n = qubits_of(state);
  if (xmask >> n) throw std::invalid_argument("the X mask names qubits outside the state");
  const msq::OwnedLayout owned(n, {}, {}, threads);
  auto partials = partial_sums(owned.layout);
  {
    py::gil_scoped_release unlocked;
    kernels<T>().pauli_expectation(state.data(), owned.layout, xmask, zmasks.data(),
                                   coeffs.data(), int(zmasks.size()), partials.data());
  }
  return sum_partials(partials, 1)[0];
}

template <class T>
void apply_pauli_sum(const State<T>& state, State<T> out, const std::vector<index_t>& xmasks,
                     const std::vector<index_t>& zmasks, const std::vector<C<double>>& coeffs,
                     int threads) {
  if (xmasks.size() != zmasks.size() || xmasks.size() != coeffs.size())
    throw std::invalid_argument("X masks, Z masks and coefficients must have one entry per term");
  const int n = same_qubits(state, out);
  for (index_t x : xmasks)
    if (x >> n) throw std::invalid_argument("an X mask names qubits outside the state");
  if (state.data() == out.data()) throw std::invalid_argument("out must not alias the state");
  const msq::OwnedLayout owned(n, {}, {}, threads);
  std::vector<std::size_t> order(xmasks.size());  // the kernel wants terms sorted by X mask
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return xmasks[a] < xmasks[b]; });
  std::vector<index_t> x, z;
  std::vector<C<T>> c;
  for (std::size_t i : order) {
    x.push_back(xmasks[i]);
    z.push_back(zmasks[i]);
    c.emplace_back(coeffs[i]);
  }
  C<T>* o = out.mutable_data();
  py::gil_scoped_release unlocked;
  kernels<T>().apply_pauli_sum(state.data(), o, owned.layout, x.data(), z.data(), c.data(),
                               int(x.size()));
}

template <class T>
void bind_precision(py::module_& m) {
  m.def("apply_matrix", &apply_matrix<T>, py::arg("state").noconvert(), py::arg("matrix"),
        py::arg("targets"), py::arg("controls"), py::arg("threads"),
        "state <- M state on `targets` where every control qubit is 1 (in place).");
  m.def("apply_run", &apply_run<T>, py::arg("state").noconvert(), py::arg("matrices"),
        py::arg("targets"), py::arg("threads"),
        "state <- M_m ... M_1 state for gates on one or two targets, cache-blocked.");
  m.def("inner_matrix", &inner_matrix<T>, py::arg("bra").noconvert(),
        py::arg("ket").noconvert(), py::arg("matrix"), py::arg("targets"), py::arg("controls"),
        py::arg("threads"),
        "<bra| M |ket>, M acting on `targets` where every control qubit is 1 and as 0 elsewhere.");
  m.def("adjoint_step", &adjoint_step<T>, py::arg("psi").noconvert(),
        py::arg("lams").noconvert(), py::arg("inverse"), py::arg("derivatives"),
        py::arg("targets"), py::arg("controls"), py::arg("threads"),
        "psi <- U^dag psi; sums[h, q] = <lams[h]| dU_q |psi>; lams[h] <- U^dag lams[h], in "
        "one sweep.");
  m.def("pauli_expectation", &pauli_expectation<T>, py::arg("state").noconvert(),
        py::arg("xmask"), py::arg("zmasks"), py::arg("coeffs"), py::arg("threads"),
        "sum_t c_t <state| P_t |state> over Pauli strings sharing one X mask.");
  m.def("apply_pauli_sum", &apply_pauli_sum<T>, py::arg("state").noconvert(),
        py::arg("out").noconvert(), py::arg("xmasks"), py::arg("zmasks"), py::arg("coeffs"),
        py::arg("threads"), "out <- sum_t c_t P_t state.");
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "Native state-vector kernels of mskernel-quantum (C++, OpenMP).";
  active = initial_set();
  bind_precision<double>(m);
  bind_precision<float>(m);
  m.def("isas", [] {
    std::vector<std::string> names;
    for (const auto* set : available_sets()) names.emplace_back(set->isa);
    return names;
  }, "The kernel builds this CPU can run, the best last.");
  m.def("isa", [] { return std::string(active->isa); }, "The kernel build in use.");
  m.def("use_isa", [](const std::string& name) {
    for (const auto* set : available_sets())
      if (name == set->isa) {
        active = set;
        return;
      }
    throw std::invalid_argument("no kernel build '" + name + "' for this CPU");
  }, py::arg("name"), "Switch to another kernel build (for tests and benchmarks).");
#ifdef _OPENMP
  m.attr("openmp") = true;
#else
  m.attr("openmp") = false;
#endif
}
