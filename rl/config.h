// Run configuration: one struct per TOML section, each field with its default and a one-line doc
// (STYLE.md 11). Loaded by load_config(); every key can be overridden with `--set section.key=value`.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlt {

// Bad input: the message names the file, the key and what was expected. `rltrain` exits 2.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EnvConfig {
  std::string name = "cartpole";  // registered env name (`rltrain envs` lists them)
  std::int64_t num_envs = 16;     // envs stepped in parallel
  // Any other key in [env] sets a parameter of the env (e.g. max_episode_steps, gravity);
  // checked against the env's parameter list when the env is made.
  std::map<std::string, double> params;
};

struct PolicyConfig {
  std::vector<int> hidden = {64, 64};  // hidden layer widths, actor and critic alike
  std::string activation = "tanh";     // tanh | elu | relu
  double init_log_std = 0.0;           // initial log std of the Gaussian head (continuous actions)
  std::string squash = "none";         // none | tanh: actions as sampled (the env clamps them) or tanh-squashed into the action box
  // Bounds on the Gaussian's log std (continuous actions; -inf / inf = none): the log std is clamped
  // into them after every optimizer step and before each rollout (so a resumed or init_from policy too).
  double min_log_std = -std::numeric_limits<double>::infinity();
  double max_log_std = std::numeric_limits<double>::infinity();
};

struct PpoConfig {
  int num_steps = 128;                 // rollout length per env per iteration
  int num_epochs = 4;                  // passes over each rollout
  int num_minibatches = 4;             // minibatches per epoch (must divide num_steps*num_envs)
  double learning_rate = 2.5e-4;       // Adam step size (initial, for schedules)
  std::string lr_schedule = "linear";  // constant | linear (to 0 at the end) | adaptive_kl
  double desired_kl = 0.01;            // adaptive_kl target: lr /= 1.5 above 2x, *= 1.5 below x/2
  double gamma = 0.99;                 // discount
  double gae_lambda = 0.95;            // GAE lambda
  double clip_coef = 0.2;              // surrogate clip range
  bool clip_value_loss = true;         // clip the value loss around the old value
  double vf_coef = 0.5;                // value loss weight
  double ent_coef = 0.0;               // entropy bonus weight
  double bounds_loss_coef = 0.0;       // weight of rl_games' bounds loss on Gaussian means past 1.1 box half-widths (0 = off)
  double max_grad_norm = 0.5;          // global gradient-norm clip (0 disables)
  bool normalize_advantages = true;    // per-minibatch advantage normalization
  bool normalize_obs = true;           // running mean/std observation normalization
  bool normalize_reward = true;        // scale rewards by the std of the discounted return
  double clip_obs = 10.0;              // clip normalized observations to +-clip_obs
  double adam_eps = 1e-5;              // Adam epsilon
  double target_kl = 0.0;              // stop an update's epochs early above this KL (0 = off)
  // What the policy's GEMMs round their inputs to (sim/precision.h): fp32 | tf32 | bf16 | fp16.
  // Storage and sums stay fp32; cuBLAS on CUDA, the same rounding in the CPU twin (rl/gemm.h).
  std::string gemm_precision = "fp32";
  bool tf32 = false;  // older spelling of gemm_precision = "tf32" (kept equal to it after loading)
};

struct TrainConfig {
  std::int64_t total_env_steps = 100000;  // stop after this many env steps
  std::uint64_t seed = 1;                 // everything random derives from it
  std::string device = "auto";            // auto | cpu | cuda
  std::string env_device;                 // where the envs step: auto | cpu | cuda ("" = device)
  std::string learner_device;             // where the learner runs: auto | cpu | cuda ("" = device)
  int threads = 0;                        // CPU threads (0 = one per core)
  int checkpoint_every = 0;               // iterations between checkpoints (0 = final only)
  double checkpoint_minutes = 5.0;        // also refresh latest.safetensors this often, wall time (0 = off)
  int max_skipped_updates = 20;           // non-finite updates in a row that stop the run as diverged (0 = never)
  double target_return = 0.0;             // stop once the mean return reaches it (if stop_at_target)
  bool stop_at_target = false;            // enable the early stop above
  int eval_episodes = 100;                // finished episodes the reported mean return averages
  // When an iteration's statistics are read (metrics, progress, the stop checks): "lagged" after the
  // next iteration is queued, so the host never waits on the device inside the loop (a checkpoint,
  // the last iteration, a stop read them at once); "sync" right after the iteration; "auto" lagged on
  // CUDA, sync on the CPU (where launching does the work: nothing to overlap).
  std::string stats_readback = "auto";
  // A checkpoint file or run directory whose policy (weights and observation normalizer) this run
  // starts from instead of a random one; envs, optimizer, reward scale and counters start fresh
  // (fine-tuning and curricula, as Playground's restore_checkpoint_path: e.g. rough terrain from a
  // flat-terrain policy). Ignored by --resume (the run's own checkpoint has everything).
  std::string init_from;
  // Before allocating, check that the envs, rollout and learner fit in free memory (RAM, or the
  // GPU's free memory for what lives there) with a margin (apps/memory_budget.h); false skips it.
  // The environment variable RLTRAIN_MEMORY_CHECK=0 skips it too (for commands without --set).
  bool memory_check = true;
};

struct Config {
  std::string source;  // file the config came from (for error messages)
  EnvConfig env;
  PolicyConfig policy;
  PpoConfig ppo;
  TrainConfig train;
};

// Loads a TOML config. Unknown sections or keys (other than env params), wrong types and
// out-of-range values throw ConfigError("<file>: <section.key>: expected ..., got ...").
Config load_config(const std::string& path);
// Parses a TOML string as if it were the file `source_name` (tests, --resume's saved config).
Config parse_config(const std::string& toml_text, const std::string& source_name);
// Applies "section.key=value" (value in TOML syntax; bare words are taken as strings).
// Throws ConfigError naming the override for a malformed one or an unknown key.
void apply_override(Config& cfg, const std::string& assignment);
// Range and consistency checks (divisibility of the batch, etc.); throws ConfigError.
void validate(const Config& cfg);
// The resolved config as TOML: what `rltrain train` prints and writes to run_dir/config.toml.
// parse_config(to_toml(c)) reproduces c.
std::string to_toml(const Config& cfg);

}  // namespace rlt
