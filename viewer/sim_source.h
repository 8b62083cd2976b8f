// What the viewer watches: a batch of envs it can step, reset, inspect and pose. Two kinds, each
// around a ready-made object that apps/ composed (apps/view.cpp) on either device:
//   EnvSim    a VecEnv, optionally with a Policy (rl/policy.h: the same acting path as `rltrain eval`);
//   ModelSim  a PhysicsBatch (envs/physics_batch.h): any MJCF model stepped by the physics directly,
//             for `rltrain view --model FILE`: zero, random or hand-set controls.
// The viewer never owns simulation state beyond this; rendering lives elsewhere (renderer.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rl/checkpoint.h"
#include "rl/policy.h"
#include "sim/host_copies.h"
#include "sim/spaces.h"
#include "sim/vec_env.h"

namespace rlt {
class PhysicsBatch;  // envs/physics_batch.h (kept out of this header: its sim/ math types would meet viewer/math3d.h's)
struct Model;
struct DataLayout;
}  // namespace rlt

namespace rlt::view {

enum class ControlMode : int { kPolicy = 0, kRandom = 1, kManual = 2, kZero = 3 };

// One env's numbers for the panel (copied on request: a few floats of one row).
struct EnvInfo {
  std::vector<float> obs;     // (obs_dim) after the last step
  std::vector<float> action;  // (act_dim) the last step's action
  float reward = 0;           // of the last step
  bool done = false;          // the last step ended an episode (the env has auto-reset)
  float finished_return = 0;  // that episode's return, where done
  std::vector<float> tracking;  // joystick tasks: VecEnv::tracking()'s kTrackingFloats values, else empty
};

class ViewSim {
 public:
  virtual ~ViewSim() = default;
  virtual std::string title() const = 0;
  virtual i64 num_envs() const = 0;
  virtual const Space& action_space() const = 0;
  virtual std::vector<DrawGeom> geoms() const = 0;
  // World poses (DrawGeom layout, 12 floats per geom) of envs [first, first + count), each in its
  // own frame (the viewer adds the grid offset).
  virtual void poses(i64 first, i64 count, float* host_out) = 0;
  // The same as a begin/end pair (VecEnv::request_draw_poses / wait_draw_poses): the poses of the
  // envs of every (first, count) range, one range after the other. The frame loop requests right
  // after stepping and waits just before drawing, so a device's copy overlaps the frame's other work.
  // wait_poses' array is valid until the next request (poses() replaces a pending request).
  virtual void request_poses(const std::vector<std::pair<i64, i64>>& ranges) = 0;
  virtual const float* wait_poses() = 0;
  virtual bool has_policy() const { return false; }
  // One step of every env. manual: (act_dim) values broadcast to every env (kManual).
  virtual void step(ControlMode mode, bool deterministic, const std::vector<float>& manual) = 0;
  virtual void reset_all() = 0;
  virtual void reset_one(i64 env) = 0;
  virtual EnvInfo inspect(i64 env) = 0;
  // Every env's episode that ended in the last step: (env, return). Copies flags and returns of all
  // envs: used only when asked for (--returns), not per frame.
  virtual void finished(std::vector<std::pair<i64, float>>& out) = 0;
  // The device the batch runs on, for the panel.
  virtual std::string device() const = 0;
};

// A VecEnv and, optionally, a policy.
class EnvSim final : public ViewSim {
 public:
  // env: the batch (already reset by the caller or not: the constructor resets it with seed);
  // copies: host copies on env's executor (kept alive by the sim); policy: may be null, or not yet
  // loaded (policy_loaded false: train --view's policy before the first checkpoint).
  EnvSim(std::unique_ptr<VecEnv> env, std::shared_ptr<const HostCopies> copies, std::unique_ptr<Policy> policy,
         bool policy_loaded, std::uint64_t seed);
  ~EnvSim() override;

  // Restores ckpt's weights into the policy (same shape; the env names must match, else
  // CheckpointError naming both). Needs a policy given at construction.
  void load_policy(const Checkpoint& ckpt, const std::string& path);

  std::string title() const override { return m_env->spec().name; }
  i64 num_envs() const override { return m_env->num_envs(); }
  const Space& action_space() const override { return m_env->spec().action; }
  std::vector<DrawGeom> geoms() const override { return m_env->draw_geoms(); }
  void poses(i64 first, i64 count, float* host_out) override { m_env->draw_poses(first, count, host_out); }
  void request_poses(const std::vector<std::pair<i64, i64>>& ranges) override { m_env->request_draw_poses(ranges); }
  const float* wait_poses() override { return m_env->wait_draw_poses(); }
  bool has_policy() const override { return m_policy != nullptr && m_policy_loaded; }
  bool can_load_policy() const { return m_policy != nullptr; }
  void step(ControlMode mode, bool deterministic, const std::vector<float>& manual) override;
  void reset_all() override;
  void reset_one(i64 env) override;
  EnvInfo inspect(i64 env) override;
  void finished(std::vector<std::pair<i64, float>>& out) override;
  std::string device() const override { return device_name(m_env->device()); }
  VecEnv& env() { return *m_env; }

 private:
  std::unique_ptr<VecEnv> m_env;
  std::shared_ptr<const HostCopies> m_copies;
  std::unique_ptr<Policy> m_policy;
  bool m_policy_loaded = false;
  std::uint64_t m_seed;
  std::uint32_t m_step = 0;               // steps since the start: act()'s and sample_actions()'s key
  const float* m_last_actions = nullptr;  // executor memory, (num_envs x act_dim)
  std::vector<float> m_manual_host;       // (num_envs x act_dim) broadcast manual actions
};

// Any MJCF model: a PhysicsBatch of copies.
class ModelSim final : public ViewSim {
 public:
  ModelSim(std::unique_ptr<PhysicsBatch> batch, std::string title);
  ~ModelSim() override;

  std::string title() const override { return m_title; }
  i64 num_envs() const override;
  const Space& action_space() const override { return m_space; }
  std::vector<DrawGeom> geoms() const override;
  void poses(i64 first, i64 count, float* host_out) override;
  void request_poses(const std::vector<std::pair<i64, i64>>& ranges) override;
  const float* wait_poses() override;
  void step(ControlMode mode, bool deterministic, const std::vector<float>& manual) override;
  void reset_all() override;
  void reset_one(i64 env) override;
  EnvInfo inspect(i64 env) override;
  void finished(std::vector<std::pair<i64, float>>& out) override { out.clear(); }
  std::string device() const override;
  const Model& model() const;
  // Env `env`'s physics row (DataLayout, sim/dynamics.h), for tests and the frame info.
  std::vector<float> data_row(i64 env) const;
  const DataLayout& layout() const;

 private:
  std::unique_ptr<PhysicsBatch> m_batch;
  std::string m_title;
  std::uint32_t m_step = 0;
  Space m_space;
};

}  // namespace rlt::view
