// The CPU instantiation of the learner, and the host-side helpers shared by every executor.
#include "rl/gemm.h"
#include "rl/ppo_impl.h"

namespace rlt {

Activation parse_activation(const std::string& name) {
  if (name == "tanh") return Activation::kTanh;
  if (name == "elu") return Activation::kElu;
  if (name == "relu") return Activation::kRelu;
  throw std::invalid_argument("unknown activation '" + name + "' (tanh, elu, relu)");
}

PolicySpec policy_spec_for(const EnvSpec& env, const PolicyConfig& cfg) {
  PolicySpec s;
  s.obs_dim = env.observation.dim;
  s.discrete = env.action.discrete;
  s.act_dim = env.action.dim;
  s.num_actions = env.action.num_actions;
  s.hidden = cfg.hidden;
  s.act = parse_activation(cfg.activation);
  return s;
}

template class Ppo<CpuExecutor>;

}  // namespace rlt
