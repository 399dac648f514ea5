// Element types: the DType enum (the IR's dtype names), the C++ storage type of each, the
// type each is computed in, dtype sets, and dispatch from a runtime DType to a typed lambda.
//
// Storage.  Every dtype is stored natively; float16 and bfloat16 are 2-byte structs (f16_t,
// bf16_t) holding the bit pattern.  Note that the cpu backend keeps bfloat16 in 2 bytes on
// the device, while the reference backend keeps it as float32 (to_device/to_host convert).
//
// Compute.  compute_t<T> is the type kernels do arithmetic in: float for f16_t and bf16_t
// (each result is rounded once to the storage type), T itself otherwise.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "mskernel_cpu/error.hpp"

namespace mskernel_cpu {

enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64, Complex64, Complex128,
};
constexpr int kNumDTypes = 15;

struct f16_t { uint16_t bits; };
struct bf16_t { uint16_t bits; };

// ---- names and sizes --------------------------------------------------------------------

const char* dtype_name(DType dt);            // the IR name: "float32", "bfloat16", ...
DType parse_dtype(const std::string& name);  // throws Error for an unknown name
size_t itemsize(DType dt);                   // device bytes per element (bfloat16: 2)

// ---- dtype sets (bit masks) -------------------------------------------------------------

using DTypeSet = uint32_t;
constexpr DTypeSet bit(DType dt) { return DTypeSet(1) << static_cast<int>(dt); }
constexpr bool contains(DTypeSet set, DType dt) { return (set & bit(dt)) != 0; }

constexpr DTypeSet kBool = bit(DType::Bool);
constexpr DTypeSet kSigned =
    bit(DType::Int8) | bit(DType::Int16) | bit(DType::Int32) | bit(DType::Int64);
constexpr DTypeSet kUnsigned =
    bit(DType::UInt8) | bit(DType::UInt16) | bit(DType::UInt32) | bit(DType::UInt64);
constexpr DTypeSet kInteger = kSigned | kUnsigned;
constexpr DTypeSet kFloat =
    bit(DType::Float16) | bit(DType::BFloat16) | bit(DType::Float32) | bit(DType::Float64);
constexpr DTypeSet kComplex = bit(DType::Complex64) | bit(DType::Complex128);
// The families of mskernel/ops/rules.py, by the same names.
constexpr DTypeSet kReal = kInteger | kFloat;
constexpr DTypeSet kInexact = kFloat | kComplex;
constexpr DTypeSet kNumeric = kReal | kComplex;
constexpr DTypeSet kIntOrBool = kInteger | kBool;
constexpr DTypeSet kAll = kNumeric | kBool;

// ---- type traits ------------------------------------------------------------------------

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};
template <class T> constexpr bool is_complex_v = is_complex<T>::value;

template <class T> struct is_half : std::false_type {};
template <> struct is_half<f16_t> : std::true_type {};
template <> struct is_half<bf16_t> : std::true_type {};
template <class T> constexpr bool is_half_v = is_half<T>::value;

template <class T> struct compute_type { using type = T; };
template <> struct compute_type<f16_t> { using type = float; };
template <> struct compute_type<bf16_t> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

// The real counterpart of a type: float for complex64, double for complex128, else itself.
template <class T> struct real_type { using type = T; };
template <class T> struct real_type<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_type<T>::type;

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<f16_t>() { return DType::Float16; }
template <> constexpr DType dtype_of<bf16_t>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<std::complex<float>>() { return DType::Complex64; }
template <> constexpr DType dtype_of<std::complex<double>>() { return DType::Complex128; }

// ---- dispatch ---------------------------------------------------------------------------

template <class T> struct Tag { using type = T; };

// Calls f(Tag<T>{}) with T the storage type of `dt`, instantiating f only for the dtypes in
// `Set`; a dtype outside it throws.  Every branch must return the same type.
//
//   return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
//     using T = typename decltype(tag)::type;  ...
//   });
template <DTypeSet Set, class F>
decltype(auto) dispatch(DType dt, F&& f) {
#define MSKERNEL_CPU_DISPATCH_CASE(D, T) \
  case DType::D:                         \
    if constexpr (contains(Set, DType::D)) return f(Tag<T>{}); \
    break;
  switch (dt) {
    MSKERNEL_CPU_DISPATCH_CASE(Bool, bool)
    MSKERNEL_CPU_DISPATCH_CASE(Int8, int8_t)
    MSKERNEL_CPU_DISPATCH_CASE(Int16, int16_t)
    MSKERNEL_CPU_DISPATCH_CASE(Int32, int32_t)
    MSKERNEL_CPU_DISPATCH_CASE(Int64, int64_t)
    MSKERNEL_CPU_DISPATCH_CASE(UInt8, uint8_t)
    MSKERNEL_CPU_DISPATCH_CASE(UInt16, uint16_t)
    MSKERNEL_CPU_DISPATCH_CASE(UInt32, uint32_t)
    MSKERNEL_CPU_DISPATCH_CASE(UInt64, uint64_t)
    MSKERNEL_CPU_DISPATCH_CASE(Float16, f16_t)
    MSKERNEL_CPU_DISPATCH_CASE(BFloat16, bf16_t)
    MSKERNEL_CPU_DISPATCH_CASE(Float32, float)
    MSKERNEL_CPU_DISPATCH_CASE(Float64, double)
    MSKERNEL_CPU_DISPATCH_CASE(Complex64, std::complex<float>)
    MSKERNEL_CPU_DISPATCH_CASE(Complex128, std::complex<double>)
  }
#undef MSKERNEL_CPU_DISPATCH_CASE
  throw Error(ErrorKind::Type, std::string("no kernel for dtype ") + dtype_name(dt));
}

}  // namespace mskernel_cpu
