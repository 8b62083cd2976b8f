// rl/distributed.h without mpirun: the single-process communicator is a no-op, the job's
// fingerprint names the first difference, episodes merge across processes, a job's checkpoint
// gives each process its own envs back, a job's PPO update makes one collective per minibatch and
// steps with the mean gradient. (Under mpirun: tests/apps/test_mpi.cpp.)
#include <gtest/gtest.h>

#include <cstring>

#include "envs/registry.h"
#include "rl/checkpoint.h"
#include "rl/distributed.h"
#include "rl/gemm.h"
#include "rl/ppo_impl.h"  // merge_episodes

namespace rlt {
namespace {

TEST(Distributed, SingleProcessCollectivesChangeNothing) {
  SingleProcess c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  float x[3] = {1.5f, -2.0f, 3.25f};
  c.allreduce_mean(x, 3);
  EXPECT_EQ(x[0], 1.5f);
  EXPECT_EQ(x[1], -2.0f);
  EXPECT_EQ(x[2], 3.25f);
  double d[1] = {4.0};
  c.allreduce_sum(d, 1);
  EXPECT_EQ(d[0], 4.0);
  EXPECT_EQ(c.allgather("a"), std::vector<std::string>{"a"});
  EXPECT_EQ(threads_per_rank(0, c), 0) << "alone: the config's thread count as it is";
  EXPECT_EQ(threads_per_rank(3, c), 3);
}

TEST(Distributed, FingerprintNamesTheFirstDifference) {
  const std::string a = toml_fingerprint_lines("[env]\nname = \"cartpole\"  # the task\nnum_envs = 8\n[train]\nseed = 1\n");
  EXPECT_EQ(a, "env.name = \"cartpole\"\nenv.num_envs = 8\ntrain.seed = 1\n");
  const std::string b = toml_fingerprint_lines("[env]\nname = \"cartpole\"\nnum_envs = 8\n[train]\nseed = 2\n");
  EXPECT_EQ(first_disagreement({a, a}), "");
  EXPECT_EQ(first_disagreement({a, a, b}), "rank 2 disagrees with rank 0 on train.seed: 2 (rank 0: 1)");
  EXPECT_EQ(first_disagreement({a + "policy parameter count = 10\n", a + "policy parameter count = 12\n"}),
            "rank 1 disagrees with rank 0 on policy parameter count: 12 (rank 0: 10)");
  EXPECT_EQ(toml_fingerprint_lines("[a]\nk = \"x # not a comment\"\n"), "a.k = \"x # not a comment\"\n");
}

// A stand-in for a job: allgather answers with what the "other processes" said.
class FakeJob final : public Communicator {
 public:
  explicit FakeJob(std::vector<std::string> others) : m_others(std::move(others)) {}
  int rank() const override { return 0; }
  int size() const override { return 1 + static_cast<int>(m_others.size()); }
  int local_rank() const override { return 0; }
  int local_size() const override { return size(); }
  void allreduce_sum(float*, i64) override {}
  void allreduce_sum(double*, i64) override {}
  void broadcast(void*, i64, int) override {}
  void barrier() override {}
  std::vector<std::string> allgather(const std::string& mine) override {
    std::vector<std::string> all{mine};
    all.insert(all.end(), m_others.begin(), m_others.end());
    return all;
  }
  std::vector<std::string> gather(const std::string& mine) override { return allgather(mine); }

 private:
  std::vector<std::string> m_others;
};

// A process's share as merge_episodes sends it: num_finished, then (return, length) oldest first.
std::string episodes(double finished, const std::vector<std::pair<double, double>>& kept) {
  std::vector<double> v{finished};
  for (const auto& [r, l] : kept) v.push_back(r), v.push_back(l);
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

TEST(Distributed, EpisodesMergeNewestFirstFromEveryProcess) {
  // This process: 5 finished, window k = 3 kept (returns 3, 4, 5); the other: 2 finished (20, 21).
  const i64 k = 3;
  const double hl[2 + 2 * 3] = {0.0, 5, 3, 4, 5, 30, 40, 50};
  FakeJob job({episodes(2, {{20, 200}, {21, 210}})});
  IterationStats st;
  merge_episodes(job, hl, k, st);
  EXPECT_EQ(st.num_finished, 7);
  // Newest first, one from each in turn: 5, 21, 4 -> oldest first: 4, 21, 5.
  EXPECT_EQ(st.finished_returns, (std::vector<float>{4, 21, 5}));
  EXPECT_EQ(st.finished_lengths, (std::vector<std::int32_t>{40, 210, 50}));
}

TEST(Distributed, JobCheckpointGivesEachProcessItsOwnEnvs) {
  const CpuExecutor exec(1);
  Config cfg;
  cfg.env.name = "cartpole";
  cfg.env.num_envs = 4;
  cfg.ppo.num_steps = 8;
  cfg.ppo.num_minibatches = 1;
  auto env0 = make_vec_env<CpuExecutor>("cartpole", 4, exec);
  auto env1 = make_vec_env<CpuExecutor>("cartpole", 4, exec);
  env1->set_first_env(4);
  env0->reset(1);
  env1->reset(1);
  Ppo<CpuExecutor> l0(cfg, *env0, exec), l1(cfg, *env1, exec);
  l0.start(1);
  l1.start(1);
  // Process 1's envs are envs 4..7 of one batch of 8.
  auto env8 = make_vec_env<CpuExecutor>("cartpole", 8, exec);
  env8->reset(1);
  EXPECT_EQ(0, std::memcmp(env8->obs() + 4 * 4, env1->obs(), 4 * 4 * sizeof(float)));
  EXPECT_NE(0, std::memcmp(env0->obs(), env1->obs(), 4 * 4 * sizeof(float)));

  const std::string path = ::testing::TempDir() + "/job_ckpt.safetensors";
  save_checkpoint(path, cfg, l0, *env0, TrainProgress{}, {pack_process_state(l1, *env1)});
  const Checkpoint c = read_checkpoint(path);
  EXPECT_EQ(checkpoint_world_size(c), 2);
  auto back = make_vec_env<CpuExecutor>("cartpole", 4, exec);
  Ppo<CpuExecutor> lb(cfg, *back, exec);
  restore_checkpoint(checkpoint_for_rank(c, 1), lb, LearnerLoad::kAll, back.get(), nullptr);
  EXPECT_EQ(0, std::memcmp(back->obs(), env1->obs(), 4 * 4 * sizeof(float)));
  restore_checkpoint(checkpoint_for_rank(c, 0), lb, LearnerLoad::kAll, back.get(), nullptr);
  EXPECT_EQ(0, std::memcmp(back->obs(), env0->obs(), 4 * 4 * sizeof(float)));
  EXPECT_THROW(checkpoint_for_rank(c, 2), CheckpointError);
}

// A job of two identical processes as process 0 sees it: every all-reduce sums two equal shares
// (x doubles: exact), every gather returns two copies. Records the length of each all-reduce.
class TwinJob final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 2; }
  void allreduce_sum(float* x, i64 n) override { twice(x, n); }
  void allreduce_sum(double* x, i64 n) override { twice(x, n); }
  void broadcast(void*, i64, int) override {}
  void barrier() override {}
  std::vector<std::string> allgather(const std::string& mine) override { return {mine, mine}; }
  std::vector<std::string> gather(const std::string& mine) override { return {mine, mine}; }
  std::vector<i64> calls;

 private:
  template <class T>
  void twice(T* x, i64 n) {
    calls.push_back(n);
    for (i64 i = 0; i < n; ++i) x[i] *= T(2);
  }
};

Config small_cartpole(int minibatches, bool normalize) {
  Config cfg;
  cfg.env.name = "cartpole";
  cfg.env.num_envs = 8;
  cfg.ppo.num_steps = 16;
  cfg.ppo.num_epochs = 3;
  cfg.ppo.num_minibatches = minibatches;
  cfg.ppo.normalize_advantages = normalize;
  cfg.ppo.normalize_obs = normalize;
  cfg.ppo.normalize_reward = normalize;
  return cfg;
}

TEST(Distributed, OneCollectivePerMinibatch) {
  const CpuExecutor exec(1);
  std::vector<size_t> calls_per_iteration;
  for (const int minibatches : {2, 4}) {
    const Config cfg = small_cartpole(minibatches, true);
    auto env = make_vec_env<CpuExecutor>("cartpole", cfg.env.num_envs, exec);
    env->reset(1);
    Ppo<CpuExecutor> learner(cfg, *env, exec);
    TwinJob job;
    learner.set_communicator(job);
    learner.start(1);
    job.calls.clear();
    learner.iterate(1, 10);
    const i64 fused = learner.num_params() + kNumPpoStats;  // the gradient and the loss-term sums
    const i64 epochs_x_minibatches = static_cast<i64>(cfg.ppo.num_epochs) * minibatches;
    EXPECT_EQ(std::count(job.calls.begin(), job.calls.end(), fused), epochs_x_minibatches) << minibatches;
    EXPECT_EQ(std::count(job.calls.begin(), job.calls.end(), 2 * epochs_x_minibatches), 1)
        << "the advantage moments of every minibatch: one all-reduce per update";
    calls_per_iteration.push_back(job.calls.size());
  }
  // Twice the minibatches: one more all-reduce per added minibatch, nothing else per minibatch.
  EXPECT_EQ(calls_per_iteration[1] - calls_per_iteration[0], 3u * 2u);
}

TEST(Distributed, JobOfTwinsStepsWithTheMeanGradientAndSumsTheLossTerms) {
  // Without normalizers (whose moments a twin job merges with another count) a job of two
  // identical processes makes exactly the updates of one: the fused all-reduce's sum, halved, is the
  // gradient itself. The loss terms arrive summed over both (float on the way: ~1e-7 relative).
  const CpuExecutor exec(1);
  const Config cfg = small_cartpole(4, false);
  auto env_one = make_vec_env<CpuExecutor>("cartpole", cfg.env.num_envs, exec);
  auto env_two = make_vec_env<CpuExecutor>("cartpole", cfg.env.num_envs, exec);
  env_one->reset(1);
  env_two->reset(1);
  Ppo<CpuExecutor> one(cfg, *env_one, exec), two(cfg, *env_two, exec);
  TwinJob job;
  two.set_communicator(job);
  one.start(1);
  two.start(1);
  for (int it = 1; it <= 3; ++it) {
    const IterationStats a = one.iterate(it, 10), b = two.iterate(it, 10);
    for (const auto& [x, y] : {std::pair{a.policy_loss, b.policy_loss}, std::pair{a.value_loss, b.value_loss},
                               std::pair{a.entropy, b.entropy}, std::pair{a.approx_kl, b.approx_kl}})
      EXPECT_NEAR(y, x, 1e-6 * std::abs(x) + 1e-12) << "iteration " << it;
  }
  const auto pa = one.save(), pb = two.save();
  ASSERT_EQ(pa[0].name, "params");
  EXPECT_EQ(pa[0].f32, pb[0].f32) << "the twin job's parameters differ from one process's";
}

}  // namespace
}  // namespace rlt
