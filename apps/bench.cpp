#include "apps/bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "rl/files.h"
#include "rl/runtime.h"

namespace rlt {
namespace {

using Clock = std::chrono::steady_clock;

Config bench_config(const BenchOptions& opts, const std::string& env_name) {
  const std::string path = (std::filesystem::path(opts.config_dir) / (env_name + ".toml")).string();
  Config cfg;
  if (std::filesystem::exists(path)) cfg = load_config(path);
  cfg.env.name = env_name;
  return cfg;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int run_bench(const BenchOptions& opts) {
  Runtime rt(opts.device, opts.threads);
  if (!rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
  const int threads = rt.cpu_threads();
  nlohmann::json out;
  out["device"] = device_name(rt.device());
  out["threads"] = threads;
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["results"] = nlohmann::json::array();
  const double cores = rt.device() == Device::kCpu ? std::max(1, std::min<int>(threads, static_cast<int>(std::thread::hardware_concurrency()))) : 1;

  std::printf("rltrain bench: device %s, %d threads\n", device_name(rt.device()), threads);
  std::printf("%-24s %10s %14s %14s %14s %14s %8s\n", "env", "num_envs", "env steps/s", "per core", "+policy/s",
              "PPO samples/s", "T(PPO)");
  for (const std::string& name : opts.envs) {
    for (const std::int64_t n : opts.num_envs) {
      Config cfg = bench_config(opts, name);
      cfg.env.num_envs = n;
      auto env = rt.make_env(cfg);
      env->reset(1);
      const std::int64_t steps = opts.steps > 0 ? opts.steps : std::clamp<std::int64_t>((1 << 24) / n, 20, 100000);
      // Random actions are drawn on the executor inside the timed loop (env.sample_actions).
      for (u32 w = 0; w < 3; ++w) env->step(env->sample_actions(7, w));
      rt.synchronize();
      auto t0 = Clock::now();
      for (std::int64_t t = 0; t < steps; ++t) env->step(env->sample_actions(7, static_cast<u32>(t + 3)));
      rt.synchronize();
      const double env_sps = static_cast<double>(n * steps) / seconds_since(t0);

      // Policy inference + step: the rollout's inner loop without storage.
      Config pcfg = cfg;
      pcfg.ppo.num_steps = 1;
      pcfg.ppo.num_minibatches = 1;
      auto learner = rt.make_learner(pcfg, *env);
      learner->start(1);
      const std::int64_t psteps = std::max<std::int64_t>(5, steps / 10);
      t0 = Clock::now();
      for (std::int64_t t = 0; t < psteps; ++t) env->step(learner->act(false, static_cast<u32>(t)));
      rt.synchronize();
      const double policy_sps = static_cast<double>(n * psteps) / seconds_since(t0);

      // Full PPO iterations (rollout + update).
      double ppo_sps = 0;
      int ppo_steps = 0;
      if (opts.ppo) {
        Config tcfg = cfg;
        ppo_steps = tcfg.ppo.num_steps;
        if (rt.device() == Device::kCpu)
          while (ppo_steps > 1 && n * ppo_steps > opts.ppo_max_batch) ppo_steps /= 2;
        tcfg.ppo.num_steps = ppo_steps;
        if ((n * ppo_steps) % tcfg.ppo.num_minibatches != 0) tcfg.ppo.num_minibatches = 1;
        auto tenv = rt.make_env(tcfg);
        tenv->reset(1);
        auto tl = rt.make_learner(tcfg, *tenv);
        tl->start(1);
        tl->iterate(1, 1000);  // warm-up: first touch of the buffers
        t0 = Clock::now();
        const int iters = 2;
        for (int it = 2; it < 2 + iters; ++it) tl->iterate(it, 1000);
        rt.synchronize();
        ppo_sps = static_cast<double>(tl->batch_size() * iters) / seconds_since(t0);
      }
      std::printf("%-24s %10lld %14.4g %14.4g %14.4g %14.4g %8d\n", name.c_str(), static_cast<long long>(n), env_sps,
                  env_sps / cores, policy_sps, ppo_sps, ppo_steps);
      std::fflush(stdout);
      out["results"].push_back({{"env", name},
                                {"num_envs", n},
                                {"steps_per_env", steps},
                                {"env_steps_per_second", env_sps},
                                {"env_steps_per_second_per_core", env_sps / cores},
                                {"policy_steps_per_second", policy_sps},
                                {"ppo_samples_per_second", ppo_sps},
                                {"ppo_num_steps", ppo_steps},
                                {"host_device_transfers", rt.num_transfers()}});
    }
  }
  if (!opts.json_path.empty()) write_text_atomic(opts.json_path, out.dump(2) + "\n");
  return 0;
}

}  // namespace rlt
