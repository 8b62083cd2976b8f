// End-to-end tests of the `rltrain` binary (DESIGN.md D7-D9): bad input stops with exit code 2 and
// one line naming the file and the key, and leaves an existing run untouched; --resume continues
// bit for bit; the thread count does not change the results; the run directory holds what it
// should; eval is deterministic; `envs` and `--help` work. Every run is tiny (a few iterations of
// CartPole or Pendulum), in a temp directory that is removed afterwards.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <regex>

#include <nlohmann/json.hpp>

#include "apps/export.h"
#include "apps/tensorboard.h"
#include "envs/registry.h"
#include "kernels/device.h"
#include "rl/config.h"
#include "rl/ppo.h"  // kNumPpoPhases, ppo_phase_name
#include "rl/safetensors.h"
#include "tests/apps/cli_util.h"

namespace rlt::cli_test {
namespace {

using Args = std::vector<std::string>;

// The columns the trainer writes to metrics.csv (apps/trainer.cpp), in order.
const Args kMetricsColumns = {"iteration",        "env_steps",
                              "wall_seconds",     "mean_return",
                              "mean_length",      "episodes",
                              "policy_loss",      "value_loss",
                              "entropy",          "approx_kl",
                              "clip_frac",        "explained_variance",
                              "learning_rate",    "env_steps_per_second",
                              "nonfinite_resets", "skipped_updates"};

// CartPole's batch with the shipped config: 16 envs x 32 steps.
constexpr std::int64_t kCartpoleBatch = 512;

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A tiny CartPole training of `iterations` iterations that never stops early. On the CPU wherever
// a GPU answers too: thread counts and bit-for-bit resumes are checked on the CPU executor.
Args tiny_cartpole(std::int64_t iterations) {
  return {"train",           "--config",
          cartpole_config(), "--quiet",
          "--device",        "cpu",
          "--set",           "train.total_env_steps=" + std::to_string(iterations * kCartpoleBatch),
          "--set",           "train.stop_at_target=false"};
}

// Bad input: exit code 2, nothing on stdout, exactly one line on stderr that holds every needle.
void expect_bad_input(const Args& args, const CliResult& r, const Args& needles) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected exactly one line on stderr";
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(r.err.rfind("rltrain: error: ", 0), 0u) << "expected the line to start with \"rltrain: error: \"";
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "stderr lacks \"" << n << "\"";
}

// Names of the files that differ between two snapshots (added, removed or changed).
std::string diff_snapshots(const Snapshot& before, const Snapshot& after) {
  std::string d;
  for (const auto& [name, bytes] : before) {
    auto it = after.find(name);
    if (it == after.end()) d += " removed:" + name;
    else if (it->second != bytes) d += " changed:" + name;
  }
  for (const auto& [name, bytes] : after)
    if (!before.count(name)) d += " added:" + name;
  return d;
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

// Expects the tensors whose names start with one of `prefixes` to be the same, byte for byte.
void expect_same_tensors(const std::string& a_path, const std::string& b_path, const Args& prefixes) {
  const TensorFile a = read_safetensors(a_path), b = read_safetensors(b_path);
  auto selected = [&](const TensorFile& f) {
    std::map<std::string, const Tensor*> out;
    for (const Tensor& t : f.tensors)
      for (const auto& p : prefixes)
        if (t.name.rfind(p, 0) == 0) out[t.name] = &t;
    return out;
  };
  const auto ta = selected(a), tb = selected(b);
  ASSERT_FALSE(ta.empty()) << a_path;
  ASSERT_EQ(ta.size(), tb.size()) << a_path << " vs " << b_path;
  for (const auto& [name, t] : ta) {
    ASSERT_TRUE(tb.count(name)) << name << " missing from " << b_path;
    const Tensor& u = *tb.at(name);
    EXPECT_EQ(t->dtype, u.dtype) << name;
    EXPECT_EQ(t->shape, u.shape) << name;
    EXPECT_TRUE(t->data == u.data) << "tensor " << name << " differs between " << a_path << " and " << b_path;
  }
}

// Atomic writes (temp file, rename) leave no "<name>.tmp.<pid>" behind in a run that ended normally.
void expect_no_temp_files(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
}

std::int64_t checkpoint_iteration(const std::string& path) {
  return read_safetensors(path).values<std::int64_t>("progress/counters", {3})[0];
}

// ---- 1. bad input ------------------------------------------------------------------------------

// Every case runs against one existing run (stopped after 2 of its 4 iterations, with periodic
// checkpoints); after each case every byte of that run directory must be as it was.
class CliBadInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_tmp = new TempDir;
    const Args args =
        concat(tiny_cartpole(4), {"--set", "train.checkpoint_every=1", "--iterations", "2", "--run-dir", run_dir()});
    const CliResult r = run_cli(args, s_tmp->path());
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    s_before = new Snapshot(snapshot(run_dir()));
  }
  static void TearDownTestSuite() {
    delete s_before;
    delete s_tmp;
    s_before = nullptr;
    s_tmp = nullptr;
  }
  void SetUp() override { ASSERT_NE(s_before, nullptr) << "the base run failed"; }
  void TearDown() override {
    if (s_before == nullptr) return;
    const std::string d = diff_snapshots(*s_before, snapshot(run_dir()));
    EXPECT_TRUE(d.empty()) << "bad input changed the existing run directory:" << d;
  }

  static std::string tmp(const std::string& rel) { return *s_tmp / rel; }
  static std::string run_dir() { return tmp("run"); }
  static std::string latest() { return run_dir() + "/checkpoints/latest.safetensors"; }

  // Runs `args` and expects the bad-input failure with every needle in the message.
  CliResult bad(const Args& args, const Args& needles) {
    CliResult r = run_cli(args, s_tmp->path());
    expect_bad_input(args, r, needles);
    return r;
  }
  // A config file holding `text`; training on it aimed at the existing run.
  CliResult bad_config(const std::string& name, const std::string& text, const Args& needles) {
    const std::string path = tmp(name);
    write_file(path, text);
    Args n = needles;
    n.push_back(path);
    return bad({"train", "--config", path, "--run-dir", run_dir()}, n);
  }
  // Resuming the existing run with one override.
  CliResult bad_set(const std::string& assignment, const Args& needles) {
    return bad({"train", "--resume", run_dir(), "--set", assignment}, needles);
  }
  // A copy of the run directory at `rel` (for cases that have to damage a run).
  static std::string copy_of_run(const std::string& rel) {
    fs::copy(run_dir(), tmp(rel), fs::copy_options::recursive);
    return tmp(rel);
  }

  static TempDir* s_tmp;
  static Snapshot* s_before;
};
TempDir* CliBadInput::s_tmp = nullptr;
Snapshot* CliBadInput::s_before = nullptr;

TEST_F(CliBadInput, UnknownConfigKey) {
  bad_config("typo.toml", "[ppo]\nnum_stepz = 3\n", {"ppo.num_stepz", "unknown key", "did you mean ppo.num_steps"});
  bad_config("section.toml", "[optim]\nlr = 1e-3\n", {"optim", "unknown section"});
  bad_config("top.toml", "seed = 3\n", {"seed", "unknown top-level key"});
}

TEST_F(CliBadInput, WrongType) {
  bad_config("type1.toml", "[ppo]\nnum_steps = \"a\"\n",
             {"ppo.num_steps", "expected a positive integer", "got string \"a\""});
  bad_config("type2.toml", "[train]\nstop_at_target = 1\n",
             {"train.stop_at_target", "expected a boolean", "got integer 1"});
  bad_config("type3.toml", "[policy]\nhidden = 64\n", {"policy.hidden", "expected an array of integers"});
  bad_config("type4.toml", "[env]\nnum_envs = 16.0\n", {"env.num_envs", "expected a positive integer", "float"});
}

TEST_F(CliBadInput, OutOfRangeValue) {
  bad_config("range1.toml", "[ppo]\ngamma = 1.5\n", {"ppo.gamma", "expected a number in [0, 1]", "1.5"});
  bad_config("range2.toml", "[env]\nnum_envs = 0\n", {"env.num_envs", "expected a positive integer", "got 0"});
  bad_config("range3.toml", "[policy]\nactivation = \"sigmoid\"\n",
             {"policy.activation", "expected one of tanh, elu, relu", "sigmoid"});
  bad_config("range5.toml", "[policy]\nsquash = \"sigmoid\"\n",
             {"policy.squash", "expected one of none, tanh", "sigmoid"});
  // A tanh-squashed policy needs a bounded continuous action box; CartPole (the default env) is discrete.
  bad_config("squash.toml", "[policy]\nsquash = \"tanh\"\n", {"policy.squash", "discrete actions", "cartpole"});
  bad_set("policy.squash=tanh", {"--set policy.squash=tanh", "discrete actions"});
  // The bounds loss pulls a Gaussian's means back into a bounded continuous box: not CartPole's actions,
  // nor a tanh-squashed policy's (its entropy term does that).
  bad_config("bounds.toml", "[ppo]\nbounds_loss_coef = 0.01\n", {"ppo.bounds_loss_coef", "discrete actions", "cartpole"});
  bad_set("ppo.bounds_loss_coef=0.01", {"--set ppo.bounds_loss_coef=0.01", "discrete actions"});
  bad_config("bounds_tanh.toml",
             "[env]\nname = \"pendulum\"\n[policy]\nsquash = \"tanh\"\n[ppo]\nbounds_loss_coef = 0.01\n",
             {"ppo.bounds_loss_coef", "policy.squash = \"tanh\" keeps its actions in the box"});
  // Log-std bounds need a Gaussian policy: CartPole's actions are discrete.
  bad_config("log_std.toml", "[policy]\nmax_log_std = 0.5\n", {"policy.max_log_std", "discrete actions", "cartpole"});
  bad_set("policy.min_log_std=-2", {"--set policy.min_log_std=-2", "policy.min_log_std", "discrete actions"});
  bad_config("bounds_neg.toml", "[ppo]\nbounds_loss_coef = -1\n", {"ppo.bounds_loss_coef", "got -1"});
  // Consistency: 16 envs x 128 steps (the defaults) is not divisible into 5 minibatches.
  bad_config("range4.toml", "[ppo]\nnum_minibatches = 5\n", {"ppo.num_minibatches", "expected a divisor", "got 5"});
}

TEST_F(CliBadInput, UnknownEnv) {
  bad_config("env.toml", "[env]\nname = \"cartpol\"\n", {"env.name", "unknown env 'cartpol'", "cartpole"});
  bad_set("env.name=walker", {"env.name", "unknown env 'walker'"});
}

TEST_F(CliBadInput, UnknownEnvParam) {
  bad_config("param1.toml", "[env]\nname = \"cartpole\"\ngravty = 9.8\n",
             {"env.gravty", "not a parameter of env 'cartpole'", "gravity"});
  bad_config("param2.toml", "[env]\nname = \"cartpole\"\ngravity = \"high\"\n",
             {"env.gravity", "expected a number or boolean"});
  bad_set("env.gravty=3", {"env.gravty", "not a parameter of env 'cartpole'"});
}

TEST_F(CliBadInput, MalformedSet) {
  const std::string form = "expected section.key=value";
  bad_set("foo", {"--set foo", form, "no '='"});
  bad_set("foo=1", {"--set foo=1", form, "no section"});
  bad_set(".num_steps=1", {"--set .num_steps=1", form, "empty section"});
  bad_set("ppo.=1", {"--set ppo.=1", form, "empty key"});
  bad_set("=5", {"--set =5", form});
  bad_set("ppo.num_steps=", {"--set ppo.num_steps=", form, "empty value"});
  bad_set("ppo.num_steps.x=1", {"--set ppo.num_steps.x=1", form, "nested key"});
  bad_set("optim.lr=1", {"--set optim.lr=1", "unknown section"});
  // A control character in the value must not break the message over two lines.
  bad_set("ppo.num_steps=1\n2", {"--set ppo.num_steps=1\\n2", "ppo.num_steps", "expected a positive integer"});
  // --set with nothing after it is CLI11's to reject.
  const Args args = {"train", "--resume", run_dir(), "--set"};
  const CliResult r = run_cli(args, s_tmp->path());
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
}

TEST_F(CliBadInput, SetUnknownKey) {
  bad_set("ppo.learning_rat=1e-3", {"--set ppo.learning_rat=1e-3", "unknown key", "did you mean ppo.learning_rate"});
  bad_set("train.bogus_key=1", {"--set train.bogus_key=1", "unknown key", "keys of [train]"});
  bad({"train", "--config", cartpole_config(), "--run-dir", run_dir(), "--set", "policy.width=3"},
      {"--set policy.width=3", "unknown key"});
}

TEST_F(CliBadInput, SetWrongTypeOrRange) {
  bad_set("ppo.num_steps=0", {"--set ppo.num_steps=0", "expected a positive integer", "got 0"});
  bad_set("ppo.learning_rate=fast", {"--set ppo.learning_rate=fast", "expected a positive number", "\"fast\""});
  bad_set("ppo.clip_value_loss=maybe", {"--set ppo.clip_value_loss=maybe", "expected a boolean"});
  bad_set("policy.hidden=[8, 0]", {"--set policy.hidden=[8, 0]", "expected an array of integers in [1, 4096]"});
}

// A resumed run keeps its network's function: another activation or squash would load the same
// weights into another function (another width fails the checkpoint's shape check:
// CheckpointOfAnotherShape).
TEST_F(CliBadInput, ResumeKeepsThePolicy) {
  bad_set("policy.activation=relu",
          {"--resume " + run_dir(), "policy.activation", "has \"tanh\"", "keeps its network"});
  bad({"train", "--resume", run_dir(), "--set", "env.name=pendulum", "--set", "policy.squash=tanh"},
      {"--resume " + run_dir(), "policy.squash", "has \"none\""});
}

TEST_F(CliBadInput, MissingConfigFile) {
  bad({"train", "--config", tmp("nope.toml"), "--run-dir", run_dir()}, {tmp("nope.toml"), "cannot open"});
  bad({"train", "--config", tmp("run"), "--run-dir", tmp("other")}, {tmp("run"), "cannot open"});
  EXPECT_FALSE(fs::exists(tmp("other")));
}

TEST_F(CliBadInput, TomlSyntaxError) {
  // The message names the file, the line and the column.
  bad_config("syntax.toml", "[env]\nname = \"cartpole\"\n[ppo\nnum_steps = 8\n", {":3:"});
  bad_config("syntax2.toml", "[ppo]\nnum_steps = = 8\n", {":2:"});
}

TEST_F(CliBadInput, DeviceBogus) {
  bad({"train", "--resume", run_dir(), "--device", "bogus"}, {"--device", "expected", "auto", "cpu", "cuda", "bogus"});
  bad({"train", "--config", cartpole_config(), "--run-dir", tmp("fresh"), "--device", "bogus"},
      {"--device", "expected", "bogus"});
  EXPECT_FALSE(fs::exists(tmp("fresh")));
  bad({"eval", "--checkpoint", run_dir(), "--device", "bogus"}, {"--device", "expected", "bogus"});
  bad_set("train.device=gpu", {"--set train.device=gpu", "expected one of auto, cpu, cuda", "gpu"});
}

// Placement (issue 18): --env-device and --learner-device (train, eval, bench) and their config keys.
TEST_F(CliBadInput, PlacementDeviceBogus) {
  bad({"train", "--resume", run_dir(), "--env-device", "gpu"}, {"--env-device: expected one of auto, cpu, cuda", "gpu"});
  bad({"train", "--config", cartpole_config(), "--run-dir", tmp("fresh"), "--learner-device", "tpu"},
      {"--learner-device: expected one of auto, cpu, cuda", "tpu"});
  EXPECT_FALSE(fs::exists(tmp("fresh")));
  bad({"eval", "--checkpoint", run_dir(), "--env-device", "bogus"}, {"--env-device", "expected", "bogus"});
  bad({"eval", "--checkpoint", run_dir(), "--learner-device", "bogus"}, {"--learner-device", "expected", "bogus"});
  bad({"bench", "--env", "cartpole", "--num-envs", "16", "--steps", "3", "--env-device", "bogus"},
      {"--env-device", "expected", "bogus"});
  bad_set("train.env_device=gpu", {"--set train.env_device=gpu", "expected one of auto, cpu, cuda", "gpu"});
  bad_config("env_device.toml", "[train]\nlearner_device = \"tpu\"\n", {"train.learner_device", "tpu"});
}

TEST_F(CliBadInput, PlacementCudaWithoutGpu) {
  const CudaProbe probe = probe_cuda();
  if (probe.device_count > 0)
    GTEST_SKIP() << "a GPU answers (" << probe.reason << "): cuda is not bad input here";
  // Each names the flag (or the config key) that asked for cuda, as --device cuda does.
  bad({"train", "--resume", run_dir(), "--env-device", "cuda", "--learner-device", "cpu"},
      {"--env-device: cuda requested but"});
  bad({"train", "--resume", run_dir(), "--env-device", "cpu", "--learner-device", "cuda"},
      {"--learner-device: cuda requested but"});
  bad({"eval", "--checkpoint", run_dir(), "--learner-device", "cuda"}, {"--learner-device: cuda requested but"});
  bad({"bench", "--env", "cartpole", "--num-envs", "16", "--steps", "3", "--env-device", "cuda"},
      {"--env-device: cuda requested but"});
  bad_config("env_cuda.toml", "[train]\ndevice = \"cpu\"\nenv_device = \"cuda\"\n",
             {"train.env_device: cuda requested but"});
  // --device cuda overrides the config's placement, and is named itself.
  bad({"train", "--resume", run_dir(), "--device", "cuda"}, {"--device: cuda requested but"});
}

TEST_F(CliBadInput, DeviceCudaWithoutGpu) {
  const CudaProbe probe = probe_cuda();
  if (probe.device_count > 0)
    GTEST_SKIP() << "a GPU answers (" << probe.reason << "): --device cuda is not bad input here";
  bad({"train", "--resume", run_dir(), "--device", "cuda"}, {"--device", "cuda"});
  bad({"eval", "--checkpoint", run_dir(), "--device", "cuda"}, {"--device", "cuda"});
  // From the config file, the message names the file and the key.
  bad_config("cuda.toml", "[train]\ndevice = \"cuda\"\n", {"train.device", "cuda"});
}

// Memory before start (apps/memory_budget.h): with a fake free figure (RLTRAIN_FREE_MEMORY_BYTES,
// inherited by the child) a run too large stops with one line naming the key, the parts, what is
// available and what fits, before anything is created (the fixture checks the existing run).
class FakeFreeMemory {
 public:
  explicit FakeFreeMemory(const std::string& bytes) { ::setenv("RLTRAIN_FREE_MEMORY_BYTES", bytes.c_str(), 1); }
  ~FakeFreeMemory() { ::unsetenv("RLTRAIN_FREE_MEMORY_BYTES"); }
};

TEST_F(CliBadInput, RunTooLargeForMemory) {
  const FakeFreeMemory fake("1000000000");  // 0.93 GiB: 0.71 GiB usable after the margin
  const Args fits_hint = {"num_envs <= ", " fits", "of RAM is available", "(envs ", ", rollout ", ", learner "};
  Args n = concat({"--set env.num_envs = 1000000 needs "}, fits_hint);
  bad(concat(tiny_cartpole(1), {"--set", "env.num_envs=1000000", "--run-dir", tmp("big")}), n);
  EXPECT_FALSE(fs::exists(tmp("big"))) << "a run that does not fit created its directory";
  // From the config file: the message names the file and the key.
  n = concat({": env.num_envs = 3000000 needs "}, fits_hint);
  bad_config("big.toml", "[env]\nname = \"cartpole\"\nnum_envs = 3000000\n", n);
  // Resuming with next to nothing free: the run directory stays byte for byte (the fixture checks).
  const FakeFreeMemory none("1000");
  bad({"train", "--resume", run_dir()}, {run_dir() + "/config.toml: env.num_envs = ", "not even num_envs = 1 fits"});
  // bench checks every row before measuring and writes no JSON.
  bad({"bench", "--env", "cartpole", "--device", "cpu", "--num-envs", "16,1000000", "--json", tmp("bench.json")},
      {"bench --env cartpole: --num-envs = 16 needs", "--num-envs"});
  EXPECT_FALSE(fs::exists(tmp("bench.json")));
  bad({"bench", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml", "--device", "cpu", "--num-envs",
       "64"},
      {"ant.xml: --num-envs = 64 needs", "physics "});
  bad({"eval", "--checkpoint", run_dir(), "--device", "cpu", "--episodes", "100"}, {"--episodes = 100 needs", "policy "});
}

// The override: train.memory_check = false (or RLTRAIN_MEMORY_CHECK=0) runs what the check refuses.
TEST(CliMemoryCheck, CanBeTurnedOff) {
  TempDir tmp;
  const FakeFreeMemory fake("1000");
  const Args train = concat(tiny_cartpole(1), {"--set", "train.memory_check=false", "--run-dir", tmp / "run"});
  CliResult r = run_cli(train, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << describe(train, r);
  ::setenv("RLTRAIN_MEMORY_CHECK", "0", 1);
  const Args bench = {"bench", "--env", "cartpole", "--device", "cpu", "--num-envs", "16", "--steps", "3", "--no-ppo"};
  r = run_cli(bench, tmp.path());
  ::unsetenv("RLTRAIN_MEMORY_CHECK");
  EXPECT_EQ(r.exit_code, 0) << describe(bench, r);
  // The table's bytes per env: CartPole's state, counters, observations, outputs and actions.
  EXPECT_NE(r.out.find("bytes/env"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 86\n"), std::string::npos) << r.out;
}

TEST_F(CliBadInput, MissingCheckpointForEval) {
  bad({"eval", "--checkpoint", tmp("nope.safetensors")}, {tmp("nope.safetensors"), "no such checkpoint"});
  fs::create_directories(tmp("empty_dir"));
  bad({"eval", "--checkpoint", tmp("empty_dir")}, {tmp("empty_dir"), "checkpoints/latest.safetensors"});
  bad({"eval", "--checkpoint", run_dir(), "--episodes", "0"}, {"--episodes", "expected an integer in [1, ", "got 0"});
}

TEST_F(CliBadInput, CorruptCheckpoint) {
  const std::string good = read_file(latest());
  ASSERT_GT(good.size(), 4096u);
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, good.data(), 8);
  // Truncated at several places: inside the length, inside the JSON header, inside the data, the
  // last byte.
  const std::vector<std::size_t> cuts = {
      0, 3, 8, 8 + header_len / 2, 8 + header_len, 8 + header_len + 100, good.size() / 2, good.size() - 1};
  for (std::size_t cut : cuts) {
    const std::string path = tmp("trunc_" + std::to_string(cut) + ".safetensors");
    write_file(path, good.substr(0, cut));
    bad({"eval", "--checkpoint", path}, {path});
  }
  // Garbage: pseudo-random bytes; a plausible header length followed by text that is not JSON;
  // valid JSON that is not a checkpoint.
  std::string noise(20000, '\0');
  std::uint32_t x = 12345;
  for (char& c : noise) c = static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
  write_file(tmp("noise.safetensors"), noise);
  bad({"eval", "--checkpoint", tmp("noise.safetensors")}, {tmp("noise.safetensors")});
  std::string not_json(8, '\0');
  not_json[0] = 16;
  not_json += "this is not json";
  write_file(tmp("notjson.safetensors"), not_json);
  bad({"eval", "--checkpoint", tmp("notjson.safetensors")}, {tmp("notjson.safetensors")});
  std::string foreign(8, '\0');
  const std::string json = "{\"__metadata__\":{\"format\":\"pt\"}}      ";  // 40 bytes, a multiple of 8
  foreign[0] = static_cast<char>(json.size());
  foreign += json;
  write_file(tmp("foreign.safetensors"), foreign);
  bad({"eval", "--checkpoint", tmp("foreign.safetensors")}, {tmp("foreign.safetensors"), "format"});
  write_file(tmp("config.toml"), "[env]\nname = \"cartpole\"\n");  // a text file given as a checkpoint
  bad({"eval", "--checkpoint", tmp("config.toml")}, {tmp("config.toml")});

  // Resuming a run whose latest checkpoint is truncated: refused, and that run is left as it was.
  const std::string damaged = copy_of_run("damaged");
  write_file(damaged + "/checkpoints/latest.safetensors", good.substr(0, good.size() / 2));
  const Snapshot before = snapshot(damaged);
  bad({"train", "--resume", damaged}, {damaged + "/checkpoints/latest.safetensors"});
  EXPECT_EQ(diff_snapshots(before, snapshot(damaged)), "");
}

TEST_F(CliBadInput, CheckpointOfAnotherEnv) {
  const Args pend = {"train",     "--config", cartpole_config(),   "--quiet", "--device",
                     "cpu",       "--set",    "env.name=pendulum", "--set",   "train.total_env_steps=1024",
                     "--run-dir", tmp("pend")};
  const CliResult r = run_cli(pend, s_tmp->path());
  ASSERT_EQ(r.exit_code, 0) << describe(pend, r);
  bad({"eval", "--checkpoint", tmp("pend"), "--config", cartpole_config()},
      {"env", "'pendulum'", "'cartpole'", cartpole_config()});
  const std::string file = tmp("pend") + "/checkpoints/latest.safetensors";
  bad({"eval", "--checkpoint", file, "--config", cartpole_config()}, {file, "env", "'pendulum'", "'cartpole'"});
  // --other-env lets the env differ, not the shapes (Pendulum's 3 observations, CartPole's 4); it
  // needs the --config it applies to.
  bad({"eval", "--checkpoint", file, "--config", cartpole_config(), "--other-env"}, {file, "obs_dim", "3", "4"});
  bad({"eval", "--checkpoint", file, "--other-env"}, {"--other-env", "--config"});
  // Same shapes, another function: a Gaussian policy's weights as the start of a tanh-squashed run.
  bad({"train", "--config", cartpole_config(), "--quiet", "--set", "env.name=pendulum", "--set", "policy.squash=tanh",
       "--set", "train.init_from=" + file, "--run-dir", tmp("pend_squash")},
      {"train.init_from", file, "policy.squash"});
  EXPECT_FALSE(fs::exists(tmp("pend_squash")));

  // A CartPole run whose checkpoint is Pendulum's cannot be resumed; the run is left as it was.
  const std::string swapped = copy_of_run("swapped");
  fs::copy_file(file, swapped + "/checkpoints/latest.safetensors", fs::copy_options::overwrite_existing);
  const Snapshot before = snapshot(swapped);
  bad({"train", "--resume", swapped}, {swapped + "/checkpoints/latest.safetensors", "env", "'pendulum'", "'cartpole'"});
  EXPECT_EQ(diff_snapshots(before, snapshot(swapped)), "");
}

// A checkpoint's bytes carry a CRC-32 per tensor: a flipped byte in the data names its tensor.
// Non-finite weights and out-of-range counters are refused on load, naming the file and the tensor,
// and a resume from them leaves the run as it was.
TEST_F(CliBadInput, DamagedOrNonFiniteCheckpointContents) {
  std::string flipped = read_file(latest());
  flipped[flipped.size() - 5] = static_cast<char>(flipped[flipped.size() - 5] ^ 0x10);
  write_file(tmp("flipped.safetensors"), flipped);
  bad({"eval", "--checkpoint", tmp("flipped.safetensors")}, {tmp("flipped.safetensors"), "checksum", "tensor"});

  // Rewritten with a NaN weight (its checksum dropped, as an older checkpoint has none).
  TensorFile f = read_safetensors(latest());
  for (Tensor& t : f.tensors)
    if (t.name == "learner/params") {
      std::vector<float> v = tensor_values<float>(t);
      v[3] = std::nanf("");
      t = make_tensor(t.name, v, t.shape);
    }
  f.metadata.erase("crc32:learner/params");
  write_safetensors(tmp("nan.safetensors"), f);
  bad({"eval", "--checkpoint", tmp("nan.safetensors")}, {tmp("nan.safetensors"), "learner/params", "non-finite"});

  // A negative iteration counter: the resume is refused and metrics.csv keeps its rows.
  TensorFile g = read_safetensors(latest());
  for (Tensor& t : g.tensors)
    if (t.name == "progress/counters") {
      std::vector<std::int64_t> v = tensor_values<std::int64_t>(t);
      v[0] = -1;
      t = make_tensor(t.name, v, t.shape);
    }
  g.metadata.erase("crc32:progress/counters");
  const std::string run = copy_of_run("counters");
  write_safetensors(run + "/checkpoints/latest.safetensors", g);
  const Snapshot before = snapshot(run);
  bad({"train", "--resume", run}, {run + "/checkpoints/latest.safetensors", "progress/counters", "out of range"});
  EXPECT_EQ(diff_snapshots(before, snapshot(run)), "");
}

// Special files where a file is expected (a FIFO would block a reader forever): refused at once.
TEST(CliSpecialFiles, FifosAreRefusedNotWaitedOn) {
  TempDir tmp;
  const std::string fifo = tmp / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"train", "--config", fifo, "--quiet"}, "not a regular file"},
      {{"rollout", "--model", fifo, "--steps", "1"}, "not a regular file"},
      {{"eval", "--checkpoint", fifo}, "not a regular file"},
  };
  for (const auto& [args, needle] : cases) {
    CliProcess p(args, tmp.path(), tmp.path());
    const CliResult r = p.wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(needle), std::string::npos) << describe(args, r);
  }
}

// Counts beyond their type's range are refused, not saturated (CLI11 turned 99999999999999999999
// into INT64_MAX: a rollout that never ended), and thread counts beyond any machine (a pool of 1e8
// threads never finished starting); bad [env] values in the file are blamed on the file, not on a
// --set that came after them.
TEST(CliBadFlags, OutOfRangeCountsAreRefusedNotSaturated) {
  TempDir tmp;
  const std::string ant = std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml";
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"rollout", "--model", ant, "--steps", "99999999999999999999"}, "--steps: expected an integer in [0, 9223372036854775807]"},
      {{"train", "--config", cartpole_config(), "--seed", "18446744073709551616"}, "--seed: expected an integer"},
      {{"eval", "--checkpoint", "x", "--episodes", "-5"}, "--episodes: expected an integer in [1,"},
      {{"bench", "--env", "cartpole", "--threads", "100000000"}, "--threads: expected an integer in [0, 1024]"},
      {{"train", "--config", cartpole_config(), "--set", "train.threads=100000000"}, "train.threads"},
  };
  for (const auto& [args, needle] : cases) {
    CliProcess p(args, tmp.path(), tmp.path());
    const CliResult r = p.wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(needle), std::string::npos) << describe(args, r);
  }
  write_file(tmp / "q.toml", "[env]\nname = \"quadruped\"\ndr_friction_max = -1\n");
  const Args args = {"train", "--config", tmp / "q.toml", "--set", "env.num_envs=8", "--run-dir", tmp / "run"};
  const CliResult r = run_cli(args, tmp.path());
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_EQ(r.err.rfind("rltrain: error: " + (tmp / "q.toml") + ": env.dr_friction_max", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "run"));
}

// Writes that fail are failures (exit code 5), not successes and not "bad input": a full stdout,
// and metrics.csv hitting a file-size limit part way through a run (as a full disk would).
TEST(CliWriteFailures, FullStdoutAndFullDiskExitWithCode5) {
  TempDir tmp;
  const std::string bin = RLTRAIN_BIN;
  int status = std::system((bin + " envs > /dev/full 2> " + (tmp / "err1")).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 5);
  EXPECT_NE(read_file(tmp / "err1").find("standard output"), std::string::npos) << read_file(tmp / "err1");

  // --out naming a device is written in place (a temp file renamed over it would replace the
  // device node, as root), and its failure is a write failure.
  for (const Args& args : {Args{"inspect", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml", "--out", "/dev/full"},
                           Args{"rollout", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml", "--steps", "2", "--out", "/dev/full"}}) {
    const CliResult r = run_cli(args, tmp.path());
    EXPECT_EQ(r.exit_code, 5) << describe(args, r);
    EXPECT_NE(r.err.find("/dev/full: write failed"), std::string::npos) << describe(args, r);
    struct stat st {};
    ASSERT_EQ(::stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full was replaced by " << describe(args, r);
  }

  const std::string cmd =
      "cd " + tmp.path() + " && ulimit -f 40 && trap '' XFSZ && exec " + bin + " train --config " + cartpole_config() +
      " --quiet --run-dir run --set train.stop_at_target=false --set train.checkpoint_every=5 2> err2";
  status = std::system(("bash -c \"" + cmd + "\"").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 5);
  const std::string err = read_file(tmp / "err2");
  EXPECT_NE(err.find("write failed (disk full or a file-size limit?)"), std::string::npos) << err;
  EXPECT_NE(err.find("--resume"), std::string::npos) << err;
  // What was written before stays usable: the checkpoint loads.
  const Args eval = {"eval", "--checkpoint", tmp / "run", "--episodes", "1"};
  const CliResult e = run_cli(eval, tmp.path());
  EXPECT_EQ(e.exit_code, 0) << describe(eval, e);
}

// A run that diverges (a learning rate that blows the weights up): every non-finite update is
// skipped and counted; max_skipped_updates in a row stop it with exit code 4; the checkpoint kept
// is finite and plays; metrics.csv and summary.json say what happened.
TEST(CliDivergence, NonFiniteUpdatesAreSkippedCountedAndStopTheRun) {
  TempDir tmp;
  const Args args = {"train",           "--config",
                     cartpole_config(), "--quiet",
                     "--device",        "cpu",
                     "--set",           "ppo.learning_rate=1e30",
                     "--set",           "train.checkpoint_every=1",
                     "--set",           "train.max_skipped_updates=40",
                     "--iterations",    "40",
                     "--run-dir",       tmp / "div"};
  const CliResult r = run_cli(args, tmp.path());
  EXPECT_EQ(r.exit_code, 4) << describe(args, r);
  EXPECT_NE(r.err.find("diverged"), std::string::npos) << r.err;
  const Metrics m = read_metrics(tmp / "div/metrics.csv");
  ASSERT_FALSE(m.rows.empty());
  EXPECT_LT(m.rows.size(), 40u) << "the run should have stopped early";
  const int skipped = m.column("skipped_updates");
  ASSERT_GE(skipped, 0);
  EXPECT_GE(std::stoll(m.rows.back()[static_cast<size_t>(skipped)]), 40);
  const auto summary = nlohmann::json::parse(read_file(tmp / "div/summary.json"));
  EXPECT_EQ(summary["stopped_by"], "divergence");
  EXPECT_GE(summary["skipped_updates"].get<std::int64_t>(), 40);
  // The checkpoint left behind is finite: eval loads and plays it.
  const Args eval = {"eval", "--checkpoint", tmp / "div", "--episodes", "2"};
  const CliResult e = run_cli(eval, tmp.path());
  EXPECT_EQ(e.exit_code, 0) << describe(eval, e);
}

TEST_F(CliBadInput, CheckpointOfAnotherShape) {
  bad_set("policy.hidden=[8]", {latest(), "tensor", "params", "policy.hidden"});
  bad_set("policy.hidden=[64, 64, 64]", {latest(), "tensor", "params"});
}

// eval --config takes the env from the file and the policy (shape, activation, squash) from the
// checkpoint: a [policy] section there does not change how the trained weights act.
TEST_F(CliBadInput, EvalConfigKeepsTheCheckpointsPolicy) {
  write_file(tmp("narrow.toml"), "[policy]\nhidden = [8]\nactivation = \"relu\"\n");
  const Args plain = {"eval", "--checkpoint", run_dir(), "--episodes", "3", "--deterministic"};
  Args other = plain;
  other.insert(other.end(), {"--config", tmp("narrow.toml")});
  const CliResult a = run_cli(plain, s_tmp->path()), b = run_cli(other, s_tmp->path());
  ASSERT_EQ(a.exit_code, 0) << describe(plain, a);
  ASSERT_EQ(b.exit_code, 0) << describe(other, b);
  EXPECT_EQ(a.out, b.out);
}

// eval --other-env: a policy on another env with its sizes, as a flat-terrain Go1 policy on the rough
// terrain (Playground plays its flat policy there); without the flag the same call is refused.
TEST_F(CliBadInput, EvalOtherEnvOfTheSameSizes) {
  const std::string configs = std::string(RLTRAIN_SOURCE_DIR) + "/configs/";
  const Args flat = {"train", "--config", configs + "go1_joystick.toml", "--quiet", "--device", "cpu",
                     "--set", "env.num_envs=2", "--set", "ppo.num_steps=4", "--set", "ppo.num_minibatches=1",
                     "--set", "train.total_env_steps=8", "--run-dir", tmp("go1_flat")};
  const CliResult t = run_cli(flat, s_tmp->path());
  ASSERT_EQ(t.exit_code, 0) << describe(flat, t);
  const std::string rough = configs + "go1_joystick_rough.toml";
  bad({"eval", "--checkpoint", tmp("go1_flat"), "--config", rough}, {"'go1_joystick'", "'go1_joystick_rough'", rough});
  const Args other = {"eval", "--checkpoint", tmp("go1_flat"), "--config", rough, "--other-env", "--episodes", "2"};
  const CliResult e = run_cli(other, s_tmp->path());
  ASSERT_EQ(e.exit_code, 0) << describe(other, e);
  EXPECT_EQ(e.out.rfind("go1_joystick_rough: 2 episodes", 0), 0u) << e.out;
  EXPECT_NE(e.out.find("tracking RMS error"), std::string::npos) << e.out;
}

// train.init_from names a file that is not there, or a checkpoint whose policy does not fit: one
// line naming the key and the file, and no new run directory.
TEST_F(CliBadInput, InitFromMissingOrMismatchedCheckpoint) {
  bad(concat(tiny_cartpole(1), {"--set", "train.init_from=" + tmp("nowhere"), "--run-dir", tmp("init_a")}),
      {"train.init_from", tmp("nowhere"), "no such checkpoint"});
  bad(concat(tiny_cartpole(1), {"--set", "policy.hidden=[8]", "--set", "train.init_from=" + run_dir(), "--run-dir",
                                tmp("init_b")}),
      {"train.init_from", latest(), "tensor", "params"});
  bad(concat(tiny_cartpole(1), {"--set", "policy.activation=relu", "--set", "train.init_from=" + latest(),
                                "--run-dir", tmp("init_c")}),
      {"train.init_from", latest(), "policy.activation"});
  write_file(tmp("acrobot_init.toml"), "[env]\nname = \"acrobot\"\n[train]\ninit_from = \"" + run_dir() + "\"\n");
  bad({"train", "--config", tmp("acrobot_init.toml"), "--quiet", "--run-dir", tmp("init_d")},
      {tmp("acrobot_init.toml"), "train.init_from", latest(), "tensor"});
  for (const char* d : {"init_a", "init_b", "init_c", "init_d"}) EXPECT_FALSE(fs::exists(tmp(d))) << d;
}

TEST_F(CliBadInput, TrainOntoExistingRunRefuses) {
  bad({"train", "--config", cartpole_config(), "--run-dir", run_dir()}, {run_dir(), "already holds a run", "--resume"});
  bad(concat(tiny_cartpole(2), {"--run-dir", run_dir()}), {run_dir(), "already holds a run"});
}

TEST_F(CliBadInput, ResumeWithoutConfig) {
  fs::create_directories(tmp("not_a_run"));
  bad({"train", "--resume", tmp("not_a_run")}, {tmp("not_a_run"), "config.toml"});
  bad({"train", "--resume", tmp("nowhere")}, {tmp("nowhere"), "config.toml"});
  EXPECT_FALSE(fs::exists(tmp("nowhere")));
  // A config but no checkpoint: names the checkpoint it looked for.
  fs::create_directories(tmp("no_ckpt"));
  fs::copy_file(run_dir() + "/config.toml", tmp("no_ckpt/config.toml"));
  bad({"train", "--resume", tmp("no_ckpt")}, {tmp("no_ckpt") + "/checkpoints/latest.safetensors", "missing"});
  EXPECT_EQ(snapshot(tmp("no_ckpt")).size(), 1u);
}

TEST_F(CliBadInput, TrainWithoutConfigOrResume) { bad({"train", "--quiet"}, {"--config", "--resume"}); }

// CLI11's parse errors: exit code 2, a message on stderr, nothing on stdout.
TEST_F(CliBadInput, UnknownSubcommandOrFlag) {
  struct Case {
    Args args;
    std::string needle;  // must appear on stderr ("" = any message)
  };
  const std::vector<Case> cases = {
      {{}, "subcommand"},
      {{"frobnicate"}, ""},
      {{"train", "--frob"}, "--frob"},
      {{"envs", "--verbose"}, "--verbose"},
      {{"eval"}, "--checkpoint"},
      {{"train", "--config", cartpole_config(), "--resume", run_dir()}, "excludes"},
      {{"train", "--resume", run_dir(), "--iterations", "-1"}, "--iterations"},
      {{"train", "--resume", run_dir(), "--seed", "abc"}, "--seed"},
      {{"eval", "--checkpoint", run_dir(), "--episodes", "many"}, "--episodes"},
  };
  for (const Case& c : cases) {
    const CliResult r = run_cli(c.args, s_tmp->path());
    SCOPED_TRACE(describe(c.args, r));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(r.err.empty());
    if (!c.needle.empty()) {
      EXPECT_NE(r.err.find(c.needle), std::string::npos) << "stderr lacks \"" << c.needle << "\"";
    }
  }
}

// bench --phases: where a PPO iteration's CPU time goes, one line per row and in the JSON.
TEST(CliBench, PhasesSplitThePpoIterationsCpuTime) {
  TempDir tmp;
  const Args bench = {"bench",   "--env", "cartpole", "--device", "cpu", "--threads", "1", "--num-envs",
                      "256",     "--steps", "5",      "--phases", "--json", tmp / "b.json"};
  const CliResult r = run_cli(bench, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << describe(bench, r);
  EXPECT_NE(r.out.find("PPO iteration, CPU time"), std::string::npos) << r.out;
  const auto js = read_json(tmp / "b.json")["results"][0]["ppo_phase_cpu_seconds_per_iteration"];
  ASSERT_TRUE(js.is_object()) << js.dump();
  ASSERT_EQ(js.size(), static_cast<std::size_t>(rlt::kNumPpoPhases)) << js.dump();
  double total = 0;
  for (int p = 0; p < rlt::kNumPpoPhases; ++p) {
    const char* name = rlt::ppo_phase_name(p);
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
    ASSERT_TRUE(js.contains(name)) << name;
    EXPECT_GE(js[name].get<double>(), 0.0) << name;
    total += js[name].get<double>();
  }
  // The update runs 4 epochs of forward and backward passes over the 256 x 32 samples, and every
  // rollout step steps the envs: both take time (CPU time counts in microseconds or finer).
  EXPECT_GT(js["fwd+bwd"].get<double>(), 0.0);
  EXPECT_GT(js["env step"].get<double>(), 0.0);
  EXPECT_GT(total, js["fwd+bwd"].get<double>());
  // Without PPO rows there is nothing to split.
  const CliResult no = run_cli({"bench", "--env", "cartpole", "--num-envs", "16", "--phases", "--no-ppo"}, tmp.path());
  EXPECT_EQ(no.exit_code, 2);
  EXPECT_NE(no.err.find("--no-ppo excludes --phases"), std::string::npos) << no.err;
}

// bench --model --lanes: the physics in SIMD lanes on a Playground scene, the JSON says so; a model the
// slots do not cover (the Ant: no iterations budget) and --lanes without --model are refused, exit 2.
TEST(CliBench, ModelInLanes) {
  TempDir tmp;
  const std::string go1 = std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml";
  const Args bench = {"bench", "--model", go1, "--device", "cpu", "--threads", "1", "--num-envs", "9", "--steps", "2",
                      "--control-dt", "0.02", "--lanes", "--json", tmp / "b.json"};
  const CliResult r = run_cli(bench, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << describe(bench, r);
  EXPECT_NE(r.out.find("in SIMD lanes"), std::string::npos) << r.out;
  const auto js = read_json(tmp / "b.json");
  EXPECT_TRUE(js["lanes"].get<bool>());
  EXPECT_EQ(js["results"][0]["nonfinite_envs"].get<long>(), 0);
  const std::string ant = std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml";
  CliResult no = run_cli({"bench", "--model", ant, "--device", "cpu", "--num-envs", "8", "--lanes"}, tmp.path());
  EXPECT_EQ(no.exit_code, 2);
  EXPECT_NE(no.err.find("--lanes: " + ant + ": not in lanes yet: no iterations budget"), std::string::npos) << no.err;
  EXPECT_EQ(no.out.find("num_envs"), std::string::npos) << "it measured before refusing: " << no.out;
  no = run_cli({"bench", "--env", "cartpole", "--num-envs", "8", "--lanes", "--no-ppo"}, tmp.path());
  EXPECT_EQ(no.exit_code, 2);
  EXPECT_NE(no.err.find("--lanes requires --model"), std::string::npos) << no.err;
}

TEST_F(CliBadInput, BenchBadNumEnvs) {
  for (const std::string sizes : {"0,x", "4,x", "", "4,,8", "-1", "1.5"})
    bad({"bench", "--num-envs", sizes, "--no-ppo"},
        {"--num-envs", "expected a comma-separated list of positive integers"});
  bad({"bench", "--env", "cartpol", "--num-envs", "1"}, {"--env", "unknown env 'cartpol'"});
}

// ---- 2. resume bit for bit ---------------------------------------------------------------------

class CliResume : public ::testing::Test {
 protected:
  TempDir m_tmp;
  std::string tmp(const std::string& rel) const { return m_tmp / rel; }

  CliResult ok(const Args& args) {
    CliResult r = run_cli(args, m_tmp.path());
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    return r;
  }

  // B's metrics rows (but their timing columns) and final state are A's.
  void expect_same_run(const std::string& a, const std::string& b, std::int64_t iterations) {
    const Metrics ma = read_metrics(a + "/metrics.csv"), mb = read_metrics(b + "/metrics.csv");
    EXPECT_EQ(ma.header, mb.header);
    ASSERT_EQ(mb.rows.size(), static_cast<size_t>(iterations));
    ASSERT_EQ(ma.rows.size(), mb.rows.size());
    const auto ra = untimed_rows(ma), rb = untimed_rows(mb);
    for (size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i], rb[i]) << "metrics row " << i + 1 << " differs";
    const std::string ca = a + "/checkpoints/latest.safetensors", cb = b + "/checkpoints/latest.safetensors";
    expect_same_tensors(ca, cb, {"learner/"});
    expect_same_tensors(ca, cb, {"env/", "progress/counters", "progress/recent_"});
    const auto sa = read_json(a + "/summary.json"), sb = read_json(b + "/summary.json");
    for (const char* key :
         {"final_mean_return", "final_mean_length", "episodes", "env_steps", "iterations", "finished"})
      EXPECT_EQ(sa[key], sb[key]) << "summary.json " << key;
  }
};

// Placement (issue 18): the envs through the cross-device copies with the CPU on both sides (the
// CPU twin of the CPU<->CUDA staging) train exactly as without them.
TEST_F(CliResume, PlacementCopiesTrainBitForBit) {
  const std::int64_t n = 6;
  ok(concat(tiny_cartpole(n), {"--run-dir", tmp("direct")}));
  const CliResult r = ok(concat(tiny_cartpole(n), {"--env-device", "cpu", "--learner-device", "cpu",
                                                   "--placement-copies", "--run-dir", tmp("placed")}));
  expect_same_run(tmp("direct"), tmp("placed"), n);
  const auto summary = read_json(tmp("placed/summary.json"));
  EXPECT_EQ(summary["device"], "cpu");
  EXPECT_EQ(summary["env_device"], "cpu");
}

// train.init_from: B starts from A's policy (weights and observation normalizer), with fresh envs,
// optimizer and counters. With a learning rate of 1e-30 B's one update cannot move a weight, so B
// ends with A's weights; C, the same run without init_from, ends with its own random ones.
TEST_F(CliResume, InitFromStartsFromAnotherRunsPolicy) {
  ok(concat(tiny_cartpole(3), {"--set", "ppo.normalize_obs=true", "--set", "ppo.normalize_reward=true", "--run-dir",
                                tmp("A")}));
  const Args frozen = {"--set", "ppo.learning_rate=1e-30", "--set", "ppo.lr_schedule=\"constant\"", "--set",
                       "ppo.normalize_obs=true", "--set", "ppo.normalize_reward=true"};
  ok(concat(concat(tiny_cartpole(2), frozen),
            {"--set", "train.init_from=" + tmp("A"), "--iterations", "1", "--run-dir", tmp("B")}));
  ok(concat(concat(tiny_cartpole(1), frozen), {"--run-dir", tmp("C")}));
  const std::string a = tmp("A/checkpoints/latest.safetensors"), b = tmp("B/checkpoints/latest.safetensors"),
                    c = tmp("C/checkpoints/latest.safetensors");
  const auto pa = read_safetensors(a).values<float>("learner/params"), pb = read_safetensors(b).values<float>("learner/params"),
             pc = read_safetensors(c).values<float>("learner/params");
  ASSERT_EQ(pa.size(), pb.size());
  ASSERT_EQ(pa.size(), pc.size());
  double max_ab = 0, max_ac = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    max_ab = std::max(max_ab, std::abs(double(pa[i]) - double(pb[i])));
    max_ac = std::max(max_ac, std::abs(double(pa[i]) - double(pc[i])));
  }
  EXPECT_LE(max_ab, 1e-20) << "B did not start from A's weights";
  EXPECT_GT(max_ac, 1e-3) << "C should have its own weights";
  // Fresh counters: B is one iteration old, its own run with A's path in its config.
  EXPECT_EQ(checkpoint_iteration(b), 1);
  EXPECT_EQ(read_metrics(tmp("B/metrics.csv")).rows.size(), 1u);
  EXPECT_NE(read_file(tmp("B/config.toml")).find("init_from = \"" + tmp("A") + "\""), std::string::npos);
  // The normalizers came along with their counts: B's observation and return counts are A's plus
  // one rollout (C's, less the 16 envs' first observations that start() counts and B's restore
  // replaces), its Adam step count its own (one update of num_epochs x num_minibatches).
  const auto ca = read_safetensors(a).values<double>("learner/counts"), cb = read_safetensors(b).values<double>("learner/counts"),
             cc = read_safetensors(c).values<double>("learner/counts");
  ASSERT_EQ(ca.size(), 3u);
  EXPECT_GT(ca[0], cc[0]);
  EXPECT_DOUBLE_EQ(cb[0], ca[0] + cc[0] - 16);
  EXPECT_DOUBLE_EQ(cb[1], ca[1] + cc[1]);
  EXPECT_EQ(cb[2], cc[2]);
  EXPECT_GT(ca[2], cc[2]);
  // --resume continues B as a run of its own (init_from is not read again).
  fs::rename(tmp("A"), tmp("A_moved"));
  ok({"train", "--resume", tmp("B"), "--quiet"});
  EXPECT_EQ(checkpoint_iteration(b), 2);
}

// A: K iterations, then --resume to the end; B: the same in one go.
TEST_F(CliResume, ContinuesBitForBit) {
  const std::int64_t n = 10;
  ok(concat(tiny_cartpole(n), {"--iterations", "4", "--run-dir", tmp("A")}));
  EXPECT_EQ(read_metrics(tmp("A/metrics.csv")).rows.size(), 4u);
  EXPECT_EQ(read_json(tmp("A/summary.json"))["finished"], false);
  ok({"train", "--resume", tmp("A"), "--quiet"});
  ok(concat(tiny_cartpole(n), {"--run-dir", tmp("B")}));
  expect_same_run(tmp("A"), tmp("B"), n);
  EXPECT_EQ(read_json(tmp("A/summary.json"))["finished"], true);
  expect_no_temp_files(tmp("A"));
  expect_no_temp_files(tmp("B"));
}

// Several resumes in a row, on a continuous env with observation and reward normalization (their
// running statistics must travel through the checkpoint too).
TEST_F(CliResume, ContinuesBitForBitInChunksWithNormalizers) {
  const std::int64_t n = 10;
  const Args base = {"train",           "--config",
                     cartpole_config(), "--quiet",
                     "--device",        "cpu",
                     "--set",           "env.name=pendulum",
                     "--set",           "env.num_envs=8",
                     "--set",           "ppo.num_steps=16",
                     "--set",           "ppo.normalize_obs=true",
                     "--set",           "ppo.normalize_reward=true",
                     "--set",           "train.total_env_steps=" + std::to_string(n * 128),
                     "--set",           "train.stop_at_target=false"};
  ok(concat(base, {"--iterations", "3", "--run-dir", tmp("A")}));
  for (int k = 0; k < 2; ++k) ok({"train", "--resume", tmp("A"), "--iterations", "3", "--quiet"});
  EXPECT_EQ(read_metrics(tmp("A/metrics.csv")).rows.size(), 9u);
  ok({"train", "--resume", tmp("A"), "--quiet"});
  ok(concat(base, {"--run-dir", tmp("B")}));
  expect_same_run(tmp("A"), tmp("B"), n);
  // Resuming a finished run changes nothing that matters.
  ok({"train", "--resume", tmp("A"), "--quiet"});
  expect_same_run(tmp("A"), tmp("B"), n);
}

// A run stopped between checkpoints: the metrics rows written after its last checkpoint are
// trimmed on resume and recomputed identically. The state on disk is that of a run killed during
// iteration 8 with checkpoint_every = 3: rows 1-7, latest = iteration 6.
TEST_F(CliResume, RowsAfterTheCheckpointAreTrimmedAndRecomputed) {
  const std::int64_t n = 10;
  const Args base = concat(tiny_cartpole(n), {"--set", "train.checkpoint_every=3"});
  ok(concat(base, {"--iterations", "7", "--run-dir", tmp("A")}));
  const std::string ckpts = tmp("A/checkpoints/");
  ASSERT_TRUE(fs::exists(ckpts + "iter_000003.safetensors"));
  ASSERT_TRUE(fs::exists(ckpts + "iter_000006.safetensors"));
  fs::copy_file(ckpts + "iter_000006.safetensors", ckpts + "latest.safetensors", fs::copy_options::overwrite_existing);
  ASSERT_EQ(read_metrics(tmp("A/metrics.csv")).rows.size(), 7u);
  ASSERT_EQ(checkpoint_iteration(ckpts + "latest.safetensors"), 6);
  // Row 7 as the stopped call wrote it, and as the resumed call must write it again.
  const auto row7_before = untimed_rows(read_metrics(tmp("A/metrics.csv")))[6];

  ok({"train", "--resume", tmp("A"), "--quiet"});
  ok(concat(base, {"--run-dir", tmp("B")}));
  expect_same_run(tmp("A"), tmp("B"), n);
  const Metrics ma = read_metrics(tmp("A/metrics.csv"));
  for (size_t i = 0; i < ma.rows.size(); ++i) EXPECT_EQ(ma.rows[i][0], std::to_string(i + 1)) << "row " << i + 1;
  EXPECT_EQ(untimed_rows(ma)[6], row7_before);
  for (const char* name : {"iter_000003.safetensors", "iter_000006.safetensors", "iter_000009.safetensors"})
    expect_same_tensors(tmp("A/checkpoints/") + name, tmp("B/checkpoints/") + name, {"learner/", "env/"});
}

// train.stats_readback = "lagged" (the default on CUDA) on the CPU: the loop reads each iteration's
// statistics after queuing the next one, yet writes the same run as "sync": every metrics row, the
// checkpoints of checkpoint_every and the last one, the summary; and a lagged run resumes to the
// same end.
TEST_F(CliResume, LaggedStatsReadbackWritesTheSameRun) {
  const std::int64_t n = 9;
  const Args base = concat(tiny_cartpole(n), {"--set", "train.checkpoint_every=4"});
  const Args lagged = concat(base, {"--set", "train.stats_readback=lagged"});
  ok(concat(lagged, {"--run-dir", tmp("A")}));
  ok(concat(base, {"--set", "train.stats_readback=sync", "--run-dir", tmp("B")}));
  expect_same_run(tmp("A"), tmp("B"), n);
  for (const char* name : {"iter_000004.safetensors", "iter_000008.safetensors"})
    expect_same_tensors(tmp("A/checkpoints/") + name, tmp("B/checkpoints/") + name, {"learner/", "env/"});
  ok(concat(lagged, {"--iterations", "6", "--run-dir", tmp("C")}));
  EXPECT_EQ(read_metrics(tmp("C/metrics.csv")).rows.size(), 6u);
  EXPECT_EQ(checkpoint_iteration(tmp("C/checkpoints/latest.safetensors")), 6);
  ok({"train", "--resume", tmp("C"), "--quiet"});
  expect_same_run(tmp("C"), tmp("B"), n);
}

// The target and divergence stops when lagged: iteration k's statistics decide after k + 1 is queued,
// so the run stops after k + 1 (read at once, with its row; a checkpoint for the target) where "sync"
// stops after k, exactly one later whatever k + 1's own statistics say (a window of 3 episodes dips
// below the target again at some seeds); the rows they share are the same.
TEST_F(CliResume, LaggedStatsReadbackStopsExactlyOneIterationLater) {
  for (const char* seed : {"1", "2", "3"}) {
    SCOPED_TRACE(std::string("seed ") + seed);
    const Args base =
        concat(tiny_cartpole(200), {"--seed", seed, "--set", "train.stop_at_target=true", "--set",
                                    "train.target_return=60", "--set", "train.eval_episodes=3"});
    const std::string s = tmp(std::string("S") + seed), l = tmp(std::string("L") + seed);
    ok(concat(base, {"--set", "train.stats_readback=sync", "--run-dir", s}));
    ok(concat(base, {"--set", "train.stats_readback=lagged", "--run-dir", l}));
    const Metrics ms = read_metrics(s + "/metrics.csv"), ml = read_metrics(l + "/metrics.csv");
    ASSERT_LT(ms.rows.size(), 200u) << "the target was not reached: nothing to check";
    ASSERT_EQ(ml.rows.size(), ms.rows.size() + 1);
    const auto rs = untimed_rows(ms), rl = untimed_rows(ml);
    for (size_t i = 0; i < rs.size(); ++i) EXPECT_EQ(rs[i], rl[i]) << "metrics row " << i + 1 << " differs";
    EXPECT_EQ(read_json(s + "/summary.json")["reached_target"], true);
    EXPECT_EQ(read_json(l + "/summary.json")["reached_target"], true);
    EXPECT_EQ(checkpoint_iteration(l + "/checkpoints/latest.safetensors"), static_cast<std::int64_t>(ml.rows.size()));
  }
  // Divergence: a learning rate that makes every update non-finite (each one skipped).
  const Args diverging = concat(tiny_cartpole(200), {"--set", "ppo.learning_rate=1e30", "--set",
                                                     "train.max_skipped_updates=8"});
  const CliResult rs =
      run_cli(concat(diverging, {"--set", "train.stats_readback=sync", "--run-dir", tmp("DS")}), m_tmp.path());
  const CliResult rl =
      run_cli(concat(diverging, {"--set", "train.stats_readback=lagged", "--run-dir", tmp("DL")}), m_tmp.path());
  EXPECT_EQ(rs.exit_code, 4) << rs.err;
  EXPECT_EQ(rl.exit_code, 4) << rl.err;
  EXPECT_NE(rl.err.find("diverged"), std::string::npos) << rl.err;
  const Metrics ds = read_metrics(tmp("DS/metrics.csv")), dl = read_metrics(tmp("DL/metrics.csv"));
  ASSERT_LT(ds.rows.size(), 200u) << "the run did not diverge: nothing to check";
  EXPECT_EQ(dl.rows.size(), ds.rows.size() + 1);
}

// Waits (at most 60 s) until the metrics.csv at path holds `rows` rows below its header.
void wait_for_metrics_rows(const std::string& path, int rows) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (std::count(text.begin(), text.end(), '\n') >= rows + 1) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// The same, with a real kill (SIGKILL) part way through: whatever point it lands at, the resumed
// run ends where the uninterrupted one does.
TEST_F(CliResume, KilledRunResumesBitForBit) {
  const std::int64_t n = 40;
  const Args base = concat(tiny_cartpole(n), {"--set", "train.checkpoint_every=4"});
  {
    CliProcess p(concat(base, {"--run-dir", tmp("A")}), m_tmp.path(), m_tmp.path());
    wait_for_metrics_rows(tmp("A/metrics.csv"), 10);
    p.kill_now();
    p.wait();
  }
  const std::size_t rows = read_metrics(tmp("A/metrics.csv")).rows.size();
  const std::int64_t ckpt = checkpoint_iteration(tmp("A/checkpoints/latest.safetensors"));
  std::printf("killed after %zu metrics rows; latest checkpoint at iteration %lld\n", rows,
              static_cast<long long>(ckpt));
  EXPECT_LE(ckpt, static_cast<std::int64_t>(rows));
  ok({"train", "--resume", tmp("A"), "--quiet"});
  ok(concat(base, {"--run-dir", tmp("B")}));
  expect_same_run(tmp("A"), tmp("B"), n);
}

// SIGTERM, SIGINT or SIGHUP part way through: the run stops at the end of its iteration with a
// checkpoint of that iteration and a summary, exit code 3 (kExitInterrupted), and resumes to end
// where the uninterrupted run does.
TEST_F(CliResume, SignalStopsWithACheckpointAndResumesBitForBit) {
  const std::int64_t n = 400;
  const Args base = tiny_cartpole(n);
  ok(concat(base, {"--run-dir", tmp("B")}));
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(sig);
    const std::string a = tmp("A" + std::to_string(sig));
    CliProcess p(concat(base, {"--run-dir", a}), m_tmp.path(), m_tmp.path());
    wait_for_metrics_rows(a + "/metrics.csv", 5);
    p.send(sig);
    const CliResult r = p.wait();
    const std::size_t rows = read_metrics(a + "/metrics.csv").rows.size();
    if (rows == static_cast<std::size_t>(n)) {
      std::printf("the run ended before the signal arrived; nothing to check for signal %d\n", sig);
      continue;
    }
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
    // The checkpoint is that of the last row written; the summary says why the run stopped.
    EXPECT_EQ(checkpoint_iteration(a + "/checkpoints/latest.safetensors"), static_cast<std::int64_t>(rows));
    const auto summary = read_json(a + "/summary.json");
    EXPECT_EQ(summary["finished"], false);
    EXPECT_EQ(summary["stopped_by"], sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
    expect_no_temp_files(a);
    ok({"train", "--resume", a, "--quiet"});
    expect_same_run(a, tmp("B"), n);
    EXPECT_EQ(read_json(a + "/summary.json")["stopped_by"], nullptr);
  }
}

// `timeout -s TERM` and a terminal's Ctrl-C signal the process and then its process group, so one
// request can arrive twice within microseconds to milliseconds. The repeat must not turn the clean
// stop into a kill that loses the run (it did: a one-shot handler let the second SIGTERM terminate).
TEST_F(CliResume, SignalDeliveredTwiceStillStopsCleanly) {
  const std::int64_t n = 400;
  const std::string a = tmp("A");
  CliProcess p(concat(tiny_cartpole(n), {"--run-dir", a}), m_tmp.path(), m_tmp.path());
  wait_for_metrics_rows(a + "/metrics.csv", 5);
  p.send(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the handler has run by now
  p.send(SIGTERM);
  const CliResult r = p.wait();
  const std::size_t rows = read_metrics(a + "/metrics.csv").rows.size();
  if (rows == static_cast<std::size_t>(n)) GTEST_SKIP() << "the run ended before the signal arrived";
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(checkpoint_iteration(a + "/checkpoints/latest.safetensors"), static_cast<std::int64_t>(rows));
  EXPECT_EQ(read_json(a + "/summary.json")["stopped_by"], "SIGTERM");
}

// A run directory written before metrics.csv gained its last two columns resumes with the new
// header; its old rows keep their values and leave the new cells empty.
TEST_F(CliResume, OldMetricsHeaderIsExtendedOnResume) {
  ok(concat(tiny_cartpole(6), {"--iterations", "3", "--run-dir", tmp("A")}));
  std::string old;
  for (const std::string& line : lines_of(read_file(tmp("A/metrics.csv")))) {
    auto cells = split(line, ',');
    cells.resize(cells.size() - 2);
    std::string row;
    for (size_t i = 0; i < cells.size(); ++i) row += (i ? "," : "") + cells[i];
    old += row + "\n";
  }
  write_file(tmp("A/metrics.csv"), old);
  ok({"train", "--resume", tmp("A"), "--quiet"});
  const Metrics m = read_metrics(tmp("A/metrics.csv"));
  EXPECT_EQ(m.header, kMetricsColumns);
  ASSERT_EQ(m.rows.size(), 6u);
  EXPECT_EQ(m.rows[0].size(), kMetricsColumns.size());
  EXPECT_EQ(m.rows[0].back(), "");
  EXPECT_EQ(m.rows[5].back(), "0");
}

// A run killed before its first checkpoint cannot be resumed; --restart starts it over in place
// (and removes what the kill left half-written), but never over a run that has a checkpoint.
TEST_F(CliResume, RestartStartsOverARunWithoutACheckpoint) {
  const Args base = tiny_cartpole(3);
  fs::create_directories(tmp("A/checkpoints"));
  write_file(tmp("A/config.toml"), "# a run killed before its first checkpoint\n");
  write_file(tmp("A/metrics.csv"), "iteration\n");
  write_file(tmp("A/checkpoints/latest.safetensors.tmp.4242"), "half written");
  CliResult r = run_cli(concat(base, {"--run-dir", tmp("A")}), m_tmp.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--restart"), std::string::npos) << r.err;
  ok(concat(base, {"--run-dir", tmp("A"), "--restart"}));
  EXPECT_EQ(read_metrics(tmp("A/metrics.csv")).rows.size(), 3u);
  expect_no_temp_files(tmp("A"));
  ok(concat(base, {"--run-dir", tmp("B")}));
  expect_same_run(tmp("A"), tmp("B"), 3);
  // Now it has a checkpoint: --restart refuses and points at --resume; nothing changes.
  const Snapshot before = snapshot(tmp("A"));
  r = run_cli(concat(base, {"--run-dir", tmp("A"), "--restart"}), m_tmp.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(tmp("A")), before);
  r = run_cli({"train", "--resume", tmp("A"), "--restart", "--quiet"}, m_tmp.path());
  EXPECT_EQ(r.exit_code, 2);
}

// ---- 3. determinism across thread counts -------------------------------------------------------

class CliDeterminism : public CliResume {};

TEST_F(CliDeterminism, SameSeedSameMetricsWhateverTheThreads) {
  for (const std::string env : {"cartpole", "pendulum"}) {
    SCOPED_TRACE(env);
    const Args base = concat(tiny_cartpole(8), {"--set", "env.name=" + env, "--set", "ppo.normalize_obs=true"});
    for (const std::string threads : {"1", "2", "3"})
      ok(concat(base, {"--set", "train.threads=" + threads, "--run-dir", tmp(env + "_t" + threads)}));
    for (const std::string threads : {"2", "3"}) expect_same_run(tmp(env + "_t1"), tmp(env + "_t" + threads), 8);
  }
}

TEST_F(CliDeterminism, OtherSeedOtherMetrics) {
  ok(concat(tiny_cartpole(6), {"--seed", "1", "--run-dir", tmp("s1")}));
  ok(concat(tiny_cartpole(6), {"--seed", "2", "--run-dir", tmp("s2")}));
  const auto r1 = untimed_rows(read_metrics(tmp("s1/metrics.csv")));
  const auto r2 = untimed_rows(read_metrics(tmp("s2/metrics.csv")));
  ASSERT_EQ(r1.size(), 6u);
  ASSERT_EQ(r2.size(), 6u);
  for (size_t i = 0; i < r1.size(); ++i) {
    EXPECT_EQ(r1[i][0], r2[i][0]);  // iteration and env_steps agree ...
    EXPECT_EQ(r1[i][1], r2[i][1]);
    EXPECT_NE(r1[i], r2[i]) << "row " << i + 1 << " is the same for seeds 1 and 2";  // ... the rest does not
  }
  const auto p1 = read_safetensors(tmp("s1/checkpoints/latest.safetensors")).values<float>("learner/params");
  const auto p2 = read_safetensors(tmp("s2/checkpoints/latest.safetensors")).values<float>("learner/params");
  EXPECT_NE(p1, p2);
}

// ---- 4. the run directory ----------------------------------------------------------------------

TEST(CliRunDir, HoldsResolvedConfigMetricsSummaryAndCheckpoints) {
  TempDir tmp;
  const std::string run = tmp / "run";
  const Args sets = {"env.num_envs=8",
                     "env.max_episode_steps=200",
                     "ppo.num_steps=16",
                     "ppo.num_minibatches=2",
                     "policy.hidden=[32, 16]",
                     "ppo.learning_rate=1e-3",
                     "train.total_env_steps=1280",
                     "train.stop_at_target=false",
                     "train.checkpoint_every=5"};
  Args args = {"train", "--config", cartpole_config(), "--seed", "7", "--device", "cpu", "--run-dir", run};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const CliResult r = run_cli(args, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("run dir " + run), std::string::npos) << r.out;

  // config.toml: exactly the resolved config, --set, --seed and --device included; it loads back.
  Config expected = load_config(cartpole_config());
  for (const auto& s : sets) apply_override(expected, s);
  expected.train.seed = 7;
  expected.train.device = "cpu";
  EXPECT_EQ(read_file(run + "/config.toml"), to_toml(expected));
  Config saved = load_config(run + "/config.toml");
  EXPECT_EQ(saved.env.num_envs, 8);
  EXPECT_EQ(saved.env.params.at("max_episode_steps"), 200.0);
  EXPECT_EQ(saved.ppo.num_steps, 16);
  EXPECT_EQ(saved.policy.hidden, (std::vector<int>{32, 16}));
  EXPECT_EQ(saved.ppo.learning_rate, 1e-3);
  EXPECT_EQ(saved.train.seed, 7u);
  EXPECT_EQ(saved.train.device, "cpu");
  saved.source = expected.source;
  EXPECT_EQ(to_toml(saved), to_toml(expected));

  // metrics.csv: the trainer's columns, one row per iteration (1280 steps / (8 x 16) = 10).
  const Metrics m = read_metrics(run + "/metrics.csv");
  EXPECT_EQ(m.header, kMetricsColumns);
  ASSERT_EQ(m.rows.size(), 10u);
  for (size_t i = 0; i < m.rows.size(); ++i) {
    ASSERT_EQ(m.rows[i].size(), kMetricsColumns.size()) << "row " << i + 1;
    EXPECT_EQ(m.rows[i][0], std::to_string(i + 1));
    EXPECT_EQ(m.rows[i][1], std::to_string((i + 1) * 128));
  }

  // summary.json.
  const auto s = read_json(run + "/summary.json");
  ASSERT_TRUE(s.contains("final_mean_return") && s["final_mean_return"].is_number()) << s.dump();
  EXPECT_NEAR(s["final_mean_return"].get<double>(), std::stod(m.rows.back()[3]),
              1e-6 * std::fabs(std::stod(m.rows.back()[3])));
  EXPECT_EQ(s["env_steps"], 1280);
  EXPECT_EQ(s["iterations"], 10);
  ASSERT_TRUE(s.contains("wall_seconds"));
  EXPECT_GT(s["wall_seconds"].get<double>(), 0.0);
  EXPECT_EQ(s["device"], "cpu");
  EXPECT_EQ(s["env"], "cartpole");
  EXPECT_EQ(s["seed"], 7);
  EXPECT_EQ(s["finished"], true);
  EXPECT_EQ(s["reached_target"], false);

  // Checkpoints: the latest and every 5th iteration; nothing half-written left behind.
  const std::string latest = run + "/checkpoints/latest.safetensors";
  ASSERT_TRUE(fs::exists(latest));
  EXPECT_TRUE(fs::exists(run + "/checkpoints/iter_000005.safetensors"));
  EXPECT_TRUE(fs::exists(run + "/checkpoints/iter_000010.safetensors"));
  const TensorFile ck = read_safetensors(latest);
  EXPECT_EQ(ck.meta("env"), "cartpole");
  EXPECT_EQ(ck.values<std::int64_t>("progress/counters", {3})[0], 10);
  EXPECT_EQ(ck.values<std::int64_t>("progress/counters", {3})[1], 1280);
  expect_no_temp_files(run);

  // TensorBoard: one event file (when built with it; tests/apps/tensorboard_test.py reads it).
  int events = 0;
  for (const auto& e : fs::directory_iterator(run))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) {
      ++events;
      EXPECT_GT(fs::file_size(e.path()), 0u);
    }
  EXPECT_EQ(events, TensorBoardWriter::available() ? 1 : 0);
}

// ---- export ------------------------------------------------------------------------------------

// `rltrain export` writes the ONNX model (tests/apps/onnx_export_test.py runs it in onnxruntime),
// or, built without libonnx-dev, says so; bad input is exit 2 with nothing left behind.
TEST(CliExport, WritesTheModelAtomicallyOrSaysWhyNot) {
  TempDir tmp;
  const std::string run = tmp / "run";
  const Args train = concat(tiny_cartpole(2), {"--run-dir", run});
  ASSERT_EQ(run_cli(train, tmp.path()).exit_code, 0);
  const std::string out = tmp / "policy.onnx";
  const Args args = {"export", "--checkpoint", run, "--out", out};
  const CliResult r = run_cli(args, tmp.path());
  if (onnx_export_available()) {
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    EXPECT_NE(r.out.find("cartpole policy (obs 4 -> action 1"), std::string::npos) << r.out;
    const std::string bytes = read_file(out);
    EXPECT_NE(bytes.find("rltrain"), std::string::npos);  // producer_name
    EXPECT_NE(bytes.find("obs"), std::string::npos);
    EXPECT_NE(bytes.find("action"), std::string::npos);
  } else {
    expect_bad_input(args, r, {"without ONNX export", "libonnx-dev"});
    EXPECT_FALSE(fs::exists(out));
  }
  expect_no_temp_files(tmp.path());
  // Bad input, run from another directory so that only what export writes could appear in out/.
  const std::string out_dir = tmp / "out", cwd = tmp / "cwd";
  fs::create_directories(out_dir);
  fs::create_directories(cwd);
  // Built without ONNX, every export says so first.
  auto because = [](const std::string& what) { return onnx_export_available() ? what : std::string("ONNX"); };
  const std::vector<std::pair<Args, Args>> bad = {
      {{"export", "--checkpoint", tmp / "missing", "--out", out_dir + "/a.onnx"}, {because("missing")}},
      {{"export", "--checkpoint", run + "/config.toml", "--out", out_dir + "/a.onnx"}, {because("config.toml")}},
      {{"export", "--checkpoint", run, "--out", out_dir + "/no_dir/a.onnx"}, {because("no_dir")}},
      {{"export", "--checkpoint", run, "--out", out_dir}, {because(out_dir)}},
      {{"export", "--checkpoint", run}, {"--out"}},
  };
  for (const auto& [a, needles] : bad) {
    const Snapshot before = snapshot(run);
    expect_bad_input(a, run_cli(a, cwd), needles);
    EXPECT_TRUE(fs::is_empty(out_dir)) << describe(a, {});
    EXPECT_EQ(diff_snapshots(before, snapshot(run)), "");
  }
}

// `rltrain export --format policy`: the weights and normalizers alone, without the Adam moments and
// the envs' state (1% of a 1024-env Go1 checkpoint). eval prints the same line from it as from the
// run, train.init_from starts the same run from it, --resume refuses it naming the key; bad input is
// exit 2 with the checkpoint untouched.
TEST(CliExport, PolicyFileActsAndSeedsRunsAsTheCheckpoint) {
  TempDir tmp;
  const std::string cfg = std::string(RLTRAIN_SOURCE_DIR) + "/configs/go1_joystick.toml";
  const Args tiny = {"train", "--config", cfg, "--quiet", "--device", "cpu", "--set", "env.num_envs=2",
                     "--set", "ppo.num_steps=4", "--set", "ppo.num_minibatches=1", "--set",
                     "train.total_env_steps=16"};
  const std::string run = tmp / "run", file = tmp / "go1_policy.safetensors";
  ASSERT_EQ(run_cli(concat(tiny, {"--run-dir", run}), tmp.path()).exit_code, 0);
  const std::string latest = run + "/checkpoints/latest.safetensors";
  const Args args = {"export", "--checkpoint", run, "--format", "policy", "--out", file};
  const CliResult r = run_cli(args, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("go1_joystick policy file (obs 48 -> action 12) written to " + file), std::string::npos) << r.out;
  expect_no_temp_files(tmp.path());
  // Without the Adam moments (twice the weights) and the envs' state: under a third even at 2 envs.
  EXPECT_LT(fs::file_size(file) * 3, fs::file_size(latest));
  const TensorFile pf = read_safetensors(file);
  EXPECT_EQ(pf.meta("contents"), "policy");
  EXPECT_EQ(pf.meta("env"), "go1_joystick");
  for (const Tensor& t : pf.tensors) EXPECT_EQ(t.name.rfind("learner/", 0), 0u) << t.name;
  EXPECT_EQ(pf.find("learner/adam_m"), nullptr);
  ASSERT_NE(pf.find("learner/critic_obs_mean"), nullptr);  // the Go1's critic reads 123 privileged values
  expect_same_tensors(latest, file, {"learner/params", "learner/obs_", "learner/critic_obs_", "learner/ret_"});

  // Acting: the same evaluation, value for value.
  const auto eval = [&](const std::string& ck) {
    const Args a = {"eval", "--checkpoint", ck, "--episodes", "2", "--deterministic", "--seed", "5"};
    const CliResult e = run_cli(a, tmp.path());
    EXPECT_EQ(e.exit_code, 0) << describe(a, e);
    return e.out;
  };
  const std::string from_run = eval(run);
  EXPECT_NE(from_run.find("go1_joystick: 2 episodes"), std::string::npos) << from_run;
  EXPECT_EQ(eval(file), from_run);

  // Seeding: train.init_from the file and from the run give the same run, bit for bit.
  for (const auto& [from, dir] : {std::pair{run, tmp / "from_run"}, std::pair{file, tmp / "from_file"}})
    ASSERT_EQ(run_cli(concat(tiny, {"--set", "train.init_from=" + from, "--run-dir", dir}), tmp.path()).exit_code, 0);
  expect_same_tensors(tmp / "from_run/checkpoints/latest.safetensors", tmp / "from_file/checkpoints/latest.safetensors",
                      {"learner/", "env/"});

  // Resuming from it is refused naming the file and the key, and nothing is written.
  fs::create_directories(tmp / "pf/checkpoints");
  fs::copy_file(run + "/config.toml", tmp / "pf/config.toml");
  fs::copy_file(file, tmp / "pf/checkpoints/latest.safetensors");
  const Snapshot pf_before = snapshot(tmp / "pf");
  const Args resume = {"train", "--resume", tmp / "pf", "--quiet"};
  expect_bad_input(resume, run_cli(resume, tmp.path()), {"latest.safetensors", "\"contents\"", "train.init_from"});
  EXPECT_EQ(diff_snapshots(pf_before, snapshot(tmp / "pf")), "");

  // Bad input leaves the run as it was, and a training checkpoint is never overwritten.
  fs::copy_file(latest, tmp / "other_run.safetensors");
  const Snapshot before = snapshot(run);
  const std::vector<std::pair<Args, Args>> bad = {
      {{"export", "--checkpoint", run, "--format", "pt", "--out", tmp / "a.pt"}, {"--format", "\"pt\""}},
      {{"export", "--checkpoint", run, "--format", "policy", "--out", latest}, {"--out", latest}},
      {{"export", "--checkpoint", latest, "--format", "policy", "--out", latest}, {"--out", latest}},
      {{"export", "--checkpoint", run, "--format", "policy", "--out", tmp / "no_dir/a.safetensors"}, {"no_dir"}},
      {{"export", "--checkpoint", run, "--format", "policy", "--out", tmp / "other_run.safetensors"},
       {"other_run.safetensors", "training checkpoint"}},
      {{"export", "--checkpoint", run, "--out", tmp / "other_run.safetensors"},
       {onnx_export_available() ? "other_run.safetensors" : "ONNX"}},
      {{"export", "--checkpoint", run + "/config.toml", "--format", "policy", "--out", tmp / "b.safetensors"},
       {"config.toml"}},
  };
  for (const auto& [a, needles] : bad) expect_bad_input(a, run_cli(a, tmp.path()), needles);
  EXPECT_EQ(diff_snapshots(before, snapshot(run)), "");
  EXPECT_FALSE(fs::exists(tmp / "a.pt"));
  EXPECT_FALSE(fs::exists(tmp / "b.safetensors"));
  EXPECT_EQ(read_file(tmp / "other_run.safetensors"), read_file(latest));
  // A policy file is replaced by a new export (the same bytes again here).
  const std::string first = read_file(file);
  ASSERT_EQ(run_cli(args, tmp.path()).exit_code, 0);
  EXPECT_EQ(read_file(file), first);
}

// ---- 5. eval -----------------------------------------------------------------------------------

class CliEval : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_tmp = new TempDir;
    const Args args = concat(tiny_cartpole(20), {"--run-dir", run_dir()});
    const CliResult r = run_cli(args, s_tmp->path());
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  static void TearDownTestSuite() {
    delete s_tmp;
    s_tmp = nullptr;
  }
  static std::string run_dir() { return *s_tmp / "run"; }

  // eval on the CPU (or on `device`).
  static CliResult eval(const Args& extra, const std::string& device = "cpu") {
    const Args args = concat({"eval", "--device", device}, extra);
    CliResult r = run_cli(args, s_tmp->path());
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    EXPECT_EQ(r.err, "") << describe(args, r);
    return r;
  }
  static TempDir* s_tmp;
};
TempDir* CliEval::s_tmp = nullptr;

TEST_F(CliEval, DeterministicPrintsMeanAndStd) {
  const Snapshot before = snapshot(run_dir());
  const CliResult r = eval({"--checkpoint", run_dir(), "--episodes", "20", "--deterministic"}, "auto");
  std::smatch m;
  const std::regex line(
      R"(^cartpole: 20 episodes \(deterministic, (cpu|cuda)\): mean return ([0-9.]+), std ([0-9.]+), mean length ([0-9.]+)\n$)");
  ASSERT_TRUE(std::regex_match(r.out, m, line)) << r.out;
  const double mean = std::stod(m[2]), std_ = std::stod(m[3]), length = std::stod(m[4]);
  EXPECT_GE(mean, 8.0);  // CartPole returns 1 per step and no episode ends before step 8
  EXPECT_LE(mean, 500.0);
  EXPECT_GE(std_, 0.0);
  EXPECT_NEAR(mean, length, 0.05 + 1e-9);  // reward 1 per step; the length is printed to 0.1
  EXPECT_EQ(diff_snapshots(before, snapshot(run_dir())), "") << "eval changed the run directory";
}

TEST_F(CliEval, DeterministicTwiceGivesTheSameOutput) {
  const Args args = {"--checkpoint", run_dir(), "--episodes", "20", "--deterministic"};
  EXPECT_EQ(eval(args).out, eval(args).out);
  // Sampled episodes with a fixed seed are reproducible too.
  const Args sampled = {"--checkpoint", run_dir(), "--episodes", "20", "--seed", "7"};
  EXPECT_EQ(eval(sampled).out, eval(sampled).out);
}

TEST_F(CliEval, RunDirAndCheckpointFileAgree) {
  const std::string file = run_dir() + "/checkpoints/latest.safetensors";
  for (const Args& mode : {Args{"--deterministic"}, Args{"--seed", "3"}}) {
    const Args common = concat({"--episodes", "20"}, mode);
    EXPECT_EQ(eval(concat({"--checkpoint", run_dir()}, common)).out, eval(concat({"--checkpoint", file}, common)).out);
  }
  // --config naming the same env (its own parameters) is accepted too.
  eval({"--checkpoint", file, "--episodes", "5", "--config", cartpole_config(), "--deterministic"});
}

// A locomotion task's eval also prints the mean forward speed (VecEnv::ep_forward_speed); with the
// reward's only term the forward velocity, the mean speed is the mean return over the episode time.
TEST(CliEvalRobot, PrintsTheMeanForwardSpeedOfLocomotionTasks) {
  TempDir tmp;
  const std::string run = tmp / "cheetah";
  const Args train = {"train",
                      "--config",
                      std::string(RLTRAIN_SOURCE_DIR) + "/configs/halfcheetah.toml",
                      "--quiet",
                      "--device",
                      "cpu",
                      "--run-dir",
                      run,
                      "--set",
                      "env.num_envs=4",
                      "--set",
                      "ppo.num_steps=8",
                      "--set",
                      "train.total_env_steps=64",
                      "--set",
                      "env.ctrl_cost_weight=0",
                      "--set",
                      "env.max_episode_steps=100"};
  const CliResult t = run_cli(train, tmp.path());
  ASSERT_EQ(t.exit_code, 0) << describe(train, t);
  const Args args = {"eval", "--checkpoint", run, "--episodes", "6", "--device", "cpu"};
  const CliResult r = run_cli(args, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  std::smatch m;
  const std::regex line(
      R"(^halfcheetah: 6 episodes \(sampled, cpu\): mean return (-?[0-9.]+), std [0-9.]+, mean length 100\.0, mean forward speed (-?[0-9.]+) m/s\n$)");
  ASSERT_TRUE(std::regex_match(r.out, m, line)) << r.out;
  // reward = 1 * x velocity (control cost off): return = sum of velocities = speed x 100 steps.
  const double ret = std::stod(m[1]), speed = std::stod(m[2]);
  EXPECT_NEAR(speed * 100.0, ret, 0.05 + 1e-3 * std::fabs(ret));
  // A task without a forward direction prints no speed.
  const Args cartpole = concat(tiny_cartpole(1), {"--run-dir", tmp / "cartpole"});
  ASSERT_EQ(run_cli(cartpole, tmp.path()).exit_code, 0);
  const CliResult c =
      run_cli({"eval", "--checkpoint", tmp / "cartpole", "--episodes", "2", "--device", "cpu"}, tmp.path());
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out.find("forward speed"), std::string::npos) << c.out;
}

// ---- 6. envs and --help ------------------------------------------------------------------------

TEST(CliEnvs, ListsEveryEnvWithItsSpaces) {
  TempDir tmp;
  const CliResult r = run_cli({"envs"}, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // name -> (observation, action) as `envs` prints them (the beginning of each).
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"cartpole", {"Box(4, [-4.8..4.8, unbounded, -0.418879..0.418879, unbounded])", "Discrete(2)"}},
      {"pendulum", {"Box(3, [-1..1, -1..1, -8..8])", "Box(1, [-2..2])"}},
      {"acrobot", {"Box(6, ", "Discrete(3)"}},
      {"mountaincar_continuous", {"Box(2, [-1.2..0.6, -0.07..0.07])", "Box(1, [-1..1])"}},
  };
  std::map<std::string, std::pair<std::string, std::string>> listed;
  std::string current;
  for (const auto& line : lines_of(r.out)) {
    if (!line.empty() && line[0] != ' ') {
      current = line;
      listed[current];
    } else if (line.rfind("  observation: ", 0) == 0) {
      listed[current].first = line.substr(15);
    } else if (line.rfind("  action:", 0) == 0) {
      listed[current].second = line.substr(line.find_first_not_of(' ', 9));
    }
  }
  for (const auto& [name, spaces] : expected) {
    ASSERT_TRUE(listed.count(name)) << name << " not listed:\n" << r.out;
    EXPECT_EQ(listed[name].first.rfind(spaces.first, 0), 0u) << name << ": " << listed[name].first;
    EXPECT_EQ(listed[name].second.rfind(spaces.second, 0), 0u) << name << ": " << listed[name].second;
  }
  EXPECT_EQ(listed.size(), env_names().size());
}

TEST(CliEnvs, NamesOnePerLine) {
  TempDir tmp;
  const CliResult r = run_cli({"envs", "--names"}, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out), env_names());
  for (const char* name : {"cartpole", "pendulum", "acrobot", "mountaincar_continuous"})
    EXPECT_NE(std::find(env_names().begin(), env_names().end(), name), env_names().end()) << name;
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(CliHelp, EverySubcommandHasHelp) {
  TempDir tmp;
  const std::vector<std::pair<Args, Args>> cases = {
      {{"--help"}, {"train", "eval", "export", "bench", "envs"}},
      {{"--help-all"}, {"train", "eval", "bench", "envs", "--checkpoint", "--num-envs"}},
      {{"train", "--help"},
       {"--config", "--set", "--device", "--seed", "--run-dir", "--resume", "--iterations", "--quiet"}},
      {{"eval", "--help"}, {"--checkpoint", "--episodes", "--deterministic", "--config", "--seed", "--device"}},
      {{"bench", "--help"}, {"--env", "--num-envs", "--steps", "--device", "--json", "--no-ppo"}},
      {{"envs", "--help"}, {"--names"}},
      {{"export", "--help"}, {"--checkpoint", "--out"}},
  };
  for (const auto& [args, needles] : cases) {
    const CliResult r = run_cli(args, tmp.path());
    SCOPED_TRACE(describe(args, r));
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.err, "");
    for (const auto& n : needles) EXPECT_NE(r.out.find(n), std::string::npos) << "help lacks " << n;
  }
}

// `rltrain eval` on a joystick task prints the tracking figures (issue: velocity tracking RMS and
// falls over the evaluation episodes); on other tasks it does not.
TEST(CliEvalTracking, JoystickTasksPrintTracking) {
  TempDir tmp;
  const Args train = {"train", "--config", std::string(RLTRAIN_SOURCE_DIR) + "/configs/go1_joystick.toml", "--quiet",
                      "--run-dir", tmp / "go1", "--iterations", "1", "--set", "env.num_envs=4", "--set",
                      "ppo.num_steps=8", "--set", "ppo.num_minibatches=1"};
  const CliResult t = run_cli(train, tmp.path());
  ASSERT_EQ(t.exit_code, 0) << describe(train, t);
  // 32 steps of 1000-step episodes from a standing start: none ended, and the result line says so
  // (not "mean return nan")
  EXPECT_NE(t.out.find("no episode has finished yet"), std::string::npos) << t.out;
  const Args eval = {"eval", "--checkpoint", tmp / "go1", "--episodes", "2"};
  const CliResult e = run_cli(eval, tmp.path());
  ASSERT_EQ(e.exit_code, 0) << describe(eval, e);
  for (const char* want : {"tracking RMS error: planar velocity", "m/s, yaw rate", "rad/s", "falls"})
    EXPECT_NE(e.out.find(want), std::string::npos) << want << "\n" << e.out;
  const Args cart_train = concat(tiny_cartpole(1), {"--run-dir", tmp / "cart"});
  ASSERT_EQ(run_cli(cart_train, tmp.path()).exit_code, 0);
  const Args cart = {"eval", "--checkpoint", tmp / "cart", "--episodes", "1"};
  const CliResult c = run_cli(cart, tmp.path());
  EXPECT_EQ(c.exit_code, 0) << describe(cart, c);
  EXPECT_EQ(c.out.find("tracking"), std::string::npos) << c.out;
}

// The trained policy the repository ships (configs/policies/, README) still walks on the task as it
// is now: a change of physics, observation or action that breaks it fails here, not in a user's
// hands. 16 deterministic episodes of 1000 steps with randomization and noise on (seed 0); the
// bounds leave room over what the shipped file measured when it was added (docs/RESULTS.md).
TEST(CliEvalTracking, ShippedGo1PolicyStillWalks) {
  TempDir tmp;
  const std::string src = RLTRAIN_SOURCE_DIR;
  const Args args = {"eval", "--checkpoint", src + "/configs/policies/go1_joystick.safetensors", "--config",
                     src + "/configs/go1_joystick.toml", "--episodes", "16", "--deterministic", "--seed", "0",
                     "--device", "cpu"};
  const CliResult r = run_cli(args, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  double planar = -1, yaw = -1;
  int falls = -1;
  const size_t at = r.out.find("tracking RMS error:");
  ASSERT_NE(at, std::string::npos) << r.out;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, "tracking RMS error: planar velocity %lf m/s, yaw rate %lf rad/s", &planar,
                        &yaw),
            2)
      << r.out;
  const size_t f = r.out.find("falls ");
  ASSERT_NE(f, std::string::npos) << r.out;
  ASSERT_EQ(std::sscanf(r.out.c_str() + f, "falls %d of 16", &falls), 1) << r.out;
  EXPECT_LE(falls, 1) << r.out;
  EXPECT_LT(planar, 0.25) << r.out;  // the commands alone: ~0.9 m/s RMS (a policy that stands)
  EXPECT_LT(yaw, 0.25) << r.out;
}

// The settled tracking figures count only the steps a command has held for --settle-steps: with 0
// every step (the same RMS as all steps); with the default 50 fewer steps; and with commands that
// change at almost every step (a config whose resample time is one control step) almost none.
TEST(CliEvalTracking, SettledTrackingSkipsStepsAfterCommandChanges) {
  TempDir tmp;
  const std::string cfg = std::string(RLTRAIN_SOURCE_DIR) + "/configs/go1_joystick.toml";
  const Args train = {"train", "--config", cfg, "--quiet", "--run-dir", tmp / "go1", "--iterations", "1",
                      "--set", "env.num_envs=4", "--set", "ppo.num_steps=8", "--set", "ppo.num_minibatches=1"};
  ASSERT_EQ(run_cli(train, tmp.path()).exit_code, 0);
  // "... (N steps)" after `label`: the RMS figures and the step count
  struct Figures {
    double lin = -1, yaw = -1;
    long long steps = -1;
  };
  const auto figures = [](const std::string& out, const std::string& label) {
    Figures f;
    const size_t at = out.find(label);
    if (at != std::string::npos)
      std::sscanf(out.c_str() + at + label.size(), " planar velocity %lf m/s, yaw rate %lf rad/s (%lld steps)", &f.lin,
                  &f.yaw, &f.steps);
    return f;
  };
  const auto eval = [&](const Args& extra) {
    Args a = {"eval", "--checkpoint", tmp / "go1", "--episodes", "4", "--deterministic"};
    a.insert(a.end(), extra.begin(), extra.end());
    const CliResult r = run_cli(a, tmp.path());
    EXPECT_EQ(r.exit_code, 0) << describe(a, r);
    const size_t cut = r.out.find("; settled (");
    EXPECT_NE(cut, std::string::npos) << r.out;
    return std::make_pair(figures(r.out, "tracking RMS error:"), figures(r.out.substr(cut), "command change):"));
  };
  const auto every = eval({"--settle-steps", "0"});
  ASSERT_GT(every.first.steps, 50);
  EXPECT_EQ(every.second.steps, every.first.steps);
  EXPECT_DOUBLE_EQ(every.second.lin, every.first.lin);
  EXPECT_DOUBLE_EQ(every.second.yaw, every.first.yaw);
  const auto settled = eval({});
  EXPECT_EQ(settled.first.steps, every.first.steps);  // the same episodes
  EXPECT_LT(settled.second.steps, settled.first.steps);
  // at least the first 50 steps of each of the 4 episodes are left out
  EXPECT_LE(settled.second.steps, settled.first.steps - 4 * 50);
  // commands resampled every control step (mean 0.02 s): hardly a step holds its command for 50
  std::string text = read_file(cfg);
  const size_t env_at = text.find("[env]\n");
  ASSERT_NE(env_at, std::string::npos);
  text.insert(env_at + 6, "cmd_resample_mean_s = 0.02\n");
  write_file(tmp / "fast_commands.toml", text);
  const auto fast = eval({"--config", tmp / "fast_commands.toml"});
  EXPECT_LT(fast.second.steps * 20, fast.first.steps) << fast.second.steps << " of " << fast.first.steps;
}
}  // namespace
}  // namespace rlt::cli_test
