// `rltrain bench`: simulation and training throughput, printed as a table and written as JSON.
// With --model, the physics of an MJCF model instead: a batch of envs stepped with random
// controls through PhysicsStep on the executor (run_model_bench).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlt {

struct BenchOptions {
  std::vector<std::string> envs;       // env names
  std::vector<std::int64_t> num_envs;  // batch sizes to measure
  std::int64_t steps = 0;              // steps per env per measurement (0: about 2^24 env steps)
  std::string device = "auto";
  std::string env_device;      // --env-device (empty: device)
  std::string learner_device;  // --learner-device (empty: device)
  bool placement_copies = false;  // envs through the PlacedEnv copies even on the learner's device
  int threads = 0;
  std::string config_dir = "configs";    // PPO settings come from <config_dir>/<env>.toml when present
  std::string json_path;                 // optional JSON output
  bool ppo = true;                       // also measure full PPO iterations
  bool phases = false;                   // and where their CPU time goes (Learner::time_phases; CPU learner)
  std::int64_t ppo_max_batch = 1 << 17;  // cap on num_envs * num_steps for the PPO row on the CPU
  std::string gemm_precision;            // the PPO rows' ppo.gemm_precision ("": each config's own)
  std::string model_path;                // MJCF model for run_model_bench
  double control_dt = 0.05;              // s per control step (run_model_bench); a multiple of the model's timestep
  bool lanes = false;                    // run_model_bench: the physics in SIMD lanes (PhysicsBatch::set_lanes)
};

int run_bench(const BenchOptions& opts);

// `rltrain bench --mpi` (and any bench under mpirun): PPO iterations of each env and num_envs on
// every process of the job (rl/distributed.h), gradients averaged as in training; rank 0 prints,
// per rank, samples/s, the iteration's wall time and the time spent in allreduce, and the job's
// samples/s. A process started without mpirun is a job of one.
int run_mpi_bench(const BenchOptions& opts);

// Physics steps/s and control steps/s (per core too) of opts.model_path for each batch size in
// opts.num_envs: every env draws random controls (sim/actuators.h random_ctrl) and takes
// control_dt / timestep physics steps, in float, through parallel_for. Throws MjcfError for a bad
// model and ConfigError for a control_dt that is not a whole number of physics steps.
int run_model_bench(const BenchOptions& opts);

}  // namespace rlt
