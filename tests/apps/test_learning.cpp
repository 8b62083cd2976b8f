// Learning smoke test (DESIGN.md "Tests"): the shipped CartPole config, unchanged, reaches its
// target through the `rltrain` binary, and the trained policy plays as well deterministically.
// On the CPU (DESIGN.md: learning smoke tests on the CPU); a few seconds on 2 cores; label "learning".
#include <regex>

#include <nlohmann/json.hpp>

#include "tests/apps/cli_util.h"

namespace rlt::cli_test {
namespace {

TEST(CliLearning, CartPoleShippedConfigReachesTarget) {
  TempDir tmp;
  const std::string run = tmp / "run";
  const std::vector<std::string> train = {"train",    "--config", cartpole_config(), "--seed", "1",
                                          "--device", "cpu",      "--run-dir",       run,      "--quiet"};
  const CliResult t = run_cli(train, tmp.path());
  ASSERT_EQ(t.exit_code, 0) << describe(train, t);
  const auto s = nlohmann::json::parse(read_file(run + "/summary.json"));
  EXPECT_EQ(s["reached_target"], true) << s.dump(2);
  ASSERT_TRUE(s["final_mean_return"].is_number()) << s.dump(2);
  EXPECT_GE(s["final_mean_return"].get<double>(), 475.0) << s.dump(2);

  const std::vector<std::string> eval = {"eval",       "--checkpoint", run,        "--deterministic",
                                         "--episodes", "100",          "--device", "cpu"};
  const CliResult e = run_cli(eval, tmp.path());
  ASSERT_EQ(e.exit_code, 0) << describe(eval, e);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(e.out, m, std::regex(R"(mean return ([-0-9.]+), std ([0-9.]+))"))) << e.out;
  std::printf("%s", e.out.c_str());
  EXPECT_GE(std::stod(m[1]), 475.0) << e.out;
}

// The same config with the policy's GEMMs in bf16 (ppo.gemm_precision, issue 18: inputs rounded to
// 8 significant bits, fp32 sums; on the CPU the twin of cuBLAS's CUBLAS_COMPUTE_32F_FAST_16BF) still
// reaches the target. Measured (seeds 1-5, 2 cores): bf16 100.9k, 153.1k, 114.7k, 145.4k, 172.5k
// env steps; fp32 141.8k, 192.5k, 164.4k, 138.2k, 122.9k; under 1.1 s each.
TEST(CliLearning, CartPoleBf16GemmsReachTarget) {
  TempDir tmp;
  const std::string run = tmp / "run";
  const std::vector<std::string> train = {
      "train", "--config", cartpole_config(),        "--seed", "1", "--device", "cpu", "--run-dir",
      run,     "--set",    "ppo.gemm_precision=bf16"};
  const CliResult t = run_cli(train, tmp.path());
  ASSERT_EQ(t.exit_code, 0) << describe(train, t);
  EXPECT_NE(t.err.find(", gemm bf16, "), std::string::npos) << "the start line names the precision: " << t.err;
  const auto s = nlohmann::json::parse(read_file(run + "/summary.json"));
  EXPECT_EQ(s["gemm_precision"], "bf16") << s.dump(2);
  EXPECT_EQ(s["reached_target"], true) << s.dump(2);
  ASSERT_TRUE(s["final_mean_return"].is_number()) << s.dump(2);
  EXPECT_GE(s["final_mean_return"].get<double>(), 475.0) << s.dump(2);
}

}  // namespace
}  // namespace rlt::cli_test
