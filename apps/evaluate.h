// `rltrain eval`: plays a checkpoint's policy for N episodes (one per env, in parallel).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/runtime.h"
#include "rl/checkpoint.h"

namespace rlt {

struct EvalOptions {
  std::string checkpoint;   // a .safetensors file, or a run directory (its latest checkpoint)
  std::string config_path;  // optional: evaluate on this config's env (the checkpoint's env unless other_env)
  // With config_path: its env may be another than the checkpoint's when the observation, critic
  // observation and action sizes agree (a flat-terrain policy on rough terrain); the shapes are
  // still checked, naming the checkpoint file.
  bool other_env = false;
  std::int64_t episodes = 100;
  bool deterministic = false;  // the distribution's mode instead of samples
  std::uint64_t seed = 12345;
  std::string device = "auto";
  std::string env_device;      // --env-device (empty: device)
  std::string learner_device;  // --learner-device: where the policy acts (empty: device)
  int threads = 0;
  // Command-tracking tasks: a step counts as settled when the env's command has not changed for
  // this many control steps (the start of an episode counts as a change); 50 steps = 1 s at the
  // joystick tasks' 0.02 s control step.
  std::int64_t settle_steps = 50;
};

struct EvalResult {
  std::vector<float> returns;
  std::vector<std::int32_t> lengths;
  std::vector<float> forward_speeds;  // per episode, m/s; empty for envs without a forward direction
  double mean_return = 0, std_return = 0, mean_length = 0;
  double mean_forward_speed = 0;  // valid when forward_speeds is not empty
  // Command-tracking tasks (VecEnv::tracking()): RMS over every step of every episode of the planar
  // velocity error |c_xy - v_xy| (m/s) and of the yaw-rate error c_yaw - w_z (rad/s); falls are the
  // episodes that ended terminated (not truncated). The settled figures are the same RMS over the
  // steps at least EvalOptions::settle_steps after the last command change (steady-state tracking,
  // without the transients that follow each new command and the start).
  bool has_tracking = false;
  double tracking_lin_rms = 0, tracking_yaw_rms = 0;
  std::int64_t tracking_steps = 0, falls = 0;
  double settled_lin_rms = 0, settled_yaw_rms = 0;
  std::int64_t settled_steps = 0;
  std::string env;
  std::string device;      // the policy's
  std::string env_device;  // the envs'
};

// The checkpoint path a user meant: a file as is, a run directory's checkpoints/latest.safetensors.
std::string resolve_checkpoint_path(const std::string& path);

// Throws CheckpointError / ConfigError for bad input.
EvalResult evaluate(const EvalOptions& opts);

// The policy of a checkpoint, made by rt for acting on env (up to env.num_envs() rows at once):
// cfg's policy shape and observation normalization, the checkpoint's weights and normalizer
// restored. CheckpointError when the shapes differ.
std::unique_ptr<Policy> make_checkpoint_policy(const Runtime& rt, const Config& cfg, const Checkpoint& ckpt,
                                               const VecEnv& env);
// The same for up to max_rows rows of an env whose spec is env_spec (rltrain.load_policy, python/).
std::unique_ptr<Policy> make_checkpoint_policy(const Runtime& rt, const Config& cfg, const Checkpoint& ckpt,
                                               const EnvSpec& env_spec, i64 max_rows);

}  // namespace rlt
