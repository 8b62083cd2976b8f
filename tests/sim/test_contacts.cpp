// Actuators, joint limits and contacts (sim/actuators.h, sim/constraints.h, sim/contact.h) driven by
// physics_step (sim/physics_step.h): physical properties of small scenes (resting penetration and
// drift, friction deceleration, bounded energy gain, stacking, limits holding against a motor),
// actuator forces against MuJoCo 2.2.2, float runs, and the batched step on the CPU executor.
// Measured figures are printed (and recorded as test properties) so regressions show their size.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/contact.h"
#include "sim/cpu_executor.h"
#include "sim/dynamics.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"

#include "tests/sim/test_mujoco.h"

namespace rlt {
namespace {

using test::Sim;

std::string data_path(const std::string& name) { return std::string(RLT_TEST_DATA_DIR) + "/mjcf/" + name; }

void report(const char* key, double value) {
  std::printf("[ measured ] %s = %.6g\n", key, value);
  ::testing::Test::RecordProperty(key, std::to_string(value));
}

// One free body (or several) above a ground plane.
std::string scene(const std::string& option, const std::string& bodies, const std::string& ground_friction = "1") {
  return "<mujoco><option timestep=\"0.002\" " + option +
         "/><worldbody>"
         "<geom name=\"ground\" type=\"plane\" size=\"5 5 0.1\" friction=\"" +
         ground_friction + " 0.005 0.0001\"/>" + bodies + "</worldbody></mujoco>";
}

template <class T>
bool finite_state(const Sim<T>& s) {
  for (int i = 0; i < s.nq(); ++i)
    if (!std::isfinite(static_cast<double>(s.d.qpos[i]))) return false;
  for (int i = 0; i < s.nv(); ++i)
    if (!std::isfinite(static_cast<double>(s.d.qvel[i]))) return false;
  return true;
}

// Total energy: kinetic + gravitational (the soft constraints store none).
template <class T>
double total_energy(const Sim<T>& s) {
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  mass_matrix(s.m(), s.d);
  return static_cast<double>(kinetic_energy(s.m(), s.d) + potential_energy(s.m(), s.d));
}

// Deepest overlap among the current contacts (after a fresh detection).
template <class T>
double max_penetration(const Sim<T>& s) {
  kinematics(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  double depth = 0;
  for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c)
    depth = std::max(depth, static_cast<double>(s.d.contact[kContactStride * c + kConDepth]));
  return depth;
}

template <class T>
void run(Sim<T>& s, int steps, const T* ctrl = nullptr, int* ncon = nullptr) {
  for (int k = 0; k < steps; ++k) physics_step(s.m(), s.d, ctrl, 1, ncon);
}

const std::string kBox =
    "<body name=\"box\" pos=\"0.1 -0.2 0.15\" euler=\"4 3 20\"><freejoint/>"
    "<geom type=\"box\" size=\"0.2 0.1 0.05\" density=\"1000\" friction=\"0.8\"/></body>";

// A box (8 kg) dropped onto the plane settles: overlap under 1 mm, no horizontal drift over 10 s.
template <class T>
void box_settles(double max_drift) {
  Sim<T> s(parse_mjcf(scene("", kBox), "box"));
  int ncon = 0;
  run(s, 1000, static_cast<const T*>(nullptr), &ncon);  // 2 s to settle
  ASSERT_TRUE(finite_state(s));
  const double x0 = static_cast<double>(s.d.qpos[0]), y0 = static_cast<double>(s.d.qpos[1]);
  double worst_depth = 0, worst_drift = 0;
  for (int k = 0; k < 5000; ++k) {  // 10 s at rest
    run(s, 1, static_cast<const T*>(nullptr), &ncon);
    if (k % 50 == 0) {
      worst_depth = std::max(worst_depth, max_penetration(s));
      worst_drift = std::max(worst_drift,
                             std::hypot(static_cast<double>(s.d.qpos[0]) - x0, static_cast<double>(s.d.qpos[1]) - y0));
    }
  }
  ASSERT_TRUE(finite_state(s));
  EXPECT_EQ(ncon, 4);  // face down: four corners push
  EXPECT_LT(worst_depth, 1e-3);
  EXPECT_GT(worst_depth, 0.0);
  EXPECT_NEAR(static_cast<double>(s.d.qpos[2]), 0.05, 1e-3);
  EXPECT_LT(worst_drift, max_drift);
  double speed = 0;
  for (int i = 0; i < 6; ++i) speed = std::max(speed, std::abs(static_cast<double>(s.d.qvel[i])));
  EXPECT_LT(speed, 1e-3);
  report(sizeof(T) == 8 ? "box_rest_penetration_m" : "box_rest_penetration_m_float", worst_depth);
  report(sizeof(T) == 8 ? "box_rest_drift_10s_m" : "box_rest_drift_10s_m_float", worst_drift);
}

TEST(PhysicsContacts, BoxSettlesWithoutDrift) { box_settles<double>(1e-6); }
TEST(PhysicsContacts, BoxSettlesWithoutDriftFloat) { box_settles<float>(1e-4); }

// A block launched along the plane decelerates at mu g, mu = max(0.5, 0.3) (MuJoCo's combination).
template <class T>
double sliding_deceleration() {
  const std::string body =
      "<body name=\"block\" pos=\"0 0 0.05\"><freejoint/>"
      "<geom type=\"box\" size=\"0.1 0.1 0.05\" mass=\"2\" friction=\"0.5\"/></body>";
  Sim<T> s(parse_mjcf(scene("", body, "0.3"), "block"));
  run(s, 250);  // settle
  s.d.qvel[0] = T(3);
  // The times at which the speed passes v1 and v2, interpolated between steps.
  double t = 0, t1 = -1, t2 = -1, v_prev = 3;
  const double v1 = 2.5, v2 = 0.5, h = 0.002;
  while (t < 2.0 && t2 < 0) {
    run(s, 1);
    t += h;
    const double v = static_cast<double>(s.d.qvel[0]);
    if (t1 < 0 && v <= v1) t1 = t - h + h * (v_prev - v1) / (v_prev - v);
    if (t2 < 0 && v <= v2) t2 = t - h + h * (v_prev - v2) / (v_prev - v);
    v_prev = v;
  }
  EXPECT_TRUE(finite_state(s));
  EXPECT_GT(t1, 0.0);
  EXPECT_GT(t2, t1);
  return (v1 - v2) / (t2 - t1);
}

TEST(PhysicsContacts, SlidingBlockDeceleratesAtMuG) {
  const double expected = 0.5 * 9.81;
  const double a = sliding_deceleration<double>();
  report("sliding_deceleration_ratio", a / expected);
  EXPECT_NEAR(a / expected, 1.0, 0.05);
  const double af = sliding_deceleration<float>();
  report("sliding_deceleration_ratio_float", af / expected);
  EXPECT_NEAR(af / expected, 1.0, 0.05);
}

// A tilted capsule dropped on the plane: total energy (kinetic + gravity) rises by no more than a few
// millijoules from one step to the next (MuJoCo's soft contacts give back a little of what the
// overlap took: measured 5.2 mJ of a 1.4 J drop), and the capsule comes to rest on the plane.
template <class T>
void capsule_gains_little_energy(double tol) {
  const std::string body =
      "<body name=\"capsule\" pos=\"0 0 0.4\" euler=\"0 30 10\"><freejoint/>"
      "<geom type=\"capsule\" size=\"0.05 0.2\" mass=\"0.7\"/></body>";
  Sim<T> s(parse_mjcf(scene("", body), "capsule"));
  double e = total_energy(s);
  const double e0 = e;
  double worst_rise = 0;
  int contact_steps = 0;
  for (int k = 0; k < 1500; ++k) {
    int ncon = 0;
    run(s, 1, static_cast<const T*>(nullptr), &ncon);
    contact_steps += ncon > 0;
    const double e_next = total_energy(s);
    worst_rise = std::max(worst_rise, e_next - e);
    e = e_next;
  }
  ASSERT_TRUE(finite_state(s));
  EXPECT_GT(contact_steps, 100);
  EXPECT_LT(worst_rise, tol);
  EXPECT_LT(e, e0 - 0.5 * 0.7 * 9.81 * 0.2);                  // it fell and stopped: most of the drop is gone
  EXPECT_NEAR(static_cast<double>(s.d.qpos[2]), 0.05, 2e-3);  // lying on the plane
  report(sizeof(T) == 8 ? "capsule_worst_energy_rise_J" : "capsule_worst_energy_rise_J_float", worst_rise);
}

TEST(PhysicsContacts, DroppedCapsuleGainsLittleEnergy) { capsule_gains_little_energy<double>(1e-2); }
TEST(PhysicsContacts, DroppedCapsuleGainsLittleEnergyFloat) { capsule_gains_little_energy<float>(1e-2); }

// A sphere dropped on a box that lies on the plane comes to rest on the box's top face.
template <class T>
void sphere_rests_on_box() {
  const std::string bodies =
      "<body name=\"box\" pos=\"0 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.3 0.3 0.1\" mass=\"5\"/></body>"
      "<body name=\"ball\" pos=\"0.05 -0.03 0.35\"><freejoint/><geom type=\"sphere\" size=\"0.1\" mass=\"1\"/></body>";
  Sim<T> s(parse_mjcf(scene("", bodies), "stack"));
  run(s, 1500);  // 3 s
  ASSERT_TRUE(finite_state(s));
  const double box_top = static_cast<double>(s.d.qpos[2]) + 0.1;
  const double ball_z = static_cast<double>(s.d.qpos[9]);
  report(sizeof(T) == 8 ? "sphere_on_box_overlap_m" : "sphere_on_box_overlap_m_float", box_top + 0.1 - ball_z);
  EXPECT_NEAR(ball_z, box_top + 0.1, 1e-3);
  EXPECT_NEAR(static_cast<double>(s.d.qpos[7]), 0.05, 1e-3);
  EXPECT_NEAR(static_cast<double>(s.d.qpos[8]), -0.03, 1e-3);
  // At rest, but for the ball's rolling (nothing resists rolling on a flat face): linear velocities
  // of both and the box's spin are small.
  for (int i : {0, 1, 2, 3, 4, 5, 6, 7, 8}) EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[i])), 1e-3) << i;
}

TEST(PhysicsContacts, SphereRestsOnBox) { sphere_rests_on_box<double>(); }
TEST(PhysicsContacts, SphereRestsOnBoxFloat) { sphere_rests_on_box<float>(); }

// Geom pair filtering: contype/conaffinity, and a body never touches its parent.
TEST(PhysicsContacts, PairFilterFollowsMujoco) {
  const std::string bodies =
      "<body name=\"a\" pos=\"0 0 0.05\"><freejoint/><geom name=\"a\" type=\"sphere\" size=\"0.1\" contype=\"2\" "
      "conaffinity=\"0\"/>"
      "  <body name=\"child\" pos=\"0.05 0 0\"><joint type=\"hinge\"/><geom name=\"child\" type=\"sphere\" "
      "size=\"0.1\"/></body>"
      "</body>"
      "<body name=\"b\" pos=\"0.15 0 0.05\"><freejoint/><geom name=\"b\" type=\"sphere\" size=\"0.1\" contype=\"4\" "
      "conaffinity=\"2\"/></body>";
  const Model model = parse_mjcf(scene("", bodies), "filter");
  HostModel<double> host(model);
  const ModelView<double>& m = host.view();
  // geoms: 0 ground (1/1), 1 a (2/0), 2 child (1/1), 3 b (4/2)
  EXPECT_FALSE(geom_pair_allowed(m, 0, 1));  // 1&0 || 2&1: no
  EXPECT_TRUE(geom_pair_allowed(m, 0, 2));
  EXPECT_FALSE(geom_pair_allowed(m, 0, 3));  // 1&2 || 4&1: no
  EXPECT_FALSE(geom_pair_allowed(m, 1, 2));  // child and parent
  EXPECT_TRUE(geom_pair_allowed(m, 1, 3));   // 2&2
  EXPECT_FALSE(geom_pair_allowed(m, 2, 3));  // 1&2 || 4&1: no
  EXPECT_EQ(m.ncon_max, 1 + 1 + 0);          // ground-child, a-b
}

// HostModel checks the actuator, limit and geom arrays that the RLT_HD code trusts.
TEST(PhysicsModel, HostModelChecksActuatorsLimitsAndGeoms) {
  const Model good = load_mjcf(data_path("contact_actuators.xml"));
  EXPECT_NO_THROW(HostModel<double>{good});
  auto rejects = [](const Model& bad, const std::string& word) {
    try {
      HostModel<double> h(bad);
      ADD_FAILURE() << "no throw (" << word << ")";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  Model bad = good;
  bad.actuator_kp.pop_back();
  rejects(bad, "actuator_kp");
  bad = good;
  bad.actuator_trnid[0] = 7;
  rejects(bad, "drives joint 7");
  bad = good;
  bad.actuator_kind[1] = 9;
  rejects(bad, "unknown kind");
  bad = good;
  bad.jnt_range.pop_back();
  rejects(bad, "jnt_range");
  bad = good;
  bad.geom_type[0] = 8;  // MuJoCo's SDF: no collision routine here
  rejects(bad, "unsupported type");
  bad = good;
  bad.geom_friction.clear();  // contacts need the whole geom description
  rejects(bad, "geom_friction");
  bad = good;
  bad.geom_condim[0] = 5;
  rejects(bad, "condim 5");
  bad = good;
  bad.geom_margin.pop_back();
  rejects(bad, "geom_margin");
  bad = good;
  bad.geom_margin[0] = -0.1;
  rejects(bad, "negative or non-finite margin");
  bad = good;
  bad.geom_condim[0] = 2;  // MuJoCo's condim: 1, 3, 4 or 6
  rejects(bad, "condim 2");
  bad = good;  // a hand-built model may leave condim and margin out: condim 3, margin 0
  bad.geom_condim.clear(), bad.geom_margin.clear();
  HostModel<double> defaults(bad);
  EXPECT_EQ(defaults.view().geom_condim[0], 3);
  EXPECT_EQ(defaults.view().geom_margin[0], 0);
  // A motor on a free joint without its 6D gear (the MJCF compiler always writes actuator_gear6).
  bad = load_mjcf(data_path("contact_scene.xml"));
  bad.nu = 1;
  bad.actuator_kind = {kActMotor}, bad.actuator_trnid = {0}, bad.actuator_gear = {1};
  bad.actuator_ctrllimited = {0}, bad.actuator_ctrlrange = {0, 0}, bad.actuator_forcelimited = {0};
  bad.actuator_forcerange = {0, 0}, bad.actuator_kp = {0}, bad.actuator_kv = {0};
  rejects(bad, "a ball or free joint transmission needs actuator_gear6");
}

// The code generated from the field lists (sim/model_fields.h, RLT_DATA_FIELDS in sim/dynamics.h):
// the offsets tile each block in list order, every Model array reaches the view unchanged (as T),
// and the data row's fields follow each other without gap or overlap.
TEST(PhysicsModel, FieldTablesTileTheBlocksAndCopyEveryField) {
  const Model model = load_mjcf(data_path("contact_actuators.xml"));
  HostModel<float> host(model);
  const ModelView<float>& v = host.view();
  const ModelOffsets o = model_offsets(model);
  const long nq = model.nq, nv = model.nv, nbody = model.nbody, njnt = model.njnt, ngeom = model.ngeom,
             nsite = model.nsite, nu = model.nu, neq = model.neq, nsensor = model.nsensor;
  const long nmesh = model.nmesh, nmeshvert = model.nmeshvert, nmeshgraph = model.nmeshgraph, nmeshface = model.nmeshface;
  const long nmeshpoly = model.nmeshpoly, nmeshpolyvert = model.nmeshpolyvert;
  const long nhfield = model.nhfield, nhfielddata = model.nhfielddata;
  const long ntendon = model.ntendon, nwrap = model.nwrap;
  const long npair = model.npair, ncam = model.ncam;
  long next_real = 0, next_int = 0;
  auto check_field = [&](const char* name, long& next, long offset, long count, const void* view_ptr, const void* block,
                         size_t elem) {
    EXPECT_EQ(offset, next) << name;
    EXPECT_EQ(view_ptr, static_cast<const void*>(static_cast<const char*>(block) + elem * static_cast<size_t>(offset)))
        << name;
    next += count;
  };
#define RLT_TEST_FIELD(type, name, count, need, doc)                                                           \
  check_field(#name, next_##type, o.name, (count), v.name,                                                     \
              std::is_same_v<RLT_FIELD_HOST_TYPE_##type, int> ? static_cast<const void*>(host.ints().data())   \
                                                              : static_cast<const void*>(host.reals().data()), \
              std::is_same_v<RLT_FIELD_HOST_TYPE_##type, int> ? sizeof(int) : sizeof(float));
  RLT_MODEL_FIELDS(RLT_TEST_FIELD)
  RLT_MODEL_DERIVED_FIELDS(RLT_TEST_FIELD)
#undef RLT_TEST_FIELD
  EXPECT_EQ(next_real, o.num_reals);
  EXPECT_EQ(next_int, o.num_ints);
  EXPECT_EQ(static_cast<long>(host.reals().size()), o.num_reals);
  EXPECT_EQ(static_cast<long>(host.ints().size()), o.num_ints);
  int copied = 0;
#define RLT_TEST_COPY(type, name, count, need, doc)                                             \
  for (size_t k = 0; k < model.name.size(); ++k)                                                \
    ASSERT_EQ(v.name[k], static_cast<RLT_FIELD_VIEW_TYPE_##type>(model.name[k])) << #name << k; \
  copied += model.name.empty() ? 0 : 1;
  using T = float;
  RLT_MODEL_FIELDS(RLT_TEST_COPY)
#undef RLT_TEST_COPY
  EXPECT_GT(copied, 40);
  const DataLayout l = data_layout(v);
  const int nco = v.ncon_max, nefc = v.nefc_max;
  int at = 0;
#define RLT_TEST_ROW(name, count, stage, doc) \
  EXPECT_EQ(l.name, at) << #name;             \
  at += static_cast<int>(count);
  {
    const int ncon_max = nco, nefc_max = nefc;
    const int nsensordata = v.nsensordata, nsubtree = v.nsubtree, nbody_acc = v.nbody_acc,
              nv_acc = v.nbody_acc ? nv : 0, nbody_noslip = v.noslip_iterations > 0 ? nbody : 0,
              nmoment = v.nmoment, nclock = v.nclock, nenergy_lag = v.nenergy_lag, nmocap = v.nmocap,
              nbody_xfrc = v.nbody_xfrc, nv_xfrc = v.nbody_xfrc > 0 ? nv : 0, nv_warm = v.newton_warmstart ? nv : 0;
    const int nv_deriv = velocity_implicit(v.integrator) ? nv : 0, nv_rne = v.integrator == kIntImplicit ? nv : 0;
    // the Newton solver's workspace (float: where use_newton) and Gauss-Seidel's z rows (the others, or noslip)
    const bool newton = v.use_newton != 0;
    const int nefc_newton = newton ? nefc : 0, nv_newton = newton ? nv : 0;
    const int nefc_z = !newton || v.noslip_iterations > 0 ? nefc : 0;
    const int ngeom_bound = v.ncollide > 0 || v.ngeomdist > 0 ? static_cast<int>(ngeom) : 0;
    RLT_DATA_FIELDS(RLT_TEST_ROW)
    EXPECT_GE(l.row, at);
    EXPECT_LT(l.row, at + 4);
    EXPECT_EQ(l.row % 4, 0);
    at = l.row;  // the workspace follows the row
    RLT_DATA_WORKSPACE(RLT_TEST_ROW)
  }
#undef RLT_TEST_ROW
  EXPECT_GE(l.total, at);
  EXPECT_LT(l.total, at + 4);
  EXPECT_EQ(l.total % 4, 0);
  EXPECT_EQ(l.workspace, l.total - l.row);
  EXPECT_GT(l.workspace, 0);
}

// Each geom-pair kind gives contacts with sensible normals and depths at a known overlap.
TEST(PhysicsContacts, DetectionGeometry) {
  const std::string bodies =
      "<body pos=\"0 0 0.09\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>"  // 10 mm in
      "<body pos=\"1 0 0.04\" euler=\"0 90 0\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.2\"/></body>"  // 10 mm
                                                                                                               // in, 2
                                                                                                               // ends
      "<body pos=\"-1 0 0.045\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.05\"/></body>"  // 5 mm in, 4 corners
      "<body pos=\"0 2 0.5\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>"
      "<body pos=\"0 2 0.69\"><freejoint/><geom type=\"box\" size=\"0.2 0.2 0.1\"/></body>";  // sphere-box 10 mm
  Sim<double> s(parse_mjcf(scene("gravity=\"0 0 0\"", bodies), "detect"));
  kinematics(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  int sphere_plane = 0, capsule_plane = 0, box_plane = 0, sphere_box = 0;
  for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
    const double* con = s.d.contact + kContactStride * c;
    if (con[kConDepth] <= 0) continue;
    const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
    if (g1 == 0 && g2 == 1) {
      ++sphere_plane;
      EXPECT_NEAR(con[kConDepth], 0.01, 1e-12);
      EXPECT_NEAR(con[kConNormal + 2], 1, 1e-12);
    }
    if (g1 == 0 && g2 == 2) {
      ++capsule_plane;
      EXPECT_NEAR(con[kConDepth], 0.01, 1e-9);
    }
    if (g1 == 0 && g2 == 3) {
      ++box_plane;
      EXPECT_NEAR(con[kConDepth], 0.005, 1e-12);
    }
    if (g1 == 4 && g2 == 5) {
      ++sphere_box;
      EXPECT_NEAR(con[kConDepth], 0.01, 1e-12);
      EXPECT_NEAR(con[kConNormal + 2], 1, 1e-12);  // from the sphere up into the box
      EXPECT_NEAR(con[kConPos + 2], 0.595, 1e-12);
    }
  }
  EXPECT_EQ(sphere_plane, 1);
  EXPECT_EQ(capsule_plane, 2);
  EXPECT_EQ(box_plane, 4);
  EXPECT_EQ(sphere_box, 1);
}

// Box-box, edge on edge: a cube standing on an edge (rotated 45 degrees about x) under a cube
// hanging from an edge (rotated 45 degrees about y), 5 mm into each other. No vertex of either is
// inside the other: the separating-axis test finds the edge-edge axis and gives one contact.
TEST(PhysicsContacts, BoxBoxEdgeOnEdgeDetection) {
  const double top = 0.1 * std::sqrt(2.0);  // height of the lower cube's top edge above its center
  const std::string bodies =
      "<body pos=\"0 0 0\" euler=\"45 0 0\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>"
      "<body pos=\"0 0 " +
      std::to_string(2 * top - 0.005) +
      "\" euler=\"0 45 0\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>";
  Sim<double> s(
      parse_mjcf("<mujoco><option gravity=\"0 0 0\"/><worldbody>" + bodies + "</worldbody></mujoco>", "edges"));
  kinematics(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  int touching = 0;
  for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
    const double* con = s.d.contact + kContactStride * c;
    if (con[kConDepth] <= 0) continue;
    ++touching;
    EXPECT_NEAR(con[kConDepth], 0.005, 1e-6);    // std::to_string rounds the height to 1e-6
    EXPECT_NEAR(con[kConNormal + 2], 1, 1e-12);  // from the lower (geom 0) up to the upper
    EXPECT_NEAR(con[kConPos + 0], 0, 1e-12);
    EXPECT_NEAR(con[kConPos + 1], 0, 1e-12);
    EXPECT_NEAR(con[kConPos + 2], top - 0.0025, 1e-6);
  }
  EXPECT_EQ(touching, 1);
}

// Long bars crossed: a static bar along x and a free bar on it, rotated about the vertical (45 and
// 90 degrees), so that no vertex of either is inside the other: the overlap's corners are edges
// crossing edges (face clipping). The bar comes to rest on top (it used to fall through), and a
// bar dropped edge-first across the static one (its lowest edge along y, crossing the top face)
// catches on it, tips onto a face and rests on top too.
template <class T>
void crossed_bars_rest() {
  for (const char* euler : {"0 0 45", "0 0 90"}) {
    const std::string bodies =
        "<geom type=\"box\" pos=\"0 0 0.05\" size=\"0.4 0.05 0.05\"/>"
        "<body pos=\"0 0 0.16\" euler=\"" +
        std::string(euler) + "\"><freejoint/><geom type=\"box\" size=\"0.4 0.05 0.05\" mass=\"2\"/></body>";
    Sim<T> s(parse_mjcf(scene("", bodies), "crossed"));
    double lowest = 1;
    for (int k = 0; k < 1500; ++k) {  // 3 s
      run(s, 1);
      lowest = std::min(lowest, static_cast<double>(s.d.qpos[2]));
    }
    ASSERT_TRUE(finite_state(s)) << euler;
    EXPECT_NEAR(static_cast<double>(s.d.qpos[2]), 0.15, 1e-3) << euler;
    EXPECT_GT(lowest, 0.145) << euler;
    for (int i = 0; i < 6; ++i) EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[i])), 2e-3) << euler << " dof " << i;
    report(sizeof(T) == 8 ? "crossed_bar_rest_overlap_m" : "crossed_bar_rest_overlap_m_float",
           0.15 - static_cast<double>(s.d.qpos[2]));
  }
  // Edge first: a bar along y rotated 40 degrees about its long axis (so that it tips one way), its
  // lowest edge 2 cm above the static bar.
  const std::string bodies =
      "<geom type=\"box\" pos=\"0 0 0.05\" size=\"0.4 0.05 0.05\"/>"
      "<body pos=\"0 0 0.1905\" euler=\"0 40 0\"><freejoint/>"
      "<geom type=\"box\" size=\"0.05 0.4 0.05\" mass=\"2\"/></body>";
  Sim<T> s(parse_mjcf(scene("", bodies), "edge_first"));
  double lowest = 1, e = total_energy(s), worst_rise = 0;
  for (int k = 0; k < 2500; ++k) {  // 5 s
    run(s, 1);
    lowest = std::min(lowest, static_cast<double>(s.d.qpos[2]));
    const double e_next = total_energy(s);
    worst_rise = std::max(worst_rise, e_next - e);
    e = e_next;
  }
  ASSERT_TRUE(finite_state(s));
  // The clipped contact points change as it tips; the total energy still rises by a few mJ at most
  // from one step to the next (MuJoCo's soft contacts; measured 3.5 mJ).
  EXPECT_LT(worst_rise, 1e-2);
  report(sizeof(T) == 8 ? "edge_first_worst_energy_rise_J" : "edge_first_worst_energy_rise_J_float", worst_rise);
  EXPECT_GT(lowest, 0.145) << "the bar went into the one below";
  EXPECT_NEAR(static_cast<double>(s.d.qpos[2]), 0.15, 1.5e-3) << "lying face down on the static bar";
  for (int i = 0; i < 6; ++i) EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[i])), 2e-3) << "dof " << i;
}

TEST(PhysicsContacts, CrossedBoxesRestEdgeAcrossEdge) { crossed_bars_rest<double>(); }
TEST(PhysicsContacts, CrossedBoxesRestEdgeAcrossEdgeFloat) { crossed_bars_rest<float>(); }

// World z of a geom's local z axis (after kinematics): 0 for a horizontal capsule.
template <class T>
double geom_axis_z(const Sim<T>& s, int g) {
  kinematics(s.m(), s.d);
  return static_cast<double>(s.d.geom_xmat[9 * g + 8]);
}

// A capsule lying on a parallel static capsule, shifted along it so that its center of mass is off
// the middle of their overlap, and a capsule lying across a static box face with both ends
// overhanging and its center off the box center: both touch along a line, get two contact points
// (the ends of the overlap; MuJoCo's mjc_CapsuleBox: the segment across the near top edge in a T and
// a second point at the far edge). The capsule across the box rests level on its two points (with
// one, the segment point closest to the box center, it tipped over), and still has two at the end.
// The exactly level start is a knife edge of MuJoCo's law: which top edge is nearer and the octant
// of the axis's rounding residue decide between the T (2 points) and the X (1); in double they agree
// (2), in float they may not (1 seen), so the float start asks for 1 or 2.
// The capsule on the capsule's crest is balanced, not held: MuJoCo's soft contacts let it roll off,
// so only its two contact points are checked.
template <class T>
void parallel_capsules_rest() {
  const std::string bodies =
      "<geom type=\"capsule\" fromto=\"-0.2 0 0.05 0.2 0 0.05\" size=\"0.05\"/>"
      "<body pos=\"0.1 0 0.151\" euler=\"0 90 0\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.2\" "
      "mass=\"1\"/></body>"
      "<geom type=\"box\" pos=\"2 0 0.05\" size=\"0.1 0.1 0.05\"/>"
      "<body pos=\"2.05 0 0.151\" euler=\"0 90 0\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.3\" "
      "mass=\"1\"/></body>";
  Sim<T> s(parse_mjcf(scene("", bodies), "parallel"));
  // geoms (the world's own first): 0 ground, 1 static capsule, 2 static box, 3 and 4 the free capsules
  auto count = [&s](int* on_capsule, int* on_box) {
    kinematics(s.m(), s.d);
    detect_contacts(s.m(), s.d);
    *on_capsule = *on_box = 0;
    for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
      const T* con = s.d.contact + kContactStride * c;
      const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
      if (con[kConDepth] < T(-0.005)) continue;
      *on_capsule += g1 == 1 && g2 == 3;
      *on_box += g1 == 4 && g2 == 2;
    }
  };
  int on_capsule = 0, on_box = 0;
  count(&on_capsule, &on_box);
  EXPECT_EQ(on_capsule, 2);
  if (sizeof(T) == 8) {
    EXPECT_EQ(on_box, 2);
  } else {
    EXPECT_TRUE(on_box == 1 || on_box == 2) << on_box;
  }
  double worst_tilt = 0;
  for (int k = 0; k < 1500; ++k) {  // 3 s
    run(s, 1);
    worst_tilt = std::max(worst_tilt, std::abs(geom_axis_z(s, 4)));
  }
  ASSERT_TRUE(finite_state(s));
  EXPECT_NEAR(static_cast<double>(s.d.qpos[9]), 0.15, 1e-3);
  EXPECT_NEAR(static_cast<double>(s.d.qpos[7]), 2.05, 1e-3);
  EXPECT_LT(worst_tilt, 0.02);
  for (int i = 6; i < 12; ++i) EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[i])), 2e-3) << i;
  count(&on_capsule, &on_box);
  EXPECT_EQ(on_box, 2);  // at rest (level within the tilt above): the T, two points
  report(sizeof(T) == 8 ? "parallel_capsule_worst_tilt" : "parallel_capsule_worst_tilt_float", worst_tilt);
}

TEST(PhysicsContacts, ParallelCapsulesRestOnTwoPoints) { parallel_capsules_rest<double>(); }
TEST(PhysicsContacts, ParallelCapsulesRestOnTwoPointsFloat) { parallel_capsules_rest<float>(); }

// The pair-test cases' shared half (CapsuleBoxFollowsMujoco, BoxBoxFollowsMujoco): the contacts
// found for two free bodies (geoms 0 and 1) at qpos (14 values), those within the margin (MuJoCo
// lists them), as pointers into s.d.contact.
std::vector<const double*> listed_contacts(Sim<double>& s, const double* qpos, size_t ci) {
  for (int i = 0; i < 14; ++i) s.d.qpos[i] = qpos[i];
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  com_velocity(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  std::vector<const double*> ours;
  for (int k = 0; k < static_cast<int>(s.d.ncon[0]); ++k) {
    const double* con = s.d.contact + kContactStride * k;
    EXPECT_EQ(static_cast<int>(con[kConGeom1]), 0) << "case " << ci;
    if (con[kConDepth] >= 0) ours.push_back(con);
  }
  return ours;
}

// Each listed contact against MuJoCo's (point 3, normal 3, dist) within 1e-9; the worst errors of
// the three kinds into worst[3]. `active`: the pair's active margin (dist = active - depth).
void expect_contacts_match(const std::vector<const double*>& ours, const std::vector<std::array<double, 7>>& mj_con,
                           double active, size_t ci, double* worst) {
  for (size_t k = 0; k < ours.size(); ++k) {
    const double* con = ours[k];
    const std::array<double, 7>& mj = mj_con[k];
    double e[3] = {0, 0, std::abs((active - con[kConDepth]) - mj[6])};
    for (int i = 0; i < 3; ++i) {
      e[0] = std::max(e[0], std::abs(con[kConPos + i] - mj[static_cast<size_t>(i)]));
      e[1] = std::max(e[1], std::abs(con[kConNormal + i] - mj[static_cast<size_t>(3 + i)]));
    }
    for (int i = 0; i < 3; ++i) worst[i] = std::max(worst[i], e[i]);
    EXPECT_LT(std::max(e[0], std::max(e[1], e[2])), 1e-9)
        << "case " << ci << " contact " << k << ": pos " << e[0] << " normal " << e[1] << " dist " << e[2];
  }
}

// Capsule against box (sim/contact.h capsule_box: MuJoCo 3's mjc_CapsuleBox) against MuJoCo 3.17
// itself: 400 poses drawn around the collider's cases (an end over a face, the capsule along a face
// and turned off it by 0 to 0.3 rad, across an edge, near a corner, its centre inside the box; the
// box turned or not; geom margins 0, 0.01 and 5e-4), with the contacts MuJoCo made for each
// (tests/data/capsule_box_cases.txt, written by tools/capsule_box_cases.py from the mujoco wheel).
// Ours that act (depth + margin >= 0: the ones MuJoCo lists) must be the same number, in the same
// order, each point, normal and dist within 1e-9 (rounding: both compute the same steps; measured
// 5.3e-14, 1.4e-12, 6.0e-16). Poses whose contacts MuJoCo itself changes for a 1e-12 nudge (an axis
// exactly in a turned box's face plane: the branch follows a 1e-17 residue's sign) are not drawn.
// The rule before (end spheres and the segment clipped to the face) fails 145 of the 400 counts.
TEST(PhysicsContacts, CapsuleBoxFollowsMujoco) {
  const std::string path = std::string(RLT_TEST_DATA_DIR) + "/capsule_box_cases.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << ": cannot open (tools/capsule_box_cases.py writes it)";
  struct Case {
    double geom[7];  // r hl margin(capsule) sx sy sz margin(box)
    double qpos[14];
    std::vector<std::array<double, 7>> con;  // pos, normal (capsule -> box), dist
  };
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "case") {
      Case c;
      int ncon = -1;
      for (double& v : c.geom) ls >> v;
      for (double& v : c.qpos) ls >> v;
      ls >> ncon;
      ASSERT_TRUE(!ls.fail() && ncon >= 0) << path << ": bad case line " << line;
      c.con.reserve(static_cast<size_t>(ncon));
      for (int k = 0; k < ncon; ++k) {
        ASSERT_TRUE(static_cast<bool>(std::getline(in, line))) << path << ": missing contact lines";
        std::istringstream cs(line);
        std::array<double, 7> v{};
        cs >> tag;
        for (double& x : v) cs >> x;
        ASSERT_TRUE(tag == "contact" && !cs.fail()) << path << ": bad contact line " << line;
        c.con.push_back(v);
      }
      cases.push_back(c);
    }
  }
  ASSERT_EQ(cases.size(), 400u) << path;
  double worst[3] = {0, 0, 0};  // pos, normal, dist
  int with_two = 0, with_one = 0, count_mismatch = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    char xml[1024];
    std::snprintf(xml, sizeof xml,
                  "<mujoco><option gravity=\"0 0 0\"/><worldbody>"
                  "<body><freejoint/><geom type=\"capsule\" size=\"%.17g %.17g\" margin=\"%.17g\"/></body>"
                  "<body><freejoint/><geom type=\"box\" size=\"%.17g %.17g %.17g\" margin=\"%.17g\"/></body>"
                  "</worldbody></mujoco>",
                  c.geom[0], c.geom[1], c.geom[2], c.geom[3], c.geom[4], c.geom[5], c.geom[6]);
    Sim<double> s(parse_mjcf(xml, "capsule_box"));
    const double active = c.geom[2] + c.geom[6];
    const std::vector<const double*> ours = listed_contacts(s, c.qpos, ci);
    if (ours.size() != c.con.size()) {
      ++count_mismatch;
      ADD_FAILURE() << "case " << ci << ": " << ours.size() << " contacts, MuJoCo " << c.con.size();
      continue;
    }
    with_one += c.con.size() == 1, with_two += c.con.size() == 2;
    expect_contacts_match(ours, c.con, active, ci, worst);
  }
  EXPECT_EQ(count_mismatch, 0);
  EXPECT_GT(with_two, 50);  // the cases reach the second point's branches
  EXPECT_GT(with_one, 50);
  report("capsule_box_mujoco_worst_pos", worst[0]);
  report("capsule_box_mujoco_worst_normal", worst[1]);
  report("capsule_box_mujoco_worst_dist", worst[2]);
}

// Box-box contacts against MuJoCo 3.17's mjc_BoxBox (sim/contact.h box_box), from
// tests/data/box_box_cases.txt (tools/box_box_cases.py): 600 poses of two free boxes (faces
// resting, nearly parallel, two face axes of nearly equal penetration, edges across edges,
// corners, deep, random; with and without geom margins). The contacts within the margin (MuJoCo's
// list) must be MuJoCo's: the same count and order, each position, normal and distance within
// 1e-9 (the kinematics round differently from MuJoCo's in the last bits).
TEST(PhysicsContacts, BoxBoxFollowsMujoco) {
  const std::string path = std::string(RLT_TEST_DATA_DIR) + "/box_box_cases.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path << ": cannot open (tools/box_box_cases.py writes it)";
  struct Case {
    double geom[8];  // a0 a1 a2 margin(a) b0 b1 b2 margin(b)
    double qpos[14];
    std::vector<std::array<double, 7>> con;  // pos, normal (a -> b), dist
  };
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag != "case") continue;
    Case c;
    int ncon = -1;
    for (double& v : c.geom) ls >> v;
    for (double& v : c.qpos) ls >> v;
    ls >> ncon;
    ASSERT_TRUE(!ls.fail() && ncon >= 0) << path << ": bad case line " << line;
    for (int k = 0; k < ncon; ++k) {
      ASSERT_TRUE(static_cast<bool>(std::getline(in, line))) << path << ": missing contact lines";
      std::istringstream cs(line);
      std::array<double, 7> v{};
      cs >> tag;
      for (double& x : v) cs >> x;
      ASSERT_TRUE(tag == "contact" && !cs.fail()) << path << ": bad contact line " << line;
      c.con.push_back(v);
    }
    cases.push_back(c);
  }
  ASSERT_EQ(cases.size(), 600u) << path;
  double worst[3] = {0, 0, 0};  // pos, normal, dist
  int by_count[9] = {0}, edge_cases = 0, count_mismatch = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    char xml[1024];
    std::snprintf(xml, sizeof xml,
                  "<mujoco><option gravity=\"0 0 0\"/><worldbody>"
                  "<body><freejoint/><geom type=\"box\" size=\"%.17g %.17g %.17g\" margin=\"%.17g\"/></body>"
                  "<body><freejoint/><geom type=\"box\" size=\"%.17g %.17g %.17g\" margin=\"%.17g\"/></body>"
                  "</worldbody></mujoco>",
                  c.geom[0], c.geom[1], c.geom[2], c.geom[3], c.geom[4], c.geom[5], c.geom[6], c.geom[7]);
    Sim<double> s(parse_mjcf(xml, "box_box"));
    const double active = c.geom[3] + c.geom[7];
    const std::vector<const double*> ours = listed_contacts(s, c.qpos, ci);
    if (ours.size() != c.con.size()) {
      ++count_mismatch;
      ADD_FAILURE() << "case " << ci << ": " << ours.size() << " contacts, MuJoCo " << c.con.size();
      continue;
    }
    ++by_count[std::min<size_t>(c.con.size(), 8)];
    // one contact whose normal is along no face axis of either box: an edge-edge contact
    if (c.con.size() == 1) {
      const double* n = ours[0] + kConNormal;
      bool face = false;
      for (int b = 0; b < 2; ++b)
        for (int ax = 0; ax < 3; ++ax) {
          const double* xmat = s.d.geom_xmat + 9 * b;
          face = face || std::abs(n[0] * xmat[ax] + n[1] * xmat[3 + ax] + n[2] * xmat[6 + ax]) > 1 - 1e-12;
        }
      edge_cases += !face;
    }
    expect_contacts_match(ours, c.con, active, ci, worst);
  }
  EXPECT_EQ(count_mismatch, 0);
  // the cases reach the branches: no contact, edge-edge, and face manifolds of 1 to 8 points
  EXPECT_GT(by_count[0], 50);
  EXPECT_GT(edge_cases, 50);
  EXPECT_GT(by_count[4], 50);
  EXPECT_GT(by_count[3] + by_count[5] + by_count[6] + by_count[7] + by_count[8], 50);
  report("box_box_mujoco_edge_cases", edge_cases);
  report("box_box_mujoco_worst_pos", worst[0]);
  report("box_box_mujoco_worst_normal", worst[1]);
  report("box_box_mujoco_worst_dist", worst[2]);
}

// A geom's margin (MuJoCo's meaning) makes the contact act from that distance; beyond it the
// speculative margin lists candidates that do not act yet.
TEST(PhysicsContacts, GeomMarginMovesWhereContactsStart) {
  // A 0.1 m sphere `gap` above the floor (no gravity), with a geom margin: the contact candidates of
  // a fresh detection, as (count, depth of the first).
  auto detect_sphere = [](double gap, double margin) {
    const std::string xml =
        "<mujoco><option gravity=\"0 0 0\"/><worldbody><geom type=\"plane\" size=\"5 5 0.1\"/><body pos=\"0 0 " +
        std::to_string(0.1 + gap) + "\"><freejoint/><geom type=\"sphere\" size=\"0.1\" margin=\"" +
        std::to_string(margin) + "\"/></body></worldbody></mujoco>";
    Sim<double> s(parse_mjcf(xml, "margin"));
    kinematics(s.m(), s.d);
    com_position(s.m(), s.d);
    com_velocity(s.m(), s.d);
    detect_contacts(s.m(), s.d);
    return std::make_pair(static_cast<int>(s.d.ncon[0]),
                          s.d.ncon[0] > 0 ? static_cast<double>(s.d.contact[kConDepth]) : 0.0);
  };
  // 5 cm above the floor: no candidate with the 2 cm default (speculative) margin; with geom margin
  // 0.1 an acting contact whose depth is the overlap plus the margin, -0.05 + 0.1.
  EXPECT_EQ(detect_sphere(0.05, 0).first, 0);
  auto c = detect_sphere(0.05, 0.1);
  EXPECT_EQ(c.first, 1);
  EXPECT_NEAR(c.second, 0.05, 1e-12);
  // Beyond the active margin the default speculative margin (2 cm, at rest) still applies: with geom
  // margin 0.04 a 5 cm gap is a speculative candidate of depth -0.01, a 7 cm gap none.
  c = detect_sphere(0.05, 0.04);
  EXPECT_EQ(c.first, 1);
  EXPECT_NEAR(c.second, -0.01, 1e-12);
  EXPECT_EQ(detect_sphere(0.07, 0.04).first, 0);
}

// Geom margin as in MuJoCo (tests/data/mjcf/contact_margin.xml): the sphere with margin 0.03 rests
// 3 cm higher than the plain one, and both rest where MuJoCo 2.2.2's mj_step puts them (its soft
// contacts sink 0.37 mm: measured 0.09963 and 0.12963 m).
TEST(PhysicsContacts, GeomMarginActsFromThatDistanceAsInMujoco) {
  const std::string path = data_path("contact_margin.xml");
  Sim<double> s(load_mjcf(path));
  run(s, 2000);  // 4 s
  ASSERT_TRUE(finite_state(s));
  const double plain = s.d.qpos[2], with_margin = s.d.qpos[9];
  EXPECT_NEAR(plain, 0.09963, 1e-5);
  EXPECT_NEAR(with_margin, 0.12963, 1e-5);
  EXPECT_NEAR(std::abs(s.d.qvel[2]) + std::abs(s.d.qvel[8]), 0, 1e-6) << "expected at rest";
  report("margin_sphere_rest_height_m", with_margin);
#if RLT_TEST_MUJOCO
  char error[1000] = "";
  std::unique_ptr<mjModel, decltype(&mj_deleteModel)> mm(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)),
                                                         mj_deleteModel);
  ASSERT_TRUE(mm) << error;
  std::unique_ptr<mjData, decltype(&mj_deleteData)> md(mj_makeData(mm.get()), mj_deleteData);
  for (int k = 0; k < 2000; ++k) mj_step(mm.get(), md.get());
  report("margin_sphere_rest_height_mujoco_m", md->qpos[9]);
  EXPECT_NEAR(plain, md->qpos[2], 1e-4);
  EXPECT_NEAR(with_margin, md->qpos[9], 1e-4);
  EXPECT_NEAR(with_margin - plain, md->qpos[9] - md->qpos[2], 1e-5);
#endif
}

// The example file with the per-geom contact parameters from MJCF (tests/data/mjcf/contact_params.xml,
// also compared with MuJoCo's compile in test_mjcf): the values reach the ModelView, and from the
// "spinning" keyframe the crossed bar and the capsule come to rest on top of their static partners.
TEST(PhysicsContacts, ContactParamsFileRests) {
  const Model model = load_mjcf(data_path("contact_params.xml"));
  Sim<double> s(model);
  EXPECT_EQ(s.m().geom_margin[4], 0.03);
  EXPECT_EQ(s.m().geom_condim[5], 1);
  EXPECT_EQ(s.m().geom_condim[6], 3);
  const int key = model.key_id("spinning");
  ASSERT_GE(key, 0);
  std::vector<double> qpos(model.qpos0),
      qvel(model.key_qvel.begin() + key * model.nv, model.key_qvel.begin() + (key + 1) * model.nv);
  s.set_state(qpos, qvel);
  run(s, 1000);  // 2 s
  ASSERT_TRUE(finite_state(s));
  // Each rests its pair's geom margin above touching (MuJoCo's meaning; MuJoCo 3 adds the two
  // geoms' margins): 0.01 for the bars, 0.035 for the capsules. MuJoCo 3.17 from this file's
  // start: 0.15989 and 0.18446 after 2 s.
  EXPECT_NEAR(s.d.qpos[2], 0.16, 1e-3);   // bar across bar
  EXPECT_NEAR(s.d.qpos[9], 0.185, 1e-3);  // capsule on capsule
}

// Degenerate geometry (second read of sim/contact.h): where the distance vector vanishes the normal
// comes from the geometry, not from an arbitrary frame axis.
//  * a sphere center on a box's side face (outside by 1e-10 m): the face normal (was the box's z);
//  * two capsules whose axes cross at a point: their common perpendicular (was capsule 1's x axis);
//  * a sphere center on a capsule's axis: across the capsule (was the sphere's z, here along the axis).
TEST(PhysicsContacts, DegenerateGeometryGivesSensibleNormals) {
  const std::string xml =
      "<mujoco><option gravity=\"0 0 0\"/><worldbody>"
      "<body><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>"
      "<body><freejoint/><geom type=\"sphere\" size=\"0.05\"/></body>"
      "<body pos=\"5 0 0\" euler=\"30 60 10\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.3\"/></body>"
      "<body pos=\"5 0 0\" euler=\"80 -20 45\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.3\"/></body>"
      "<body pos=\"-5 0 0\"><freejoint/><geom type=\"sphere\" size=\"0.05\"/></body>"
      "<body pos=\"-5 0 0.1\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.3\"/></body>"
      "</worldbody></mujoco>";
  Sim<double> s(parse_mjcf(xml, "degenerate"));
  s.d.qpos[7] = 0.1 + 1e-10;  // sphere center just outside the box's +x face
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  com_velocity(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  const Vec3<double> d1 = Mat3<double>::load(s.d.geom_xmat + 9 * 2).col(2),
                     d2 = Mat3<double>::load(s.d.geom_xmat + 9 * 3).col(2);
  const Vec3<double> d5 = Mat3<double>::load(s.d.geom_xmat + 9 * 5).col(2);
  int seen = 0;
  for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
    const double* con = s.d.contact + kContactStride * c;
    const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
    const Vec3<double> n = Vec3<double>::load(con + kConNormal);
    EXPECT_NEAR(norm(n), 1, 1e-12);
    if (g1 == 1 && g2 == 0) {  // sphere -> box: into the box through its +x face
      ++seen;
      EXPECT_NEAR(n.x, -1, 1e-12);
      EXPECT_NEAR(con[kConDepth], 0.05, 1e-9);
    } else if (g1 == 2 && g2 == 3) {
      ++seen;
      EXPECT_NEAR(dot(n, d1), 0, 1e-9);
      EXPECT_NEAR(dot(n, d2), 0, 1e-9);
      EXPECT_NEAR(con[kConDepth], 0.1, 1e-9);
    } else if (g1 == 4 && g2 == 5) {
      ++seen;
      EXPECT_NEAR(dot(n, d5), 0, 1e-9);
      EXPECT_NEAR(con[kConDepth], 0.1, 1e-9);
    }
  }
  EXPECT_EQ(seen, 3);
}

// The contacts of geom pair (g1, g2) at qpos0 (fresh detection).
template <class T>
std::vector<const T*> pair_contacts(Sim<T>& s, int g1, int g2) {
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  com_velocity(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  std::vector<const T*> out;
  for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
    const T* con = s.d.contact + kContactStride * c;
    const int a = static_cast<int>(con[kConGeom1]), b = static_cast<int>(con[kConGeom2]);
    if ((a == g1 && b == g2) || (a == g2 && b == g1)) out.push_back(con);
  }
  return out;
}

// MuJoCo 3.17's multicontact for a cylinder (sim/multiccd.h): standing 2 mm deep on a box, its cap
// (a 16-gon) clipped by the box's top face gives 4 of the 16-gon's corners, each on the rim (radius
// 0.08) at a multiple of 22.5 degrees from the cylinder's x axis, each 2 mm deep along the face's
// normal; lying on its side, the side edge gives its two ends. (One contact before.)
template <class T>
void cylinder_multicontact(double tol) {
  const std::string xml =
      "<mujoco><worldbody><geom type=\"box\" size=\"0.3 0.3 0.1\"/>"
      "<body pos=\"0.01 0.02 0.158\" euler=\"0 0 10\"><freejoint/><geom type=\"cylinder\" size=\"0.08 0.06\"/></body>"
      "<body pos=\"5 0 0.1490\" euler=\"90 0 0\"><freejoint/><geom type=\"cylinder\" size=\"0.05 0.1\"/></body>"
      "<geom type=\"box\" size=\"0.3 0.3 0.1\" pos=\"5 0 0\"/>"
      "</worldbody></mujoco>";
  Sim<T> s(parse_mjcf(xml, "cylinders"));
  const auto standing = pair_contacts(s, 0, 2);  // world geoms first, as MuJoCo
  ASSERT_EQ(standing.size(), 4u);
  for (const T* con : standing) {
    const double dx = static_cast<double>(con[kConPos]) - 0.01, dy = static_cast<double>(con[kConPos + 1]) - 0.02;
    EXPECT_NEAR(std::hypot(dx, dy), 0.08, tol);
    const double steps = (std::atan2(dy, dx) - 10 * M_PI / 180) / (M_PI / 8);
    EXPECT_NEAR(steps, std::round(steps), 1e3 * tol) << "a corner of the 16-gon";
    EXPECT_NEAR(static_cast<double>(con[kConDepth]), 0.002, tol);
    EXPECT_NEAR(static_cast<double>(con[kConPos + 2]), 0.099, tol);  // midway between the surfaces
    EXPECT_NEAR(std::abs(static_cast<double>(con[kConNormal + 2])), 1, tol);
  }
  const auto lying = pair_contacts(s, 1, 3);
  ASSERT_EQ(lying.size(), 2u);
  double y[2];
  for (int k = 0; k < 2; ++k) {
    y[k] = static_cast<double>(lying[k][kConPos + 1]);
    EXPECT_NEAR(static_cast<double>(lying[k][kConDepth]), 0.001, tol);
    // the side through the rim point of EPA's witness (within ccd_tolerance of the lowest)
    EXPECT_NEAR(static_cast<double>(lying[k][kConPos]), 5, 1e-6);
  }
  EXPECT_NEAR(std::abs(y[0] - y[1]), 0.2, tol) << "the two ends of the side";
}
TEST(PhysicsContacts, CylinderOnABoxGivesItsCapsCornersAndItsSidesEnds) { cylinder_multicontact<double>(1e-12); }
TEST(PhysicsContacts, CylinderOnABoxGivesItsCapsCornersAndItsSidesEndsFloat) { cylinder_multicontact<float>(2e-6); }

// MuJoCo 3.17's multicontact within a margin (sim/multiccd.h): a box 3 mm above a mesh block, the
// pair's margin 5 mm, gives its 4 bottom corners, each with the margin less the gap as its acting
// depth, midway between the surfaces; a capsule lying 1 mm deep on the block gives its two ends.
template <class T>
void margin_multicontact(double tol) {
  const std::string xml =
      "<mujoco><asset><mesh name=\"block\" vertex=\"-1 -1 -1 1 -1 -1 -1 1 -1 1 1 -1 -1 -1 1 1 -1 1 -1 1 1 1 1 1\" "
      "scale=\"0.3 0.3 0.1\"/></asset><worldbody>"
      "<geom type=\"mesh\" mesh=\"block\" margin=\"0.005\"/>"
      "<body pos=\"0.02 0.01 0.163\" euler=\"0 0 25\"><freejoint/><geom type=\"box\" size=\"0.1 0.08 0.06\"/></body>"
      "<geom type=\"mesh\" mesh=\"block\" pos=\"5 0 0\"/>"
      "<body pos=\"5 0 0.139\" euler=\"0 90 0\"><freejoint/><geom type=\"capsule\" size=\"0.04 0.12\"/></body>"
      "</worldbody></mujoco>";
  Sim<T> s(parse_mjcf(xml, "margin"));
  const auto box = pair_contacts(s, 0, 2);  // world geoms first, as MuJoCo
  ASSERT_EQ(box.size(), 4u);
  const double c = std::cos(25 * M_PI / 180), sn = std::sin(25 * M_PI / 180);
  const double top = static_cast<double>(0.1f);  // the block's top face: its vertices are floats
  for (const T* con : box) {
    EXPECT_NEAR(static_cast<double>(con[kConDepth]), 0.005 - (0.103 - top), tol);  // the margin less the gap
    EXPECT_NEAR(static_cast<double>(con[kConPos + 2]), 0.5 * (0.103 + top), tol);
    const double dx = static_cast<double>(con[kConPos]) - 0.02, dy = static_cast<double>(con[kConPos + 1]) - 0.01;
    EXPECT_NEAR(std::abs(c * dx + sn * dy), 0.1, tol) << "a corner";
    EXPECT_NEAR(std::abs(-sn * dx + c * dy), 0.08, tol) << "a corner";
  }
  const auto capsule = pair_contacts(s, 1, 3);
  ASSERT_EQ(capsule.size(), 2u);
  EXPECT_NEAR(std::abs(static_cast<double>(capsule[0][kConPos] - capsule[1][kConPos])), 0.24, tol);
  for (const T* con : capsule) EXPECT_NEAR(static_cast<double>(con[kConDepth]), top - 0.099, tol);
}
TEST(PhysicsContacts, MultiContactWithinTheMargin) { margin_multicontact<double>(1e-12); }
TEST(PhysicsContacts, MultiContactWithinTheMarginFloat) { margin_multicontact<float>(2e-6); }

// Random overlapping poses of each pair kind (box-box, capsule-box, capsule-capsule, sphere-box, the
// multicontact pairs cylinder-box, cylinder-cylinder and capsule-cylinder, with and without margin,
// and boxes, capsules and cylinders on the plane), in double and float, with room for more contacts than the pair
// may make: the count never exceeds pair_contact_capacity (which sizes the contact rows, so a pair
// making more would silently lose some), every normal is a finite unit vector and every depth finite
// and at most the deepest possible overlap.
template <class T>
void contacts_within_capacity() {
  const char* kinds[][2] = {{"box\" size=\"0.2 0.1 0.05", "box\" size=\"0.15 0.15 0.1"},
                            {"capsule\" size=\"0.05 0.2", "box\" size=\"0.2 0.1 0.05"},
                            {"capsule\" size=\"0.05 0.2", "capsule\" size=\"0.08 0.1"},
                            {"sphere\" size=\"0.1", "box\" size=\"0.2 0.1 0.05"},
                            {"cylinder\" size=\"0.1 0.05", "box\" size=\"0.2 0.1 0.05"},
                            {"cylinder\" size=\"0.1 0.05", "cylinder\" size=\"0.15 0.1\" margin=\"0.01"},
                            {"capsule\" size=\"0.05 0.2", "cylinder\" size=\"0.1 0.05\" margin=\"0.01"}};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  int checked = 0;
  for (const auto& kind : kinds) {
    const std::string xml = std::string("<mujoco><option gravity=\"0 0 0\"/><worldbody>") +
                            "<geom type=\"plane\" size=\"5 5 0.1\"/>"
                            "<body><freejoint/><geom type=\"" +
                            kind[0] +
                            "\"/></body>"
                            "<body><freejoint/><geom type=\"" +
                            kind[1] + "\"/></body></worldbody></mujoco>";
    const Model model = parse_mjcf(xml, "capacity");
    HostModel<T> host(model);
    ModelView<T> m = host.view();
    const int capacity = m.ncon_max;
    EXPECT_EQ(capacity, pair_contact_capacity(model.geom_type[0], model.geom_type[1]) +
                            pair_contact_capacity(model.geom_type[0], model.geom_type[2]) +
                            pair_contact_capacity(model.geom_type[1], model.geom_type[2]));
    m.ncon_max = 4 * capacity;  // room to see a pair that makes too many
    const DataLayout layout = data_layout(m);
    std::vector<T> row(static_cast<size_t>(layout.total));
    const DataView<T> d = data_view(layout, row.data());
    for (int trial = 0; trial < 300; ++trial) {
      reset_data(m, d);
      for (int b = 0; b < 2; ++b) {
        T* q = d.qpos + 7 * b;
        q[0] = T(0.1 * u(rng)), q[1] = T(0.1 * u(rng)), q[2] = T(0.12 + 0.1 * u(rng));
        // some trials axis-aligned (parallel faces and segments), some random
        if (trial % 3 == 0) {
          q[3] = T(1), q[4] = q[5] = q[6] = T(0);
          if (trial % 2 == 0) q[6] = T(std::sin(0.3 * u(rng))), q[3] = T(std::sqrt(1 - double(q[6]) * double(q[6])));
        } else {
          double w = u(rng), x = u(rng), y = u(rng), z = u(rng);
          const double n = std::sqrt(w * w + x * x + y * y + z * z) + 1e-12;
          q[3] = T(w / n), q[4] = T(x / n), q[5] = T(y / n), q[6] = T(z / n);
        }
      }
      kinematics(m, d);
      com_position(m, d);
      com_velocity(m, d);
      detect_contacts(m, d);
      const int ncon = static_cast<int>(d.ncon[0]);
      ASSERT_LE(ncon, capacity) << kind[0] << " / " << kind[1] << " trial " << trial;
      int per_pair[3] = {0, 0, 0};
      for (int c = 0; c < ncon; ++c) {
        const T* con = d.contact + kContactStride * c;
        const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
        ++per_pair[g1 + g2 - 1];  // (0,1) -> 0, (0,2) -> 1, (1,2) -> 2
        const double nx = static_cast<double>(con[kConNormal]), ny = static_cast<double>(con[kConNormal + 1]),
                     nz = static_cast<double>(con[kConNormal + 2]);
        ASSERT_NEAR(std::sqrt(nx * nx + ny * ny + nz * nz), 1.0, 1e-5)
            << kind[0] << " / " << kind[1] << " trial " << trial;
        ASSERT_TRUE(std::isfinite(static_cast<double>(con[kConDepth])));
        ASSERT_LT(static_cast<double>(con[kConDepth]), 0.6);
        ++checked;
      }
      EXPECT_LE(per_pair[0], pair_contact_capacity(model.geom_type[0], model.geom_type[1]));
      EXPECT_LE(per_pair[1], pair_contact_capacity(model.geom_type[0], model.geom_type[2]));
      EXPECT_LE(per_pair[2], pair_contact_capacity(model.geom_type[1], model.geom_type[2]))
          << kind[0] << " / " << kind[1];
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(PhysicsContacts, ContactsWithinCapacityAndFinite) { contacts_within_capacity<double>(); }
TEST(PhysicsContacts, ContactsWithinCapacityAndFiniteFloat) { contacts_within_capacity<float>(); }

// The broadphase's per-geom cache (geom_bounds: each geom's bounding radius and speed bound once
// per substep) and its packed pair list give what the per-pair computation gave: the cached bounds
// equal bounding_radius and geom_speed_bound bit for bit, each pair's margin equals pair_margin, and
// the contact list (count, order, every scalar) equals a plain loop over all geom pairs i < j that
// filters each pair (geom_pair_allowed, explicit_pair), orders it by type, computes both speed bounds
// for it and rejects by bounding spheres, as detect_contacts did before the cache. Self-colliding
// chains of every primitive type, explicit pairs, margins, excludes, meshes and a height field,
// stepped with random controls from random velocities, in double and float.
template <class T>
void cached_bounds_match_per_pair(const std::string& path, int* contacts_seen) {
  using contact_detail::bounding_radius;
  const Model model = load_mjcf(path);
  Sim<T> s(model);
  const ModelView<T>& m = s.m();
  const DataView<T>& d = s.d;
  ASSERT_GT(m.ncollide, 0) << path;
  // geom_collider: exactly the geoms of geom_collide's pairs, ascending
  std::vector<int> in_pair(static_cast<size_t>(m.ngeom), 0);
  for (int k = 0; k < m.ncollide; ++k) {
    const int g1 = m.geom_collide[k] >> kGeomCollideShift, g2 = m.geom_collide[k] & kGeomCollideMask;
    ASSERT_LE(m.geom_type[g1], m.geom_type[g2]) << path << " pair " << k;
    in_pair[static_cast<size_t>(g1)] = in_pair[static_cast<size_t>(g2)] = 1;
  }
  std::vector<int> colliders;
  for (int g = 0; g < m.ngeom; ++g)
    if (in_pair[static_cast<size_t>(g)]) colliders.push_back(g);
  ASSERT_EQ(m.ncollider, static_cast<int>(colliders.size())) << path;
  for (int k = 0; k < m.ncollider; ++k) ASSERT_EQ(m.geom_collider[k], colliders[static_cast<size_t>(k)]) << path;

  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < s.nv(); ++i) d.qvel[i] = T(0.5 * u(rng));
  std::vector<T> ctrl(static_cast<size_t>(std::max(m.nu, 1)));
  std::vector<T> cached, reference;
  for (int step = 0; step < 150; ++step) {
    for (int a = 0; a < m.nu; ++a) ctrl[static_cast<size_t>(a)] = T(u(rng));
    physics_step(m, d, m.nu > 0 ? ctrl.data() : nullptr, 1, nullptr);
    kinematics(m, d);
    com_position(m, d);
    com_velocity(m, d);
    detect_contacts(m, d);
    const int ncon = static_cast<int>(d.ncon[0]);
    cached.assign(d.contact, d.contact + kContactStride * ncon);
    for (int g : colliders) {
      ASSERT_EQ(d.geom_bound[g], bounding_radius(m, g)) << path << " geom " << g;
      ASSERT_EQ(d.geom_bound[m.ngeom + g], geom_speed_bound(m, d, g)) << path << " geom " << g << " step " << step;
    }
    // the plain loop over every pair, each computing its own bounds
    int ref = 0;
    for (int i = 0; i < m.ngeom; ++i)
      for (int j = i + 1; j < m.ngeom; ++j) {
        if (explicit_pair(m, i, j) < 0 && !geom_pair_allowed(m, i, j)) continue;
        const int g1 = m.geom_type[i] <= m.geom_type[j] ? i : j, g2 = g1 == i ? j : i;
        const int t1 = m.geom_type[g1], t2 = m.geom_type[g2];
        const T margin = pair_margin(m, d, g1, g2), active = pair_active_margin(m, g1, g2);
        ASSERT_EQ(margin, speculative_margin(m, d.geom_bound[m.ngeom + g1], d.geom_bound[m.ngeom + g2])) << path;
        const Vec3<T> c1 = Vec3<T>::load(d.geom_xpos + 3 * g1), c2 = Vec3<T>::load(d.geom_xpos + 3 * g2);
        if (t1 != kGeomPlane && t1 != kGeomHField && t2 != kGeomHField &&
            norm(c2 - c1) > bounding_radius(m, g1) + bounding_radius(m, g2) + (margin + active))
          continue;
        collide_pair(m, d, g1, g2, margin, active, &ref);
      }
    ASSERT_EQ(ref, ncon) << path << " step " << step;
    reference.assign(d.contact, d.contact + kContactStride * ncon);
    for (size_t k = 0; k < cached.size(); ++k)
      ASSERT_EQ(std::memcmp(&cached[k], &reference[k], sizeof(T)), 0)
          << path << " step " << step << " contact " << k / kContactStride << " field " << k % kContactStride << ": "
          << cached[k] << " against " << reference[k];
    *contacts_seen += ncon;
  }
}

TEST(PhysicsContacts, CachedGeomBoundsGiveThePerPairContacts) {
  const std::string assets = std::string(RLT_TEST_DATA_DIR) + "/../../envs/assets/";
  const std::vector<std::string> files = {
      assets + "humanoid.xml",          assets + "ant.xml",          data_path("misc/contact_pairs.xml"),
      data_path("contact_margin.xml"),  data_path("constraints_exclude.xml"), data_path("geoms_convex.xml"),
      data_path("mesh_convex.xml"),     data_path("multiccd_mesh.xml"), data_path("multiccd_margin.xml"),
      data_path("multiccd_cylinder.xml"), data_path("mesh_plane.xml"),
      data_path("hfield_convex.xml"),   data_path("contact_scene.xml")};
  for (const std::string& f : files) {
    int seen_double = 0, seen_float = 0;
    cached_bounds_match_per_pair<double>(f, &seen_double);
    cached_bounds_match_per_pair<float>(f, &seen_float);
    std::printf("[ measured ] %s: %d contacts compared (double), %d (float)\n", f.c_str(), seen_double, seen_float);
    EXPECT_GT(seen_double, 0) << f;
    EXPECT_GT(seen_float, 0) << f;
  }
}

// geom_collide packs two geom ids in an int: a model of more geoms is refused at load.
TEST(PhysicsModel, HostModelRefusesMoreGeomsThanThePairListPacks) {
  Model model = parse_mjcf(scene("", kBox), "box");
  model.ngeom = kGeomCollideMask + 2;
  try {
    HostModel<float> host(model);
    FAIL() << "a model of " << model.ngeom << " geoms was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("over 65536"), std::string::npos) << e.what();
  }
}

// A non-finite pose gives no contact candidates (a NaN depth used to pass the margin test and put
// NaN contacts in the list).
TEST(PhysicsContacts, NonFiniteStateGivesNoContacts) {
  Sim<double> s(parse_mjcf(
      scene(
          "",
          kBox +
              "<body pos=\"1 0 0.1\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>"
              "<body pos=\"1 0 0.25\" euler=\"0 90 0\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.1\"/></body>"),
      "nan"));
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  com_velocity(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  EXPECT_GT(static_cast<int>(s.d.ncon[0]), 0);
  for (int i = 0; i < s.nq(); ++i) s.d.qpos[i] = std::nan("");
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  com_velocity(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  EXPECT_EQ(static_cast<int>(s.d.ncon[0]), 0);
}

// Two boxes stacked, and a capsule across a box: they come to rest without sinking or exploding.
TEST(PhysicsContacts, BoxStackAndCapsuleOnBoxRest) {
  const std::string bodies =
      "<body pos=\"0 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.3 0.3 0.1\" mass=\"4\"/></body>"
      "<body pos=\"0.02 0.01 0.26\" euler=\"0 0 30\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.05\" "
      "mass=\"1\"/></body>"
      "<body pos=\"2 0 0.1\"><freejoint/><geom type=\"box\" size=\"0.3 0.3 0.1\" mass=\"4\"/></body>"
      "<body pos=\"2 0 0.26\" euler=\"90 0 0\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.2\" "
      "mass=\"1\"/></body>";
  for (int precision = 0; precision < 2; ++precision) {
    const Model model = parse_mjcf(scene("", bodies), "stack2");
    auto check = [&](auto& s) {
      run(s, 1500);
      ASSERT_TRUE(finite_state(s));
      EXPECT_NEAR(static_cast<double>(s.d.qpos[7 + 2]), 0.25, 1.5e-3);   // small box on big box
      EXPECT_NEAR(static_cast<double>(s.d.qpos[21 + 2]), 0.25, 1.5e-3);  // capsule on box
      for (int i = 0; i < s.nv(); ++i) EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[i])), 2e-3) << i;
    };
    if (precision == 0) {
      Sim<double> s(model);
      check(s);
    } else {
      Sim<float> s(model);
      check(s);
    }
  }
}

// Light and heavy bodies at large steps: a 0.05 kg ball, a 10 kg box and a capsule dropped at
// h = 2, 5 and 10 ms stay finite, gain at most a little energy from one step to the next (MuJoCo's
// soft contacts: measured up to 72 mJ, of ~30 J) and come to rest on the plane.
TEST(PhysicsContacts, StableAtLargeStepsAndLightBodies) {
  const std::string bodies =
      "<body pos=\"0 0 0.3\"><freejoint/><geom type=\"sphere\" size=\"0.03\" mass=\"0.05\"/></body>"
      "<body pos=\"1 0 0.3\" euler=\"10 20 0\"><freejoint/><geom type=\"box\" size=\"0.2 0.2 0.1\" mass=\"10\"/></body>"
      "<body pos=\"-1 0 0.3\" euler=\"0 80 0\"><freejoint/><geom type=\"capsule\" size=\"0.04 0.1\" "
      "mass=\"0.3\"/></body>";
  for (double h : {0.002, 0.005, 0.01}) {
    Model model = parse_mjcf(scene("", bodies), "steps");
    model.timestep = h;
    Sim<double> s(model);
    double e = total_energy(s), worst_rise = 0;
    const int steps = static_cast<int>(3.0 / h);
    for (int k = 0; k < steps; ++k) {
      run(s, 1);
      ASSERT_TRUE(finite_state(s)) << "h " << h << " step " << k;
      const double e_next = total_energy(s);
      worst_rise = std::max(worst_rise, e_next - e);
      e = e_next;
    }
    EXPECT_LT(worst_rise, 0.15) << h;
    EXPECT_NEAR(s.d.qpos[2], 0.03, 1e-3) << h;
    EXPECT_NEAR(s.d.qpos[9], 0.1, 1e-3) << h;
    EXPECT_NEAR(s.d.qpos[16], 0.04, 1e-3) << h;
    for (int i = 0; i < s.nv(); ++i) EXPECT_LT(std::abs(s.d.qvel[i]), 1e-2) << "h " << h << " dof " << i;
    std::printf("[ measured ] h = %g s: worst energy rise %.3g J\n", h, worst_rise);
  }
}

// A limited hinge and a limited slide pushed against their limits by motors: they stop a little past
// the limit (the soft constraint's give: under a centimetre or a hundredth of a radian) and stay there.
template <class T>
void limits_hold() {
  const std::string xml =
      "<mujoco><option timestep=\"0.002\"/><worldbody>"
      "<body pos=\"0 0 1\"><joint name=\"h\" type=\"hinge\" axis=\"0 0 1\" limited=\"true\" range=\"-30 30\"/>"
      "  <geom type=\"capsule\" fromto=\"0 0 0 0.5 0 0\" size=\"0.05\" mass=\"1\" contype=\"0\" "
      "conaffinity=\"0\"/></body>"
      "<body pos=\"2 0 1\"><joint name=\"s\" type=\"slide\" axis=\"1 0 0\" limited=\"true\" range=\"-0.1 0.2\"/>"
      "  <geom type=\"box\" size=\"0.05 0.05 0.05\" mass=\"0.3\" contype=\"0\" conaffinity=\"0\"/></body>"
      "</worldbody><actuator>"
      "<motor joint=\"h\" gear=\"2\" ctrllimited=\"true\" ctrlrange=\"-10 10\"/>"
      "<motor joint=\"s\" ctrllimited=\"true\" ctrlrange=\"-10 10\"/>"
      "</actuator></mujoco>";
  const Model model = parse_mjcf(xml, "limits");
  Sim<T> s(model);
  const T ctrl[2] = {T(5), T(-8)};  // 10 N m on the hinge (gear 2), -8 N on the slide
  const double hi = 30 * M_PI / 180, lo = -0.1;
  double worst_h = 0, worst_s = 0;
  for (int step = 0; step < 1500; ++step) {
    run(s, 1, ctrl);
    worst_h = std::max(worst_h, static_cast<double>(s.d.qpos[0]) - hi);
    worst_s = std::max(worst_s, lo - static_cast<double>(s.d.qpos[1]));
  }
  ASSERT_TRUE(finite_state(s));
  // At rest on the limits, past them by the constraint's give alone.
  const double give_h = static_cast<double>(s.d.qpos[0]) - hi, give_s = lo - static_cast<double>(s.d.qpos[1]);
  EXPECT_GT(give_h, 0.0);
  EXPECT_LT(give_h, 0.01);
  EXPECT_GT(give_s, 0.0);
  EXPECT_LT(give_s, 0.01);
  EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[0])), 1e-4);
  EXPECT_LT(std::abs(static_cast<double>(s.d.qvel[1])), 1e-4);
  // On the way in, the impact overshoot stays small.
  EXPECT_LT(worst_h, 0.1);  // measured 0.081 rad and 0.015 m
  EXPECT_LT(worst_s, 0.02);
  report(sizeof(T) == 8 ? "hinge_limit_worst_overshoot_rad" : "hinge_limit_worst_overshoot_rad_float", worst_h);
  report(sizeof(T) == 8 ? "slide_limit_worst_overshoot_m" : "slide_limit_worst_overshoot_m_float", worst_s);
  // Reversed, the hinge leaves the upper limit and stops at the lower one.
  const T back[2] = {T(-5), T(8)};
  run(s, 1500, back);
  EXPECT_NEAR(static_cast<double>(s.d.qpos[0]), -hi - give_h, 0.2 * give_h);
  EXPECT_NEAR(static_cast<double>(s.d.qpos[1]), 0.2 + give_s, 0.2 * give_s);
}

TEST(PhysicsLimits, LimitsHoldAgainstMotors) { limits_hold<double>(); }
TEST(PhysicsLimits, LimitsHoldAgainstMotorsFloat) { limits_hold<float>(); }

// A position servo with kv (an extension beyond MuJoCo 2.2.2): force = kp (ctrl - gear q) - kv gear qdot.
TEST(PhysicsActuators, PositionServoWithDamping) {
  const std::string xml =
      "<mujoco><option gravity=\"0 0 0\"/><worldbody><body><joint name=\"j\" type=\"hinge\"/>"
      "<geom type=\"sphere\" size=\"0.1\" pos=\"0.2 0 0\" contype=\"0\" conaffinity=\"0\"/></body></worldbody>"
      "<actuator><position joint=\"j\" kp=\"20\" kv=\"3\" gear=\"2\"/></actuator></mujoco>";
  Sim<double> s(parse_mjcf(xml, "servo"));
  s.d.qpos[0] = 0.3, s.d.qvel[0] = -0.7;
  const double ctrl = 0.1;
  actuator_forces(s.m(), s.d, &ctrl);
  const double force = 20 * (0.1 - 2 * 0.3) - 3 * 2 * (-0.7);
  EXPECT_NEAR(s.d.actuator_force[0], force, 1e-12);
  EXPECT_NEAR(s.d.qfrc_actuator[0], 2 * force, 1e-12);
  // The servo drives the joint to ctrl / gear.
  for (int k = 0; k < 3000; ++k) physics_step(s.m(), s.d, &ctrl, 1, static_cast<int*>(nullptr));
  EXPECT_NEAR(s.d.qpos[0], 0.05, 1e-6);
}

// actuator_force and qfrc_actuator against mj_forward's, at random states and controls (ctrl beyond
// ctrlrange and forces beyond forcerange included).
TEST(PhysicsActuators, AgreeWithMujoco) {
#if !RLT_TEST_MUJOCO
  GTEST_SKIP() << "built without MuJoCo (libmujoco-dev not found at configure time)";
#else
  const std::string path = data_path("contact_actuators.xml");
  char error[1000] = "";
  std::unique_ptr<mjModel, decltype(&mj_deleteModel)> mm(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)),
                                                         mj_deleteModel);
  ASSERT_TRUE(mm) << error;
  std::unique_ptr<mjData, decltype(&mj_deleteData)> md(mj_makeData(mm.get()), mj_deleteData);
  const Model model = load_mjcf(path);
  ASSERT_EQ(model.nu, mm->nu);
  Sim<double> s(model);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-3, 3);
  double worst = 0;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> ctrl(static_cast<size_t>(model.nu));
    for (int i = 0; i < mm->nq; ++i) md->qpos[i] = s.d.qpos[i] = u(rng);
    for (int i = 0; i < mm->nv; ++i) md->qvel[i] = s.d.qvel[i] = u(rng);
    for (int a = 0; a < mm->nu; ++a) md->ctrl[a] = ctrl[static_cast<size_t>(a)] = u(rng);
    mj_forward(mm.get(), md.get());
    actuator_forces(s.m(), s.d, ctrl.data());
    for (int a = 0; a < mm->nu; ++a) {
      EXPECT_NEAR(s.d.actuator_force[a], md->actuator_force[a], 1e-12 * (1 + std::abs(md->actuator_force[a]))) << a;
      worst = std::max(worst, std::abs(s.d.actuator_force[a] - md->actuator_force[a]));
    }
    for (int i = 0; i < mm->nv; ++i) {
      EXPECT_NEAR(s.d.qfrc_actuator[i], md->qfrc_actuator[i], 1e-12 * (1 + std::abs(md->qfrc_actuator[i]))) << i;
      worst = std::max(worst, std::abs(s.d.qfrc_actuator[i] - md->qfrc_actuator[i]));
    }
  }
  report("actuator_vs_mujoco_worst_abs", worst);
#endif
}

// Without contacts, limits or actuators, physics_step is step_euler, bit for bit.
TEST(PhysicsStep, ContactFreeEqualsStepEuler) {
  const std::string xml =
      "<mujoco><option timestep=\"0.002\"/><worldbody>"
      "<body pos=\"0 0 1\"><joint type=\"hinge\" axis=\"0 1 0\" damping=\"0.3\"/>"
      "  <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.03\" contype=\"0\" conaffinity=\"0\"/>"
      "  <body pos=\"0.3 0 0\"><joint type=\"ball\"/><geom type=\"box\" size=\"0.1 0.05 0.02\" contype=\"0\" "
      "conaffinity=\"0\"/></body>"
      "</body>"
      "<body pos=\"1 0 1\"><freejoint/><geom type=\"sphere\" size=\"0.1\" contype=\"0\" conaffinity=\"0\"/></body>"
      "</worldbody></mujoco>";
  const Model model = parse_mjcf(xml, "free");
  Sim<double> a(model), b(model);
  EXPECT_EQ(a.m().ncon_max, 0);
  std::mt19937_64 rng(3);
  std::vector<double> qpos, qvel;
  test::random_state(model, rng, qpos, qvel);
  a.set_state(qpos, qvel), b.set_state(qpos, qvel);
  a.d.qfrc_applied[0] = b.d.qfrc_applied[0] = 0.4;
  int ncon = -1;
  physics_step(a.m(), a.d, static_cast<const double*>(nullptr), 200, &ncon);
  for (int k = 0; k < 200; ++k) step_euler(b.m(), b.d);
  EXPECT_EQ(ncon, 0);
  for (int i = 0; i < a.nq(); ++i) ASSERT_EQ(a.d.qpos[i], b.d.qpos[i]) << i;
  for (int i = 0; i < a.nv(); ++i) ASSERT_EQ(a.d.qvel[i], b.d.qvel[i]) << i;
}

// The contact scene (planes, a static ramp and stop, free sphere, capsule and box) from its
// "dropped" keyframe: float and double stay finite, above the ground, and agree on where things end.
TEST(PhysicsStep, ContactSceneFloatAndDouble) {
  const Model model = load_mjcf(data_path("contact_scene.xml"));
  const int key = model.key_id("dropped");
  ASSERT_GE(key, 0);
  std::vector<double> qpos(model.key_qpos.begin() + key * model.nq, model.key_qpos.begin() + (key + 1) * model.nq);
  std::vector<double> qvel(model.key_qvel.begin() + key * model.nv, model.key_qvel.begin() + (key + 1) * model.nv);
  Sim<double> sd(model);
  Sim<float> sf(model);
  sd.set_state(qpos, qvel), sf.set_state(qpos, qvel);
  for (int k = 0; k < 400; ++k) {  // 2 s, 5 substeps per control step
    physics_step(sd.m(), sd.d, static_cast<const double*>(nullptr), 5, static_cast<int*>(nullptr));
    physics_step(sf.m(), sf.d, static_cast<const float*>(nullptr), 5, static_cast<int*>(nullptr));
    ASSERT_TRUE(finite_state(sd)) << k;
    ASSERT_TRUE(finite_state(sf)) << k;
  }
  // heights of the sphere, capsule and box centers: resting on the ground
  EXPECT_NEAR(sd.d.qpos[2], 0.1, 2e-3);
  EXPECT_NEAR(sd.d.qpos[9], 0.05, 2e-3);
  EXPECT_NEAR(sd.d.qpos[16], 0.05, 2e-3);
  for (int i : {2, 9, 16}) EXPECT_NEAR(static_cast<double>(sf.d.qpos[i]), sd.d.qpos[i], 1e-3) << i;
}

// PhysicsStepEnvs through the CPU executor equals stepping each env alone, with per-env controls.
TEST(PhysicsStep, BatchMatchesOneByOne) {
  const Model model = load_mjcf(data_path("contact_scene.xml"));
  HostModel<float> host(model);
  const ModelView<float> m = host.view();
  const DataLayout layout = data_layout(m);
  const int num_envs = 13;
  std::vector<float> batch(static_cast<size_t>(num_envs * layout.row), 0.0f);
  const int key = model.key_id("dropped");
  for (int e = 0; e < num_envs; ++e) {
    const DataView<float> d = BatchRows<float>{layout, batch.data(), {}}.env(e);
    reset_data(m, d);
    for (int i = 0; i < m.nq; ++i) d.qpos[i] = static_cast<float>(model.key_qpos[static_cast<size_t>(key * m.nq + i)]);
    d.qpos[2] += 0.01f * static_cast<float>(e);
  }
  std::vector<float> serial = batch;
  std::vector<int> ncon_serial(num_envs), ncon_batch(num_envs);
  for (int k = 0; k < 20; ++k) {
    for (int e = 0; e < num_envs; ++e)
      PhysicsStepEnvs<float>{m, layout, serial.data(), nullptr, 4, ncon_serial.data()}(e);
    CpuExecutor exec(3);
    parallel_for(exec, num_envs, PhysicsStepEnvs<float>{m, layout, batch.data(), nullptr, 4, ncon_batch.data()});
  }
  EXPECT_EQ(ncon_batch, ncon_serial);
  EXPECT_GT(*std::max_element(ncon_batch.begin(), ncon_batch.end()), 0);
  for (size_t i = 0; i < batch.size(); ++i) ASSERT_EQ(batch[i], serial[i]) << i;
}

// ---- external contact wrench per body (cfrc_ext, sim/contact.h: contact_external_forces) ---------

// Row b of d.cfrc_ext as (torque, force).
template <class T>
void cfrc_ext_of(const Sim<T>& s, int b, double tau[3], double f[3]) {
  for (int k = 0; k < 3; ++k) {
    tau[k] = static_cast<double>(s.d.cfrc_ext[6 * b + k]);
    f[k] = static_cast<double>(s.d.cfrc_ext[6 * b + 3 + k]);
  }
}

// A box whose centre of mass is off its body origin rests on the plane, and a small box rests on
// it: after a control step, the lower body's external force is its own weight (the ground's push of
// both minus the upper box's equal and opposite push), the upper's its weight, and each torque about
// its body origin (the tree's reference point) balances gravity's, -(xipos - xpos) x m g.
template <class T>
void resting_bodies_external_wrench(double rel_tol) {
  const std::string bodies =
      "<body name=\"base\" pos=\"0.3 -0.2 0.06\"><freejoint/>"
      "  <geom type=\"box\" pos=\"0.15 0.05 0\" size=\"0.2 0.1 0.05\" density=\"1000\"/></body>"
      "<body name=\"top\" pos=\"0.4 -0.15 0.14\" euler=\"0 0 30\"><freejoint/>"
      "  <geom type=\"box\" pos=\"0.05 0.02 0\" size=\"0.05 0.04 0.025\" density=\"1000\"/></body>";
  Sim<T> s(parse_mjcf(scene("", bodies), "stack"));
  for (int k = 0; k < 1500; ++k)
    physics_step(s.m(), s.d, static_cast<const T*>(nullptr), 1, static_cast<int*>(nullptr));
  int ncon = 0;
  physics_step(s.m(), s.d, static_cast<const T*>(nullptr), 4, &ncon);
  ASSERT_TRUE(finite_state(s));
  EXPECT_GE(ncon, 8);      // four corners on the ground, four of the top box on the base
  kinematics(s.m(), s.d);  // post-step poses, which the torque's reference point matches
  const double g = 9.81;
  double tau[3], f[3];
  cfrc_ext_of(s, 0, tau, f);
  for (int k = 0; k < 3; ++k) {  // the world row
    EXPECT_EQ(tau[k], 0.0);
    EXPECT_EQ(f[k], 0.0);
  }
  double total_fz = 0, total_mass = 0;
  for (int b = 1; b <= 2; ++b) {
    const double mass = static_cast<double>(s.m().body_mass[b]);
    cfrc_ext_of(s, b, tau, f);
    const double w = mass * g;
    EXPECT_NEAR(f[2] / w, 1.0, rel_tol) << "body " << b;
    EXPECT_LT(std::hypot(f[0], f[1]), rel_tol * w) << "body " << b;
    // Gravity's torque about the body origin is r x (0, 0, -m g); the contacts' cancels it.
    const double r[3] = {static_cast<double>(s.d.xipos[3 * b] - s.d.xpos[3 * b]),
                         static_cast<double>(s.d.xipos[3 * b + 1] - s.d.xpos[3 * b + 1]),
                         static_cast<double>(s.d.xipos[3 * b + 2] - s.d.xpos[3 * b + 2])};
    const double expected[3] = {r[1] * w, -r[0] * w, 0.0};
    const double scale = w * std::sqrt(r[0] * r[0] + r[1] * r[1]);
    ASSERT_GT(scale, 0.02 * w);  // the centre of mass is well off the origin, so the check has teeth
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(tau[k], expected[k], rel_tol * scale) << "body " << b << " torque " << k;
    total_fz += f[2], total_mass += mass;
  }
  report(sizeof(T) == 8 ? "resting_stack_cfrc_ext_fz_over_weight" : "resting_stack_cfrc_ext_fz_over_weight_float",
         total_fz / (total_mass * g));
}

TEST(PhysicsContacts, ExternalWrenchOfRestingBodies) { resting_bodies_external_wrench<double>(1e-3); }
TEST(PhysicsContacts, ExternalWrenchOfRestingBodiesFloat) { resting_bodies_external_wrench<float>(1e-2); }

// A box thrown spinning onto the plane (condim 3, then 1 without friction): at every step, cfrc_ext is
// the contact wrench the step actually applied. A
// lone free body's applied external wrench is what RNE needs for the solved qacc at the state the
// substep started from (gravity enters RNE as the world's acceleration), taken about the body origin
// then; cfrc_ext is about the origin at the end of the step, so it is moved there before comparing.
TEST(PhysicsContacts, ExternalWrenchIsTheAppliedContactWrench) {
  for (const char* condim : {"3", "1"}) {
    const std::string body =
        std::string(
            "<body name=\"box\" pos=\"0 0 0.06\"><freejoint/>"
            "<geom type=\"box\" pos=\"0.04 -0.03 0.01\" size=\"0.2 0.1 0.05\" density=\"1000\" condim=\"") +
        condim + "\" friction=\"0.8 0.05 0.01\"/></body>";
    const Model model = parse_mjcf(scene("", body), "box");
    Sim<double> s(model), ref(model);
    for (int k = 0; k < 300; ++k) run(s, 1);
    const double v0[6] = {1.5, -0.7, 0.4, 1.0, -2.5, 6.0};
    for (int i = 0; i < 6; ++i) s.d.qvel[i] = v0[i];
    int with_contact = 0, without = 0;
    double worst = 0;
    std::vector<double> result(static_cast<size_t>(model.nv));
    for (int k = 0; k < 150; ++k) {
      const std::vector<double> qpos = s.get(s.d.qpos, s.nq()), qvel = s.get(s.d.qvel, s.nv());
      int ncon = 0;
      run(s, 1, static_cast<const double*>(nullptr), &ncon);
      ASSERT_TRUE(finite_state(s));
      double tau[3], f[3];
      cfrc_ext_of(s, 1, tau, f);
      if (ncon == 0) {
        for (int c = 0; c < 6; ++c) ASSERT_EQ(s.d.cfrc_ext[6 + c], 0.0) << "step " << k;
        ++without;
        continue;
      }
      ++with_contact;
      ref.set_state(qpos, qvel);
      smooth_forces(ref.m(), ref.d);
      rne(ref.m(), ref.d, static_cast<const double*>(s.d.qacc), result.data());
      double want_tau[3], want_f[3];
      for (int c = 0; c < 3; ++c) want_tau[c] = ref.d.cfrc[6 + c], want_f[c] = ref.d.cfrc[9 + c];
      // about the new origin: tau += (old origin - new origin) x f
      const double dx[3] = {qpos[0] - s.d.qpos[0], qpos[1] - s.d.qpos[1], qpos[2] - s.d.qpos[2]};
      want_tau[0] += dx[1] * want_f[2] - dx[2] * want_f[1];
      want_tau[1] += dx[2] * want_f[0] - dx[0] * want_f[2];
      want_tau[2] += dx[0] * want_f[1] - dx[1] * want_f[0];
      const double scale = 1.0 + std::sqrt(want_f[0] * want_f[0] + want_f[1] * want_f[1] + want_f[2] * want_f[2]);
      for (int c = 0; c < 3; ++c) {
        worst = std::max({worst, std::abs(tau[c] - want_tau[c]) / scale, std::abs(f[c] - want_f[c]) / scale});
        ASSERT_NEAR(f[c], want_f[c], 1e-9 * scale) << "condim " << condim << " step " << k << " force " << c;
        ASSERT_NEAR(tau[c], want_tau[c], 1e-9 * scale) << "condim " << condim << " step " << k << " torque " << c;
      }
    }
    EXPECT_GT(with_contact, 50) << condim;
    report((std::string("applied_wrench_vs_rne_worst_rel_condim") + condim).c_str(), worst);
  }
}

// cfrc_ext is the last substep's, not an accumulation: zero once nothing touches, and zero after
// reset_data; with substeps = 0 it is cleared.
TEST(PhysicsContacts, ExternalWrenchClearsWhenContactEnds) {
  Sim<double> s(parse_mjcf(scene("", kBox), "box"));
  run(s, 500);
  double tau[3], f[3];
  cfrc_ext_of(s, 1, tau, f);
  EXPECT_GT(f[2], 1.0);
  s.d.qpos[2] += 1.0;  // lift it clear of the ground
  run(s, 1);
  for (int c = 0; c < 12; ++c) EXPECT_EQ(s.d.cfrc_ext[c], 0.0) << c;
  s.d.qpos[2] -= 1.0;
  run(s, 50);
  cfrc_ext_of(s, 1, tau, f);
  EXPECT_GT(f[2], 1.0);
  physics_step(s.m(), s.d, static_cast<const double*>(nullptr), 0, static_cast<int*>(nullptr));
  for (int c = 0; c < 12; ++c) EXPECT_EQ(s.d.cfrc_ext[c], 0.0) << c;
  run(s, 1);
  reset_data(s.m(), s.d);
  for (int c = 0; c < 12; ++c) EXPECT_EQ(s.d.cfrc_ext[c], 0.0) << c;
}

}  // namespace
}  // namespace rlt
