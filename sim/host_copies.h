// Copies between the host and whichever executor's memory a VecEnv or Policy lives in: what code
// that only holds those objects (the viewer) needs to read their outputs or feed them actions.
// apps/runtime.h's Runtime, which owns the executors, implements it.
#pragma once

#include <cstdint>

#include "sim/common.h"

namespace rlt {

class HostCopies {
 public:
  virtual ~HostCopies() = default;
  virtual void to_host(float* dst, const float* src, i64 n) const = 0;
  virtual void to_host(std::uint8_t* dst, const std::uint8_t* src, i64 n) const = 0;
  virtual void to_host(std::int32_t* dst, const std::int32_t* src, i64 n) const = 0;
  virtual void from_host(float* dst, const float* src, i64 n) const = 0;
};

}  // namespace rlt
