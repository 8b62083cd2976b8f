// `rltrain view` and `rltrain train --view`: composes what the viewer (viewer/) shows, on the
// device the options ask for (Runtime): a VecEnv from a config and a Policy from a checkpoint
// (EnvSim), or a PhysicsBatch of any MJCF model (ModelSim); then hands it to run_viewer.
// Built only with RLTRAIN_VIEWER.
#pragma once

#include <cstdint>
#include <memory>

#include "apps/trainer.h"
#include "viewer/viewer.h"

namespace rlt {

// The sim that `rltrain view` with these options shows. Throws ConfigError / CheckpointError /
// MjcfError for bad input.
std::unique_ptr<view::ViewSim> make_view_sim(const ViewOptions& opts);

// An EnvSim of cfg's env (cfg.env.num_envs envs) on `device`, reset with seed; no policy.
std::unique_ptr<view::EnvSim> make_env_sim(const Config& cfg, const std::string& device, int threads,
                                           std::uint64_t seed);

// Runs the viewer; returns the process exit code. Throws ConfigError / CheckpointError / MjcfError
// for bad input (before any window opens).
int run_view(const ViewOptions& opts);

// `rltrain train ... --view`: training on a worker thread (unchanged: its own Runtime and VecEnv),
// the viewer on this thread with a small CPU VecEnv that plays the learner's latest checkpoint,
// reloaded whenever the trainer writes it. train.checkpoint_every sets how often that happens
// (--view-every when the config has 0). Returns the exit code.
int run_train_with_view(TrainOptions train, ViewOptions view, std::int64_t view_every);

}  // namespace rlt
