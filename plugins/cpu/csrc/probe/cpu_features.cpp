// mskernel_cpu._cpu_features: compiled for the baseline x86-64 ISA (no -march), so it can be
// imported on any CPU to find out whether the kernels of mskernel_cpu._native (built for
// x86-64-v3: AVX2, FMA, F16C, BMI2) can run here, before importing them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

namespace {

// The x86-64-v3 features the kernels use that this CPU lacks (empty: they can run).
std::vector<std::string> missing_features() {
  std::vector<std::string> missing;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx")) missing.emplace_back("avx");
  if (!__builtin_cpu_supports("avx2")) missing.emplace_back("avx2");
  if (!__builtin_cpu_supports("fma")) missing.emplace_back("fma");
  if (!__builtin_cpu_supports("bmi")) missing.emplace_back("bmi");
  if (!__builtin_cpu_supports("bmi2")) missing.emplace_back("bmi2");
  if (!__builtin_cpu_supports("x86-64-v3")) missing.emplace_back("x86-64-v3");
#endif
  return missing;
}

// Whether this CPU runs x86-64-v4 code (AVX-512 F/BW/CD/DQ/VL): what the generated kernels
// are compiled for where it does.
bool has_x86_64_v4() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("x86-64-v4");
#else
  return false;
#endif
}

}  // namespace

PYBIND11_MODULE(_cpu_features, m) {
  m.doc() = "CPU feature probe of mskernel_cpu (baseline ISA)";
  m.def("missing_features", &missing_features);
  m.def("has_x86_64_v4", &has_x86_64_v4);
}
