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

}  // namespace
}  // namespace rlt::cli_test
