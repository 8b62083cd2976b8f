// Shared by the GPU tests: the skip when no device answers, and an llm.c-style checker that
// compares a result with its CPU reference as |x - ref| <= atol + rtol * scale, reports the first
// few mismatches and the worst index.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/device.h"
#include "sim/common.h"

// First statement of every GPU test (DESIGN.md D1): without a device the test is skipped, with
// the reason (no driver, no device, built without CUDA).
#define RLT_REQUIRE_GPU()                                                \
  do {                                                                   \
    const ::rlt::CudaProbe rlt_probe_ = ::rlt::probe_cuda();             \
    if (rlt_probe_.device_count == 0) GTEST_SKIP() << rlt_probe_.reason; \
  } while (0)

namespace rlt {
namespace gpu_test {

// got[i] vs ref[i] for i < n: |got - ref| <= atol + rtol * scale(i), scale(i) = |ref[i]| unless
// given (GEMM passes the magnitude of the summed terms). Non-finite values must match exactly.
template <class T>
::testing::AssertionResult all_close(const std::string& what, const T* got, const T* ref, size_t n, double atol,
                                     double rtol, const std::function<double(size_t)>& scale = nullptr) {
  size_t bad = 0, worst = 0;
  double worst_excess = -1.0;
  std::ostringstream first;
  for (size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    bool ok;
    double excess = 0.0;
    if (!std::isfinite(r) || !std::isfinite(g)) {
      ok = (std::isnan(r) && std::isnan(g)) || g == r;
    } else {
      const double tol = atol + rtol * (scale ? scale(i) : std::abs(r));
      excess = std::abs(g - r) / (tol > 0 ? tol : 1e-300);
      ok = std::abs(g - r) <= tol;
    }
    if (!ok) {
      if (bad < 5) first << "\n  [" << i << "] got " << g << ", expected " << r << " (diff " << std::abs(g - r) << ")";
      ++bad;
      if (!std::isfinite(excess) || excess > worst_excess || worst_excess < 0) {
        worst_excess = std::isfinite(excess) ? excess : 1e300;
        worst = i;
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << n << " outside atol " << atol << " + rtol "
                                       << rtol << " * scale; worst index " << worst << " (" << worst_excess
                                       << "x the tolerance); first:" << first.str();
}

}  // namespace gpu_test
}  // namespace rlt
