// Checkpoints (DESIGN.md D7): one safetensors file with the learner's state (weights, Adam
// moments, normalizers, counters), the VecEnv's state (so --resume continues bit for bit) and the
// training progress; the resolved config rides along as metadata. Device-agnostic: host arrays.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "rl/config.h"
#include "rl/policy.h"
#include "rl/ppo.h"
#include "rl/safetensors.h"
#include "sim/vec_env.h"

namespace rlt {

constexpr const char* kCheckpointFormat = "rltrain-checkpoint-1";

struct TrainProgress {
  std::int64_t iteration = 0;        // iterations completed
  std::int64_t env_steps = 0;        // env steps taken
  std::int64_t episodes = 0;         // episodes finished
  std::int64_t skipped_updates = 0;  // minibatch updates skipped for a non-finite loss or gradient
  double wall_seconds = 0;           // training time so far, over all invocations
  std::deque<float> recent_returns;  // the last eval_episodes finished episodes
  std::deque<std::int32_t> recent_lengths;
  double mean_return() const;  // NaN when no episode has finished
  double mean_length() const;
  void add_episode(float ret, std::int32_t len, std::size_t window);
};

// Writes atomically (temp file, fsync, rename). The metadata "world_size" records how many
// processes trained it (rl/distributed.h): 1 + other_processes.size(), where other_processes are
// ranks 1.. of a job's pack_process_state (rank 0's state is learner's and env's), stored as
// rank<r>/env/* and rank<r>/learner/*.
void save_checkpoint(const std::string& path, const Config& cfg, const Learner& learner, const VecEnv& env,
                     const TrainProgress& progress, const std::vector<std::string>& other_processes = {});

// What differs between the processes of a job: the state of its envs and its learner's per-env
// arrays (the running discounted return), as bytes for gathering to rank 0.
std::string pack_process_state(const Learner& learner, const VecEnv& env);


struct Checkpoint {
  TensorFile file;
  Config config;  // the config the checkpoint was trained with
};

// Reads and checks the format; throws CheckpointError("<file>: ...").
Checkpoint read_checkpoint(const std::string& path);

// A policy file: what a trained policy needs to act and to seed another run, without the optimizer,
// env and progress state that only --resume reads (165 KB for a Go1 policy whose 1024-env
// checkpoint is 16.5 MB). The learner arrays of LearnerLoad::kModel (weights; observation,
// critic-observation and return normalizers with their counts) and the checkpoint's metadata
// (config, env, sizes) under the same format, with metadata "contents" = kPolicyContents. eval,
// view, export, the Python module and train.init_from read it as they read a checkpoint;
// restore_checkpoint with LearnerLoad::kAll (a resume) refuses it naming the file and the key.
constexpr const char* kPolicyContents = "policy";
bool is_policy_file(const Checkpoint& ckpt);
// CheckpointError naming the file and metadata "contents" when ckpt is a policy file: --resume
// needs the optimizer, env and progress state it does not carry (restore_checkpoint with kAll calls it).
void check_resumable(const Checkpoint& ckpt);
// Writes ckpt's policy file to `path` atomically (CheckpointError naming ckpt's file when it lacks a
// learner array of kModel).
void save_policy_file(const Checkpoint& ckpt, const std::string& path);

// How many processes trained the checkpoint (1 when it predates the metadata).
int checkpoint_world_size(const Checkpoint& ckpt);
// The checkpoint as process `rank` of its job restores it: that rank's env and per-env learner
// arrays in place of rank 0's (CheckpointError naming the file when they are missing).
Checkpoint checkpoint_for_rank(const Checkpoint& ckpt, int rank);

// Restores the learner (what: LearnerLoad, rl/ppo.h) and, unless env is null, the env and progress. Shape mismatches throw CheckpointError naming the file and tensor, with a
// hint when the env or policy differs from the checkpoint's.
void restore_checkpoint(const Checkpoint& ckpt, Learner& learner, LearnerLoad what, VecEnv* env,
                        TrainProgress* progress);

// A checkpoint at `path` used with an env the user chose (`source` names where: a config file, the
// viewer): CheckpointError "<path>: metadata "env": checkpoint is for env 'a', but <source> asks for
// env 'b'" when they differ.
void check_checkpoint_env(const Checkpoint& ckpt, const std::string& path, const std::string& env_name,
                          const std::string& source);

// Restores a Policy (rl/policy.h) from the checkpoint's learner arrays: CheckpointError naming the
// file when its obs/head/critic dimensions or the parameter count differ from the policy's.
void restore_policy(const Checkpoint& ckpt, Policy& policy);

// The normalization a checkpoint's policy was trained with (its config's ppo.normalize_obs, clip_obs).
inline ObsNormalization obs_normalization(const Config& cfg) {
  return ObsNormalization{cfg.ppo.normalize_obs, static_cast<float>(cfg.ppo.clip_obs)};
}

}  // namespace rlt
