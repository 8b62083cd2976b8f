#include "apps/view.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <thread>

#include "apps/evaluate.h"
#include "apps/memory_budget.h"
#include "apps/rollout.h"  // control_substeps
#include "apps/runtime.h"
#include "rl/checkpoint.h"
#include "rl/distributed.h"
#include "sim/mjcf.h"

namespace rlt {
namespace {

namespace fs = std::filesystem;

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// An EnvSim of cfg on rt's device; with a policy of cfg's shape when `with_policy`, restored from
// ckpt when it is given.
std::unique_ptr<view::EnvSim> env_sim(std::shared_ptr<const Runtime> rt, const Config& cfg, bool with_policy,
                                      const Checkpoint* ckpt, std::uint64_t seed) {
  if (memory_check_enabled(cfg)) {
    Config shape = cfg;  // the policy's shape: the checkpoint's when there is one
    if (ckpt) shape.policy = ckpt->config.policy;
    const EnvProbe probe = probe_env(cfg, rt->device_threads());
    check_memory(
        "--num-envs", "--num-envs", cfg.env.num_envs,
        [&](std::int64_t n) { return act_memory(shape, probe.memory, probe.spec, n, rt->device() == Device::kCuda); },
        free_memory(*rt, world()),
        rt->device() == Device::kCuda);
  }
  auto env = rt->make_env(cfg);
  std::unique_ptr<Policy> policy;
  if (ckpt) {
    // The checkpoint's policy shape and normalization.
    Config c = cfg;
    c.policy = ckpt->config.policy;
    c.ppo = ckpt->config.ppo;
    policy = make_checkpoint_policy(*rt, c, *ckpt, *env);
  } else if (with_policy) {
    policy = rt->make_policy(policy_spec_for(env->spec(), cfg.policy), obs_normalization(cfg),
                             policy_sample_seed(cfg.train.seed), env->num_envs());
  }
  return std::make_unique<view::EnvSim>(std::move(env), std::move(rt), std::move(policy), ckpt != nullptr, seed);
}

}  // namespace

std::unique_ptr<view::EnvSim> make_env_sim(const Config& cfg, const std::string& device, int threads,
                                           std::uint64_t seed) {
  return env_sim(std::make_shared<Runtime>(device, threads), cfg, false, nullptr, seed);
}

std::unique_ptr<view::ViewSim> make_view_sim(const ViewOptions& opts) {
  if (!opts.model_path.empty()) {
    if (!opts.checkpoint.empty())
      throw ConfigError("--model: plays zero, random or hand-set controls; --checkpoint needs --config");
    if (!opts.overrides.empty()) throw ConfigError("--set: --model has no config to override (use --config)");
    const i64 n = opts.num_envs > 0 ? opts.num_envs : 64;
    if (n < 1) throw ConfigError("--num-envs: expected a positive integer, got " + std::to_string(n));
    const Model model = load_mjcf(opts.model_path);
    const int substeps = control_substeps(opts.control_dt, model.timestep);
    const Runtime rt(opts.device, opts.threads);
    if (!rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
    if (memory_check_enabled()) {
      EnvMemory mem = physics_batch_memory(model);
      mem.device_slots = rt.device_threads();
      const bool on_cuda = rt.device() == Device::kCuda;
      check_memory(
          "--num-envs", "--num-envs", n, [&](std::int64_t k) { return MemoryNeed{{{"physics", mem.bytes(k, on_cuda)}}}; },
          free_memory(rt, world()), rt.device() == Device::kCuda);
    }
    return std::make_unique<view::ModelSim>(rt.make_physics_batch(model, n, substeps, opts.seed), opts.model_path);
  }
  Config cfg;
  std::string ckpt_path;
  std::unique_ptr<Checkpoint> ckpt;
  if (!opts.checkpoint.empty()) {
    ckpt_path = resolve_checkpoint_path(opts.checkpoint);
    ckpt = std::make_unique<Checkpoint>(read_checkpoint(ckpt_path));
  }
  if (!opts.config_path.empty()) {
    cfg = load_config(opts.config_path);
    for (const auto& o : opts.overrides) apply_override(cfg, o);
    if (ckpt) check_checkpoint_env(*ckpt, ckpt_path, cfg.env.name, opts.config_path);
  } else if (ckpt) {
    cfg = ckpt->config;
    for (const auto& o : opts.overrides) apply_override(cfg, o);
    if (cfg.env.name != ckpt->config.env.name)
      throw ConfigError("--set env.name: the checkpoint " + ckpt_path + " is for env '" + ckpt->config.env.name + "'");
  } else {
    throw ConfigError("rltrain view: --config FILE, --checkpoint PATH or --model FILE is required");
  }
  cfg.env.num_envs =
      opts.num_envs > 0 ? opts.num_envs : std::min<std::int64_t>(64, std::max<std::int64_t>(1, cfg.env.num_envs));
  return env_sim(std::make_shared<Runtime>(opts.device, opts.threads), cfg, false, ckpt.get(), opts.seed);
}

int run_view(const ViewOptions& opts) {
  check_view_options(opts);
  return run_viewer(make_view_sim(opts), opts);
}

int run_train_with_view(TrainOptions train, ViewOptions view, std::int64_t view_every) {
  // Bad input first, on this thread, before the trainer or a window starts.
  Config cfg;
  if (!train.resume_dir.empty()) {
    cfg = load_config((fs::path(train.resume_dir) / "config.toml").string());
    train.run_dir = train.resume_dir;
  } else {
    cfg = load_config(train.config_path);
    for (const auto& o : train.overrides) apply_override(cfg, o);
    if (train.run_dir.empty())
      train.run_dir =
          "runs/" + cfg.env.name + "-s" + std::to_string(train.seed ? *train.seed : cfg.train.seed) + "-" + timestamp();
    if (cfg.train.checkpoint_every == 0) {
      if (view_every < 1) throw ConfigError("--view-every: expected a positive number of iterations");
      train.overrides.push_back("train.checkpoint_every=" + std::to_string(view_every));
      cfg.train.checkpoint_every = static_cast<int>(view_every);
    }
  }
  view.watch_run_dir = train.run_dir;
  check_view_options(view);
  // What would only fail once training ran to its end (no display), or let the viewer play another
  // run's checkpoint (an occupied run dir), is refused before the trainer starts.
  require_view_display();
  check_run_dir_free(train);
  // The viewer's own small batch, on the CPU with one thread: the learner keeps its device and cores.
  cfg.env.num_envs = view.num_envs > 0 ? view.num_envs : 16;
  auto sim = env_sim(std::make_shared<Runtime>("cpu", 1), cfg, true, nullptr, view.seed);
  ViewWatch watch;
  watch.status =
      "waiting for the first checkpoint (every " + std::to_string(cfg.train.checkpoint_every) + " iterations)";

  std::exception_ptr failure;
  std::atomic<bool> done{false};
  watch.training_done = &done;
  TrainResult result;
  std::thread trainer([&] {
    try {
      result = rlt::train(train);
    } catch (...) {
      failure = std::current_exception();
    }
    done = true;
  });
  int code = 0;
  try {
    code = run_viewer(std::move(sim), view, watch);
  } catch (...) {
    if (!done) std::fprintf(stderr, "rltrain train --view: the viewer stopped; training continues to its end\n");
    trainer.join();
    throw;
  }
  if (!done) std::fprintf(stderr, "rltrain train --view: viewer closed; training continues to its end\n");
  trainer.join();
  if (failure) std::rethrow_exception(failure);
  print_train_result(result);
  return result.diverged ? kExitDiverged : result.stop_signal ? kExitInterrupted : code;
}

}  // namespace rlt
