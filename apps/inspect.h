// `rltrain inspect`: an MJCF model as rltrain compiles it, and one forward pass (MuJoCo's mj_forward:
// no integration) at a chosen state, as JSON, so that a peer (tools/mujoco_peer.py) can compare the
// compiled model and the first step's forces field by field with MuJoCo's.
#pragma once

#include <string>
#include <vector>

namespace rlt {

class ModelRollout;

struct InspectOptions {
  std::string model_path;  // MJCF file
  std::string key;         // keyframe whose qpos, qvel, act and ctrl the forward pass uses; empty: qpos0 at rest
  std::string out_path;    // JSON file; empty: stdout
  // The arrays of "model" to write (names as below); empty: every one. A peer that compares a few
  // fields asks for those: a Menagerie robot's full model is 40-100 MB of JSON (its mesh arrays).
  std::vector<std::string> fields;
};

// JSON object (MuJoCo's names throughout):
//   "sizes"    nq, nv, nbody, njnt, ngeom, nsite, nu, neq, nsensor, nsensordata, nkey, ncon_max, nefc_max
//   "options"  timestep, gravity, integrator (euler | rk4 | implicitfast), impratio
//   "model"    every array of sim/model_fields.h (RLT_MODEL_FIELDS, then the derived fields
//              body_rootid, body_invweight0, body_invweight0_rot, dof_invweight0), and the names
//              (body_name, jnt_name, ...); with `fields`, only those
//   "forward"  at the start state with its ctrl held: qpos, qvel, ctrl, xpos, xquat, xipos,
//              geom_xpos, site_xpos, qfrc_bias, qfrc_passive, qfrc_actuator, actuator_force, act_dot,
//              qacc_smooth, qfrc_constraint, qacc (without implicit damping, as MuJoCo's d->qacc),
//              sensordata, ncon (candidates listed), nefc and efc_force (each row's force)
// Throws MjcfError for a bad model, ConfigError for an unknown key or field, or an unwritable --out.
int run_inspect(const InspectOptions& opts);

// The same JSON for a model already compiled from opts.model_path, with `at_start` (re)started at
// opts.key (`rltrain rollout --inspect` writes it at each start from its one compile). The forward
// pass writes into its data: restart it before stepping. Throws as run_inspect, less the MjcfError.
void write_inspect(ModelRollout& at_start, const InspectOptions& opts);

// The names `fields` may hold, in the JSON's order.
std::vector<std::string> inspect_field_names();
// Throws ConfigError naming the first of `fields` that is not one of them.
void check_inspect_fields(const std::vector<std::string>& fields);

}  // namespace rlt
