// The CPU instantiations of the learner and the policy (their CUDA twins: rl/ppo_cuda.cu).
#include "rl/gemm.h"
#include "rl/policy.h"
#include "rl/ppo_impl.h"

namespace rlt {

template class Ppo<CpuExecutor>;
template class PolicyT<CpuExecutor>;

std::unique_ptr<Policy> make_cpu_policy(const PolicySpec& spec, const ObsNormalization& norm, std::uint64_t sample_seed,
                                        i64 max_rows, const CpuExecutor& exec) {
  return std::make_unique<PolicyT<CpuExecutor>>(spec, norm, sample_seed, max_rows, exec);
}

}  // namespace rlt
