// `rltrain eval`: plays a checkpoint's policy for N episodes (one per env, in parallel).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rl/checkpoint.h"
#include "rl/runtime.h"

namespace rlt {

struct EvalOptions {
  std::string checkpoint;     // a .safetensors file, or a run directory (its latest checkpoint)
  std::string config_path;    // optional: evaluate on this config's env (must be the same env)
  std::int64_t episodes = 100;
  bool deterministic = false; // the distribution's mode instead of samples
  std::uint64_t seed = 12345;
  std::string device = "auto";
  int threads = 0;
};

struct EvalResult {
  std::vector<float> returns;
  std::vector<std::int32_t> lengths;
  std::vector<float> forward_speeds;  // per episode, m/s; empty for envs without a forward direction
  double mean_return = 0, std_return = 0, mean_length = 0;
  double mean_forward_speed = 0;      // valid when forward_speeds is not empty
  std::string env;
  std::string device;
};

// The checkpoint path a user meant: a file as is, a run directory's checkpoints/latest.safetensors.
std::string resolve_checkpoint_path(const std::string& path);

// Throws CheckpointError / ConfigError for bad input.
EvalResult evaluate(const EvalOptions& opts);

// A checkpoint at `path` used with an env the user chose (`source` names where: a config file, the
// viewer): CheckpointError "<path>: metadata "env": checkpoint is for env 'a', but <source> asks for
// env 'b'" when they differ.
void check_checkpoint_env(const Checkpoint& ckpt, const std::string& path, const std::string& env_name,
                          const std::string& source);

// A learner that only acts (eval, the viewer): cfg's policy and PPO settings with a one-step
// rollout buffer, the checkpoint's policy weights restored. CheckpointError when the shapes differ.
std::unique_ptr<Learner> make_acting_learner(const Runtime& rt, Config cfg, const Checkpoint& ckpt, VecEnv& env);

}  // namespace rlt
