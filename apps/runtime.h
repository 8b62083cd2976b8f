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

class Runtime final : public HostCopies {
 public:
  // want: auto | cpu | cuda. auto picks CUDA when a GPU answers (note() then says which) and
  // falls back to the CPU with one line saying why; cuda without a GPU throws ConfigError.
  // local_rank: a process of a job (rl/distributed.h) takes GPU local_rank modulo the GPUs it sees.
  Runtime(const std::string& want, int cpu_threads, const std::string& config_source = "", int local_rank = 0);
  ~Runtime() override;

  Device device() const { return m_device; }
  const std::string& note() const { return m_note; }
  int cpu_threads() const { return m_cpu.num_threads(); }
  int gpu() const { return m_gpu; }  // the CUDA device index (when device() is kCuda)
  const CpuExecutor& cpu() const { return m_cpu; }

  // Throws std::invalid_argument for an unknown env.
  std::unique_ptr<VecEnv> make_env(const std::string& name, i64 num_envs) const;
  // The env of a config, with its [env] parameters applied (ConfigError naming env.<key>).
  std::unique_ptr<VecEnv> make_env(const Config& cfg) const;
  // A learner whose GEMMs run at cfg.ppo.gemm_precision (set on the executor, for every user of it).
  std::unique_ptr<Learner> make_learner(const Config& cfg, VecEnv& env) const;
  // A policy that acts on up to max_rows observations at once (weights zero until loaded), its
  // sampled actions keyed by sample_seed (policy_sample_seed of the run's train.seed).
  std::unique_ptr<Policy> make_policy(const PolicySpec& spec, const ObsNormalization& norm, std::uint64_t sample_seed,
                                      i64 max_rows) const;
  // A bare-physics batch of an MJCF model (envs/physics_batch.h): num_envs copies, substeps physics
  // steps per control step, random controls keyed by ctrl_seed.
  std::unique_ptr<PhysicsBatch> make_physics_batch(const Model& model, i64 num_envs, int substeps,
                                                   std::uint64_t ctrl_seed) const;
  // Host <-> executor copies of small arrays (actions for eval, stats).
  void to_host(float* dst, const float* src, i64 n) const override;
  void from_host(float* dst, const float* src, i64 n) const override;
  void to_host(std::uint8_t* dst, const std::uint8_t* src, i64 n) const override;
  void to_host(std::int32_t* dst, const std::int32_t* src, i64 n) const override;
  // Counted host<->device copies so far (0 on the CPU).
  std::int64_t num_transfers() const;
  // Waits for queued device work (timing); nothing on the CPU.
  void synchronize() const;

 private:
  Device m_device = Device::kCpu;
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
