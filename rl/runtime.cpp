#include "rl/runtime.h"

#include "envs/registry.h"
#include "kernels/device.h"

namespace rlt {


struct Runtime::Cuda {};

Runtime::Runtime(const std::string& want, int cpu_threads, const std::string& config_source) : m_cpu(cpu_threads) {
  const std::string where = config_source.empty() ? "--device" : config_source + ": train.device";
  if (want == "cpu") {
    m_device = Device::kCpu;
    return;
  }
  if (want != "auto" && want != "cuda")
    throw ConfigError(where + ": expected auto, cpu or cuda, got \"" + want + "\"");
  const CudaProbe probe = probe_cuda();
  if (probe.device_count == 0) {
    if (want == "cuda") throw ConfigError(where + ": cuda requested but " + probe.reason);
    m_note = "device auto: using the CPU (" + probe.reason + ")";
    m_device = Device::kCpu;
    return;
  }
  // A GPU answers. The CUDA learner lands with the GPU issue; until then say so plainly.
  const std::string why = "a GPU answers (" + probe.reason + ") but CUDA training is not built into this rltrain yet";
  if (want == "cuda") throw ConfigError(where + ": " + why);
  m_note = "device auto: using the CPU (" + why + ")";
  m_device = Device::kCpu;
}

Runtime::~Runtime() = default;

std::unique_ptr<VecEnv> Runtime::make_env(const std::string& name, i64 num_envs) const {
  return make_cpu_vec_env(name, num_envs, m_cpu);
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

std::unique_ptr<Learner> Runtime::make_learner(const Config& cfg, VecEnv& env) const {
  return std::make_unique<Ppo<CpuExecutor>>(cfg, env, m_cpu);
}

void Runtime::to_host(float* dst, const float* src, i64 n) const { m_cpu.copy_to_host(dst, src, n); }
void Runtime::from_host(float* dst, const float* src, i64 n) const { m_cpu.copy_from_host(dst, src, n); }
void Runtime::to_host(std::uint8_t* dst, const std::uint8_t* src, i64 n) const { m_cpu.copy_to_host(dst, src, n); }
void Runtime::to_host(std::int32_t* dst, const std::int32_t* src, i64 n) const { m_cpu.copy_to_host(dst, src, n); }
std::int64_t Runtime::num_transfers() const { return 0; }

}  // namespace rlt
