// The core op `fft` (numpy.fft's fft, ifft, rfft and irfft along one axis) on pocketfft's 1-D
// plans.  The tensor is [outer, size, inner] around the axis; each line is copied into a
// contiguous buffer cut or zero-padded to the transform length, transformed in place and
// written out.  Plans are built once per node; lines are split over the pool.
#include <cmath>
#include <memory>
#include <vector>

#define POCKETFFT_NO_MULTITHREADING
#include "pocketfft/pocketfft_hdronly.h"

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/parallel.hpp"

namespace mskernel_cpu {
namespace {

using pocketfft::detail::cmplx;

// numpy.fft's scale factor for a transform of length n.
double scale(const std::string& norm, bool inverse, int64_t n) {
  if (norm == "ortho") return 1.0 / std::sqrt(static_cast<double>(n));
  return (norm == "forward") != inverse ? 1.0 / static_cast<double>(n) : 1.0;
}

template <class R>
Kernel transform(KernelContext& ctx, bool inverse, bool real) {
  const int64_t axis = ctx.attrs.get_int("axis");
  const AxisSplit in = split_axis(ctx.inputs[0].shape, axis);
  const AxisSplit out = split_axis(ctx.outputs[0].shape, axis);
  const int64_t n = real && !inverse ? in.extent : out.extent;  // rfft: cut/padded input
  const int64_t length = real && !inverse ? ctx.attrs.get_optional_int("n").value_or(n) : n;
  const R fct = static_cast<R>(scale(ctx.attrs.get_str("norm"), inverse, length));
  const int64_t lines = out.lines(), inner = out.inner;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, length));
  using C = std::complex<R>;
  if (!real) {
    auto plan = std::make_shared<pocketfft::detail::pocketfft_c<R>>(length);
    return [=](const Args& args) {
      const C* x = args.in<C>(0);
      C* y = args.out<C>(0);
      parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
        std::vector<cmplx<R>> buf(length);
        for (int64_t line = begin; line < end; ++line) {
          const C* src = x + in.start(line, in.extent);
          for (int64_t i = 0; i < length; ++i) {
            const C v = i < in.extent ? src[i * inner] : C(0);
            buf[i] = {v.real(), v.imag()};
          }
          plan->exec(buf.data(), fct, !inverse);
          C* dst = y + out.start(line, length);
          for (int64_t i = 0; i < length; ++i) dst[i * inner] = C(buf[i].r, buf[i].i);
        }
      });
    };
  }
  auto plan = std::make_shared<pocketfft::detail::pocketfft_r<R>>(length);
  if (!inverse) {  // real to half spectrum: unpack FFTPACK's r0, r1, i1, r2, i2, ... order
    return [=](const Args& args) {
      const R* x = args.in<R>(0);
      C* y = args.out<C>(0);
      parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
        std::vector<R> buf(length);
        for (int64_t line = begin; line < end; ++line) {
          const R* src = x + in.start(line, in.extent);
          for (int64_t i = 0; i < length; ++i) buf[i] = i < in.extent ? src[i * inner] : R(0);
          plan->exec(buf.data(), fct, true);
          C* dst = y + out.start(line, out.extent);
          dst[0] = C(buf[0]);
          int64_t i = 1, k = 1;
          for (; i < length - 1; i += 2, ++k) dst[k * inner] = C(buf[i], buf[i + 1]);
          if (i < length) dst[k * inner] = C(buf[i]);
        }
      });
    };
  }
  return [=](const Args& args) {  // half spectrum to real: pack into FFTPACK's order
    const C* x = args.in<C>(0);
    R* y = args.out<R>(0);
    parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
      std::vector<R> buf(length);
      for (int64_t line = begin; line < end; ++line) {
        const C* src = x + in.start(line, in.extent);
        auto at = [&](int64_t k) { return k < in.extent ? src[k * inner] : C(0); };
        buf[0] = at(0).real();
        int64_t i = 1, k = 1;
        for (; i < length - 1; i += 2, ++k) {
          buf[i] = at(k).real();
          buf[i + 1] = at(k).imag();
        }
        if (i < length) buf[i] = at(k).real();
        plan->exec(buf.data(), fct, false);
        R* dst = y + out.start(line, length);
        for (int64_t j = 0; j < length; ++j) dst[j * inner] = buf[j];
      }
    });
  };
}

Kernel fft_op(KernelContext& ctx) {
  const bool inverse = ctx.attrs.get_bool("inverse"), real = ctx.attrs.get_bool("real");
  if (ctx.outputs[0].numel() == 0) return [](const Args&) {};
  const DType dt = ctx.inputs[0].dtype;
  const bool wide = dt == DType::Float64 || dt == DType::Complex128;
  return wide ? transform<double>(ctx, inverse, real) : transform<float>(ctx, inverse, real);
}

}  // namespace

MSKERNEL_CPU_KERNEL("fft", bit(DType::Float32) | bit(DType::Float64) | kComplex, fft_op);

}  // namespace mskernel_cpu
