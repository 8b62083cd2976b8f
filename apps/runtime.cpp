#include "apps/runtime.h"

#include "envs/registry.h"
#include "kernels/device.h"
#if defined(RLTRAIN_WITH_CUDA)
#include "kernels/cuda_executor.h"
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

Runtime::Runtime(const std::string& want, int cpu_threads, const std::string& config_source, int local_rank)
    : m_cpu(cpu_threads) {
  const std::string where = config_source.empty() ? "--device" : config_source + ": train.device";
  if (want == "cpu") {
    m_device = Device::kCpu;
    return;
  }
  if (want != "auto" && want != "cuda") throw ConfigError(where + ": expected auto, cpu or cuda, got \"" + want + "\"");
  const CudaProbe probe = probe_cuda();
  if (probe.device_count == 0) {
    if (want == "cuda") throw ConfigError(where + ": cuda requested but " + probe.reason);
    m_note = "device auto: using the CPU (" + probe.reason + ")";
    m_device = Device::kCpu;
    return;
  }
#if defined(RLTRAIN_WITH_CUDA)
  // One GPU per process of a job: the process's rank on its machine picks it.
  const int gpu = local_rank % probe.device_count;
  m_gpu = gpu;
  m_cuda = std::make_unique<Cuda>(Cuda{CudaExecutor(gpu)});
  m_device = Device::kCuda;
  if (want == "auto") m_note = "device auto: using CUDA (" + probe.reason + ")";
  if (gpu != 0) m_note += (m_note.empty() ? "" : "; ") + std::string("GPU ") + std::to_string(gpu);
#else
  (void)local_rank;
#endif
}

Runtime::~Runtime() = default;

std::unique_ptr<VecEnv> Runtime::make_env(const std::string& name, i64 num_envs) const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_cuda) return make_vec_env(name, num_envs, m_cuda->exec);
#endif
  return make_vec_env(name, num_envs, m_cpu);
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

EnvCheck check_env_config(const Config& cfg) {
  EnvCheck c{std::make_unique<CpuExecutor>(1), nullptr};
  try {
    c.env = make_vec_env(cfg.env.name, 1, *c.exec);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(cfg.source + ": env.name: " + e.what());
  }
  apply_env_params(cfg, *c.env);
  return c;
}

std::unique_ptr<VecEnv> Runtime::make_env(const Config& cfg) const {
  std::unique_ptr<VecEnv> env;
  try {
    env = make_env(cfg.env.name, cfg.env.num_envs);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(cfg.source + ": env.name: " + e.what());
  }
  apply_env_params(cfg, *env);
  return env;
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
  if (m_cuda) {
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
  if (m_cuda) return make_cuda_policy(spec, norm, sample_seed, max_rows, m_cuda->exec);
#endif
  return make_cpu_policy(spec, norm, sample_seed, max_rows, m_cpu);
}

std::unique_ptr<PhysicsBatch> Runtime::make_physics_batch(const Model& model, i64 num_envs, int substeps,
                                                          std::uint64_t ctrl_seed) const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_cuda) return rlt::make_physics_batch(model, num_envs, substeps, ctrl_seed, m_cuda->exec);
#endif
  return rlt::make_physics_batch(model, num_envs, substeps, ctrl_seed, m_cpu);
}

// Copies through whichever executor is active.
#if defined(RLTRAIN_WITH_CUDA)
#define RLT_ACTIVE_EXEC(call) (m_cuda ? m_cuda->exec.call : m_cpu.call)
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
void Runtime::synchronize() const { RLT_ACTIVE_EXEC(synchronize()); }
#undef RLT_ACTIVE_EXEC

std::int64_t Runtime::num_transfers() const {
#if defined(RLTRAIN_WITH_CUDA)
  if (m_cuda) return m_cuda->exec.transfers().copies();
#endif
  return 0;
}

}  // namespace rlt
