// `rltrain eval`: plays a checkpoint's policy for N episodes (one per env, in parallel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  double mean_return = 0, std_return = 0, mean_length = 0;
  std::string env;
  std::string device;
};

// The checkpoint path a user meant: a file as is, a run directory's checkpoints/latest.safetensors.
std::string resolve_checkpoint_path(const std::string& path);

// Throws CheckpointError / ConfigError for bad input.
EvalResult evaluate(const EvalOptions& opts);

}  // namespace rlt
