#include "apps/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "apps/memory_budget.h"
#include "apps/rollout.h"
#include "apps/runtime.h"
#include "envs/physics_batch.h"
#include "rl/checkpoint.h"  // obs_normalization
#include "rl/config.h"
#include "rl/distributed.h"
#include "rl/files.h"
#include "sim/constraints.h"  // kEfcStride
#include "sim/dynamics.h"
#include "sim/mjcf.h"

namespace rlt {
namespace {

using Clock = std::chrono::steady_clock;

Config bench_config(const BenchOptions& opts, const std::string& env_name) {
  const std::string path = (std::filesystem::path(opts.config_dir) / (env_name + ".toml")).string();
  Config cfg;
  if (std::filesystem::exists(path)) cfg = load_config(path);
  cfg.env.name = env_name;
  if (!opts.gemm_precision.empty()) apply_override(cfg, "ppo.gemm_precision=" + opts.gemm_precision);
  return cfg;
}

// The PPO rows' GEMM precision in one word: the one every env's config has, else "mixed".
std::string bench_gemm_precision(const BenchOptions& opts) {
  std::string word;
  for (const std::string& name : opts.envs) {
    const std::string p = bench_config(opts, name).ppo.gemm_precision;
    if (!word.empty() && p != word) return "mixed";
    word = p;
  }
  return word;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The PPO row's config for n envs: on the CPU num_steps halved until the batch is within
// opts.ppo_max_batch; one minibatch when the batch does not divide.
Config ppo_bench_config(const BenchOptions& opts, Config cfg, std::int64_t n, bool cpu) {
  cfg.env.num_envs = n;
  if (cpu)
    while (cfg.ppo.num_steps > 1 && n * cfg.ppo.num_steps > opts.ppo_max_batch) cfg.ppo.num_steps /= 2;
  if ((n * cfg.ppo.num_steps) % cfg.ppo.num_minibatches != 0) cfg.ppo.num_minibatches = 1;
  return cfg;
}

// Every row's memory before the first is measured: a row holds a batch of envs and a policy over
// them, then (with opts.ppo) a second batch with a learner. ppo_only: the --mpi rows (a batch and
// a learner). ConfigError (exit 2) naming the env and --num-envs when one does not fit.
void check_bench_memory(const BenchOptions& opts, const Runtime& rt, bool ppo_only) {
  const FreeMemory free = free_memory(rt, world());
  const bool cpu = rt.device() == Device::kCpu;
  const Device env_dev = rt.env_device(), learner_dev = rt.device();
  for (const std::string& name : opts.envs) {
    const Config cfg = bench_config(opts, name);
    if (!memory_check_enabled(cfg)) continue;
    const EnvProbe probe = probe_env(cfg, rt.device_threads());
    const auto need = [&](std::int64_t n) {
      MemoryNeed m;
      if (!ppo_only) m = act_memory(cfg, probe.memory, probe.spec, n, env_dev, learner_dev, rt.placed());
      if (opts.ppo || ppo_only) {
        const MemoryNeed t = train_memory(ppo_bench_config(opts, cfg, n, cpu && !ppo_only), probe.memory, probe.spec,
                                          n, env_dev, learner_dev, rt.placed());
        for (const MemoryPart& p : t.parts) {
          if (p.name == "checkpoint copies") continue;  // bench writes none
          // a second batch of envs (and its placement) beside the first
          auto same = std::find_if(m.parts.begin(), m.parts.end(), [&](const MemoryPart& q) { return q.name == p.name; });
          if (same != m.parts.end()) same->bytes += p.bytes;
          else m.parts.push_back(p);
        }
      }
      return m;
    };
    for (const std::int64_t n : opts.num_envs)
      check_memory("bench --env " + name + ": --num-envs", "--num-envs", n, need, free, uses_cuda(rt));
  }
}

// One line per PPO row: each phase's CPU time per iteration and its share of their sum; the
// phases as JSON (seconds per iteration by name) into js.
void print_phases(const PpoPhaseTimes& t, nlohmann::json& js) {
  double total = 0;
  for (double s : t.cpu_seconds) total += s;
  js = nlohmann::json::object();
  std::printf("  PPO iteration, CPU time %.4g s:", total);
  for (int p = 0; p < kNumPpoPhases; ++p) {
    js[ppo_phase_name(p)] = t.cpu_seconds[p];
    std::printf("%s %s %.3g s (%.0f%%)", p == 0 ? "" : ",", ppo_phase_name(p), t.cpu_seconds[p],
                total > 0 ? 100.0 * t.cpu_seconds[p] / total : 0.0);
  }
  std::printf("\n");
}

}  // namespace

// The runtime of bench's options: --device, --env-device, --learner-device, --placement-copies.
static Placement bench_placement(const BenchOptions& opts) {
  Placement p = flag_placement(opts.device, opts.env_device, opts.learner_device);
  p.force_copies = opts.placement_copies;
  return p;
}

int run_bench(const BenchOptions& opts) {
  Runtime rt(bench_placement(opts), opts.threads);
  if (!rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
  const int threads = rt.cpu_threads();
  nlohmann::json out;
  out["device"] = device_name(rt.device());
  out["env_device"] = device_name(rt.env_device());
  out["placement_copies"] = rt.placed();
  out["threads"] = threads;
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["results"] = nlohmann::json::array();
  const double cores = rt.device() == Device::kCpu && rt.env_device() == Device::kCpu
                           ? std::max(1, std::min<int>(threads, static_cast<int>(std::thread::hardware_concurrency())))
                           : 1;

  check_bench_memory(opts, rt, false);
  if (rt.placed())
    std::printf("rltrain bench: envs on %s, learner on %s, through the placement copies, %d threads, gemm %s\n",
                device_name(rt.env_device()), device_name(rt.device()), threads, bench_gemm_precision(opts).c_str());
  else
    std::printf("rltrain bench: device %s, %d threads, gemm %s\n", device_name(rt.device()), threads,
                bench_gemm_precision(opts).c_str());
  std::printf("%-24s %10s %14s %14s %14s %14s %8s %10s %10s\n", "env", "num_envs", "env steps/s", "per core",
              "+policy/s", "PPO samples/s", "T(PPO)", "xfers/it", "bytes/env");
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
      const std::clock_t cpu0 = std::clock();  // the process's CPU time, all its threads
      for (std::int64_t t = 0; t < steps; ++t) env->step(env->sample_actions(7, static_cast<u32>(t + 3)));
      rt.synchronize();
      const double env_sps = static_cast<double>(n * steps) / seconds_since(t0);
      // Per second of CPU time: with --threads 1 the figure a shared machine's other load distorts
      // least (tools/bench_python.py compares it with Python's).
      const double env_sps_cpu = static_cast<double>(n * steps) * CLOCKS_PER_SEC /
                                 static_cast<double>(std::max<std::clock_t>(1, std::clock() - cpu0));

      // Policy inference + step: the rollout's inner loop without storage (the Policy that eval and
      // the viewer act through; untrained weights act as well as trained ones for timing).
      auto policy =
          rt.make_policy(policy_spec_for(env->spec(), cfg.policy), obs_normalization(cfg), policy_sample_seed(1), n);
      const std::int64_t psteps = std::max<std::int64_t>(5, steps / 10);
      t0 = Clock::now();
      for (std::int64_t t = 0; t < psteps; ++t) env->step(policy->act(env->obs(), n, false, static_cast<u32>(t)));
      rt.synchronize();
      const double policy_sps = static_cast<double>(n * psteps) / seconds_since(t0);

      // Full PPO iterations (rollout + update).
      double ppo_sps = 0;
      int ppo_steps = 0;
      // Host<->device copies per PPO iteration, from the executor's transfer counter (0 on the
      // CPU); the design moves one block of statistics per iteration.
      double transfers_per_iteration = 0;
      PpoPhaseTimes phases;
      bool timed_phases = false;
      if (opts.ppo) {
        const Config tcfg = ppo_bench_config(opts, cfg, n, rt.device() == Device::kCpu);
        ppo_steps = tcfg.ppo.num_steps;
        auto tenv = rt.make_env(tcfg);
        tenv->reset(1);
        auto tl = rt.make_learner(tcfg, *tenv);
        tl->start(1);
        tl->iterate(1, 1000);  // warm-up: first touch of the buffers
        if (opts.phases) timed_phases = tl->time_phases(&phases);
        t0 = Clock::now();
        const std::int64_t transfers_before = rt.num_transfers();
        const int iters = 2;
        // As the trainer runs them (train.stats_readback "auto"): on CUDA iteration it + 1 is queued
        // before it's statistics are collected; on the CPU each is collected at once.
        for (int it = 2; it < 2 + iters; ++it) {
          tl->launch(it, 1000);
          if (it > 2 || tl->stats_lag() == 0) tl->collect();
        }
        if (tl->stats_lag() > 0) tl->collect();
        rt.synchronize();
        ppo_sps = static_cast<double>(tl->batch_size() * iters) / seconds_since(t0);
        transfers_per_iteration = static_cast<double>(rt.num_transfers() - transfers_before) / iters;
        tl->time_phases(nullptr);
        for (double& s : phases.cpu_seconds) s /= iters;
      }
      char xfers[32] = "-";
      if (opts.ppo) std::snprintf(xfers, sizeof xfers, "%.3g", transfers_per_iteration);
      // Executor memory per env: the env's rows and outputs, and on a device its share of the
      // constraint workspace at this num_envs (VecEnv::memory, as the memory check counts it).
      const std::int64_t bytes_per_env = env->memory().per_env_at(n, rt.env_device() == Device::kCuda);
      std::printf("%-24s %10lld %14.4g %14.4g %14.4g %14.4g %8d %10s %10lld\n", name.c_str(), static_cast<long long>(n),
                  env_sps, env_sps / cores, policy_sps, ppo_sps, ppo_steps, xfers, static_cast<long long>(bytes_per_env));
      nlohmann::json phase_json = nullptr;
      if (opts.phases && !timed_phases)
        std::printf("  phases: not timed (the learner is on %s; --phases times a CPU learner)\n",
                    device_name(rt.device()));
      if (timed_phases) print_phases(phases, phase_json);
      std::fflush(stdout);
      out["results"].push_back({{"env", name},
                                {"num_envs", n},
                                {"steps_per_env", steps},
                                {"bytes_per_env", bytes_per_env},
                                {"env_steps_per_second", env_sps},
                                {"env_steps_per_second_per_core", env_sps / cores},
                                {"env_steps_per_cpu_second", env_sps_cpu},
                                {"policy_steps_per_second", policy_sps},
                                {"ppo_samples_per_second", ppo_sps},
                                {"ppo_num_steps", ppo_steps},
                                {"gemm_precision", cfg.ppo.gemm_precision},
                                {"host_device_transfers", rt.num_transfers()},
                                {"transfers_per_ppo_iteration",
                                 opts.ppo ? nlohmann::json(transfers_per_iteration) : nlohmann::json(nullptr)},
                                {"ppo_phase_cpu_seconds_per_iteration", phase_json}});
    }
  }
  if (!opts.json_path.empty()) write_text_atomic(opts.json_path, out.dump(2) + "\n");
  return 0;
}

}  // namespace rlt

// ---- --model: physics throughput of an MJCF model ----------------------------------------------

namespace rlt {
int run_model_bench(const BenchOptions& opts) {
  // Bad input first, before the runtime says anything.
  const Model model = load_mjcf(opts.model_path);
  const int substeps = control_substeps(opts.control_dt, model.timestep);
  // --device cuda without a GPU (or without CUDA in this build): Runtime throws ConfigError (one
  // line, exit 2); auto falls back to the CPU and says why.
  Runtime rt(bench_placement(opts), opts.threads);
  if (!rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
  const bool on_cuda = rt.env_device() == Device::kCuda;  // the batch steps on the envs' device
  if (opts.lanes) {  // (refused before any timing: one line naming the file and why)
    if (on_cuda)
      throw ConfigError("--lanes: the physics in SIMD lanes is the CPU executor's (this bench runs on cuda)");
    std::string why;
    if (!make_physics_lanes(HostModel<float>(model).view(), &why))
      throw ConfigError("--lanes: " + opts.model_path + ": not in lanes yet: " + why);
  }
  if (memory_check_enabled()) {
    // The batch, and the copy of its rows and contact counts read back after the timing (host).
    EnvMemory mem = physics_batch_memory(model);
    mem.device_slots = rt.device_threads();
    const i64 row_bytes = static_cast<i64>(sizeof(float)) * data_layout(HostModel<float>(model).view()).row;
    const FreeMemory free = free_memory(rt, world());
    for (const std::int64_t n : opts.num_envs)
      check_memory(
          "bench --model " + opts.model_path + ": --num-envs", "--num-envs", n,
          [&](std::int64_t k) {
            return MemoryNeed{{{"physics", mem.bytes(k, on_cuda)}, {"read back", k * (row_bytes + 4), true}}};
          },
          free, on_cuda);
  }
  const int threads = rt.cpu_threads();
  const double cores = std::max(1, std::min<int>(threads, static_cast<int>(std::thread::hardware_concurrency())));

  nlohmann::json out;
  out["device"] = device_name(rt.env_device());
  out["threads"] = threads;
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["model"] = opts.model_path;
  out["timestep"] = model.timestep;
  out["control_dt"] = opts.control_dt;
  out["substeps"] = substeps;
  out["scalar"] = "float";
  out["lanes"] = opts.lanes;
  out["results"] = nlohmann::json::array();
  if (on_cuda) {
    std::printf(
        "rltrain bench --model %s: cuda (one env at a time per thread, at most %lld threads), float, timestep %g s, "
        "%d substeps per %g s control step\n",
        opts.model_path.c_str(), static_cast<long long>(rt.device_threads()), model.timestep, substeps,
        opts.control_dt);
  } else {
    std::printf(
        "rltrain bench --model %s: cpu, %d threads, float, timestep %g s, %d substeps per %g s control step%s\n",
        opts.model_path.c_str(), threads, model.timestep, substeps, opts.control_dt,
        opts.lanes ? ", in SIMD lanes (rows and solve in slots)" : "");
  }
  // Memory per env (what the batch allocates, physics_batch_memory, as the memory check counts it):
  // its physics row (float; the contacts sized from the model's capacity, sim/model_view.h:
  // contact_capacity), its ctrl row and two counters; and apart from it the constraint rows'
  // workspace (constraint_capacity rows): one per thread on the CPU, one per resident thread of the
  // device on CUDA (min(num_envs, CudaExecutor::max_threads) slots: sim/dynamics.h, BatchRows).
  {
    const HostModel<float> host(model);
    const ModelView<float>& v = host.view();
    const DataLayout l = data_layout(v);
    const EnvMemory mem = physics_batch_memory(model);
    const std::int64_t row_bytes = static_cast<std::int64_t>(l.row) * 4, ctrl_bytes = 4LL * model.nu;
    const std::int64_t contact_bytes = 4LL * kContactStride * v.ncon_max;
    const std::int64_t ws_bytes = 4LL * l.workspace;
    char where[96];
    if (on_cuda)
      std::snprintf(where, sizeof where, "per resident thread, at most %lld of them",
                    static_cast<long long>(rt.device_threads()));
    else
      std::snprintf(where, sizeof where, "per thread, not per env");
    std::printf(
        "memory per env: %lld bytes (physics row %lld, of which contacts %lld for up to %d; ctrl %lld; counters "
        "%lld); constraint workspace %lld bytes for up to %d rows, %s\n",
        static_cast<long long>(mem.per_env), static_cast<long long>(row_bytes), static_cast<long long>(contact_bytes),
        v.ncon_max, static_cast<long long>(ctrl_bytes), static_cast<long long>(mem.per_env - row_bytes - ctrl_bytes),
        static_cast<long long>(ws_bytes), v.nefc_max, where);
    out["bytes_per_env"] = mem.per_env;
    out["workspace_bytes"] = ws_bytes;
    out["workspace_slots"] = on_cuda ? rt.device_threads() : static_cast<std::int64_t>(threads);
    out["ncon_max"] = v.ncon_max;
    out["nefc_max"] = v.nefc_max;
  }
  std::printf("%10s %14s %14s %14s %14s %10s %10s %10s\n", "num_envs", "control/s", "per core", "physics/s",
              "per core", "mean ncon", "solver it", "nonfinite");
  for (const std::int64_t n : opts.num_envs) {
    // The same batch on either executor: random controls drawn on it (seed 7), then the physics.
    auto batch = rt.make_physics_batch(model, n, substeps, 7);
    std::string why;
    if (opts.lanes && !batch->set_lanes(true, &why)) throw ConfigError("--lanes: " + opts.model_path + ": " + why);
    for (u32 w = 0; w < 2; ++w) batch->control_step(CtrlMode::kRandom, w);  // warm-up: first touch
    batch->synchronize();
    // Time-boxed unless --steps: at least 3 control steps and about a second.
    std::int64_t steps = 0;
    const auto t0 = Clock::now();
    double elapsed = 0;
    for (;;) {
      batch->control_step(CtrlMode::kRandom, static_cast<u32>(2 + steps));
      ++steps;
      // On CUDA the launches queue; wait before reading the clock for the stop decision.
      batch->synchronize();
      elapsed = seconds_since(t0);
      if (opts.steps > 0 ? steps >= opts.steps : (steps >= 3 && elapsed >= 1.0)) break;
    }
    const double control_sps = static_cast<double>(n * steps) / elapsed;
    std::vector<float> data;
    std::vector<int> ncon;
    batch->download(&data, &ncon);
    const DataLayout& layout = batch->layout();
    // One env keeps one core busy on the CPU; on CUDA "per core" is per device.
    const double cores_used = on_cuda ? 1.0 : std::min<double>(cores, static_cast<double>(n));
    const double physics_sps = control_sps * substeps;
    std::int64_t nonfinite = 0, contacts = 0;
    double sweeps = 0;  // the last substep's solver iterations (solver_niter: Newton's, or Gauss-Seidel's sweeps), summed over envs
    for (std::int64_t e = 0; e < n; ++e) {
      const DataView<float> d = BatchRows<float>{layout, data.data(), {}}.env(e);
      bool ok = true;
      for (int i = 0; i < model.nq; ++i) ok = ok && std::isfinite(d.qpos[i]);
      for (int i = 0; i < model.nv; ++i) ok = ok && std::isfinite(d.qvel[i]);
      nonfinite += ok ? 0 : 1;
      contacts += ncon[static_cast<size_t>(e)];
      sweeps += d.solver_niter[0];
    }
    const double mean_ncon = static_cast<double>(contacts) / static_cast<double>(n);
    const double mean_sweeps = sweeps / static_cast<double>(n);
    std::printf("%10lld %14.4g %14.4g %14.4g %14.4g %10.2f %10.2f %10lld\n", static_cast<long long>(n), control_sps,
                control_sps / cores_used, physics_sps, physics_sps / cores_used, mean_ncon, mean_sweeps,
                static_cast<long long>(nonfinite));
    std::fflush(stdout);
    out["results"].push_back({{"num_envs", n},
                              {"control_steps", steps},
                              {"control_steps_per_second", control_sps},
                              {"cores_used", cores_used},
                              {"control_steps_per_second_per_core", control_sps / cores_used},
                              {"physics_steps_per_second", physics_sps},
                              {"physics_steps_per_second_per_core", physics_sps / cores_used},
                              {"mean_contacts", mean_ncon},
                              {"mean_solver_iterations", mean_sweeps},
                              {"nonfinite_envs", nonfinite}});
  }
  if (!opts.json_path.empty()) write_text_atomic(opts.json_path, out.dump(2) + "\n");
  return 0;
}

int run_mpi_bench(const BenchOptions& opts) {
  Communicator& comm = world();
  const int size = comm.size(), rank = comm.rank();
  const bool lead = rank == 0;
  Runtime rt(bench_placement(opts), threads_per_rank(opts.threads, comm), comm.local_rank());
  if (lead && !rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
  std::string allreduce = size == 1 ? "none (one process)" : "MPI";
  if (size > 1 && rt.device() == Device::kCuda) {
    const std::string why = comm.enable_device_allreduce(rt.gpu());
    allreduce = why.empty() ? "NCCL" : "through the host (" + why + ")";
  }
  nlohmann::json out;
  out["device"] = device_name(rt.device());
  out["processes"] = size;
  out["threads_per_process"] = rt.cpu_threads();
  out["allreduce"] = allreduce;
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["results"] = nlohmann::json::array();
  check_bench_memory(opts, rt, true);
  if (lead) {
    std::printf("rltrain bench --mpi: %d processes, device %s, %d threads each, allreduce %s, gemm %s\n", size,
                device_name(rt.device()), rt.cpu_threads(), allreduce.c_str(), bench_gemm_precision(opts).c_str());
    std::printf("%-16s %10s %6s %12s %14s %14s %16s %10s\n", "env", "num_envs", "rank", "params", "samples/s",
                "iteration ms", "allreduce ms/it", "allreduce");
  }
  for (const std::string& name : opts.envs) {
    for (const std::int64_t n : opts.num_envs) {
      const Config cfg = ppo_bench_config(opts, bench_config(opts, name), n, false);
      auto env = rt.make_env(cfg);
      if (size > 1) env->set_first_env(static_cast<i64>(rank) * n);
      env->reset(1);
      auto learner = rt.make_learner(cfg, *env);
      learner->set_communicator(comm);
      learner->start(1);
      learner->iterate(1, 1000);  // warm-up: first touch of the buffers
      const int iters = opts.steps > 0 ? static_cast<int>(std::max<std::int64_t>(1, opts.steps / cfg.ppo.num_steps))
                                       : std::max(2, static_cast<int>((1 << 17) / (n * cfg.ppo.num_steps)));
      comm.barrier();
      const double reduce0 = comm.allreduce_seconds();
      const i64 calls0 = comm.allreduce_calls();
      const auto t0 = Clock::now();
      for (int it = 2; it < 2 + iters; ++it) learner->iterate(it, 1000);
      rt.synchronize();
      const double seconds = seconds_since(t0);
      const double reduce_ms = (comm.allreduce_seconds() - reduce0) * 1e3 / iters;
      const double calls = static_cast<double>(comm.allreduce_calls() - calls0) / iters;
      const double sps = static_cast<double>(learner->batch_size() * iters) / seconds;
      const double it_ms = seconds * 1e3 / iters;
      char mine[128];
      std::snprintf(mine, sizeof mine, "%.17g %.17g %.17g %.17g", sps, it_ms, reduce_ms, calls);
      const std::vector<std::string> all = comm.allgather(mine);
      double total = 0, slowest_ms = 0;
      nlohmann::json ranks = nlohmann::json::array();
      for (int r = 0; r < size; ++r) {
        double v[4] = {0, 0, 0, 0};
        std::sscanf(all[static_cast<size_t>(r)].c_str(), "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]);
        total += v[0];
        slowest_ms = std::max(slowest_ms, v[1]);
        ranks.push_back({{"rank", r},
                         {"samples_per_second", v[0]},
                         {"iteration_ms", v[1]},
                         {"allreduce_ms_per_iteration", v[2]},
                         {"allreduce_calls_per_iteration", v[3]},
                         {"allreduce_share", v[1] > 0 ? v[2] / v[1] : 0.0}});
        if (lead)
          std::printf("%-16s %10lld %6d %12lld %14.4g %14.4g %16.4g %9.1f%%\n", name.c_str(), static_cast<long long>(n),
                      r, static_cast<long long>(learner->num_params()), v[0], v[1], v[2],
                      v[1] > 0 ? 100.0 * v[2] / v[1] : 0.0);
      }
      // The job's throughput: every process's batch per iteration of the slowest (they wait for it).
      const double job_sps = static_cast<double>(learner->batch_size() * size) / (slowest_ms * 1e-3);
      // The allreduce alone, the processes in step (a barrier first): what the transfer of one
      // gradient costs, without the wait for a slower process that the iteration's figure includes.
      std::vector<float> grad(static_cast<size_t>(learner->num_params()), 1.0f);
      const int reps = 200;
      comm.barrier();
      const double bare0 = comm.allreduce_seconds();
      for (int k = 0; k < reps; ++k) comm.allreduce_mean(grad.data(), learner->num_params());
      const double bare_us = (comm.allreduce_seconds() - bare0) * 1e6 / reps;
      double bare_max = bare_us;
      if (size > 1) {
        std::vector<double> all_us(static_cast<size_t>(size), 0.0);
        all_us[static_cast<size_t>(rank)] = bare_us;
        comm.allreduce_sum(all_us.data(), size);
        bare_max = *std::max_element(all_us.begin(), all_us.end());
      }
      if (lead) {
        std::printf("%-16s %10lld %6s %12s %14.4g   (sum of ranks %.4g); one gradient allreduce alone: %.1f us (%lld bytes)\n",
                    name.c_str(), static_cast<long long>(n), "all", "", job_sps, total, bare_max,
                    static_cast<long long>(learner->num_params() * 4));
        std::fflush(stdout);
      }
      out["results"].push_back({{"env", name},
                                {"num_envs_per_process", n},
                                {"num_steps", cfg.ppo.num_steps},
                                {"num_minibatches", cfg.ppo.num_minibatches},
                                {"num_epochs", cfg.ppo.num_epochs},
                                {"num_params", learner->num_params()},
                                {"gradient_bytes", learner->num_params() * 4},
                                {"iterations", iters},
                                {"samples_per_second", job_sps},
                                {"gradient_allreduce_us", bare_max},
                                {"ranks", ranks}});
    }
  }
  if (lead && !opts.json_path.empty()) write_text_atomic(opts.json_path, out.dump(2) + "\n");
  return 0;
}

}  // namespace rlt
