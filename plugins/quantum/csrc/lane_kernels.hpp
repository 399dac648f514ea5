// The vector kernels of one instruction-set build (lane_kernels.cpp), for its KernelTable.
#pragma once

#include "kernels.hpp"

#ifndef MSQ_ISA
#error "compile the kernels with -DMSQ_ISA=<namespace>"
#endif

namespace msq {
namespace MSQ_ISA {

template <class T>
int lane_width();
template <class T>
void apply_lanes(std::complex<T>* psi, const Layout& L, const std::complex<T>* matrix,
                 const LaneMap& map);
template <class T>
void adjoint_lanes(std::complex<T>* psi, std::complex<T>* const* lams, int n_lams,
                   const Layout& L, const std::complex<T>* inverse, const LaneMap& map,
                   std::complex<double>* outer, std::size_t outer_stride);

}  // namespace MSQ_ISA
}  // namespace msq
