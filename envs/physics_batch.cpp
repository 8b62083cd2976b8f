// The CPU instantiation of PhysicsBatchT (its CUDA twin: envs/physics_batch_cuda.cu).
#include "envs/physics_batch.h"

#include "sim/cpu_executor.h"

namespace rlt {

template <>
std::unique_ptr<PhysicsBatch> make_physics_batch<CpuExecutor>(const Model& model, i64 num_envs, int substeps,
                                                              std::uint64_t ctrl_seed, const CpuExecutor& exec) {
  return std::make_unique<PhysicsBatchT<CpuExecutor>>(model, num_envs, substeps, ctrl_seed, exec);
}

}  // namespace rlt
