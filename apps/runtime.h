// The one place where the backend is chosen (STYLE.md 3): resolves --device, owns the executor,
// and makes envs and learners on it.
#pragma once

#include <memory>
#include <string>

#include "envs/physics_batch.h"
#include "rl/config.h"
#include "rl/policy.h"
#include "rl/ppo.h"
#include "sim/host_copies.h"
#include "sim/precision.h"
#include "sim/vec_env.h"

namespace rlt {

// cfg.ppo.gemm_precision as the executors' enum (ConfigError for a value validate() would refuse).
GemmPrecision gemm_precision_of(const Config& cfg);

// Where a run's envs and learner live (issue 18): each auto | cpu | cuda, with the flag or config
// key each came from (named in errors). The env may sit on another device than the learner: the
// Runtime then presents it on the learner's through a PlacedEnv (sim/placed_env.h).
struct Placement {
  std::string env = "auto", learner = "auto";
  std::string env_from = "--device", learner_from = "--device";
  // Step the env through the PlacedEnv copies even when it shares the learner's device (with the CPU
  // on both sides: the CPU twin of the CPU<->CUDA staging); for tests and measurement.
  bool force_copies = false;
};
// One device for both, want from `from` (the old single --device).
Placement same_placement(const std::string& want, const std::string& from);
// cfg's train.device, train.env_device and train.learner_device (an empty one: train.device), named
// as keys of cfg.source.
Placement config_placement(const Config& cfg);
// The placement of the flags --device, --env-device and --learner-device (eval, bench): each
// checked, the empty ones taking --device's.
Placement flag_placement(const std::string& device, const std::string& env_device, const std::string& learner_device);
// ConfigError "<flag>: expected one of auto, cpu, cuda, got "<value>"" unless value is one of them
// (flag: a CLI flag, or where a config value came from, e.g. "run.toml: train.env_device").
void check_device_flag(const std::string& flag, const std::string& value);

class Runtime final : public HostCopies {
 public:
  // want: auto | cpu | cuda for env and learner alike. auto picks CUDA when a GPU answers (note()
  // then says which) and falls back to the CPU with one line saying why; cuda without a GPU throws
  // ConfigError naming --device (or config_source's train.device).
  // local_rank: a process of a job (rl/distributed.h) takes GPU local_rank modulo the GPUs it sees.
  Runtime(const std::string& want, int cpu_threads, const std::string& config_source = "", int local_rank = 0);
  // Env and learner each where `placement` says (each resolved as above; the ConfigError names the
  // flag or key that asked for cuda).
  Runtime(const Placement& placement, int cpu_threads, int local_rank = 0);
  ~Runtime() override;

  // The learner's device: where the learner, the policies and the envs as make_env presents them live.
  Device device() const { return m_device; }
  // Where the envs step (their own memory): device() unless placed apart.
  Device env_device() const { return m_env_device; }
  // make_env presents envs through a PlacedEnv (different devices, or forced copies).
  bool placed() const { return m_env_device != m_device || m_force_copies; }
  const std::string& note() const { return m_note; }
  int cpu_threads() const { return m_cpu.num_threads(); }
  int gpu() const { return m_gpu; }  // the CUDA device index (when either device is kCuda)
  const CpuExecutor& cpu() const { return m_cpu; }

  // Throws std::invalid_argument for an unknown env. Made on env_device(), presented on device().
  std::unique_ptr<VecEnv> make_env(const std::string& name, i64 num_envs) const;
  // The env of a config, with its [env] parameters applied (ConfigError naming env.<key>).
  std::unique_ptr<VecEnv> make_env(const Config& cfg) const;
  // A learner whose GEMMs run at cfg.ppo.gemm_precision (set on the executor, for every user of it).
  std::unique_ptr<Learner> make_learner(const Config& cfg, VecEnv& env) const;
  // A policy that acts on up to max_rows observations at once (weights zero until loaded), its
  // sampled actions keyed by sample_seed (policy_sample_seed of the run's train.seed).
  std::unique_ptr<Policy> make_policy(const PolicySpec& spec, const ObsNormalization& norm, std::uint64_t sample_seed,
                                      i64 max_rows) const;
  // A bare-physics batch of an MJCF model (on env_device()) (envs/physics_batch.h): num_envs copies, substeps physics
  // steps per control step, random controls keyed by ctrl_seed.
  std::unique_ptr<PhysicsBatch> make_physics_batch(const Model& model, i64 num_envs, int substeps,
                                                   std::uint64_t ctrl_seed) const;
  // Host <-> learner-device copies of small arrays (actions for eval, stats).
  void to_host(float* dst, const float* src, i64 n) const override;
  void from_host(float* dst, const float* src, i64 n) const override;
  void to_host(std::uint8_t* dst, const std::uint8_t* src, i64 n) const override;
  void to_host(std::int32_t* dst, const std::int32_t* src, i64 n) const override;
  // Threads a CUDA launch runs at most (CudaExecutor::max_threads): a batch's constraint workspace
  // has one slot per env up to it (EnvMemory::device_slots); -1 on the CPU.
  std::int64_t device_threads() const;
  // Counted host<->device copies so far (0 on the CPU).
  std::int64_t num_transfers() const;
  // Waits for queued device work of either device (timing); nothing on the CPU.
  void synchronize() const;

 private:
  std::unique_ptr<VecEnv> make_raw_env(const std::string& name, i64 num_envs) const;  // on env_device()
  // Wraps env (made on env_device()) in a PlacedEnv when placed().
  std::unique_ptr<VecEnv> place(std::unique_ptr<VecEnv> env) const;

  Device m_device = Device::kCpu;      // the learner's
  Device m_env_device = Device::kCpu;  // the envs'
  bool m_force_copies = false;
  int m_gpu = 0;
  std::string m_note;
  CpuExecutor m_cpu;
  struct Cuda;
  std::unique_ptr<Cuda> m_cuda;
};

// Applies cfg.env.params to env; unknown names or bad values throw ConfigError naming the file
// and env.<key>.
void apply_env_params(const Config& cfg, VecEnv& env);
// Checks env.name and every env parameter of cfg by making one CPU env, which it returns with the
// executor it runs on (its spec() and memory() are those of any batch of the env); throws
// ConfigError.
struct EnvCheck {
  std::unique_ptr<CpuExecutor> exec;  // one thread: no worker is started
  std::unique_ptr<VecEnv> env;
};
EnvCheck check_env_config(const Config& cfg);

}  // namespace rlt
