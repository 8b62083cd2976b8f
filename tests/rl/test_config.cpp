// Config loading, overrides, validation and printing (rl/config.h): every error is one line that
// names the file (or the override) and the key.
#include "rl/config.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

namespace rlt {
namespace {

// The message of the ConfigError that `f` throws; fails the test when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message spans lines: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return {};
}

std::string parse_error(const std::string& text, const std::string& file = "cfg.toml") {
  return error_of([&] { parse_config(text, file); });
}

std::string override_error(const std::string& assignment) {
  Config cfg;
  return error_of([&] { apply_override(cfg, assignment); });
}

#define EXPECT_CONTAINS(haystack, needle)                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
      << "missing \"" << (needle) << "\" in: " << (haystack)

// Exact equality of every field (doubles bitwise, so -0.0 and 0.0 differ).
void expect_same(const Config& a, const Config& b) {
  auto same_double = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  EXPECT_EQ(a.env.name, b.env.name);
  EXPECT_EQ(a.env.num_envs, b.env.num_envs);
  ASSERT_EQ(a.env.params.size(), b.env.params.size());
  for (const auto& [k, v] : a.env.params) {
    ASSERT_TRUE(b.env.params.count(k)) << k;
    EXPECT_TRUE(same_double(v, b.env.params.at(k))) << k << ": " << v << " vs " << b.env.params.at(k);
  }
  EXPECT_EQ(a.policy.hidden, b.policy.hidden);
  EXPECT_EQ(a.policy.activation, b.policy.activation);
  EXPECT_TRUE(same_double(a.policy.init_log_std, b.policy.init_log_std));
  EXPECT_EQ(a.policy.squash, b.policy.squash);
  EXPECT_TRUE(same_double(a.policy.min_log_std, b.policy.min_log_std));
  EXPECT_TRUE(same_double(a.policy.max_log_std, b.policy.max_log_std));
  const PpoConfig& p = a.ppo;
  const PpoConfig& q = b.ppo;
  EXPECT_EQ(p.num_steps, q.num_steps);
  EXPECT_EQ(p.num_epochs, q.num_epochs);
  EXPECT_EQ(p.num_minibatches, q.num_minibatches);
  EXPECT_TRUE(same_double(p.learning_rate, q.learning_rate)) << p.learning_rate << " vs " << q.learning_rate;
  EXPECT_EQ(p.lr_schedule, q.lr_schedule);
  EXPECT_TRUE(same_double(p.desired_kl, q.desired_kl));
  EXPECT_TRUE(same_double(p.gamma, q.gamma)) << p.gamma << " vs " << q.gamma;
  EXPECT_TRUE(same_double(p.gae_lambda, q.gae_lambda));
  EXPECT_TRUE(same_double(p.clip_coef, q.clip_coef));
  EXPECT_EQ(p.clip_value_loss, q.clip_value_loss);
  EXPECT_TRUE(same_double(p.vf_coef, q.vf_coef));
  EXPECT_TRUE(same_double(p.ent_coef, q.ent_coef));
  EXPECT_TRUE(same_double(p.max_grad_norm, q.max_grad_norm));
  EXPECT_EQ(p.normalize_advantages, q.normalize_advantages);
  EXPECT_EQ(p.normalize_obs, q.normalize_obs);
  EXPECT_EQ(p.normalize_reward, q.normalize_reward);
  EXPECT_TRUE(same_double(p.clip_obs, q.clip_obs));
  EXPECT_TRUE(same_double(p.adam_eps, q.adam_eps));
  EXPECT_TRUE(same_double(p.target_kl, q.target_kl));
  EXPECT_EQ(p.gemm_precision, q.gemm_precision);
  EXPECT_EQ(p.tf32, q.tf32);
  EXPECT_EQ(a.train.total_env_steps, b.train.total_env_steps);
  EXPECT_EQ(a.train.seed, b.train.seed);
  EXPECT_EQ(a.train.device, b.train.device);
  EXPECT_EQ(a.train.threads, b.train.threads);
  EXPECT_EQ(a.train.checkpoint_every, b.train.checkpoint_every);
  EXPECT_TRUE(same_double(a.train.target_return, b.train.target_return));
  EXPECT_EQ(a.train.stop_at_target, b.train.stop_at_target);
  EXPECT_EQ(a.train.eval_episodes, b.train.eval_episodes);
}

const char* const kFullFile = R"(
# every key, none at its default
[env]
name = "pendulum"
num_envs = 4096
max_episode_steps = 200
gravity = 9.81
randomize = true

[policy]
hidden = [256, 128, 64]
activation = "elu"
init_log_std = -0.5

[ppo]
num_steps = 24
num_epochs = 5
num_minibatches = 8
learning_rate = 3e-4
lr_schedule = "adaptive_kl"
desired_kl = 0.02
gamma = 0.995
gae_lambda = 0.9
clip_coef = 0.3
clip_value_loss = false
vf_coef = 1    # an integer for a float key is fine
ent_coef = 0.01
max_grad_norm = 1.0
normalize_advantages = false
normalize_obs = false
normalize_reward = false
clip_obs = 5.0
adam_eps = 1e-8
target_kl = 0.05
gemm_precision = "tf32"
tf32 = true

[train]
total_env_steps = 1_000_000
seed = 42
device = "cpu"
threads = 8
checkpoint_every = 50
target_return = -200.5
stop_at_target = true
eval_episodes = 20
)";

TEST(Config, DefaultsValidate) { EXPECT_NO_THROW(validate(Config{})); }

TEST(Config, EmptyFileGivesDefaults) {
  Config c = parse_config("", "empty.toml");
  EXPECT_EQ(c.source, "empty.toml");
  expect_same(c, Config{});
}

TEST(Config, DefaultsRoundTrip) {
  Config defaults;
  std::string text = to_toml(defaults);
  Config back = parse_config(text, "resolved.toml");
  expect_same(defaults, back);
  // Identical text apart from the first line, which names the source.
  std::string again = to_toml(back);
  EXPECT_EQ(again.substr(again.find('\n')), text.substr(text.find('\n')));
  EXPECT_CONTAINS(again, "# rltrain config, resolved from resolved.toml.");
  // Tidy numbers and the docs from config.h.
  EXPECT_CONTAINS(text, "learning_rate = 0.00025");
  EXPECT_CONTAINS(text, "adam_eps = 1e-5");
  EXPECT_CONTAINS(text, "gamma = 0.99");
  EXPECT_CONTAINS(text, "clip_obs = 10.0");
  EXPECT_CONTAINS(text, "hidden = [64, 64]");
  EXPECT_CONTAINS(text, "# Adam step size (initial, for schedules)");
  EXPECT_CONTAINS(text, "[env]");
  EXPECT_CONTAINS(text, "[policy]");
  EXPECT_CONTAINS(text, "[ppo]");
  EXPECT_CONTAINS(text, "[train]");
}

TEST(Config, FullFileParses) {
  Config c = parse_config(kFullFile, "full.toml");
  EXPECT_EQ(c.env.name, "pendulum");
  EXPECT_EQ(c.env.num_envs, 4096);
  EXPECT_EQ(c.env.params.size(), 3u);
  EXPECT_EQ(c.env.params.at("max_episode_steps"), 200.0);
  EXPECT_EQ(c.env.params.at("gravity"), 9.81);
  EXPECT_EQ(c.env.params.at("randomize"), 1.0);
  EXPECT_EQ(c.policy.hidden, (std::vector<int>{256, 128, 64}));
  EXPECT_EQ(c.policy.activation, "elu");
  EXPECT_EQ(c.policy.init_log_std, -0.5);
  EXPECT_EQ(c.ppo.num_steps, 24);
  EXPECT_EQ(c.ppo.num_epochs, 5);
  EXPECT_EQ(c.ppo.num_minibatches, 8);
  EXPECT_EQ(c.ppo.learning_rate, 3e-4);
  EXPECT_EQ(c.ppo.lr_schedule, "adaptive_kl");
  EXPECT_EQ(c.ppo.desired_kl, 0.02);
  EXPECT_EQ(c.ppo.gamma, 0.995);
  EXPECT_EQ(c.ppo.gae_lambda, 0.9);
  EXPECT_EQ(c.ppo.clip_coef, 0.3);
  EXPECT_FALSE(c.ppo.clip_value_loss);
  EXPECT_EQ(c.ppo.vf_coef, 1.0);
  EXPECT_EQ(c.ppo.ent_coef, 0.01);
  EXPECT_EQ(c.ppo.max_grad_norm, 1.0);
  EXPECT_FALSE(c.ppo.normalize_advantages);
  EXPECT_FALSE(c.ppo.normalize_obs);
  EXPECT_FALSE(c.ppo.normalize_reward);
  EXPECT_EQ(c.ppo.clip_obs, 5.0);
  EXPECT_EQ(c.ppo.adam_eps, 1e-8);
  EXPECT_EQ(c.ppo.target_kl, 0.05);
  EXPECT_EQ(c.ppo.gemm_precision, "tf32");
  EXPECT_TRUE(c.ppo.tf32);
  EXPECT_EQ(c.train.total_env_steps, 1000000);
  EXPECT_EQ(c.train.seed, 42u);
  EXPECT_EQ(c.train.device, "cpu");
  EXPECT_EQ(c.train.threads, 8);
  EXPECT_EQ(c.train.checkpoint_every, 50);
  EXPECT_EQ(c.train.target_return, -200.5);
  EXPECT_TRUE(c.train.stop_at_target);
  EXPECT_EQ(c.train.eval_episodes, 20);

  expect_same(c, parse_config(to_toml(c), "again.toml"));
}

TEST(Config, AwkwardValuesRoundTripExactly) {
  Config c;
  c.env.name = "quote\" back\\slash\ttab";
  c.env.params["third"] = 1.0 / 3.0;
  c.env.params["tiny"] = 5e-324;  // smallest denormal
  c.env.params["huge"] = 1.7976931348623157e308;
  c.env.params["neg_zero"] = -0.0;
  c.env.params["max_episode_steps"] = 500;
  c.env.params["needs quotes"] = 2.5;
  c.policy.hidden = {};  // linear policy
  c.policy.init_log_std = -0.0;
  c.policy.max_log_std = 0.1 + 0.2;  // min_log_std stays -inf
  c.ppo.learning_rate = 0.1 + 0.2;  // 0.30000000000000004
  c.ppo.gamma = std::nextafter(1.0, 0.0);
  c.ppo.adam_eps = 3e-4;
  c.train.seed = std::numeric_limits<std::uint64_t>::max();
  c.train.target_return = -1e300;
  std::string text = to_toml(c);
  Config back = parse_config(text, "awkward.toml");
  expect_same(c, back);
  EXPECT_CONTAINS(text, "adam_eps = 0.0003");
  EXPECT_CONTAINS(text, "learning_rate = 0.30000000000000004");
  EXPECT_CONTAINS(text, "max_episode_steps = 500");
  EXPECT_CONTAINS(text, "hidden = []");
  EXPECT_CONTAINS(text, "min_log_std = -inf");
  EXPECT_CONTAINS(text, "max_log_std = 0.30000000000000004");
  EXPECT_CONTAINS(text, "seed = \"18446744073709551615\"");
  // A seed that fits int64 stays a TOML integer.
  c.train.seed = (1ull << 63) - 1;
  EXPECT_CONTAINS(to_toml(c), "seed = 9223372036854775807");
  expect_same(c, parse_config(to_toml(c), "x.toml"));
}

TEST(Config, LoadConfigReadsAFile) {
  std::string path = ::testing::TempDir() + "rlt_config_" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream f(path);
    f << kFullFile;
  }
  Config c = load_config(path);
  EXPECT_EQ(c.source, path);
  EXPECT_EQ(c.env.name, "pendulum");
  {
    std::ofstream f(path);
    f << "[ppo]\ngamma = 2.0\n";
  }
  std::string msg = error_of([&] { load_config(path); });
  EXPECT_EQ(msg, path + ": ppo.gamma: expected a number in [0, 1], got 2.0");
  std::remove(path.c_str());
}

TEST(Config, MissingFile) {
  std::string msg = error_of([] { load_config("/nonexistent/dir/run.toml"); });
  EXPECT_EQ(msg, "/nonexistent/dir/run.toml: cannot open (No such file or directory)");
  msg = error_of([] { load_config("/"); });
  EXPECT_EQ(msg, "/: cannot open (Is a directory)");
}

TEST(Config, SyntaxErrorNamesLineAndColumn) {
  std::string msg = parse_error("[ppo]\nnum_steps = 64\ngamma = = 0.9\n", "bad.toml");
  EXPECT_EQ(msg.rfind("bad.toml:3:", 0), 0u) << msg;
  msg = parse_error("[ppo]\nnum_steps = 1\nnum_steps = 2\n", "dup.toml");
  EXPECT_EQ(msg.rfind("dup.toml:3:", 0), 0u) << msg;
  EXPECT_CONTAINS(msg, "num_steps");
}

TEST(Config, UnknownKey) {
  std::string msg = parse_error("[ppo]\nnum_step = 64\n");
  EXPECT_EQ(msg, "cfg.toml: ppo.num_step: unknown key (did you mean ppo.num_steps?)");
  msg = parse_error("[train]\nxyzzy = 1\n");
  EXPECT_CONTAINS(msg, "cfg.toml: train.xyzzy: unknown key");
  EXPECT_CONTAINS(msg, "total_env_steps");  // lists the section's keys when nothing is close
  msg = parse_error("[ppo.extra]\nx = 1\n");
  EXPECT_CONTAINS(msg, "cfg.toml: ppo.extra: unknown key");
}

TEST(Config, UnknownSection) {
  std::string msg = parse_error("[optimizer]\nlr = 0.1\n");
  EXPECT_EQ(msg, "cfg.toml: optimizer: unknown section (sections: env, policy, ppo, train)");
  msg = parse_error("seed = 3\n");
  EXPECT_CONTAINS(msg, "cfg.toml: seed: unknown top-level key");
  msg = parse_error("ppo = 3\n");
  EXPECT_EQ(msg, "cfg.toml: ppo: expected a table [ppo], got integer 3");
}

// ppo.gemm_precision (issue 18) and its older spelling ppo.tf32: one given sets the other, both
// given must agree, and an unknown precision is refused naming the key and the choices.
TEST(Config, GemmPrecisionAndItsOlderSpellingTf32) {
  Config d;
  EXPECT_EQ(d.ppo.gemm_precision, "fp32");
  EXPECT_FALSE(d.ppo.tf32);
  struct Case {
    const char* text;
    const char* precision;
    bool tf32;
  };
  const Case cases[] = {
      {"[ppo]\ngemm_precision = \"bf16\"\n", "bf16", false},
      {"[ppo]\ngemm_precision = \"fp16\"\n", "fp16", false},
      {"[ppo]\ngemm_precision = \"tf32\"\n", "tf32", true},
      {"[ppo]\ngemm_precision = \"fp32\"\n", "fp32", false},
      {"[ppo]\ntf32 = true\n", "tf32", true},  // the older key alone still works
      {"[ppo]\ntf32 = false\n", "fp32", false},
      {"[ppo]\ntf32 = true\ngemm_precision = \"tf32\"\n", "tf32", true},  // both, agreeing
      {"[ppo]\ntf32 = false\ngemm_precision = \"bf16\"\n", "bf16", false},
  };
  for (const Case& k : cases) {
    Config c = parse_config(k.text, "cfg.toml");
    EXPECT_EQ(c.ppo.gemm_precision, k.precision) << k.text;
    EXPECT_EQ(c.ppo.tf32, k.tf32) << k.text;
    expect_same(c, parse_config(to_toml(c), "again.toml"));  // the resolved config prints both, agreeing
  }
  const std::string why =
      " (ppo.tf32 = true is the older spelling of ppo.gemm_precision = \"tf32\"; set ppo.gemm_precision alone)";
  EXPECT_EQ(parse_error("[ppo]\ntf32 = true\ngemm_precision = \"bf16\"\n"),
            "cfg.toml: ppo.tf32: true contradicts ppo.gemm_precision = \"bf16\"" + why);
  EXPECT_EQ(parse_error("[ppo]\ngemm_precision = \"fp32\"\ntf32 = true\n"),
            "cfg.toml: ppo.tf32: true contradicts ppo.gemm_precision = \"fp32\"" + why);
  EXPECT_EQ(parse_error("[ppo]\ntf32 = false\ngemm_precision = \"tf32\"\n"),
            "cfg.toml: ppo.tf32: false contradicts ppo.gemm_precision = \"tf32\"" + why);
  EXPECT_EQ(parse_error("[ppo]\ngemm_precision = \"int8\"\n"),
            "cfg.toml: ppo.gemm_precision: expected one of fp32, tf32, bf16, fp16, got \"int8\"");
  EXPECT_EQ(parse_error("[ppo]\ngemm_precision = 16\n"),
            "cfg.toml: ppo.gemm_precision: expected one of fp32, tf32, bf16, fp16, got integer 16");
  // Set in code: tf32 = true with another precision is refused by validate() too (the runtime reads
  // gemm_precision only, so it would otherwise be ignored).
  Config c;
  c.ppo.tf32 = true;
  EXPECT_EQ(error_of([&] { validate(c); }), "<config>: ppo.tf32: true contradicts ppo.gemm_precision = \"fp32\"" + why);
  // The resolved config documents the key.
  EXPECT_CONTAINS(to_toml(Config{}), "gemm_precision = \"fp32\"");
}

TEST(Override, GemmPrecisionKeepsTf32InStep) {
  Config c;
  apply_override(c, "ppo.gemm_precision=bf16");
  EXPECT_EQ(c.ppo.gemm_precision, "bf16");
  EXPECT_FALSE(c.ppo.tf32);
  // tf32 = true would contradict it: refused, naming the key, and nothing changes.
  EXPECT_EQ(error_of([&] { apply_override(c, "ppo.tf32=true"); }),
            "--set ppo.tf32=true: true contradicts ppo.gemm_precision = \"bf16\" (ppo.tf32 = true is the older "
            "spelling of ppo.gemm_precision = \"tf32\"; set ppo.gemm_precision alone)");
  EXPECT_EQ(c.ppo.gemm_precision, "bf16");
  EXPECT_FALSE(c.ppo.tf32);
  apply_override(c, "ppo.tf32=false");  // says nothing against bf16
  EXPECT_EQ(c.ppo.gemm_precision, "bf16");
  apply_override(c, "ppo.gemm_precision=tf32");
  EXPECT_TRUE(c.ppo.tf32);
  apply_override(c, "ppo.tf32=false");  // turns TF32 off: back to fp32
  EXPECT_EQ(c.ppo.gemm_precision, "fp32");
  EXPECT_FALSE(c.ppo.tf32);
  apply_override(c, "ppo.tf32=true");
  EXPECT_EQ(c.ppo.gemm_precision, "tf32");
  apply_override(c, "ppo.gemm_precision=\"fp16\"");
  EXPECT_EQ(c.ppo.gemm_precision, "fp16");
  EXPECT_FALSE(c.ppo.tf32);
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(override_error("ppo.gemm_precision=fp8"),
            "--set ppo.gemm_precision=fp8: expected one of fp32, tf32, bf16, fp16, got \"fp8\"");
}

TEST(Config, WrongType) {
  EXPECT_EQ(parse_error("[ppo]\nnum_steps = \"64\"\n"),
            "cfg.toml: ppo.num_steps: expected a positive integer, got string \"64\"");
  EXPECT_EQ(parse_error("[ppo]\nnum_steps = 3.5\n"),
            "cfg.toml: ppo.num_steps: expected a positive integer, got float 3.5");
  EXPECT_CONTAINS(parse_error("[train]\ntotal_env_steps = 1e6\n"),
                  "cfg.toml: train.total_env_steps: expected a positive integer, got float 1000000.0 "
                  "(write it as an integer: 1000000)");
  EXPECT_EQ(parse_error("[ppo]\ntf32 = 1\n"), "cfg.toml: ppo.tf32: expected a boolean (true or false), got integer 1");
  EXPECT_EQ(parse_error("[ppo]\ngamma = \"0.9\"\n"),
            "cfg.toml: ppo.gamma: expected a number in [0, 1], got string \"0.9\"");
  EXPECT_EQ(parse_error("[policy]\nactivation = 1\n"),
            "cfg.toml: policy.activation: expected one of tanh, elu, relu, got integer 1");
  EXPECT_CONTAINS(parse_error("[policy]\nhidden = 64\n"),
                  "cfg.toml: policy.hidden: expected an array of integers in [1, 4096]");
  EXPECT_CONTAINS(parse_error("[policy]\nhidden = [64, \"64\"]\n"),
                  "cfg.toml: policy.hidden: expected an array of integers in [1, 4096] (empty = linear "
                  "policy), got array [64, \"64\"]");
  EXPECT_CONTAINS(parse_error("[train]\nseed = -1\n"),
                  "cfg.toml: train.seed: expected a non-negative integer, got integer -1");
  EXPECT_CONTAINS(parse_error("[train]\nseed = \"12ab\"\n"), "cfg.toml: train.seed: expected a non-negative integer");
  EXPECT_CONTAINS(parse_error("[train]\nseed = \"18446744073709551616\"\n"), "cfg.toml: train.seed:");
  EXPECT_CONTAINS(
      parse_error("[train]\nthreads = 4294967296\n"),
      "cfg.toml: train.threads: expected an integer in [0, 1024], got integer 4294967296 (does not fit in 32 bits)");
  EXPECT_EQ(parse_error("[env]\nterrain = \"hills\"\n"),
            "cfg.toml: env.terrain: expected a number or boolean (env parameter), got string \"hills\"");
  EXPECT_CONTAINS(parse_error("[env]\nsub.key = 1\n"),
                  "cfg.toml: env.sub: expected a number or boolean (env parameter), got table");
}

TEST(Config, IntegerAcceptedForFloatKey) {
  Config c = parse_config("[ppo]\nlearning_rate = 1\nclip_obs = 7\n", "f.toml");
  EXPECT_EQ(c.ppo.learning_rate, 1.0);
  EXPECT_EQ(c.ppo.clip_obs, 7.0);
}

TEST(Config, OutOfRange) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"[env]\nnum_envs = 0", "r.toml: env.num_envs: expected a positive integer, got 0"},
      {"[env]\nname = \"\"", "r.toml: env.name: expected a non-empty string (a registered env name), got \"\""},
      {"[policy]\nhidden = [64, 0]",
       "r.toml: policy.hidden: expected an array of integers in [1, 4096] (empty = linear policy), got array [64, 0]"},
      {"[policy]\nhidden = [4097]",
       "r.toml: policy.hidden: expected an array of integers in [1, 4096] (empty = linear policy), got array [4097]"},
      {"[policy]\nactivation = \"sigmoid\"",
       "r.toml: policy.activation: expected one of tanh, elu, relu, got \"sigmoid\""},
      {"[policy]\ninit_log_std = nan", "r.toml: policy.init_log_std: expected a finite number, got nan"},
      {"[policy]\nmax_log_std = nan",
       "r.toml: policy.max_log_std: expected a number in [-20, 20], or -inf / inf (no bound), got nan"},
      {"[policy]\nmin_log_std = -1e39",
       "r.toml: policy.min_log_std: expected a number in [-20, 20], or -inf / inf (no bound), got -1e39"},
      {"[policy]\nmin_log_std = inf", "r.toml: policy.min_log_std: expected a number or -inf, got inf"},
      {"[policy]\nmax_log_std = -inf", "r.toml: policy.max_log_std: expected a number or inf, got -inf"},
      {"[policy]\nmin_log_std = 0.5\nmax_log_std = -0.5",
       "r.toml: policy.max_log_std: expected at least policy.min_log_std = 0.5, got -0.5"},
      {"[ppo]\nnum_steps = 0", "r.toml: ppo.num_steps: expected a positive integer, got 0"},
      {"[ppo]\nnum_epochs = -1", "r.toml: ppo.num_epochs: expected a positive integer, got -1"},
      {"[ppo]\nnum_minibatches = 0", "r.toml: ppo.num_minibatches: expected a positive integer, got 0"},
      {"[ppo]\nlearning_rate = 0", "r.toml: ppo.learning_rate: expected a positive number, got 0.0"},
      {"[ppo]\nlearning_rate = inf", "r.toml: ppo.learning_rate: expected a positive number, got inf"},
      {"[ppo]\nlr_schedule = \"cosine\"",
       "r.toml: ppo.lr_schedule: expected one of constant, linear, adaptive_kl, got \"cosine\""},
      {"[ppo]\ndesired_kl = 0.0", "r.toml: ppo.desired_kl: expected a positive number, got 0.0"},
      {"[ppo]\ngamma = 1.5", "r.toml: ppo.gamma: expected a number in [0, 1], got 1.5"},
      {"[ppo]\ngamma = -0.1", "r.toml: ppo.gamma: expected a number in [0, 1], got -0.1"},
      {"[ppo]\ngae_lambda = 1.01", "r.toml: ppo.gae_lambda: expected a number in [0, 1], got 1.01"},
      {"[ppo]\nclip_coef = 0", "r.toml: ppo.clip_coef: expected a positive number, got 0.0"},
      {"[ppo]\nvf_coef = -1", "r.toml: ppo.vf_coef: expected a non-negative number, got -1.0"},
      {"[ppo]\nent_coef = -0.01", "r.toml: ppo.ent_coef: expected a non-negative number, got -0.01"},
      {"[ppo]\nmax_grad_norm = -0.5", "r.toml: ppo.max_grad_norm: expected a non-negative number, got -0.5"},
      {"[ppo]\nclip_obs = 0", "r.toml: ppo.clip_obs: expected a positive number, got 0.0"},
      {"[ppo]\nadam_eps = 0", "r.toml: ppo.adam_eps: expected a positive number, got 0.0"},
      {"[ppo]\ntarget_kl = -1", "r.toml: ppo.target_kl: expected a non-negative number, got -1.0"},
      {"[train]\ntotal_env_steps = 0", "r.toml: train.total_env_steps: expected a positive integer, got 0"},
      {"[train]\ndevice = \"tpu\"", "r.toml: train.device: expected one of auto, cpu, cuda, got \"tpu\""},
      {"[train]\nthreads = -1", "r.toml: train.threads: expected an integer in [0, 1024], got -1"},
      {"[train]\ncheckpoint_every = -2", "r.toml: train.checkpoint_every: expected a non-negative integer, got -2"},
      {"[train]\neval_episodes = 0", "r.toml: train.eval_episodes: expected a positive integer, got 0"},
      {"[env]\ng = inf", "r.toml: env.g: expected a number or boolean (env parameter), got float inf"},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_error(c.text, "r.toml"), c.message) << c.text;
}

TEST(Config, RangeEdgesAccepted) {
  Config c = parse_config(
      "[ppo]\ngamma = 0\ngae_lambda = 1\nvf_coef = 0\nmax_grad_norm = 0\n"
      "[train]\nthreads = 0\ncheckpoint_every = 0\n"
      "[policy]\nhidden = [1, 4096]\n",
      "edges.toml");
  EXPECT_EQ(c.ppo.gamma, 0.0);
  EXPECT_EQ(c.policy.hidden, (std::vector<int>{1, 4096}));
  // Equal log-std bounds fix the noise; --set takes TOML's inf.
  Config b = parse_config("[policy]\nmin_log_std = -1.5\nmax_log_std = -1.5\n", "fixed.toml");
  EXPECT_EQ(b.policy.min_log_std, -1.5);
  EXPECT_EQ(b.policy.max_log_std, -1.5);
  apply_override(b, "policy.max_log_std=inf");
  EXPECT_EQ(b.policy.max_log_std, INFINITY);
  validate(b);
}

TEST(Config, NonDividingMinibatches) {
  std::string msg = parse_error("[env]\nnum_envs = 6\n[ppo]\nnum_steps = 8\nnum_minibatches = 5\n", "mb.toml");
  EXPECT_EQ(msg,
            "mb.toml: ppo.num_minibatches: expected a divisor of env.num_envs * ppo.num_steps = 6 * 8 = 48, got 5");
  EXPECT_NO_THROW(parse_config("[env]\nnum_envs = 6\n[ppo]\nnum_steps = 8\nnum_minibatches = 48\n", "mb.toml"));

  // validate() names the config's source.
  Config c;
  c.source = "run/config.toml";
  c.ppo.num_minibatches = 3;  // 16 * 128 = 2048
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "run/config.toml: ppo.num_minibatches: expected a divisor");
  c.source.clear();
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "<config>: ppo.num_minibatches");
}

TEST(Config, BatchOverflowIsAnError) {
  Config c;
  c.env.num_envs = std::numeric_limits<std::int64_t>::max() / 2;
  c.ppo.num_steps = 4;
  EXPECT_CONTAINS(error_of([&] { validate(c); }),
                  "<config>: env.num_envs: expected env.num_envs * ppo.num_steps to fit");
}

TEST(Config, ValidateChecksProgrammaticValues) {
  Config c;
  c.source = "x.toml";
  c.policy.hidden = {64, 0, 32};
  EXPECT_EQ(
      error_of([&] { validate(c); }),
      "x.toml: policy.hidden: expected an array of integers in [1, 4096] (empty = linear policy), got [64, 0, 32] "
      "(element 1 is 0)");
  c = Config{};
  c.env.params["g"] = std::nan("");
  EXPECT_CONTAINS(error_of([&] { validate(c); }), "<config>: env.g: expected a number or boolean");
}

TEST(Config, EnvParamsCaptured) {
  Config c =
      parse_config("[env]\nname = \"cartpole\"\nmax_episode_steps = 300\nforce_mag = 12.5\nsparse = false\n", "e.toml");
  EXPECT_EQ(c.env.name, "cartpole");
  ASSERT_EQ(c.env.params.size(), 3u);
  EXPECT_EQ(c.env.params.at("max_episode_steps"), 300.0);
  EXPECT_EQ(c.env.params.at("force_mag"), 12.5);
  EXPECT_EQ(c.env.params.at("sparse"), 0.0);
  EXPECT_EQ(c.env.params.count("name"), 0u);
  EXPECT_EQ(c.env.params.count("num_envs"), 0u);
  std::string text = to_toml(c);
  EXPECT_CONTAINS(text, "max_episode_steps = 300");
  EXPECT_CONTAINS(text, "force_mag = 12.5");
  expect_same(c, parse_config(text, "again.toml"));
}

TEST(Override, Malformed) {
  const char* const forms[] = {
      "ppo.num_steps",   // no '='
      "num_steps=64",    // no section
      "ppo.=64",         // empty key
      ".num_steps=64",   // empty section
      "=64",             // nothing before '='
      "ppo.num_steps=",  // empty value
      "ppo.a.b=1",       // nested key
      "",                // nothing at all
  };
  for (const char* form : forms) {
    std::string msg = override_error(form);
    EXPECT_EQ(msg.rfind(std::string("--set ") + form + ": ", 0), 0u) << msg;
    EXPECT_CONTAINS(msg, "expected section.key=value");
  }
}

TEST(Override, UnknownSectionOrKey) {
  EXPECT_EQ(override_error("optim.lr=1"), "--set optim.lr=1: unknown section (sections: env, policy, ppo, train)");
  EXPECT_EQ(override_error("ppo.lr=1"),
            "--set ppo.lr=1: unknown key (keys of [ppo]: num_steps, num_epochs, num_minibatches, "
            "learning_rate, lr_schedule, desired_kl, gamma, gae_lambda, clip_coef, clip_value_loss, "
            "vf_coef, ent_coef, bounds_loss_coef, max_grad_norm, normalize_advantages, normalize_obs, "
            "normalize_reward, clip_obs, adam_eps, target_kl, gemm_precision, tf32)");
  EXPECT_EQ(override_error("train.devce=cpu"), "--set train.devce=cpu: unknown key (did you mean train.device?)");
}

TEST(Override, WrongTypeNamesTheOverride) {
  EXPECT_EQ(override_error("ppo.num_steps=abc"),
            "--set ppo.num_steps=abc: expected a positive integer, got string \"abc\"");
  EXPECT_EQ(override_error("ppo.gamma=2"), "--set ppo.gamma=2: expected a number in [0, 1], got 2.0");
  EXPECT_EQ(override_error("ppo.tf32=yes"),
            "--set ppo.tf32=yes: expected a boolean (true or false), got string \"yes\"");
  EXPECT_EQ(override_error("train.device=gpu"), "--set train.device=gpu: expected one of auto, cpu, cuda, got \"gpu\"");
  EXPECT_EQ(override_error("env.gravity=strong"),
            "--set env.gravity=strong: expected a number or boolean (env parameter), got string \"strong\"");
  EXPECT_CONTAINS(override_error("policy.hidden=[64,0]"), "--set policy.hidden=[64,0]: expected an array of integers");
}

TEST(Override, FailedOverrideLeavesConfigUnchanged) {
  Config c;
  c.ppo.num_steps = 77;
  EXPECT_THROW(apply_override(c, "ppo.num_steps=-5"), ConfigError);
  EXPECT_THROW(apply_override(c, "ppo.num_steps=abc"), ConfigError);
  EXPECT_EQ(c.ppo.num_steps, 77);
  c.policy.hidden = {8};
  EXPECT_THROW(apply_override(c, "policy.hidden=[16, \"x\"]"), ConfigError);
  EXPECT_EQ(c.policy.hidden, std::vector<int>{8});
}

TEST(Override, EachType) {
  Config c;
  apply_override(c, "env.num_envs=4096");  // int64
  EXPECT_EQ(c.env.num_envs, 4096);
  apply_override(c, "env.name=pendulum");  // bare word: a string
  EXPECT_EQ(c.env.name, "pendulum");
  apply_override(c, "env.name=\"ant\"");  // TOML string
  EXPECT_EQ(c.env.name, "ant");
  apply_override(c, "ppo.num_steps=256");  // int
  EXPECT_EQ(c.ppo.num_steps, 256);
  apply_override(c, " ppo . num_epochs = 10 ");  // spaces around the parts
  EXPECT_EQ(c.ppo.num_epochs, 10);
  apply_override(c, "ppo.learning_rate=3e-4");  // float
  EXPECT_EQ(c.ppo.learning_rate, 3e-4);
  apply_override(c, "ppo.clip_obs=5");  // integer for a float key
  EXPECT_EQ(c.ppo.clip_obs, 5.0);
  apply_override(c, "ppo.tf32=true");  // bool
  EXPECT_TRUE(c.ppo.tf32);
  apply_override(c, "ppo.normalize_obs=false");
  EXPECT_FALSE(c.ppo.normalize_obs);
  apply_override(c, "policy.hidden=[256, 256, 128]");  // array
  EXPECT_EQ(c.policy.hidden, (std::vector<int>{256, 256, 128}));
  apply_override(c, "policy.hidden=[]");
  EXPECT_TRUE(c.policy.hidden.empty());
  apply_override(c, "policy.activation=relu");
  EXPECT_EQ(c.policy.activation, "relu");
  apply_override(c, "train.device=cpu");
  EXPECT_EQ(c.train.device, "cpu");
  apply_override(c, "train.seed=7");  // uint64
  EXPECT_EQ(c.train.seed, 7u);
  apply_override(c, "train.seed=18446744073709551615");  // above int64: read as a decimal string
  EXPECT_EQ(c.train.seed, std::numeric_limits<std::uint64_t>::max());
  apply_override(c, "train.target_return=-150.5");
  EXPECT_EQ(c.train.target_return, -150.5);
  apply_override(c, "env.gravity=9.81");  // env params
  apply_override(c, "env.max_episode_steps=1000");
  apply_override(c, "env.randomize=true");
  EXPECT_EQ(c.env.params.at("gravity"), 9.81);
  EXPECT_EQ(c.env.params.at("max_episode_steps"), 1000.0);
  EXPECT_EQ(c.env.params.at("randomize"), 1.0);
  apply_override(c, "ppo.num_minibatches=32");
  EXPECT_NO_THROW(validate(c));
  // A value that is more than one TOML value is taken as text, never as extra keys.
  EXPECT_EQ(override_error("train.device=cpu\nthreads = 3"),
            "--set train.device=cpu\\nthreads = 3: expected one of auto, cpu, cuda, got \"cpu\\nthreads = 3\"");
}

TEST(Override, CallerValidatesCrossFieldRules) {
  Config c;
  c.source = "base.toml";
  apply_override(c, "ppo.num_minibatches=3");  // fine on its own...
  EXPECT_CONTAINS(error_of([&] { validate(c); }),
                  "base.toml: ppo.num_minibatches: expected a divisor");  // ...not with the batch
}

}  // namespace
}  // namespace rlt
