// `rltrain bench`: simulation and training throughput, printed as a table and written as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlt {

struct BenchOptions {
  std::vector<std::string> envs;        // env names
  std::vector<std::int64_t> num_envs;   // batch sizes to measure
  std::int64_t steps = 0;               // steps per env per measurement (0: about 2^24 env steps)
  std::string device = "auto";
  int threads = 0;
  std::string config_dir = "configs";   // PPO settings come from <config_dir>/<env>.toml when present
  std::string json_path;                // optional JSON output
  bool ppo = true;                      // also measure full PPO iterations
  std::int64_t ppo_max_batch = 1 << 17; // cap on num_envs * num_steps for the PPO row on the CPU
};

int run_bench(const BenchOptions& opts);

}  // namespace rlt
