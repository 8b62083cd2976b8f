#include "apps/runtime.h"

#include "envs/registry.h"
#include "kernels/device.h"
#include "sim/placed_env.h"
#if defined(RLTRAIN_WITH_CUDA)
#include "kernels/cuda_executor.h"
#include "kernels/cuda_staging.h"
#include "rl/ppo_cuda.h"
#endif

namespace rlt {

#if defined(RLTRAIN_WITH_CUDA)
struct Runtime::Cuda {
  CudaExecutor exec;
};
#else
struct Runtime::Cuda {};
#endif

Placement same_placement(const std::string& want, const std::string& from) {
  Placement p;
  p.env = p.learner = want;
  p.env_from = p.learner_from = from;
  return p;
}

Placement config_placement(const Config& cfg) {
  Placement p;
  const TrainConfig& t = cfg.train;
  p.env = t.env_device.empty() ? t.device : t.env_device;
  p.learner = t.learner_device.empty() ? t.device : t.learner_device;
  p.env_from = cfg.source + (t.env_device.empty() ? ": train.device" : ": train.env_device");
  p.learner_from = cfg.source + (t.learner_device.empty() ? ": train.device" : ": train.learner_device");
  return p;
}

void check_device_flag(const std::string& flag, const std::string& value) {
  if (value != "auto" && value != "cpu" && value != "cuda")
    throw ConfigError(flag + ": expected one of auto, cpu, cuda, got \"" + value + "\"");
}

Placement flag_placement(const std::string& device, const std::string& env_device, const std::string& learner_device) {
  check_device_flag("--device", device);
  Placement p = same_placement(device, "--device");
  if (!env_device.empty()) {
    check_device_flag("--env-device", env_device);
    p.env = env_device, p.env_from = "--env-device";
  }
  if (!learner_device.empty()) {
    check_device_flag("--learner-device", learner_device);
    p.learner = learner_device, p.learner_from = "--learner-device";
  }
  return p;
}

Runtime::Runtime(const std::string& want, int cpu_threads, const std::string& config_source, int local_rank)
    : Runtime(same_placement(want, config_source.empty() ? "--device" : config_source + ": train.device"), cpu_threads,
              local_rank) {}

Runtime::Runtime(const Placement& placement, int cpu_threads, int local_rank) : m_cpu(cpu_threads) {
  m_force_copies = placement.force_copies;
  check_device_flag(placement.env_from, placement.env);
  check_device_flag(placement.learner_from, placement.learner);
  const bool env_gpu = placement.env != "cpu", learner_gpu = placement.learner != "cpu";
  if (!env_gpu && !learner_gpu) return;
  const CudaProbe probe = probe_cuda();
  // Which side asked for auto, in the note: "device auto" when both did.
  const bool env_auto = placement.env == "auto", learner_auto = placement.learner == "auto";
  const std::string auto_name = env_auto && learner_auto ? "device auto"
                                : env_auto               ? "env device auto"
                                                         : "learner device auto";
  if (probe.device_count == 0) {
    for (const auto& [want, from] : {std::pair(placement.env, placement.env_from),
                                     std::pair(placement.learner, placement.learner_from)})
      if (want == "cuda") throw ConfigError(from + ": cuda requested but " + probe.reason);
    m_note = auto_name + ": using the CPU (" + probe.reason + ")";
    return;
  }
#if defined(RLTRAIN_WITH_CUDA)
  // One GPU per process of a job: the process's rank on its machine picks it.
  const int gpu = local_rank % probe.device_count;
  m_gpu = gpu;
  m_cuda = std::make_unique<Cuda>(Cuda{CudaExecutor(gpu)});
  m_env_device = env_gpu ? Device::kCuda : Device::kCpu;
  m_device = learner_gpu ? Device::kCuda : Device::kCpu;
  if (env_auto || learner_auto) m_note = auto_name + ": using CUDA (" + probe.reason + ")";
  if (gpu != 0) m_note += (m_note.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(gpu);
#else
  (void)local_rank;
#endif
}

Runtime::~Runtime() = default;

std::unique_ptr<VecEnv> Runtime::place(std::unique_ptr<VecEnv> env) const {
  if (!placed()) return env;
  const bool env_cpu = m_env_device == Device::kCpu, learner_cpu = m_device == Device::kCpu;
  if (env_cpu && learner_cpu) return std::make_unique<PlacedEnv<CpuExecutor, CpuExecutor>>(std::move(env), m_cpu, m_cpu);
#if defined(RLTRAIN_WITH_CUDA)
  const CudaExecutor& gpu = m_cuda->exec;
  if (env_cpu) return std::make_unique<PlacedEnv<CpuExecutor, CudaExecutor>>(std::move(env), m_cpu, gpu);
  if (learner_cpu) return std::make_unique<PlacedEnv<CudaExecutor, CpuExecutor>>(std::move(env), gpu, m_cpu);
  return std::make_unique<PlacedEnv<CudaExecutor, CudaExecutor>>(std::move(env), gpu, gpu);
#else
  throw std::logic_error("Runtime: a CUDA placement in a build without CUDA");
#endif
}

std::unique_ptr<VecEnv> Runtime::make_raw_env(const std::string& name, i64 num_envs) const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_env_device == Device::kCuda) return make_vec_env(name, num_envs, m_cuda->exec);
#endif
  return make_vec_env(name, num_envs, m_cpu);
}

std::unique_ptr<VecEnv> Runtime::make_env(const std::string& name, i64 num_envs) const {
  return place(make_raw_env(name, num_envs));
}

void apply_env_params(const Config& cfg, VecEnv& env) {
  for (const auto& [key, value] : cfg.env.params) {
    bool ok = false;
    try {
      ok = env.set_param(key, value);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(cfg.source + ": env." + key + ": expected " + e.what() + ", got " + std::to_string(value));
    }
    if (!ok) {
      std::string known;
      for (const auto& p : env.params()) known += (known.empty() ? "" : ", ") + p.name;
      throw ConfigError(cfg.source + ": env." + key + ": not a parameter of env '" + env.spec().name +
                        "' (known: " + known + ")");
    }
  }
}

// The policy section against the env's spaces: a tanh-squashed policy needs a bounded continuous box.
void check_policy_for_env(const Config& cfg, const EnvSpec& spec) {
  if (cfg.policy.squash == "tanh") {
    const std::string why = squash_refusal(spec);
    if (!why.empty())
      throw ConfigError(cfg.source + ": policy.squash: \"tanh\" needs bounded continuous actions; " + why);
  }
  const std::string why_log_std = log_std_bounds_refusal(spec, cfg.policy);
  if (!why_log_std.empty()) throw ConfigError(cfg.source + ": " + why_log_std);
  if (cfg.ppo.bounds_loss_coef > 0) {
    const std::string why = bounds_loss_refusal(spec, cfg.policy.squash);
    if (!why.empty())
      throw ConfigError(cfg.source + ": ppo.bounds_loss_coef: needs a Gaussian policy with bounded continuous actions; " +
                        why);
  }
}

EnvCheck check_env_config(const Config& cfg) {
  EnvCheck c{std::make_unique<CpuExecutor>(1), nullptr};
  try {
    c.env = make_vec_env(cfg.env.name, 1, *c.exec);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(cfg.source + ": env.name: " + e.what());
  }
  apply_env_params(cfg, *c.env);
  check_policy_for_env(cfg, c.env->spec());
  return c;
}

std::unique_ptr<VecEnv> Runtime::make_env(const Config& cfg) const {
  std::unique_ptr<VecEnv> env;
  try {
    env = make_raw_env(cfg.env.name, cfg.env.num_envs);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(cfg.source + ": env.name: " + e.what());
  }
  apply_env_params(cfg, *env);  // before placing: the parameters may change the env's spaces
  check_policy_for_env(cfg, env->spec());
  return place(std::move(env));
}

GemmPrecision gemm_precision_of(const Config& cfg) {
  GemmPrecision p;
  if (!parse_gemm_precision(cfg.ppo.gemm_precision.c_str(), &p))  // validate() refuses it first
    throw ConfigError(cfg.source + ": ppo.gemm_precision: expected one of fp32, tf32, bf16, fp16, got \"" +
                      cfg.ppo.gemm_precision + "\"");
  return p;
}

// The learner's GEMMs run at ppo.gemm_precision: set on the executor (and so on its copies: the
// policies made after it share it).
std::unique_ptr<Learner> Runtime::make_learner(const Config& cfg, VecEnv& env) const {
  const GemmPrecision precision = gemm_precision_of(cfg);
#if defined(RLTRAIN_WITH_CUDA)
  if (m_device == Device::kCuda) {
    m_cuda->exec.set_gemm_precision(precision);
    return make_cuda_learner(cfg, env, m_cuda->exec);
  }
#endif
  CpuExecutor exec = m_cpu;  // a copy: the setting is shared with m_cpu
  exec.set_gemm_precision(precision);
  return std::make_unique<Ppo<CpuExecutor>>(cfg, env, exec);
}

std::unique_ptr<Policy> Runtime::make_policy(const PolicySpec& spec, const ObsNormalization& norm,
                                             std::uint64_t sample_seed, i64 max_rows) const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_device == Device::kCuda) return make_cuda_policy(spec, norm, sample_seed, max_rows, m_cuda->exec);
#endif
  return make_cpu_policy(spec, norm, sample_seed, max_rows, m_cpu);
}

std::unique_ptr<PhysicsBatch> Runtime::make_physics_batch(const Model& model, i64 num_envs, int substeps,
                                                          std::uint64_t ctrl_seed) const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_env_device == Device::kCuda) return rlt::make_physics_batch(model, num_envs, substeps, ctrl_seed, m_cuda->exec);
#endif
  return rlt::make_physics_batch(model, num_envs, substeps, ctrl_seed, m_cpu);
}

// Copies through the learner's executor.
#if defined(RLTRAIN_WITH_CUDA)
#define RLT_ACTIVE_EXEC(call) (m_device == Device::kCuda ? m_cuda->exec.call : m_cpu.call)
#else
#define RLT_ACTIVE_EXEC(call) (m_cpu.call)
#endif
void Runtime::to_host(float* dst, const float* src, i64 n) const { RLT_ACTIVE_EXEC(copy_to_host(dst, src, n)); }
void Runtime::from_host(float* dst, const float* src, i64 n) const { RLT_ACTIVE_EXEC(copy_from_host(dst, src, n)); }
void Runtime::to_host(std::uint8_t* dst, const std::uint8_t* src, i64 n) const {
  RLT_ACTIVE_EXEC(copy_to_host(dst, src, n));
}
void Runtime::to_host(std::int32_t* dst, const std::int32_t* src, i64 n) const {
  RLT_ACTIVE_EXEC(copy_to_host(dst, src, n));
}
void Runtime::synchronize() const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_cuda) m_cuda->exec.synchronize();
#endif
}
#undef RLT_ACTIVE_EXEC

std::int64_t Runtime::device_threads() const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_cuda) return m_cuda->exec.max_threads();
#endif
  return -1;
}

std::int64_t Runtime::num_transfers() const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_cuda) return m_cuda->exec.transfers().copies();
#endif
  return 0;
}

}  // namespace rlt
