// The CUDA error checks (kernels/cuda_check.h) and the no-GPU path. These need the CUDA build but
// no device (the runtime's error strings answer without a driver), so they run everywhere.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/device.h"

namespace rlt {
namespace {

cudaError_t fails_with_invalid_value() { return cudaErrorInvalidValue; }
cublasStatus_t blas_fails_with_invalid_value() { return CUBLAS_STATUS_INVALID_VALUE; }

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaCheck, SuccessDoesNotThrow) {
  EXPECT_NO_THROW(RLT_CUDA_CHECK(cudaSuccess));
  EXPECT_NO_THROW(RLT_CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS));
}

TEST(CudaCheck, FailureNamesFileLineExpressionAndError) {
  const std::string m = message_of([] { RLT_CUDA_CHECK(fails_with_invalid_value()); });
  EXPECT_NE(m.find("test_cuda_check.cpp:"), std::string::npos) << m;
  EXPECT_NE(m.find("fails_with_invalid_value()"), std::string::npos) << m;
  EXPECT_NE(m.find("cudaErrorInvalidValue"), std::string::npos) << m;
  EXPECT_NE(m.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << m;
}

TEST(CudaCheck, CublasFailureNamesTheStatus) {
  const std::string m = message_of([] { RLT_CUBLAS_CHECK(blas_fails_with_invalid_value()); });
  EXPECT_NE(m.find("blas_fails_with_invalid_value()"), std::string::npos) << m;
  EXPECT_NE(m.find("cuBLAS error"), std::string::npos) << m;
  EXPECT_NE(m.find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << m;
  EXPECT_NE(m.find("test_cuda_check.cpp:"), std::string::npos) << m;
}

TEST(CudaProbe, ReportsADeviceOrSaysWhyNot) {
  EXPECT_TRUE(built_with_cuda());
  const CudaProbe p = probe_cuda();
  EXPECT_GE(p.device_count, 0);
  EXPECT_FALSE(p.reason.empty()) << "either the device name or why there is none";
}

}  // namespace
}  // namespace rlt
