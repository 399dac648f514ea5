// The interface between the Python binding (module.cpp, layout.cpp) and the kernels
// (kernels.cpp), which is compiled once per instruction set and chosen at import time.
//
// Only plain data and function pointers cross this boundary: the kernel translation units
// are built with different compiler flags, so they must not share inline or template code
// with the rest of the module (the linker would keep one copy of each, possibly the one
// using instructions this CPU lacks).  Each build of kernels.cpp lives in its own namespace.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

namespace msq {

using index_t = std::uint64_t;

constexpr int kMaxQubits = 62;
constexpr int kPartialStride = 4;  // 64 bytes of complex<double>

// Where a gate's amplitude groups lie in a state vector and how the work is split.
//
// A gate on targets t_0..t_{k-1} with controls acts on groups of 2^k amplitudes: entry r of
// a group (bit j of r is target t_j's value, the gate matrices' convention) lies at
// base + offsets[r].  Group bases are enumerated by a counter: insert a zero bit at every
// fixed (target or control) position, then set the control bits.  Runs of `run` consecutive
// counters give bases `stride` apart (a strided stream, contiguous when stride is 1).  The
// counter range is cut into `n_chunks` chunks of `chunk` counters that threads take whole;
// chunk and run are powers of two, so a chunk holds whole runs or lies inside one.
struct Layout {
  int n_qubits;
  int n_fixed;
  int fixed[kMaxQubits];       // target and control positions, ascending
  index_t ctrl_mask;
  int group_size;              // 2^k
  const index_t* offsets;      // group_size offsets from a group's base
  index_t stride;
  index_t run;
  index_t chunk;
  index_t n_chunks;
  int threads;
};

// A gate on one or two targets laid out for the vector kernels.  A register holds `lanes`
// consecutive amplitudes (qubits 0..log2(lanes)-1 vary inside it); the Layout is built with
// those lane qubits as its first targets and the gate's other targets after them, so a group
// is `streams` registers at offsets[s * lanes].  row[s * lanes + l] is the gate-matrix index
// (bit j: target j's value) of the amplitude in lane l of stream s; lane_mask has bit t set
// for each target t inside a register.  Controls inside a register are folded into the
// matrix before, so every control is a Layout control.
struct LaneMap {
  static constexpr int kMaxRows = 32;  // 4 streams x 8 lanes
  int targets;                         // 1 or 2
  int lane_mask;
  int streams;
  bool diagonal;
  int row[kMaxRows];
};

// The kernels of one precision.  Matrices are row-major group_size x group_size in the
// state's precision; `scratch` holds 3 * group_size amplitudes per thread (used by gates
// on four or more targets); `partials` holds kPartialStride zeroed accumulators per chunk
// (padded so threads do not share cache lines), added up in chunk order by the caller.
// adjoint_step applies U^dag to psi and lam and adds outer[r][s] = sum over the chunk's
// groups of conj(lam_r) (U^dag psi)_s into the chunk's group_size^2 slots (`outer_stride`
// apart), from which <lam| dU |U^dag psi> follows for any dU.
template <class T>
struct KernelTable {
  using C = std::complex<T>;
  void (*apply_matrix)(C* psi, const Layout& L, const C* matrix, C* scratch);
  void (*inner_matrix)(const C* bra, const C* ket, const Layout& L, const C* matrix, C* scratch,
                       std::complex<double>* partials);
  void (*adjoint_step)(C* psi, C* lam, const Layout& L, const C* inverse, C* scratch,
                       std::complex<double>* outer, std::size_t outer_stride);
  void (*pauli_expectation)(const C* psi, const Layout& L, index_t xmask, const index_t* zmasks,
                            const std::complex<double>* coeffs, int terms,
                            std::complex<double>* partials);
  // terms sorted by X mask
  void (*apply_pauli_sum)(const C* psi, C* out, const Layout& L, const index_t* xmasks,
                          const index_t* zmasks, const C* coeffs, int terms);
  // The vector kernels (see LaneMap), `lanes` amplitudes per register in this build.
  // apply_lanes: psi <- M psi, M a 2x2 or 4x4 matrix.  adjoint_lanes: psi <- U^dag psi once,
  // then for each co-state h: outer[h][r][s] += sum conj(lam_h r) (U^dag psi)_s into the chunk's
  // slot (`outer_stride` apart, d^2 entries per co-state) and lam_h <- U^dag lam_h, block by
  // block so psi is read from memory once for all co-states.
  int lanes;
  void (*apply_lanes)(C* psi, const Layout& L, const C* matrix, const LaneMap& map);
  void (*adjoint_lanes)(C* psi, C* const* lams, int n_lams, const Layout& L, const C* inverse,
                        const LaneMap& map, std::complex<double>* outer,
                        std::size_t outer_stride);
};

struct KernelSet {
  const char* isa;
  KernelTable<double> f64;
  KernelTable<float> f32;
};

namespace base { const KernelSet& kernel_set(); }
#ifdef MSQ_HAVE_X86_64_V3
namespace x86_64_v3 { const KernelSet& kernel_set(); }
#endif
#ifdef MSQ_HAVE_X86_64_V4
namespace x86_64_v4 { const KernelSet& kernel_set(); }
#endif

}  // namespace msq
