// What the viewer watches: a batch of envs it can step, reset, inspect and pose. Two kinds:
//   EnvSim    a VecEnv made by Runtime (either device) from a config, optionally with a policy
//             restored from a checkpoint (the same Learner::act path as `rltrain eval`);
//   ModelSim  any MJCF model stepped by the physics directly (sim/physics_step.h) on the CPU, for
//             `rltrain view --model FILE`: zero, random or hand-set controls.
// The viewer never owns simulation state beyond this; rendering lives elsewhere (renderer.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rl/checkpoint.h"
#include "rl/config.h"
#include "rl/runtime.h"
#include "sim/model.h"
#include "sim/model_view.h"
#include "sim/spaces.h"
#include "sim/vec_env.h"

namespace rlt::view {

enum class ControlMode : int { kPolicy = 0, kRandom = 1, kManual = 2, kZero = 3 };

// One env's numbers for the panel (copied on request: a few floats of one row).
struct EnvInfo {
  std::vector<float> obs;     // (obs_dim) after the last step
  std::vector<float> action;  // (act_dim) the last step's action
  float reward = 0;           // of the last step
  bool done = false;          // the last step ended an episode (the env has auto-reset)
  float finished_return = 0;  // that episode's return, where done
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

// A VecEnv from a config; policy from a checkpoint (optional).
class EnvSim final : public ViewSim {
 public:
  // cfg.env.num_envs is the batch size. Throws ConfigError for a bad env / device.
  EnvSim(const Config& cfg, const std::string& device, int threads, std::uint64_t seed);
  ~EnvSim() override;

  // Restores the policy of ckpt (its config's policy shape; env name must match this env's,
  // else CheckpointError naming both). Replaces a previous policy.
  void load_policy(const Checkpoint& ckpt, const std::string& path);

  std::string title() const override { return m_cfg.env.name; }
  i64 num_envs() const override { return m_env->num_envs(); }
  const Space& action_space() const override { return m_env->spec().action; }
  std::vector<DrawGeom> geoms() const override { return m_env->draw_geoms(); }
  void poses(i64 first, i64 count, float* host_out) override { m_env->draw_poses(first, count, host_out); }
  void request_poses(const std::vector<std::pair<i64, i64>>& ranges) override { m_env->request_draw_poses(ranges); }
  const float* wait_poses() override { return m_env->wait_draw_poses(); }
  bool has_policy() const override { return m_learner != nullptr; }
  void step(ControlMode mode, bool deterministic, const std::vector<float>& manual) override;
  void reset_all() override;
  void reset_one(i64 env) override;
  EnvInfo inspect(i64 env) override;
  void finished(std::vector<std::pair<i64, float>>& out) override;
  std::string device() const override;
  VecEnv& env() { return *m_env; }

 private:
  Config m_cfg;
  Runtime m_rt;
  std::unique_ptr<VecEnv> m_env;
  std::unique_ptr<Learner> m_learner;
  std::uint64_t m_seed;
  std::uint32_t m_step = 0;               // steps since the start: act()'s and sample_actions()'s key
  std::uint64_t m_resets = 0;             // reset_one calls so far (keys the fresh episode)
  const float* m_last_actions = nullptr;  // executor memory, (num_envs x act_dim)
  std::vector<float> m_manual_host;       // (num_envs x act_dim) broadcast manual actions
};

// Any MJCF model, a batch of copies stepped on the CPU in float.
class ModelSim final : public ViewSim {
 public:
  // Throws MjcfError for a bad model, ConfigError for a bad control_dt.
  ModelSim(const std::string& path, i64 num_envs, int threads, std::uint64_t seed, double control_dt);
  ~ModelSim() override;

  std::string title() const override { return m_path; }
  i64 num_envs() const override { return m_num_envs; }
  const Space& action_space() const override { return m_space; }
  std::vector<DrawGeom> geoms() const override;
  void poses(i64 first, i64 count, float* host_out) override;
  void request_poses(const std::vector<std::pair<i64, i64>>& ranges) override;  // gathers at once (CPU)
  const float* wait_poses() override { return m_pose_out.data(); }
  void step(ControlMode mode, bool deterministic, const std::vector<float>& manual) override;
  void reset_all() override;
  void reset_one(i64 env) override;
  EnvInfo inspect(i64 env) override;
  void finished(std::vector<std::pair<i64, float>>& out) override { out.clear(); }
  std::string device() const override { return "cpu"; }
  const Model& model() const { return m_model; }
  // Env `env`'s data row (qpos at DataLayout::qpos), for tests and the frame info.
  const float* data_row(i64 env) const;
  int data_size() const;
  int qpos_offset() const;

 private:
  std::string m_path;
  Model m_model;
  std::unique_ptr<HostModel<float>> m_host;
  CpuExecutor m_exec;
  i64 m_num_envs;
  std::uint64_t m_seed;
  int m_substeps = 1;
  std::uint32_t m_step = 0;
  Space m_space;
  std::vector<float> m_range;  // (nu x 2)
  std::vector<float> m_data;   // (num_envs x data_size)
  std::vector<float> m_ctrl;   // (num_envs x nu)
  std::vector<float> m_pose_out;  // request_poses' gather
};

}  // namespace rlt::view
