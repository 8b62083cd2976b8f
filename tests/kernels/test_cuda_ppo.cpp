// The whole learner on the CUDA executor (the "everything on the GPU" issue), host code only:
//   * Ppo<CudaExecutor> against Ppo<CpuExecutor>: a few iterations from the same seed on the same
//     env (CartPole, Pendulum), metrics and final weights close;
//   * `rltrain train --device cuda` (rlt::train) reaches CartPole's target;
//   * checkpoints are device-agnostic: trained on one device, evaluated deterministically on both;
//   * transfers: one device-to-host copy per iteration, nothing host-to-device;
//   * placement (issue 18): CPU envs feeding the CUDA learner and a CUDA env feeding the CPU learner
//     through PlacedEnv, against the CPU within the same tolerances; the adapter's copies bit for bit.
// Every test skips itself, with the reason, where no GPU answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "apps/evaluate.h"
#include "apps/runtime.h"
#include "apps/trainer.h"
#include "envs/registry.h"
#include "kernels/cuda_executor.h"
#include "kernels/cuda_staging.h"
#include "rl/config.h"
#include "rl/ppo.h"
#include "rl/ppo_cuda.h"
#include "tests/kernels/gpu_test_util.h"

#ifndef RLTRAIN_SOURCE_DIR
#error "RLTRAIN_SOURCE_DIR must name the source tree (configs/)"
#endif

namespace rlt {
namespace {

namespace fs = std::filesystem;
using gpu_test::all_close;

// The source tree, for configs/: $RLTRAIN_SOURCE_DIR when set (a build carried to a machine where
// the tree sits elsewhere: tools/device-check.sh sets it), else the tree this was built from.
std::string source_dir() {
  const char* env = std::getenv("RLTRAIN_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? env : RLTRAIN_SOURCE_DIR;
}
std::string config_path(const std::string& env) { return source_dir() + "/configs/" + env + ".toml"; }
Config shipped_config(const std::string& env) { return load_config(config_path(env)); }

// A fresh, empty directory under the test temp dir, removed when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_path = fs::path(::testing::TempDir()) /
             ("rlt_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + name);
    fs::remove_all(m_path);
    fs::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  std::string path(const std::string& leaf = "") const { return (leaf.empty() ? m_path : m_path / leaf).string(); }

 private:
  fs::path m_path;
};

const NamedArray& find_array(const std::vector<NamedArray>& arrays, const std::string& name) {
  for (const auto& a : arrays)
    if (a.name == name) return a;
  throw std::runtime_error("no learner array " + name);
}

// ---- Ppo<CudaExecutor> against Ppo<CpuExecutor> ------------------------------------------------------

// Both learners start from the same weights (initial_params runs on the host), the same env states
// (the same Philox keys) and draw the same action noise; from there the two sides round
// differently (FMA, cuBLAS vs Eigen summation order, CUB vs chunked reductions, CUDA's expf/logf/
// sinf), about 1e-7 relative per operation, and training carries the differences along: the next
// rollout acts with slightly different weights, and the envs amplify slightly different states.
// The tolerances were set from an emulation on the CPU (the same code built once without and once
// with FMA contraction and AVX2 kernels, the kind of difference the GPU makes), with a margin of
// 25x or more over what it showed:
//   CartPole, 3 iterations: everything stays within ~1e-7 relative (losses, weights); a
//     discrete action or an episode end could only differ where a perturbed logit or a state
//     lies within ~1e-6 of its threshold. Returns are step counts: exact.
//   Pendulum, 2 iterations: a swinging pendulum under random torques is chaotic, and the minibatches
//     are small (128 rows), so differences grow ~10x per iteration (emulated at iteration 2:
//     losses 1e-4 relative, returns 7e-5, weights 8e-5 of max|w|; at iteration 3 already
//     weights 2e-3, at 4 returns 4e-2). Two iterations keep the comparison meaningful.
//   clip fraction: a sample whose ratio lies within rounding of 1 +- clip_coef may count on one
//     side only: up to 3 samples of the update's batch * epochs.
//   learning rate: the linear schedule is set from the host: exact. Finished episodes (count,
//     lengths) exactly.
struct StatTolerance {
  double policy_loss_atol, policy_loss_rtol;  // a mean of +-ratio*adv terms that nearly cancel
  double value_loss_rtol, entropy_rtol;
  double kl_atol, kl_rtol;  // a small second-order quantity (~1e-3)
  double ev_atol;           // explained variance
  double return_rtol;
  double weight_atol_of_max;  // final params: atol = this * max|w|
  double obs_atol, obs_rtol;  // final observation normalizer (mean, var)
};
constexpr StatTolerance kCartPoleTolerance{1e-6, 1e-4, 1e-4, 1e-4, 1e-7, 1e-3, 1e-5, 0.0, 1e-5, 1e-6, 1e-5};
constexpr StatTolerance kPendulumTolerance{2e-5, 1e-3, 2e-3, 1e-4, 1e-6, 1e-2, 1e-3, 2e-3, 2e-3, 5e-4, 1e-3};

// What the compared side runs on: everything on CUDA, or (placement, issue 18) the envs on one
// device and the learner on the other through a PlacedEnv (sim/placed_env.h). A placed side differs
// from the CPU only where one of its halves runs on CUDA, so the all-CUDA tolerances hold for it.
enum class Side { kCuda, kCpuEnvCudaLearner, kCudaEnvCpuLearner };

// lagged: the compared learner runs as the trainer's lagged readback does (train.stats_readback):
// iteration it + 1 is launched before it is collected.
void compare_ppo(const std::string& env_name, int iterations, const StatTolerance& tol, Side side = Side::kCuda,
                 bool lagged = false) {
  Config cfg = shipped_config(env_name);
  cfg.train.seed = 1;
  cfg.ppo.gemm_precision = "fp32";
  cfg.ppo.tf32 = false;
  const std::uint64_t seed = cfg.train.seed;

  CpuExecutor cpu(1);
  auto cpu_env = make_vec_env(cfg.env.name, cfg.env.num_envs, cpu);
  apply_env_params(cfg, *cpu_env);
  cpu_env->reset(seed);
  Ppo<CpuExecutor> cpu_ppo(cfg, *cpu_env, cpu);
  cpu_ppo.start(seed);

  CudaExecutor exec;
  exec.set_gemm_precision(GemmPrecision::kFp32);
  CpuExecutor other_cpu(1);
  std::unique_ptr<VecEnv> cuda_env;
  if (side == Side::kCpuEnvCudaLearner) {
    auto inner = make_vec_env(cfg.env.name, cfg.env.num_envs, other_cpu);
    apply_env_params(cfg, *inner);
    cuda_env = std::make_unique<PlacedEnv<CpuExecutor, CudaExecutor>>(std::move(inner), other_cpu, exec);
    ASSERT_EQ(cuda_env->device(), Device::kCuda);
  } else {
    cuda_env = make_vec_env(cfg.env.name, cfg.env.num_envs, exec);
    apply_env_params(cfg, *cuda_env);
    if (side == Side::kCudaEnvCpuLearner) {
      cuda_env = std::make_unique<PlacedEnv<CudaExecutor, CpuExecutor>>(std::move(cuda_env), exec, other_cpu);
      ASSERT_EQ(cuda_env->device(), Device::kCpu);
    }
  }
  cuda_env->reset(seed);
  std::unique_ptr<Learner> cuda_ppo = side == Side::kCudaEnvCpuLearner
                                          ? std::make_unique<Ppo<CpuExecutor>>(cfg, *cuda_env, other_cpu)
                                          : make_cuda_learner(cfg, *cuda_env, exec);
  cuda_ppo->start(seed);

  // The starting point is the same bits: weights from the host, normalizer from the reset obs.
  {
    const auto ref = cpu_ppo.save(), got = cuda_ppo->save();
    EXPECT_EQ(find_array(got, "params").f32, find_array(ref, "params").f32);
    const auto& rm = find_array(ref, "obs_mean").f32;
    const auto& gm = find_array(got, "obs_mean").f32;
    // The mean of the reset observations (double sums of obs that CUDA's sinf/cosf computed within
    // a few ulp of glibc's): a few ulp of O(1) values.
    EXPECT_TRUE(all_close("initial obs mean", gm.data(), rm.data(), rm.size(), 1e-6, 1e-6));
  }

  const std::int64_t num_iterations = (cfg.train.total_env_steps + cpu_ppo.batch_size() - 1) / cpu_ppo.batch_size();
  for (int it = 1; it <= iterations; ++it) {
    SCOPED_TRACE(env_name + " iteration " + std::to_string(it));
    const IterationStats r = cpu_ppo.iterate(it, num_iterations);
    if (!lagged || it == 1) cuda_ppo->launch(it, num_iterations);
    if (lagged && it < iterations) cuda_ppo->launch(it + 1, num_iterations);
    const IterationStats g = cuda_ppo->collect();
    EXPECT_EQ(g.iteration, it);
    auto near = [](double got, double ref, double atol, double rtol) {
      return std::abs(got - ref) <= atol + rtol * std::abs(ref);
    };
    EXPECT_PRED4(near, g.policy_loss, r.policy_loss, tol.policy_loss_atol, tol.policy_loss_rtol);
    EXPECT_PRED4(near, g.value_loss, r.value_loss, 0.0, tol.value_loss_rtol);
    EXPECT_PRED4(near, g.entropy, r.entropy, 0.0, tol.entropy_rtol);
    EXPECT_PRED4(near, g.approx_kl, r.approx_kl, tol.kl_atol, tol.kl_rtol);
    const double samples = static_cast<double>(cpu_ppo.batch_size()) * r.epochs_run;
    EXPECT_PRED4(near, g.clip_frac, r.clip_frac, 3.0 / samples, 0.0);
    EXPECT_PRED4(near, g.explained_variance, r.explained_variance, tol.ev_atol, 0.0);
    EXPECT_EQ(g.learning_rate, r.learning_rate);
    EXPECT_EQ(g.epochs_run, r.epochs_run);
    EXPECT_EQ(g.num_finished, r.num_finished);
    EXPECT_EQ(g.finished_lengths, r.finished_lengths);
    ASSERT_EQ(g.finished_returns.size(), r.finished_returns.size());
    EXPECT_TRUE(all_close("finished returns", g.finished_returns.data(), r.finished_returns.data(),
                          r.finished_returns.size(), 0.0, tol.return_rtol));
  }
  const auto ref = cpu_ppo.save(), got = cuda_ppo->save();
  for (const char* name : {"params", "obs_mean", "obs_var"}) {
    const auto& rp = find_array(ref, name).f32;
    const auto& gp = find_array(got, name).f32;
    ASSERT_EQ(gp.size(), rp.size()) << name;
    const bool weights = std::string(name) == "params";
    double mx = 0.0;
    for (float v : rp) mx = std::max(mx, static_cast<double>(std::abs(v)));
    EXPECT_TRUE(all_close(std::string("final ") + name, gp.data(), rp.data(), rp.size(),
                          weights ? tol.weight_atol_of_max * mx : tol.obs_atol, weights ? 0.0 : tol.obs_rtol));
  }
}

TEST(CudaPpo, CartPoleIterationsMatchTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("cartpole", 3, kCartPoleTolerance);
}

// The same with two iterations in flight (the trainer's default on CUDA): each collect() returns its
// own iteration's statistics, read from its own pinned slot.
TEST(CudaPpo, LaggedIterationsMatchTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("cartpole", 8, kCartPoleTolerance, Side::kCuda, true);
}

TEST(CudaPpo, PendulumIterationsMatchTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("pendulum", 2, kPendulumTolerance);
}

// ---- placement (issue 18): CPU envs feeding the CUDA learner, and the reverse ------------------------------

TEST(CudaPlacement, CpuEnvCudaLearnerCartPoleMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("cartpole", 3, kCartPoleTolerance, Side::kCpuEnvCudaLearner);
}
TEST(CudaPlacement, CpuEnvCudaLearnerPendulumMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("pendulum", 2, kPendulumTolerance, Side::kCpuEnvCudaLearner);
}
TEST(CudaPlacement, CudaEnvCpuLearnerCartPoleMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("cartpole", 3, kCartPoleTolerance, Side::kCudaEnvCpuLearner);
}
TEST(CudaPlacement, CudaEnvCpuLearnerPendulumMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  compare_ppo("pendulum", 2, kPendulumTolerance, Side::kCudaEnvCpuLearner);
}

// The adapter's outputs over CUDA, step by step against the env it wraps: a CPU env's outputs on the
// device are its bits exactly; a CUDA env's outputs on the host are the bits its device arrays hold.
// Several steps without a read in between exercise the double-buffered staging (a slot overwritten
// while its copy is queued would show here as another step's values).
TEST(CudaPlacement, AdapterCarriesEveryOutputBitForBit) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(1);
  const i64 n = 64;
  for (const char* name : {"cartpole", "quadruped"}) {
    SCOPED_TRACE(name);
    // CPU env, CUDA learner side.
    PlacedEnv<CpuExecutor, CudaExecutor> up(make_vec_env(name, n, cpu), cpu, exec);
    // CUDA env, CPU learner side.
    PlacedEnv<CudaExecutor, CpuExecutor> down(make_vec_env(name, n, exec), exec, cpu);
    up.reset(5);
    down.reset(5);
    const int act = up.spec().action.dim, obs = up.spec().observation.dim, cobs = up.spec().critic_obs_dim;
    std::vector<float> actions(static_cast<size_t>(n * act));
    DeviceBuffer<float> dev_actions(n * act);
    for (std::uint32_t t = 0; t < 40; ++t) {
      const float* a = up.inner().sample_actions(3, t);
      std::copy(a, a + n * act, actions.begin());
      exec.copy_from_host(dev_actions.data(), actions.data(), n * act);
      up.step(dev_actions.data());
      down.step(actions.data());
      if (t % 3 != 2) continue;  // read every third step only
      std::vector<float> got(static_cast<size_t>(n * obs));
      exec.copy_to_host(got.data(), up.obs(), n * obs);
      EXPECT_EQ(got, std::vector<float>(up.inner().obs(), up.inner().obs() + n * obs)) << "up obs, step " << t;
      exec.copy_to_host(got.data(), up.final_obs(), n * obs);
      EXPECT_EQ(got, std::vector<float>(up.inner().final_obs(), up.inner().final_obs() + n * obs)) << "step " << t;
      std::vector<std::uint8_t> flags(static_cast<size_t>(n));
      exec.copy_to_host(flags.data(), up.terminated(), n);
      EXPECT_EQ(flags, std::vector<std::uint8_t>(up.inner().terminated(), up.inner().terminated() + n));
      if (cobs > 0) {
        std::vector<float> c(static_cast<size_t>(n * cobs));
        exec.copy_to_host(c.data(), up.critic_obs(), n * cobs);
        EXPECT_EQ(c, std::vector<float>(up.inner().critic_obs(), up.inner().critic_obs() + n * cobs));
      } else {
        EXPECT_EQ(up.critic_obs(), nullptr);
        EXPECT_EQ(down.critic_obs(), nullptr);
      }
      exec.copy_to_host(got.data(), down.inner().obs(), n * obs);
      EXPECT_EQ(std::vector<float>(down.obs(), down.obs() + n * obs), got) << "down obs, step " << t;
      std::vector<float> rew(static_cast<size_t>(n));
      exec.copy_to_host(rew.data(), down.inner().reward(), n);
      EXPECT_EQ(std::vector<float>(down.reward(), down.reward() + n), rew) << "down reward, step " << t;
    }
  }
}

// `rltrain train --env-device cpu --learner-device cuda` reaches CartPole's target, and its run says
// where each half ran.
TEST(CudaPlacement, TrainCartPoleCpuEnvsCudaLearnerReachesTheTarget) {
  RLT_REQUIRE_GPU();
  TempDir tmp("run");
  TrainOptions o;
  o.config_path = config_path("cartpole");
  o.seed = 1;
  o.env_device = "cpu";
  o.learner_device = "cuda";
  o.run_dir = tmp.path("cartpole");
  o.quiet = true;
  const TrainResult r = train(o);
  EXPECT_TRUE(r.reached_target) << "final mean return " << r.final_mean_return << " after " << r.env_steps
                                << " env steps";
  std::ifstream in(fs::path(o.run_dir) / "summary.json");
  const std::string summary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(summary.find("\"env_device\": \"cpu\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"device\": \"cuda\""), std::string::npos) << summary;
}

// ---- end to end: rltrain train --device cuda ------------------------------------------------------------

TEST(CudaPpo, TrainCartPoleOnCudaReachesTheTarget) {
  RLT_REQUIRE_GPU();
  TempDir tmp("run");
  TrainOptions o;
  o.config_path = config_path("cartpole");
  o.seed = 1;
  o.device = "cuda";
  o.run_dir = tmp.path("cartpole");
  o.quiet = true;
  const TrainResult r = train(o);
  EXPECT_TRUE(r.reached_target) << "final mean return " << r.final_mean_return << " after " << r.env_steps
                                << " env steps, " << r.iterations << " iterations, " << r.wall_seconds << " s";
  EXPECT_TRUE(fs::exists(fs::path(o.run_dir) / "summary.json"));
}

// ---- device-agnostic checkpoints ------------------------------------------------------------------------

// Trains `iterations` iterations on `device`, then evaluates the checkpoint deterministically on the
// CPU and on CUDA from the same env seed. Both start from the same weights and the same states and
// take the distribution's mode, so they differ only by rounding (~1e-7 relative per step), which a
// closed loop mostly damps, but CartPole's bang-bang control lets a difference grow until a logit
// near zero flips an action (emulated on the CPU, FMA against no FMA: 16 episodes agree exactly up
// to 200 steps, 3 of 16 differ at 500). Episodes are therefore capped by a config with a shorter
// max_episode_steps:
//   CartPole, 100 steps: lengths and returns (sums of 1.0) exactly;
//   Pendulum, 100 steps: lengths exactly (truncation), returns (sums of smooth costs) rtol 1e-4
//     (emulated: 2.4e-6).
void check_checkpoint_on_both(const std::string& env_name, const std::string& train_device, int iterations,
                              int max_steps, double return_rtol) {
  TempDir tmp(env_name + "_" + train_device);
  TrainOptions o;
  o.config_path = config_path(env_name);
  o.seed = 3;
  o.device = train_device;
  o.run_dir = tmp.path("run");
  o.max_iterations = iterations;
  o.quiet = true;
  const TrainResult tr = train(o);
  ASSERT_EQ(tr.iterations, iterations);

  Config eval_cfg = shipped_config(env_name);
  apply_override(eval_cfg, "env.max_episode_steps=" + std::to_string(max_steps));
  const std::string eval_cfg_path = tmp.path("eval.toml");
  {
    std::ofstream f(eval_cfg_path);
    f << to_toml(eval_cfg);
  }
  EvalOptions e;
  e.checkpoint = o.run_dir;
  e.config_path = eval_cfg_path;
  e.episodes = 16;
  e.deterministic = true;
  e.seed = 12345;
  e.threads = 1;
  e.device = "cpu";
  const EvalResult on_cpu = evaluate(e);
  e.device = "cuda";
  const EvalResult on_cuda = evaluate(e);
  EXPECT_EQ(on_cpu.device, "cpu");
  EXPECT_EQ(on_cuda.device, "cuda");
  ASSERT_EQ(on_cuda.returns.size(), on_cpu.returns.size());
  EXPECT_EQ(on_cuda.lengths, on_cpu.lengths) << "trained on " << train_device;
  EXPECT_TRUE(all_close("returns (trained on " + train_device + ")", on_cuda.returns.data(), on_cpu.returns.data(),
                        on_cpu.returns.size(), 0.0, return_rtol));
}

TEST(CudaPpo, CudaTrainedCheckpointEvaluatesAlikeOnCpuAndCuda) {
  RLT_REQUIRE_GPU();
  check_checkpoint_on_both("cartpole", "cuda", 5, 100, 0.0);
  check_checkpoint_on_both("pendulum", "cuda", 5, 100, 1e-4);
}

TEST(CudaPpo, CpuTrainedCheckpointEvaluatesAlikeOnCpuAndCuda) {
  RLT_REQUIRE_GPU();
  check_checkpoint_on_both("cartpole", "cpu", 5, 100, 0.0);
  check_checkpoint_on_both("pendulum", "cpu", 5, 100, 1e-4);
}

// ---- transfers ------------------------------------------------------------------------------------------

// The design: inside Ppo::launch everything stays on the device except the per-iteration block
// (loss sums, explained-variance sums, learning rate, finished-episode count, returns and lengths,
// skipped-update counters, the envs' non-finite resets), copied in one asynchronous copy into pinned
// memory (Readback: the host waits on its event only, in collect()). The learning-rate fill is a
// kernel, IndexPermutation is built on the host and passed by value in the launch, reductions and
// scans write device memory: none of them is a transfer. With target_kl > 0 the update also reads
// the KL sums once per epoch to decide on early stopping (rl/ppo_impl.h): epochs_run synchronous
// copies then.
void check_transfers(const std::string& env_name, double target_kl) {
  Config cfg = shipped_config(env_name);
  cfg.ppo.target_kl = target_kl;
  CudaExecutor exec;
  auto env = make_vec_env(cfg.env.name, cfg.env.num_envs, exec);
  apply_env_params(cfg, *env);
  env->reset(1);
  auto learner = make_cuda_learner(cfg, *env, exec);
  learner->start(1);
  EXPECT_EQ(learner->stats_lag(), 1);
  // rl/ppo_impl.h's m_block: the loss sums, 4 value-fit sums, lr, the finished-episode count, 2 per evaluation
  // episode, the 2 skipped-update counters (the non-finite-update guard), the non-finite resets.
  const std::int64_t block_bytes = 8 * (kNumPpoStats + 9 + 2 * static_cast<std::int64_t>(cfg.train.eval_episodes));
  for (int it = 1; it <= 3; ++it) {
    SCOPED_TRACE(env_name + ", target_kl " + std::to_string(target_kl) + ", iteration " + std::to_string(it));
    const TransferStats before = exec.transfers();
    learner->launch(it, 100);
    const TransferStats launched = exec.transfers();
    const IterationStats st = learner->collect();
    const TransferStats after = exec.transfers();
    const std::int64_t per_epoch_reads = target_kl > 0 ? st.epochs_run : 0;
    EXPECT_EQ(after.h2d_copies - before.h2d_copies, 0) << "host-to-device copies inside an iteration";
    EXPECT_EQ(after.d2h_copies - before.d2h_copies, per_epoch_reads) << "synchronous device-to-host copies";
    EXPECT_EQ(after.d2h_bytes - before.d2h_bytes, per_epoch_reads * 8 * kNumPpoStats);
    EXPECT_EQ(launched.d2h_async_copies - before.d2h_async_copies, 1) << "the block's copy, queued by launch()";
    EXPECT_EQ(launched.d2h_async_bytes - before.d2h_async_bytes, block_bytes);
    EXPECT_EQ(after.copies(), launched.copies()) << "collect() copies nothing: it waits on the event";
  }
}

TEST(CudaPpo, OneDeviceToHostCopyPerIteration) {
  RLT_REQUIRE_GPU();
  check_transfers("cartpole", 0.0);
  check_transfers("pendulum", 0.0);
}

TEST(CudaPpo, EarlyStoppingReadsTheKlOncePerEpoch) {
  RLT_REQUIRE_GPU();
  check_transfers("cartpole", 1e9);    // never stops: num_epochs reads
  check_transfers("cartpole", 1e-12);  // stops after the first epoch: one read
}

// The same count through the Runtime, as `rltrain bench` reports it (the one asynchronous copy).
TEST(CudaPpo, RuntimeCountsOneTransferPerIteration) {
  RLT_REQUIRE_GPU();
  const Config cfg = shipped_config("pendulum");
  Runtime rt("cuda", 1);
  ASSERT_EQ(rt.device(), Device::kCuda);
  auto env = rt.make_env(cfg);
  env->reset(1);
  auto learner = rt.make_learner(cfg, *env);
  learner->start(1);
  for (int it = 1; it <= 2; ++it) {
    const std::int64_t before = rt.num_transfers();
    learner->iterate(it, 100);
    EXPECT_EQ(rt.num_transfers() - before, 1) << "iteration " << it;
  }
}

}  // namespace
}  // namespace rlt
