// `mpirun -np 2 rltrain ...` end to end (rl/distributed.h, DESIGN.md D10), on the CPU: two processes
// of E envs make the same first update as one process of 2E envs, CartPole reaches its target with
// two, a two-process run resumes bit for bit and after a kill, a checkpoint refuses another process
// count, processes that differ stop together with one line, a hung process ends the job, and
// `bench --mpi` reports per rank. Each case skips, saying why, where mpirun or the MPI build is missing.
#include <cmath>

#include <nlohmann/json.hpp>

#include "rl/checkpoint.h"
#include "tests/apps/mpi_util.h"

namespace rlt::cli_test {
namespace {

std::vector<float> learner_f32(const Checkpoint& c, const std::string& name) {
  return c.file.values<float>("learner/" + name);
}

// One iteration of a single-minibatch, single-epoch PPO (so the whole update is one gradient of the
// whole batch) with every normalizer on: what is merged across processes all shows in it.
const char* const kOneUpdate =
    " --set ppo.num_minibatches=1 --set ppo.num_epochs=1 --set ppo.normalize_obs=true"
    " --set ppo.normalize_reward=true --set ppo.normalize_advantages=true --iterations 1 --quiet";

void expect_same_first_update(const std::string& config, int envs_per_process) {
  TempDir tmp;
  const std::string base = "$R train --config " + quote(config) + kOneUpdate;
  const CliResult two =
      run_mpi(2, base + " --set env.num_envs=" + std::to_string(envs_per_process) + " --run-dir two", tmp.path());
  ASSERT_EQ(two.exit_code, 0) << show(two);
  const CliResult one =
      run_mpi(1, base + " --set env.num_envs=" + std::to_string(2 * envs_per_process) + " --run-dir one", tmp.path());
  ASSERT_EQ(one.exit_code, 0) << show(one);
  const Checkpoint a = read_checkpoint(tmp.path() + "/one/checkpoints/latest.safetensors");
  const Checkpoint b = read_checkpoint(tmp.path() + "/two/checkpoints/latest.safetensors");
  EXPECT_EQ(checkpoint_world_size(a), 1);
  EXPECT_EQ(checkpoint_world_size(b), 2);
  // Measured: at most 3e-8 (CartPole) apart after one Adam step of 3e-3 per parameter. The two
  // runs add the same numbers in another order (a reduction per process, then the sum of the two),
  // in float for the gradient; a rollout that differed would move parameters by ~lr.
  const double tol = 1e-6;
  for (const char* name : {"params", "obs_mean", "obs_var", "ret_mean", "ret_var", "adam_m", "adam_v"}) {
    const std::vector<float> x = learner_f32(a, name), y = learner_f32(b, name);
    ASSERT_EQ(x.size(), y.size()) << name;
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (std::abs(double(x[i]) - double(y[i])) > worst) worst = std::abs(double(x[i]) - double(y[i])), at = i;
    EXPECT_LE(worst, tol) << name << "[" << at << "]: one process " << x[at] << ", two " << y[at];
  }
  // Process 1's envs are envs [E, 2E) of the single process's: the same states after the rollout.
  const Checkpoint b1 = checkpoint_for_rank(b, 1);
  const auto obs_one = a.file.values<std::uint8_t>("env/obs");
  const auto obs_b1 = b1.file.values<std::uint8_t>("env/obs");
  ASSERT_EQ(obs_one.size(), 2 * obs_b1.size());
  EXPECT_TRUE(std::equal(obs_b1.begin(), obs_b1.end(), obs_one.begin() + static_cast<std::ptrdiff_t>(obs_b1.size())));
}

TEST(Mpi, TwoProcessesMakeTheFirstUpdateOfOneWithTwiceTheEnvs) {
  REQUIRE_MPI();
  expect_same_first_update(cartpole_config(), 8);
}

TEST(Mpi, TwoProcessesMakeTheFirstUpdateOfOneWithTwiceTheEnvsContinuous) {
  REQUIRE_MPI();
  expect_same_first_update(std::string(RLTRAIN_SOURCE_DIR) + "/configs/pendulum.toml", 4);
}

TEST(Mpi, CartPoleReachesTargetWithTwoProcesses) {
  REQUIRE_MPI();
  TempDir tmp;
  const CliResult r = run_mpi(
      2, "$R train --config " + quote(cartpole_config()) + " --set env.num_envs=8 --run-dir run --quiet", tmp.path());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(count_of(r.out, "(target reached)"), 1u) << "rank 0 alone reports: " << r.out;
  const auto summary = nlohmann::json::parse(read_file(tmp.path() + "/run/summary.json"));
  EXPECT_TRUE(summary["reached_target"].get<bool>());
  EXPECT_GE(summary["final_mean_return"].get<double>(), 475.0);
  EXPECT_EQ(summary["processes"].get<int>(), 2);
}

TEST(Mpi, ResumedTwoProcessRunMatchesUninterruptedRun) {
  REQUIRE_MPI();
  TempDir tmp;
  const std::string base = "$R train --config " + quote(cartpole_config()) +
                           " --set env.num_envs=8 --set train.stop_at_target=false --quiet";
  ASSERT_EQ(run_mpi(2, base + " --run-dir straight --iterations 6", tmp.path()).exit_code, 0);
  ASSERT_EQ(run_mpi(2, base + " --run-dir split --iterations 3", tmp.path()).exit_code, 0);
  const CliResult r = run_mpi(2, "$R train --resume split --iterations 3 --quiet", tmp.path());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  const auto a = untimed_rows(read_metrics(tmp.path() + "/straight/metrics.csv"));
  const auto b = untimed_rows(read_metrics(tmp.path() + "/split/metrics.csv"));
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a, b);
  // Only rank 0 writes: no second event file, metrics row per iteration once.
  int events = 0;
  for (const auto& e : fs::directory_iterator(tmp.path() + "/straight"))
    events += e.path().filename().string().rfind("events.out.tfevents", 0) == 0;
  EXPECT_LE(events, 1);
}

// A long CartPole run in `run/` whose process 1 gets `signal` (from the shell around it) once the
// run has written a checkpoint.
CliResult run_and_signal_rank1(const TempDir& tmp, const std::string& signal, const std::string& extra = "") {
  const std::string run = "$R train --config " + quote(cartpole_config()) +
                          " --set env.num_envs=8 --set train.stop_at_target=false"
                          " --set train.total_env_steps=100000000 --set train.checkpoint_every=5 --run-dir run --quiet" +
                          extra;
  return run_mpi(2,
                 run + " & p=$!; if [ $RANK = 1 ]; then "
                       "while [ ! -f run/checkpoints/latest.safetensors ]; do sleep 0.05; done; "
                       "sleep 0.3; kill -" + signal + " $p; fi; wait $p",
                 tmp.path(), 60);
}

TEST(Mpi, KilledProcessEndsTheJobAndTheCheckpointResumes) {
  REQUIRE_MPI();
  TempDir tmp;
  // Process 1 is killed (SIGKILL); the launcher ends the job.
  const CliResult r = run_and_signal_rank1(tmp, "KILL");
  EXPECT_NE(r.exit_code, 0) << show(r);
  EXPECT_NE(r.exit_code, 124) << "the job hung until the test's timeout: " << show(r);
  const Checkpoint c = read_checkpoint(tmp.path() + "/run/checkpoints/latest.safetensors");
  EXPECT_EQ(checkpoint_world_size(c), 2);
  const CliResult resumed = run_mpi(2, "$R train --resume run --iterations 2 --quiet", tmp.path());
  ASSERT_EQ(resumed.exit_code, 0) << show(resumed);
}

TEST(Mpi, CheckpointRefusesAnotherProcessCount) {
  REQUIRE_MPI();
  TempDir tmp;
  const std::string run = "$R train --config " + quote(cartpole_config()) + " --set env.num_envs=8 --iterations 1 --quiet";
  ASSERT_EQ(run_mpi(2, run + " --run-dir two", tmp.path()).exit_code, 0);
  const CliResult alone = run_cli({"train", "--resume", "two"}, tmp.path());
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_NE(alone.err.find("world_size"), std::string::npos) << alone.err;
  EXPECT_NE(alone.err.find("mpirun -np 2"), std::string::npos) << alone.err;
  ASSERT_EQ(run_mpi(1, run + " --run-dir one", tmp.path()).exit_code, 0);
  const CliResult more = run_mpi(2, "$R train --resume one", tmp.path());
  EXPECT_EQ(more.exit_code, 2) << show(more);
  EXPECT_EQ(count_of(more.err, "metadata \"world_size\""), 1u) << "one line for the job: " << more.err;
  EXPECT_NE(more.err.find("one process (no mpirun)"), std::string::npos) << more.err;
}

TEST(Mpi, ProcessesThatDifferStopTogetherWithOneLine) {
  REQUIRE_MPI();
  TempDir tmp;
  const CliResult r = run_mpi(
      2, "$R train --config " + quote(cartpole_config()) + " --seed $((RANK + 1)) --run-dir run --quiet", tmp.path());
  EXPECT_EQ(r.exit_code, 2) << show(r);
  EXPECT_EQ(count_of(r.err, "rltrain: error:"), 1u) << r.err;
  EXPECT_NE(r.err.find("rank 1 disagrees with rank 0 on train.seed: 2 (rank 0: 1)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.path() + "/run")) << "nothing is written when the processes differ";
  // Another env count: named by its key too.
  const CliResult n = run_mpi(
      2, "$R train --config " + quote(cartpole_config()) + " --set env.num_envs=$((8 + RANK)) --run-dir run --quiet",
      tmp.path());
  EXPECT_EQ(n.exit_code, 2) << show(n);
  EXPECT_NE(n.err.find("on env.num_envs: 9 (rank 0: 8)"), std::string::npos) << n.err;
}

TEST(Mpi, HungProcessEndsTheJobAfterTheTimeout) {
  REQUIRE_MPI();
  TempDir tmp;
  // Process 1 stops (SIGSTOP) mid-run: not dead, so the launcher does not notice; rank 0's watchdog does.
  const CliResult r = run_and_signal_rank1(tmp, "STOP", " --mpi-timeout 2");
  EXPECT_EQ(r.exit_code, 6) << show(r);
  EXPECT_NE(r.err.find("rank 0: no answer from the other ranks for 2 s"), std::string::npos) << r.err;
  EXPECT_NO_THROW(read_checkpoint(tmp.path() + "/run/checkpoints/latest.safetensors"));
}

TEST(Mpi, BenchReportsSamplesPerRankAndAllreduceTime) {
  REQUIRE_MPI();
  TempDir tmp;
  const CliResult r = run_mpi(
      2, "$R bench --mpi --env cartpole --num-envs 32 --config-dir " + quote(std::string(RLTRAIN_SOURCE_DIR) + "/configs") +
             " --json bench.json",
      tmp.path());
  ASSERT_EQ(r.exit_code, 0) << show(r);
  EXPECT_EQ(count_of(r.out, "rltrain bench --mpi: 2 processes"), 1u) << r.out;
  const auto j = nlohmann::json::parse(read_file(tmp.path() + "/bench.json"));
  EXPECT_EQ(j["processes"].get<int>(), 2);
  const auto& res = j["results"][0];
  EXPECT_GT(res["samples_per_second"].get<double>(), 0.0);
  ASSERT_EQ(res["ranks"].size(), 2u);
  for (const auto& rank : res["ranks"]) {
    EXPECT_GT(rank["samples_per_second"].get<double>(), 0.0);
    EXPECT_GT(rank["allreduce_calls_per_iteration"].get<double>(), 0.0);
    EXPECT_GE(rank["allreduce_ms_per_iteration"].get<double>(), 0.0);
  }
}

}  // namespace
}  // namespace rlt::cli_test
