// `rltrain rollout`: one env of any MJCF model (sim/mjcf.h) stepped on the CPU with physics_step
// (sim/physics_step.h), written as CSV. Also the random controls that the model bench
// (apps/bench.cpp) and tools/bench_mujoco.cpp draw, so all three sample the same way.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "envs/physics_batch.h"  // ctrl_sample_range
#include "sim/actuators.h"
#include "sim/common.h"
#include "sim/dynamics.h"
#include "sim/model.h"
#include "sim/model_view.h"
#include "sim/philox.h"

namespace rlt {

struct RolloutOptions {
  std::string model_path;     // MJCF file
  std::int64_t steps = 1000;  // control steps
  // keyframe to start from (its qpos, qvel, ctrl, time); empty, or kQpos0Start where no keyframe has
  // that name: qpos0 at rest
  std::string key;
  std::string ctrl = "zero";  // zero | random (uniform in each actuator's ctrlrange, redrawn every control step)
  std::uint64_t seed = 0;     // Philox seed of the random controls
  double timestep = 0;        // physics step in s (0: the model's option/timestep)
  int substeps = 1;           // physics steps per control step, ctrl held
  // CSV of mocap poses (read_mocap_script): row t is held during control step t, the last row after
  // the file ends; empty: the mocap bodies stay at the start's pose (the model's or the keyframe's)
  std::string mocap;
  std::string out_path;       // CSV file; empty: stdout
};

// The start name for qpos0 at rest (a keyframe of that name, if the model has one, wins).
inline constexpr const char* kQpos0Start = "qpos0";

// `rltrain rollout`: one compile of run.model_path, then one run from each start with each control
// mode (--key repeated, --ctrl zero,random), and with `inspect` also `rltrain inspect`'s JSON at each
// start: a peer (tools/mujoco_peer.py) gets every trajectory and forward pass of a model from one
// compile instead of one per run.
struct RolloutCommand {
  RolloutOptions run;              // steps, seed, timestep, substeps; key, ctrl and out_path are set per run
  std::vector<std::string> keys;   // starts (keyframe names, or kQpos0Start); empty: qpos0 only
  std::vector<std::string> ctrls;  // control modes, each zero | random; empty: zero
  // CSV path; "{key}" and "{ctrl}" in it become each run's start and mode (required when several
  // starts or modes are run); empty: stdout (one run only)
  std::string out;
  std::string inspect;              // JSON path per start ("{key}" as above); empty: none
  std::vector<std::string> fields;  // the "model" arrays of that JSON (apps/inspect.h); empty: all
};

// ctrl_sample_range (each actuator's random-control interval) lives in envs/physics_batch.h.
// random_ctrl (the random controls every tool draws) lives in sim/actuators.h.

// Physics steps per control step for `--control-dt` (the model bench and `rltrain view --model`):
// throws ConfigError unless control_dt is a positive whole number of the model's timesteps.
int control_substeps(double control_dt, double timestep);

// CSV column names: time, qpos (free joint: <name>_x _y _z _qw _qx _qy _qz; ball: <name>_qw .. _qz;
// hinge/slide: <name>), qvel (free: <name>_vx _vy _vz _wx _wy _wz; ball: <name>_wx _wy _wz;
// hinge/slide: <name>_v), ctrl_<actuator> (the controls held during the step that led to the row;
// row 0: the starting ones), mocap_<body>_x _y _z _qw _qx _qy _qz per mocap body in mocap order
// (its mocap_pos and mocap_quat held during that step, as given: not normalized; row 0: the
// start's), ncon. An unnamed joint is called joint<id>, an unnamed actuator actuator<id>, an unnamed
// body body<id>. Values are written with 17 significant digits (doubles round-trip).
std::vector<std::string> rollout_columns(const Model& model);
// The mocap columns alone (mocap_<body>_x ... _qz, 7 per mocap body in mocap order).
std::vector<std::string> mocap_columns(const Model& model);

// A script of mocap poses over time (`rltrain rollout --mocap FILE`): a CSV whose header names some
// of mocap_columns (any subset, any order; the model's other rollout_columns, time, qpos, ..., are
// accepted and ignored, any other name refused), one row per control step: row t is the
// mocap_pos/mocap_quat held during control step t, the last row for every step after it. A mocap
// value no column gives keeps the start's. (A rollout CSV given back whole starts with its start
// row, so its poses come one step late: drop that row to replay them.) values: rows x 7 nmocap
// (mocap_pos then quat per body, in mocap order), given: which of the 7 nmocap entries the file sets.
struct MocapScript {
  std::vector<double> values;
  std::vector<char> given;
  std::int64_t rows = 0;
};
// Throws ConfigError naming the file (and line) for an unreadable file, an unknown column, a
// model without mocap bodies, a row of the wrong length or a value that is not a finite number.
MocapScript read_mocap_script(const Model& model, const std::string& path);

// One env of a model, in double, on the host. Not copyable (the views point into its arrays).
class ModelRollout {
 public:
  // Throws ConfigError (rl/config.h) for an unknown key, a bad ctrl mode, timestep or substeps.
  ModelRollout(const Model& model, const RolloutOptions& opts);
  ModelRollout(const ModelRollout&) = delete;
  ModelRollout& operator=(const ModelRollout&) = delete;

  // Back to a start as a new ModelRollout would be (every data value zeroed, then reset):
  // keyframe `key` (empty or kQpos0Start: qpos0 at rest, as RolloutOptions::key) with control mode
  // `ctrl` (zero | random). Throws ConfigError for an unknown key or mode, naming the model's keys.
  void restart(const std::string& key, const std::string& ctrl);
  // One control step: draws the controls (random mode), then `substeps` physics steps.
  void step();
  // One control step with these controls (nu values, kept as ctrl()) instead of the mode's.
  void step(const double* ctrl);
  // Sets the mocap bodies' poses for the next steps (3 nmocap and 4 nmocap values; MuJoCo's
  // d->mocap_pos, d->mocap_quat); a --mocap script's row replaces them at each step it covers.
  void set_mocap(const double* pos, const double* quat);

  double time() const { return m_time; }
  std::int64_t steps_done() const { return m_steps_done; }
  int num_contacts() const { return m_num_contacts; }  // after the last physics step (0 before any)
  const Model& model() const { return m_model; }
  const std::string& model_path() const { return m_model_path; }
  const ModelView<double>& model_view() const { return m_host.view(); }
  const DataView<double>& data() const { return m_data; }
  const std::vector<double>& ctrl() const { return m_ctrl; }
  bool finite() const;  // qpos and qvel all finite
  // 1/2 qvel^T M qvel at the current state (runs kinematics and the mass matrix).
  double kinetic_energy();
  // MuJoCo's mj_forward at the current state with ctrl() held: smooth forces, actuators, contacts,
  // the constrained qacc (without the implicit damping, as MuJoCo's d->qacc) and the sensors; the
  // state is not advanced (rltrain inspect).
  void forward();
  // Writes the CSV row of the current state (columns as rollout_columns).
  void write_row(std::FILE* out) const;

 private:
  void advance();  // `substeps` physics steps with m_ctrl (and the script's mocap row)

  Model m_model;  // with the timestep override applied
  std::string m_model_path;  // for error messages
  HostModel<double> m_host;
  std::vector<double> m_row;  // one env's data row (data_size scalars)
  DataView<double> m_data;
  std::vector<double> m_ctrl;        // (nu)
  std::vector<double> m_ctrl_range;  // (nu x 2)
  bool m_random;
  MocapScript m_mocap;  // empty (rows 0) without --mocap
  std::uint64_t m_seed;
  int m_substeps;
  double m_time = 0;
  std::int64_t m_steps_done = 0;
  int m_num_contacts = 0;
};

// Loads cmd.run.model_path once and writes, per start and mode, steps + 1 CSV rows (the start state,
// then one per control step), and with cmd.inspect the JSON per start. Every option is checked
// before the compile and every key before the first file is written. Throws MjcfError for a bad
// model, ConfigError for bad options, an unknown key or an unwritable --out/--inspect.
int run_rollout(const RolloutCommand& cmd);

}  // namespace rlt
