// `rltrain train`: runs PPO and writes a run directory (DESIGN.md D7):
//   config.toml      the resolved config
//   metrics.csv      one row per iteration
//   checkpoints/     latest.safetensors (+ iter_NNNNNN.safetensors every checkpoint_every)
//   summary.json     final_mean_return, env_steps, wall_seconds, device, ...
//   events.out.tfevents.*  TensorBoard: the metrics as scalars (step = env steps), the config as text
//                    (apps/tensorboard.h; one file per call, a resumed call's continuing the run)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlt {

struct TrainOptions {
  std::string config_path;             // --config (not with --resume)
  std::vector<std::string> overrides;  // --set section.key=value, in order
  std::optional<std::uint64_t> seed;   // --seed
  std::string device;                  // --device (empty: the config's); env and learner alike
  std::string env_device;              // --env-device (empty: --device, else the config's)
  std::string learner_device;          // --learner-device (empty: --device, else the config's)
  bool placement_copies = false;       // --placement-copies: the env through the PlacedEnv copies always
  std::string run_dir;                 // --run-dir (default runs/<env>-<seed>-<time>)
  std::string resume_dir;              // --resume RUN_DIR
  std::int64_t max_iterations = 0;     // --iterations: stop after this many in this call (0 = no limit)
  bool restart = false;                // --restart: start over in run_dir when it holds a run without a checkpoint
  bool quiet = false;                  // no progress output
  // A run stopped by a signal keeps its stop handler (a repeat within 2 s ignored) until the process
  // exits, instead of restoring the previous handlers: the CLI, which exits right after (a repeated
  // SIGTERM arriving after the checkpoint must not kill it); not in-process callers (Python).
  bool keep_stop_handler = false;
};

struct TrainResult {
  std::string run_dir;
  double final_mean_return = 0;
  std::int64_t env_steps = 0;
  std::int64_t iterations = 0;
  double wall_seconds = 0;
  bool reached_target = false;
  int stop_signal = 0;    // SIGINT, SIGTERM or SIGHUP when a signal stopped the run (checkpoint written), else 0
  bool diverged = false;  // stopped after train.max_skipped_updates non-finite updates in a row
  std::int64_t nonfinite_resets = 0;  // envs reset for a non-finite state (over the whole run)
};

// Exit codes of `rltrain` (README): 0 done, 1 internal error, 2 bad input, 3 stopped by a signal
// after writing a checkpoint (resume with --resume), 4 diverged (non-finite updates; the last good
// checkpoint is kept), 5 a write failed or memory ran out, 6 under mpirun: another process of the
// job died or stopped answering (the last checkpoint is kept).
constexpr int kExitInterrupted = 3;
constexpr int kExitDiverged = 4;
constexpr int kExitIo = 5;   // a write failed (IoError, rl/files.h) or memory ran out
constexpr int kExitJob = 6;  // a collective failed or timed out (rl/distributed.h; the watchdog's exit code too)

// Throws ConfigError / CheckpointError for bad input (the CLI maps them to exit code 2).
TrainResult train(const TrainOptions& opts);

// ConfigError when a new run (no --resume) names a run directory that already holds a run (with
// --restart: only when that run has a checkpoint to resume instead).
void check_run_dir_free(const TrainOptions& opts);
// The result line `rltrain train` prints.
void print_train_result(const TrainResult& r);

}  // namespace rlt
