// Learning smoke tests for the shipped Pendulum, Acrobot and MountainCarContinuous configs
// (configs/<env>.toml), through the C++ API (apps/trainer.h): a short run with a fixed seed and a
// reduced train.total_env_steps, everything else as shipped, must show that learning happened:
// the mean return (metrics.csv column mean_return, the rolling mean over the last
// train.eval_episodes finished episodes) of the last kRows rows is at least `margin` above that of
// the first kRows rows that have one.
//
// The margins are about half the smallest improvement measured over seeds 1-10 (Release build,
// 2-core CPU, each run about 0.4-1.5 s; first -> last, mean of 5 rows):
//   pendulum                81920 steps: -1340..-1130 -> -398..-221, improvement +740..+1103
//   acrobot                 20480 steps:  -500..-437  -> -258..-113, improvement +179..+387
//   mountaincar_continuous  20480 steps:   -7..+62    ->  +89..+92,  improvement  +30..+96
//   pendulum, policy.squash = "tanh" (the tanh-squashed Gaussian, rl/ppo_math.h), 81920 steps:
//                           -1312..-1129 -> -306..-215, improvement +866..+1091
//   (MountainCarContinuous stops early at its target on some seeds; its first rows start high
//   because the first episodes to end are the lucky ones that reach the goal before step 999.)
// The test runs seed 1 only. Label "learning".
#include "apps/trainer.h"
#include "tests/temp_dir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef RLT_SOURCE_DIR
#error "RLT_SOURCE_DIR (the project root, for configs/) must be defined by the build"
#endif

namespace rlt {
namespace {

namespace fs = std::filesystem;

constexpr int kRows = 5;  // rows averaged at each end of metrics.csv

// A fresh directory under the temp dir (tests/temp_dir.h).
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("rlt_learning_smoke") {}
};

// The finite values of column `column` of a CSV file with a header row, in row order.
std::vector<double> finite_column(const std::string& path, const std::string& column) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    return cells;
  };
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty");
  const std::vector<std::string> header = split(line);
  size_t col = header.size();
  for (size_t k = 0; k < header.size(); ++k)
    if (header[k] == column) col = k;
  if (col == header.size()) throw std::runtime_error(path + ": no column " + column);
  std::vector<double> values;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split(line);
    if (col >= cells.size()) throw std::runtime_error(path + ": short row: " + line);
    const double v = std::strtod(cells[col].c_str(), nullptr);  // "nan" before any episode ended
    if (std::isfinite(v)) values.push_back(v);
  }
  return values;
}

double mean_of(std::vector<double>::const_iterator b, std::vector<double>::const_iterator e) {
  double s = 0;
  for (auto it = b; it != e; ++it) s += *it;
  return s / static_cast<double>(e - b);
}

struct SmokeCase {
  const char* env;               // configs/<env>.toml
  std::int64_t total_env_steps;  // the reduced budget
  double margin;                 // required improvement of the mean return, last rows over first
  const char* extra = nullptr;   // one more override (section.key=value)
};

void expect_learns(const SmokeCase& c) {
  TempDir tmp;
  TrainOptions opts;
  opts.config_path = std::string(RLT_SOURCE_DIR) + "/configs/" + c.env + ".toml";
  opts.seed = 1;
  opts.overrides = {"train.total_env_steps=" + std::to_string(c.total_env_steps)};
  if (c.extra != nullptr) opts.overrides.push_back(c.extra);
  opts.run_dir = (fs::path(tmp.path()) / "run").string();
  opts.quiet = true;
  const TrainResult r = train(opts);
  ASSERT_GT(r.env_steps, 0);
  ASSERT_LE(r.env_steps, c.total_env_steps + 4096);

  const std::vector<double> ret = finite_column(opts.run_dir + "/metrics.csv", "mean_return");
  ASSERT_GE(ret.size(), static_cast<size_t>(2 * kRows)) << "too few rows with a mean return";
  const double first = mean_of(ret.begin(), ret.begin() + kRows);
  const double last = mean_of(ret.end() - kRows, ret.end());
  std::printf(
      "%s: %lld env steps in %.2f s, mean return %.1f (first %d rows) -> %.1f (last %d rows), +%.1f (need +%.1f)\n",
      c.env, static_cast<long long>(r.env_steps), r.wall_seconds, first, kRows, last, kRows, last - first, c.margin);
  EXPECT_GE(last - first, c.margin) << c.env << ": mean return " << first << " -> " << last;
}

TEST(LearningSmoke, Pendulum) { expect_learns({"pendulum", 81920, 400.0}); }

TEST(LearningSmoke, PendulumTanhSquashed) { expect_learns({"pendulum", 81920, 400.0, "policy.squash=tanh"}); }

TEST(LearningSmoke, Acrobot) { expect_learns({"acrobot", 20480, 100.0}); }

TEST(LearningSmoke, MountainCarContinuous) { expect_learns({"mountaincar_continuous", 20480, 15.0}); }

}  // namespace
}  // namespace rlt
