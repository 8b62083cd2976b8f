// ModelBatch: N copies of one MJCF model (sim/mjcf.h) on the host, in float or double, whose state
// its user reads and writes between calls: what rltrain.Physics (python/rltrain/physics.py) is
// built on. MuJoCo's (model, data) with a batch dimension, as MJX offers it: the caller sets qpos,
// qvel, act, ctrl, mocap poses, qfrc_applied, xfrc_applied and time in place, and per-env model
// parameters (set_param), then step(), forward() or reset().
//
// Body wrenches are on (ModelView::nbody_xfrc = nbody): each row has MuJoCo's xfrc_applied
// (layout().xfrc_applied, nbody x 6) and the caller's generalized forces at layout().qfrc_user
// (MuJoCo's qfrc_applied: the physics writes the row's qfrc_applied from both every substep).
//
// Per-env model parameters (MJX's batch of models for domain randomization): the fields of
// param_fields() can take other values in each env (set_param). The first set_param gives every env
// a parameter row holding its copies of those fields and of the constants derived from them (below);
// the env's ModelView has those fields pointed at its row (the DR row of envs/robot_env.h, here over
// a table of fields). Until then every env shares the model: nothing is copied or rebound.
// Recomputed per env when mass, inertia or armature change, as MuJoCo's mj_setConst does at qpos0:
// body_invweight0 (translational and rotational), dof_invweight0, tendon_invweight0 (the soft
// constraints' regularization). Not recomputed: actuator_acc0 (muscles' force scale), which MuJoCo's
// mj_setConst also refreshes.
//
// Memory (host, one block per kind; the Python layer views them without copies):
//   rows   (num_envs x layout().row) scalars: each env's physics row (sim/dynamics.h DataLayout:
//          qpos at layout().qpos, ...), so one field over the batch is a strided view
//   params (num_envs x param row) scalars, from the first set_param on
//   ctrl   (num_envs x nu) scalars
//   time   (num_envs) doubles, MuJoCo's d->time (the row's own clock exists only with a clock sensor)
//   ncon   (num_envs) ints: the contacts that pushed in the last physics step
// Every call runs its envs on the CPU executor's threads, one env per task item (an env's step
// costs microseconds, so the executor's default grain of 1024 items would leave small batches on
// one thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/common.h"
#include "sim/dynamics.h"
#include "sim/model.h"

namespace rlt {

enum class Precision { kFloat, kDouble };

// A model field that can differ between the envs of a batch: name (the Model's and MuJoCo's, but
// actuator_kp / kv, the gains of <position> and <velocity> actuators), shape (count x width), and
// whether its values must be >= 0.
struct ParamField {
  std::string name;
  int count, width;
  bool non_negative;
  std::string doc;
};

class ModelBatch {
 public:
  virtual ~ModelBatch() = default;

  virtual const Model& model() const = 0;  // as compiled (double)
  virtual Precision precision() const = 0;
  virtual i64 num_envs() const = 0;
  virtual int num_threads() const = 0;
  virtual const DataLayout& layout() const = 0;

  // The blocks above (see the header). Valid for the batch's life; the scalar type is precision()'s.
  virtual void* rows() = 0;
  virtual void* ctrl() = 0;
  virtual double* time() = 0;
  virtual int* ncon() = 0;

  // nsteps physics steps of every env (MuJoCo's mj_step, nsteps times; the model's timestep and
  // integrator) with each env's ctrl, mocap poses, qfrc_applied and xfrc_applied held. The derived
  // fields (xpos, sensordata, ...) are then those of the last step, as after MuJoCo's mj_step:
  // positions of the state at the start of that step, sensors of it. Throws std::invalid_argument
  // for nsteps < 0.
  virtual void step(i64 nsteps) = 0;
  // MuJoCo's mj_forward on every env: kinematics, forces, the constrained qacc and the sensors of
  // the current state and ctrl; the state is not advanced.
  virtual void forward() = 0;
  // Envs `envs` (count of them; null: every env) back to the start MuJoCo's mj_resetData (key < 0)
  // or mj_resetDataKeyframe(key) gives, ctrl included, every other value of their rows zeroed,
  // then forward() on them (so that xpos, sensordata, ... describe the new state). Throws
  // std::out_of_range for an env or key outside the batch or the model.
  virtual void reset(int key, const i64* envs, i64 count) = 0;

  // Per-env model parameters (see the header). The fields, in a fixed order, with this model's shapes.
  virtual const std::vector<ParamField>& param_fields() const = 0;
  // Field `name`'s values in envs `envs` (count of them; null: every env, count ignored): `values`
  // holds (envs' count) x count x width doubles, env by env. Throws std::invalid_argument naming the
  // field for an unknown name, a non-finite value or a negative one where non_negative, and
  // std::out_of_range for an env outside the batch; nothing is changed then. Derived constants are
  // recomputed for those envs (header). The state is left alone: forward() to see the new values in
  // the derived fields.
  virtual void set_param(const std::string& name, const double* values, const i64* envs, i64 count) = 0;
  // Field `name`'s values in every env into out (num_envs x count x width doubles).
  virtual void get_param(const std::string& name, double* out) const = 0;
};

// Compiles nothing: `model` is load_mjcf's or parse_mjcf's. num_threads 0: one per core. Throws
// std::invalid_argument for num_envs < 1 or num_threads < 0.
std::unique_ptr<ModelBatch> make_model_batch(const Model& model, i64 num_envs, int num_threads, Precision precision);

// The stateful actuators (MuJoCo's actuators with an activation, whose d->act has na entries in
// actuator order): their indices. The row's act has nu entries, 0 for the stateless ones.
std::vector<int> stateful_actuators(const Model& model);

}  // namespace rlt
