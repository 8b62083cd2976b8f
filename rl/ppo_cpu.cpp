// The CPU instantiation of the learner.
#include "rl/gemm.h"
#include "rl/ppo_impl.h"

namespace rlt {

template class Ppo<CpuExecutor>;

}  // namespace rlt
