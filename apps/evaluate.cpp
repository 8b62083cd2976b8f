#include "apps/evaluate.h"

#include <cmath>
#include <filesystem>

#include "apps/memory_budget.h"
#include "apps/runtime.h"
#include "rl/checkpoint.h"
#include "rl/distributed.h"

namespace rlt {

std::string resolve_checkpoint_path(const std::string& path) {
  namespace fs = std::filesystem;
  // The error_code overloads: a path the machine cannot look at (permissions, a loop of links, a
  // name too long) is a CheckpointError naming it, not a filesystem_error.
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw CheckpointError(path + ": cannot look at it (" + ec.message() + ")");
  if (fs::is_directory(st)) {
    const fs::path latest = fs::path(path) / "checkpoints" / "latest.safetensors";
    if (fs::exists(latest, ec)) return latest.string();
    throw CheckpointError(path + ": a directory without checkpoints/latest.safetensors");
  }
  if (!fs::exists(st)) throw CheckpointError(path + ": no such checkpoint file");
  return path;
}

std::unique_ptr<Policy> make_checkpoint_policy(const Runtime& rt, const Config& cfg, const Checkpoint& ckpt,
                                               const EnvSpec& env_spec, i64 max_rows) {
  auto policy = rt.make_policy(policy_spec_for(env_spec, cfg.policy), obs_normalization(cfg),
                               policy_sample_seed(cfg.train.seed), max_rows);
  restore_policy(ckpt, *policy);
  return policy;
}

std::unique_ptr<Policy> make_checkpoint_policy(const Runtime& rt, const Config& cfg, const Checkpoint& ckpt,
                                               const VecEnv& env) {
  return make_checkpoint_policy(rt, cfg, ckpt, env.spec(), env.num_envs());
}

EvalResult evaluate(const EvalOptions& opts) {
  if (opts.episodes < 1)
    throw ConfigError("--episodes: expected a positive integer, got " + std::to_string(opts.episodes));
  const std::string path = resolve_checkpoint_path(opts.checkpoint);
  const Checkpoint ckpt = read_checkpoint(path);
  Config cfg = ckpt.config;
  if (opts.other_env && opts.config_path.empty())
    throw ConfigError("--other-env: needs --config (the env to evaluate on)");
  if (!opts.config_path.empty()) {
    const Config other = load_config(opts.config_path);
    if (!opts.other_env) check_checkpoint_env(ckpt, path, other.env.name, opts.config_path);
    cfg.env = other.env;
    // The policy (its shape, activation, squash) is the checkpoint's: a [policy] section in the
    // other file cannot change how the trained weights act.
    cfg.source = other.source;
  }
  cfg.env.num_envs = opts.episodes;  // one env per episode
  Runtime rt(flag_placement(opts.device, opts.env_device, opts.learner_device), opts.threads);
  if (memory_check_enabled(cfg)) {
    // One env per episode, a policy over all of them, and the flags and totals read back per env.
    const EnvProbe probe = probe_env(cfg, rt.device_threads());
    const i64 host_per_env = 3 * sizeof(std::uint8_t) + 6 * sizeof(float) + (2 + kTrackingFloats) * sizeof(float);
    check_memory(
        "--episodes", "--episodes", opts.episodes,
        [&](std::int64_t n) {
          MemoryNeed m = act_memory(cfg, probe.memory, probe.spec, n, rt.env_device(), rt.device(), rt.placed());
          m.parts.push_back({"results", n * host_per_env, true});
          return m;
        },
        free_memory(rt, world()), uses_cuda(rt));
  }
  auto env = rt.make_env(cfg);
  auto policy = make_checkpoint_policy(rt, cfg, ckpt, *env);
  env->reset(opts.seed);

  const i64 n = env->num_envs();
  EvalResult r;
  r.env = cfg.env.name;
  r.device = device_name(rt.device());
  r.env_device = device_name(rt.env_device());
  r.returns.assign(static_cast<size_t>(n), 0.0f);
  r.lengths.assign(static_cast<size_t>(n), 0);
  std::vector<std::uint8_t> finished(static_cast<size_t>(n), 0), term(static_cast<size_t>(n)),
      trunc(static_cast<size_t>(n));
  std::vector<float> ret(static_cast<size_t>(n));
  std::vector<std::int32_t> len(static_cast<size_t>(n));
  const bool has_speed = env->ep_forward_speed() != nullptr;
  std::vector<float> speed(has_speed ? static_cast<size_t>(n) : 0);
  if (has_speed) r.forward_speeds.assign(static_cast<size_t>(n), 0.0f);
  r.has_tracking = env->tracking() != nullptr;
  std::vector<float> track(r.has_tracking ? static_cast<size_t>(kTrackingFloats * n) : 0);
  double lin2 = 0, yaw2 = 0, settled_lin2 = 0, settled_yaw2 = 0;
  // per env: the command of its last step and how many steps it has held (settled tracking)
  std::vector<float> last_cmd(r.has_tracking ? static_cast<size_t>(3 * n) : 0);
  std::vector<std::int64_t> held(r.has_tracking ? static_cast<size_t>(n) : 0, 0);
  i64 remaining = n;
  const std::int64_t max_steps = static_cast<std::int64_t>(env->spec().max_episode_steps) + 1;
  for (std::int64_t t = 0; remaining > 0 && t < max_steps; ++t) {
    env->step(policy->act(env->obs(), n, opts.deterministic, static_cast<std::uint32_t>(t)));
    rt.to_host(term.data(), env->terminated(), n);
    rt.to_host(trunc.data(), env->truncated(), n);
    rt.to_host(ret.data(), env->ep_return(), n);
    rt.to_host(len.data(), env->ep_length(), n);
    if (has_speed) rt.to_host(speed.data(), env->ep_forward_speed(), n);
    if (r.has_tracking) rt.to_host(track.data(), env->tracking(), kTrackingFloats * n);
    for (i64 i = 0; i < n; ++i)
      if (r.has_tracking && !finished[i]) {  // this step belongs to episode i (also when it ended it)
        const float* x = track.data() + kTrackingFloats * i;
        const double e_lin = double(x[0] - x[3]) * (x[0] - x[3]) + double(x[1] - x[4]) * (x[1] - x[4]);
        const double e_yaw = double(x[2] - x[5]) * (x[2] - x[5]);
        lin2 += e_lin, yaw2 += e_yaw;
        ++r.tracking_steps;
        float* c = last_cmd.data() + 3 * i;
        const bool same = t > 0 && c[0] == x[0] && c[1] == x[1] && c[2] == x[2];
        held[i] = same ? held[i] + 1 : 0;
        c[0] = x[0], c[1] = x[1], c[2] = x[2];
        if (held[i] >= opts.settle_steps) settled_lin2 += e_lin, settled_yaw2 += e_yaw, ++r.settled_steps;
      }
    for (i64 i = 0; i < n; ++i)
      if (!finished[i] && (term[i] || trunc[i])) {
        r.falls += term[i] ? 1 : 0;
        finished[i] = 1;
        r.returns[i] = ret[i];
        r.lengths[i] = len[i];
        if (has_speed) r.forward_speeds[i] = speed[i];
        --remaining;
      }
  }
  double s = 0, s2 = 0, sl = 0, sv = 0;
  for (i64 i = 0; i < n; ++i) {
    if (has_speed) sv += r.forward_speeds[i];
    s += r.returns[i];
    s2 += static_cast<double>(r.returns[i]) * r.returns[i];
    sl += r.lengths[i];
  }
  r.mean_return = s / static_cast<double>(n);
  r.std_return = std::sqrt(std::max(0.0, s2 / static_cast<double>(n) - r.mean_return * r.mean_return));
  r.mean_length = sl / static_cast<double>(n);
  r.mean_forward_speed = sv / static_cast<double>(n);
  if (r.tracking_steps > 0) {
    r.tracking_lin_rms = std::sqrt(lin2 / static_cast<double>(r.tracking_steps));
    r.tracking_yaw_rms = std::sqrt(yaw2 / static_cast<double>(r.tracking_steps));
  }
  if (r.settled_steps > 0) {
    r.settled_lin_rms = std::sqrt(settled_lin2 / static_cast<double>(r.settled_steps));
    r.settled_yaw_rms = std::sqrt(settled_yaw2 / static_cast<double>(r.settled_steps));
  }
  return r;
}

}  // namespace rlt
