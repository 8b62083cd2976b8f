#include "apps/inspect.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/rollout.h"
#include "rl/config.h"
#include "rl/files.h"
#include "sim/constraints.h"
#include "sim/mjcf.h"

namespace rlt {
namespace {

using nlohmann::json;

std::vector<double> take(const double* p, int n) { return std::vector<double>(p, p + (n > 0 ? n : 0)); }
std::vector<int> take(const int* p, int n) { return std::vector<int>(p, p + (n > 0 ? n : 0)); }

const char* integrator_name(int integrator) {
  return integrator == kIntRK4            ? "rk4"
         : integrator == kIntImplicitFast ? "implicitfast"
         : integrator == kIntImplicit     ? "implicit"
                                          : "euler";
}

// The derived arrays and the names that follow the model_fields.h arrays in "model".
const char* const kDerivedFields[] = {"body_rootid", "body_invweight0", "body_invweight0_rot", "dof_invweight0",
                                      "body_name",   "jnt_name",        "geom_name",           "site_name",
                                      "actuator_name", "sensor_name",   "key_name",            "key_mpos",
                                      "key_mquat"};

}  // namespace

void check_inspect_fields(const std::vector<std::string>& fields) {
  const std::vector<std::string> known = inspect_field_names();
  for (const auto& f : fields)
    if (std::find(known.begin(), known.end(), f) == known.end())
      throw ConfigError("--fields: no model array '" + f + "' (rltrain inspect without --fields lists them all)");
}

namespace {

json model_json(const Model& m, const ModelView<double>& v, const std::vector<std::string>& fields) {
  const auto want = [&](const char* name) {
    return fields.empty() || std::find(fields.begin(), fields.end(), name) != fields.end();
  };
  json j;
  // Every array as the compiler wrote it (an optional one a model leaves out is empty here).
#define RLT_INSPECT_FIELD(type, name, count, need, doc) \
  if (want(#name)) j[#name] = m.name;
  RLT_MODEL_FIELDS(RLT_INSPECT_FIELD)
#undef RLT_INSPECT_FIELD
  if (want("body_rootid")) j["body_rootid"] = take(v.body_rootid, m.nbody);
  if (want("body_invweight0")) j["body_invweight0"] = take(v.body_invweight0, m.nbody);
  if (want("body_invweight0_rot")) j["body_invweight0_rot"] = take(v.body_invweight0_rot, m.nbody);
  if (want("dof_invweight0")) j["dof_invweight0"] = take(v.dof_invweight0, m.nv);
  if (want("body_name")) j["body_name"] = m.body_name;
  if (want("jnt_name")) j["jnt_name"] = m.jnt_name;
  if (want("geom_name")) j["geom_name"] = m.geom_name;
  if (want("site_name")) j["site_name"] = m.site_name;
  if (want("actuator_name")) j["actuator_name"] = m.actuator_name;
  if (want("sensor_name")) j["sensor_name"] = m.sensor_name;
  if (want("key_name")) j["key_name"] = m.key_name;
  if (want("key_mpos")) j["key_mpos"] = m.key_mpos;
  if (want("key_mquat")) j["key_mquat"] = m.key_mquat;
  return j;
}

json forward_json(ModelRollout& r) {
  r.forward();
  const Model& m = r.model();
  const ModelView<double>& v = r.model_view();
  const DataView<double>& d = r.data();
  json j;
  j["qpos"] = take(d.qpos, m.nq);
  j["qvel"] = take(d.qvel, m.nv);
  j["ctrl"] = r.ctrl();
  j["xpos"] = take(d.xpos, 3 * m.nbody);
  j["xquat"] = take(d.xquat, 4 * m.nbody);
  j["xipos"] = take(d.xipos, 3 * m.nbody);
  j["geom_xpos"] = take(d.geom_xpos, 3 * m.ngeom);
  j["site_xpos"] = take(d.site_xpos, 3 * m.nsite);
  j["qfrc_bias"] = take(d.qfrc_bias, m.nv);
  j["qfrc_passive"] = take(d.qfrc_passive, m.nv);
  j["qfrc_actuator"] = take(d.qfrc_actuator, m.nv);
  j["actuator_force"] = take(d.actuator_force, m.nu);
  j["act_dot"] = take(d.act_dot, m.nu);
  j["qacc_smooth"] = take(d.qacc_smooth, m.nv);
  j["qfrc_constraint"] = take(d.qfrc_constraint, m.nv);
  j["qacc"] = take(d.qacc, m.nv);
  j["sensordata"] = take(d.sensordata, m.nsensordata);
  j["ncon"] = static_cast<int>(d.ncon[0]);
  const int nefc = static_cast<int>(d.nefc[0]);
  std::vector<double> force(static_cast<size_t>(nefc));
  for (int r_ = 0; r_ < nefc; ++r_) force[static_cast<size_t>(r_)] = d.efc[r_ * kEfcStride + kEfcForce];
  j["nefc"] = nefc;
  j["efc_force"] = force;
  // The contacts that act (stored depth > 0), as MuJoCo's d.contact: geoms, point, normal (geom 1 ->
  // geom 2) and dist (MuJoCo's signed distance: the pair's active margin less the stored depth).
  json con = json::array();
  for (int k = 0; k < static_cast<int>(d.ncon[0]); ++k) {
    const double* c = d.contact + kContactStride * k;
    if (!(c[kConDepth] > 0.0)) continue;
    const int g1 = static_cast<int>(c[kConGeom1]), g2 = static_cast<int>(c[kConGeom2]);
    con.push_back({{"geom", {g1, g2}},
                   {"pos", {c[kConPos], c[kConPos + 1], c[kConPos + 2]}},
                   {"normal", {c[kConNormal], c[kConNormal + 1], c[kConNormal + 2]}},
                   {"dist", pair_active_margin(v, g1, g2) - c[kConDepth]}});
  }
  j["contact"] = con;
  return j;
}

}  // namespace

std::vector<std::string> inspect_field_names() {
  std::vector<std::string> names;
#define RLT_INSPECT_NAME(type, name, count, need, doc) names.emplace_back(#name);
  RLT_MODEL_FIELDS(RLT_INSPECT_NAME)
#undef RLT_INSPECT_NAME
  for (const char* n : kDerivedFields) names.emplace_back(n);
  return names;
}

void write_inspect(ModelRollout& rollout, const InspectOptions& opts) {
  check_inspect_fields(opts.fields);
  const Model& model = rollout.model();
  const ModelView<double>& v = rollout.model_view();

  json out;
  out["file"] = opts.model_path;
  out["sizes"] = {{"nq", model.nq},           {"nv", model.nv},
                  {"nbody", model.nbody},     {"njnt", model.njnt},
                  {"ngeom", model.ngeom},     {"nsite", model.nsite},
                  {"nu", model.nu},           {"neq", model.neq},
                  {"nsensor", model.nsensor}, {"nsensordata", model.nsensordata},
                  {"nkey", model.nkey},       {"ncon_max", v.ncon_max},
                  {"nefc_max", v.nefc_max},   {"nmocap", model.nmocap}};
  out["options"] = {{"timestep", model.timestep},
                    {"gravity", {model.gravity[0], model.gravity[1], model.gravity[2]}},
                    {"integrator", integrator_name(model.integrator)},
                    {"impratio", model.impratio}};
  out["model"] = model_json(model, v, opts.fields);
  out["forward"] = forward_json(rollout);
  out["forward"]["key"] = opts.key;

  const std::string text = out.dump(1) + "\n";
  if (opts.out_path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  write_text_atomic(opts.out_path, text);  // a failed run leaves an existing file as it was
}

int run_inspect(const InspectOptions& opts) {
  check_inspect_fields(opts.fields);  // before the compile: a typo costs no time
  RolloutOptions ro;
  ro.model_path = opts.model_path;
  ro.key = opts.key;
  ModelRollout rollout(load_mjcf(opts.model_path), ro);
  write_inspect(rollout, opts);
  return 0;
}

}  // namespace rlt
