// The CPU instantiations of the learner and the policy (their CUDA twins: rl/ppo_cuda.cu), and of
// what they are made of: the GEMM, the MLP and the actor-critic (float; double for the gradient
// checks). The headers declare them `extern template` for the host.
#include "rl/gemm.h"
#include "rl/policy.h"
#include "rl/ppo_impl.h"

namespace rlt {

template void gemm<float>(const CpuExecutor&, bool, bool, i64, i64, i64, float, const float*, const float*, float,
                          float*);
template void gemm<double>(const CpuExecutor&, bool, bool, i64, i64, i64, double, const double*, const double*,
                           double, double*);
template class Mlp<float, CpuExecutor>;
template class Mlp<double, CpuExecutor>;
template class ActorCritic<float, CpuExecutor>;
template class ActorCritic<double, CpuExecutor>;
template class Ppo<CpuExecutor>;
template class PolicyT<CpuExecutor>;

std::unique_ptr<Policy> make_cpu_policy(const PolicySpec& spec, const ObsNormalization& norm, std::uint64_t sample_seed,
                                        i64 max_rows, const CpuExecutor& exec) {
  return std::make_unique<PolicyT<CpuExecutor>>(spec, norm, sample_seed, max_rows, exec);
}

}  // namespace rlt
