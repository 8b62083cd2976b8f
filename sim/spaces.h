// Declared observation and action spaces (DESIGN.md D5).
#pragma once

#include <string>
#include <vector>

namespace rlt {

struct Space {
  int dim = 0;             // length of the vector (1 for a discrete action)
  bool discrete = false;   // a discrete space holds one index in [0, num_actions)
  int num_actions = 0;     // discrete only
  std::vector<float> low;  // per-component bounds (dim entries; +-inf where unbounded)
  std::vector<float> high;
  std::string describe() const;
};

struct EnvSpec {
  std::string name;
  Space observation;
  Space action;
  int max_episode_steps = 0;  // truncation horizon (Gymnasium's TimeLimit)
  // Asymmetric actor-critic: length of the privileged observation the critic reads instead of
  // `observation` (VecEnv::critic_obs); 0 when the critic sees what the actor sees.
  int critic_obs_dim = 0;
};

}  // namespace rlt
