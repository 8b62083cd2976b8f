// A batch of MJCF-model envs stepped on the CUDA executor (kernels/cuda_physics_check.cu): the model's
// two blocks uploaded once and the ModelView rebound to them (ModelView::bind), one env row per env
// in device memory, random controls drawn on the device (sim/actuators.h random_ctrl, the same
// numbers as on the CPU) and PhysicsStepEnvs (sim/physics_step.h) run by parallel_for, one thread per
// env. `rltrain bench --model FILE --device cuda` times it (apps/bench.cpp). Host-only header: the
// CUDA types stay in the .cu. Construct only where a GPU answers (probe_cuda); the executor throws
// std::runtime_error otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/common.h"
#include "sim/model_view.h"

namespace rlt {

class CudaPhysicsBatch {
 public:
  // ctrl_range: (nu x 2) interval of each actuator's random control (apps/rollout.h ctrl_sample_range).
  CudaPhysicsBatch(const HostModel<float>& host, const std::vector<float>& ctrl_range, i64 num_envs, int substeps,
                   std::uint64_t seed);
  ~CudaPhysicsBatch();
  CudaPhysicsBatch(const CudaPhysicsBatch&) = delete;
  CudaPhysicsBatch& operator=(const CudaPhysicsBatch&) = delete;

  void reset();                   // every env row: reset_data (qpos0, at rest); queued
  void control_step(u32 step);    // random controls of control step `step`, then `substeps` physics steps; queued
  void synchronize() const;       // waits for the queued work (timing)
  i64 num_envs() const;
  // data: num_envs x data_size floats (the env rows), ncon: num_envs contact counts of the last step.
  void download(std::vector<float>* data, std::vector<int>* ncon) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace rlt
