// The epilogue of a GEMM-based kernel (conv, matmul): an optional bias add and an activation,
// applied to each output tile while it is still in cache, and the single rounding to the
// storage type.  The activations are the functors of the elementwise ops of the same names
// (functors.hpp): relu, sigmoid, tanh, gelu (erf), gelu (tanh formula), silu.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "mskernel_cpu/convert.hpp"
#include "mskernel_cpu/functors.hpp"

namespace mskernel_cpu {

enum class Activation { None, Relu, Sigmoid, Tanh, Gelu, GeluTanh, Silu };

// "none", "relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu"; anything else throws.
inline Activation parse_activation(const std::string& name) {
  if (name == "none") return Activation::None;
  if (name == "relu") return Activation::Relu;
  if (name == "sigmoid") return Activation::Sigmoid;
  if (name == "tanh") return Activation::Tanh;
  if (name == "gelu") return Activation::Gelu;
  if (name == "gelu_tanh") return Activation::GeluTanh;
  if (name == "silu") return Activation::Silu;
  throw Error(ErrorKind::Value, "unknown activation '" + name +
                                    "' (none, relu, sigmoid, tanh, gelu, gelu_tanh, silu)");
}


// Calls f(functor) with the functor of `a`, so loops are instantiated per activation.
template <class F>
decltype(auto) with_activation(Activation a, F&& f) {
  switch (a) {
    case Activation::Relu: return f(functors::Relu{});
    case Activation::Sigmoid: return f(functors::Sigmoid{});
    case Activation::Tanh: return f(functors::Tanh{});
    case Activation::Gelu: return f(functors::GeluErf{});
    case Activation::GeluTanh: return f(functors::GeluTanh{});
    case Activation::Silu: return f(functors::Silu{});
    case Activation::None: break;
  }
  return f(functors::Identity{});
}

// What to do to each result of a product before storing it: out = activation(acc + bias).
// `bias` (storage type T, or null) has one value per output channel: per row of a conv's
// [C_out, pixels] tile, per column of a matmul's [rows, m] tile.
template <class T>
struct Epilogue {
  const T* bias = nullptr;
  Activation activation = Activation::None;

  bool trivial() const { return bias == nullptr && activation == Activation::None; }
};

// dst[j] = activation(src[j] + bias[channel]) for j < count, rounded to T; the bias is the
// same for the whole run (a row of a channels-first tile).  src may alias dst when C is T.
template <class T, class C>
void finish_channel_run(const Epilogue<T>& e, int64_t channel, const C* src, T* dst,
                        int64_t count) {
  const C b = e.bias != nullptr ? C(load(e.bias[channel])) : C(0);
  with_activation(e.activation, [&](auto act) {
    for (int64_t j = 0; j < count; ++j) dst[j] = convert<T>(act(src[j] + b));
  });
}

// dst[j] = activation(src[j] + bias[first + j]) for j < count, rounded to T: one row of a
// matmul tile whose columns are the output channels.  src may alias dst when C is T.
template <class T, class C>
void finish_row(const Epilogue<T>& e, int64_t first, const C* src, T* dst, int64_t count) {
  with_activation(e.activation, [&](auto act) {
    if (e.bias == nullptr) {
      for (int64_t j = 0; j < count; ++j) dst[j] = convert<T>(act(src[j]));
    } else {
      const T* bias = e.bias + first;
      for (int64_t j = 0; j < count; ++j) dst[j] = convert<T>(act(src[j] + C(load(bias[j]))));
    }
  });
}

}  // namespace mskernel_cpu
