#include "rl/evaluate.h"

#include <cmath>
#include <filesystem>

#include "rl/checkpoint.h"
#include "rl/runtime.h"

namespace rlt {

std::string resolve_checkpoint_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) {
    const fs::path latest = fs::path(path) / "checkpoints" / "latest.safetensors";
    if (fs::exists(latest)) return latest.string();
    throw CheckpointError(path + ": a directory without checkpoints/latest.safetensors");
  }
  if (!fs::exists(path)) throw CheckpointError(path + ": no such checkpoint file");
  return path;
}

EvalResult evaluate(const EvalOptions& opts) {
  if (opts.episodes < 1) throw ConfigError("--episodes: expected a positive integer, got " + std::to_string(opts.episodes));
  const std::string path = resolve_checkpoint_path(opts.checkpoint);
  const Checkpoint ckpt = read_checkpoint(path);
  Config cfg = ckpt.config;
  if (!opts.config_path.empty()) {
    const Config other = load_config(opts.config_path);
    if (other.env.name != cfg.env.name)
      throw CheckpointError(path + ": metadata \"env\": checkpoint is for env '" + cfg.env.name + "', but " +
                            opts.config_path + " asks for env '" + other.env.name + "'");
    cfg.env = other.env;
    cfg.policy = other.policy;  // a different policy shape is caught as a checkpoint mismatch
    cfg.source = other.source;
  }
  // One env per episode; the learner only acts, so its rollout storage is one step.
  cfg.env.num_envs = opts.episodes;
  cfg.ppo.num_steps = 1;
  cfg.ppo.num_minibatches = 1;
  Runtime rt(opts.device, opts.threads);
  auto env = rt.make_env(cfg);
  auto learner = rt.make_learner(cfg, *env);
  restore_checkpoint(ckpt, *learner, /*policy_only=*/true, nullptr, nullptr);
  env->reset(opts.seed);

  const i64 n = env->num_envs();
  EvalResult r;
  r.env = cfg.env.name;
  r.device = device_name(rt.device());
  r.returns.assign(static_cast<size_t>(n), 0.0f);
  r.lengths.assign(static_cast<size_t>(n), 0);
  std::vector<std::uint8_t> finished(static_cast<size_t>(n), 0), term(static_cast<size_t>(n)), trunc(static_cast<size_t>(n));
  std::vector<float> ret(static_cast<size_t>(n));
  std::vector<std::int32_t> len(static_cast<size_t>(n));
  i64 remaining = n;
  const std::int64_t max_steps = static_cast<std::int64_t>(env->spec().max_episode_steps) + 1;
  for (std::int64_t t = 0; remaining > 0 && t < max_steps; ++t) {
    env->step(learner->act(opts.deterministic, static_cast<std::uint32_t>(t)));
    rt.to_host(term.data(), env->terminated(), n);
    rt.to_host(trunc.data(), env->truncated(), n);
    rt.to_host(ret.data(), env->ep_return(), n);
    rt.to_host(len.data(), env->ep_length(), n);
    for (i64 i = 0; i < n; ++i)
      if (!finished[i] && (term[i] || trunc[i])) {
        finished[i] = 1;
        r.returns[i] = ret[i];
        r.lengths[i] = len[i];
        --remaining;
      }
  }
  double s = 0, s2 = 0, sl = 0;
  for (i64 i = 0; i < n; ++i) {
    s += r.returns[i];
    s2 += static_cast<double>(r.returns[i]) * r.returns[i];
    sl += r.lengths[i];
  }
  r.mean_return = s / static_cast<double>(n);
  r.std_return = std::sqrt(std::max(0.0, s2 / static_cast<double>(n) - r.mean_return * r.mean_return));
  r.mean_length = sl / static_cast<double>(n);
  return r;
}

}  // namespace rlt
