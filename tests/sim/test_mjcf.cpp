// The MJCF subset compiler (sim/mjcf.h):
//  * every file in tests/data/mjcf/ (ours, and the dynamics tests' dyn_*.xml) and a set of inline
//    variants compiled by us and by MuJoCo 2.2.2 itself (libmujoco-dev), every Model field compared
//    with mjModel's (skipped, with the reason, in a build without MuJoCo);
//  * models MuJoCo refuses are refused here too;
//  * bad input: one-line errors naming file, line and element;
//  * hand-computed values (inertia formulas, addresses, unit conversion) that need no MuJoCo.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"

#include "tests/sim/test_mujoco.h"

namespace rlt {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Both sides evaluate the same formulas in double; 1e-9 leaves room for a different operation
// order (e.g. MuJoCo 3.17's Jacobi rotations, ours, against 2.2.2's), nothing more.
constexpr double kTol = 1e-9;
// MuJoCo 2.2.2 finds principal axes (several geoms, fullinertia) by Jacobi rotations that stop once
// the next rotation's cosine exceeds 1 - 1e-12, i.e. up to ~1.4e-6 rad short (2e-8 to 2.2e-7 seen
// in these files); the moments, insensitive to axis errors to first order, still agree to kTol.
// Our own axes are checked to 1e-15 against the input tensor in MjcfValues.FullInertia....
constexpr double kAxesTol = 3e-6;

std::string data_path(const std::string& name) { return std::string(RLT_MJCF_DATA_DIR) + "/" + name; }

std::vector<std::string> data_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(RLT_MJCF_DATA_DIR)) {
    if (entry.path().extension() == ".xml") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The files written for these tests (the dyn_*.xml files belong to the dynamics tests).
const char* const kOurFiles[] = {"chain3_hinge.xml", "cartpole.xml", "free_tree.xml",
                                 "ball_chain.xml",   "features.xml", "contact_scene.xml"};

// Writes text to a fresh file under the temp directory (MuJoCo 2.2.2 loads from files only).
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    m_path = (std::filesystem::temp_directory_path() /
              ("rlt_mjcf_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".xml"))
                 .string();
    std::ofstream(m_path) << text;
  }
  ~TempFile() { std::remove(m_path.c_str()); }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

// The message of the MjcfError that compiling `xml` throws ("" when it compiles).
std::string error_of(const std::string& xml, const std::string& source = "test.xml") {
  try {
    parse_mjcf(xml, source);
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// ---- the comparison with MuJoCo ----------------------------------------------------------------

#if RLT_TEST_MUJOCO

using MjModelPtr = std::unique_ptr<mjModel, decltype(&mj_deleteModel)>;

MjModelPtr mujoco_load(const std::string& path, std::string* error) {
  char buf[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, buf, sizeof(buf));
  if (error) *error = buf;
  return MjModelPtr(m, mj_deleteModel);
}

// Collects every difference between our Model and MuJoCo's, so a test can also check that a
// planted difference is found.
class Diff {
 public:
  void num(const std::string& field, int i, double ours, double theirs, double tol = kTol) {
    if (!(std::abs(ours - theirs) <= tol * std::max(1.0, std::abs(theirs)))) add(field, i, ours, theirs);
  }
  void exact(const std::string& field, int i, double ours, double theirs) {
    if (ours != theirs) add(field, i, ours, theirs);
  }
  template <class A, class B>
  void nums(const std::string& field, const std::vector<A>& ours, const B* theirs, int n) {
    if (static_cast<int>(ours.size()) != n) {
      size(field, static_cast<int>(ours.size()), n);
      return;
    }
    for (int i = 0; i < n; ++i) num(field, i, static_cast<double>(ours[i]), static_cast<double>(theirs[i]));
  }
  template <class A, class B>
  void ints(const std::string& field, const std::vector<A>& ours, const B* theirs, int n, int stride = 1) {
    if (static_cast<int>(ours.size()) != n) {
      size(field, static_cast<int>(ours.size()), n);
      return;
    }
    for (int i = 0; i < n; ++i) exact(field, i, ours[i], theirs[i * stride]);
  }
  void size(const std::string& field, int ours, int theirs) {
    if (ours != theirs)
      m_out.push_back(field + ": size " + std::to_string(ours) + " vs MuJoCo's " + std::to_string(theirs));
  }
  void text(const std::string& field, int i, const std::string& ours, const std::string& theirs) {
    if (ours != theirs)
      m_out.push_back(field + "[" + std::to_string(i) + "]: \"" + ours + "\" vs MuJoCo's \"" + theirs + "\"");
  }
  void note(const std::string& s) { m_out.push_back(s); }
  const std::vector<std::string>& out() const { return m_out; }

 private:
  void add(const std::string& field, int i, double ours, double theirs) {
    std::ostringstream os;
    os.precision(17);
    os << field << "[" << i << "]: " << ours << " vs MuJoCo's " << theirs;
    m_out.push_back(os.str());
  }
  std::vector<std::string> m_out;
};

Eigen::Matrix3d rotation(const double* q) { return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix(); }

// A body's inertial frame: position, principal moments in the same order, and the principal axes
// (body_iquat) equal up to the sign of each axis (the eigenvectors' signs are the solver's choice);
// where two moments coincide only the inertia tensor R diag(I) R^T is defined, and compared.
void compare_inertial_frame(Diff& d, const Model& ours, const mjModel* mj, int b) {
  const bool massless = ours.body_mass[b] == 0 && mj->body_mass[b] == 0;
  // The moments as sets: MuJoCo 3.17, our reference, leaves massless geoms out of a body's inertia (a
  // single massive geom's frame and moments copied, in the geom's order), MuJoCo 2.2.2, linked here,
  // sums them in and sorts the moments (a plane beside a box); the tensor below is compared in full.
  std::array<double, 3> so{}, sm{};
  for (int k = 0; k < 3; ++k) so[k] = ours.body_inertia[3 * b + k], sm[k] = mj->body_inertia[3 * b + k];
  std::sort(so.begin(), so.end()), std::sort(sm.begin(), sm.end());
  for (int k = 0; k < 3; ++k) d.num("body_inertia (sorted)", 3 * b + k, so[k], sm[k]);
  // A massless body's inertial frame means nothing; MuJoCo leaves the body's pos/quat there and
  // we leave 0 and identity (sim/mjcf.h), so it is not compared.
  if (massless) return;
  for (int k = 0; k < 3; ++k) d.num("body_ipos", 3 * b + k, ours.body_ipos[3 * b + k], mj->body_ipos[3 * b + k]);
  const Eigen::Matrix3d ro = rotation(&ours.body_iquat[4 * b]), rm = rotation(&mj->body_iquat[4 * b]);
  const Eigen::Vector3d io(&ours.body_inertia[3 * b]), im(&mj->body_inertia[3 * b]);
  const Eigen::Matrix3d to = ro * io.asDiagonal() * ro.transpose(), tm = rm * im.asDiagonal() * rm.transpose();
  const double scale = std::max(1e-300, im.cwiseAbs().maxCoeff());
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c)
      d.num("body inertia tensor (from body_iquat, body_inertia)", 9 * b + r * 3 + c, to(r, c) / scale,
            tm(r, c) / scale, kAxesTol);
  }
  const bool distinct = std::abs(im(0) - im(1)) > 1e-6 * scale && std::abs(im(1) - im(2)) > 1e-6 * scale &&
                        std::abs(im(0) - im(2)) > 1e-6 * scale;
  double qdot = 0;
  for (int k = 0; k < 4; ++k) qdot += ours.body_iquat[4 * b + k] * mj->body_iquat[4 * b + k];
  if (std::abs(std::abs(qdot) - 1) <= kTol) return;  // the same rotation (up to the quaternion's sign)
  const bool same_order = (io - im).cwiseAbs().maxCoeff() <= kTol * scale;
  if (distinct && same_order) {  // each principal axis the same line: R_ours^T R_mujoco is diagonal with +-1
    const Eigen::Matrix3d p = ro.transpose() * rm;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c)
        d.num("body_iquat principal axes (|R^T R'|)", 9 * b + r * 3 + c, std::abs(p(r, c)), r == c ? 1.0 : 0.0,
              kAxesTol);
    }
  }
}

std::string mj_name(const mjModel* m, int type, int id) {
  const char* n = mj_id2name(m, type, id);
  return n ? n : "";
}

std::vector<std::string> compare_with_mujoco(const Model& m, const mjModel* mj) {
  Diff d;
  d.size("nq", m.nq, mj->nq);
  d.size("nv", m.nv, mj->nv);
  d.size("nbody", m.nbody, mj->nbody);
  d.size("njnt", m.njnt, mj->njnt);
  d.size("ngeom", m.ngeom, mj->ngeom);
  d.size("nsite", m.nsite, mj->nsite);
  d.size("nu", m.nu, mj->nu);
  d.size("nkey", m.nkey, mj->nkey);
  if (!d.out().empty()) return d.out();  // the arrays below have the sizes above

  d.num("timestep", 0, m.timestep, mj->opt.timestep);
  for (int k = 0; k < 3; ++k) d.num("gravity", k, m.gravity[k], mj->opt.gravity[k]);

  d.ints("body_parentid", m.body_parentid, mj->body_parentid, m.nbody);
  d.nums("body_pos", m.body_pos, mj->body_pos, 3 * m.nbody);
  d.nums("body_quat", m.body_quat, mj->body_quat, 4 * m.nbody);
  d.nums("body_mass", m.body_mass, mj->body_mass, m.nbody);
  d.ints("body_jntadr", m.body_jntadr, mj->body_jntadr, m.nbody);
  d.ints("body_jntnum", m.body_jntnum, mj->body_jntnum, m.nbody);
  d.ints("body_dofadr", m.body_dofadr, mj->body_dofadr, m.nbody);
  d.ints("body_dofnum", m.body_dofnum, mj->body_dofnum, m.nbody);
  if (m.body_ipos.size() == 3u * m.nbody && m.body_iquat.size() == 4u * m.nbody &&
      m.body_inertia.size() == 3u * m.nbody) {
    for (int b = 0; b < m.nbody; ++b) compare_inertial_frame(d, m, mj, b);
  } else {
    d.note("body_ipos / body_iquat / body_inertia: wrong sizes");
  }

  d.ints("jnt_type", m.jnt_type, mj->jnt_type, m.njnt);
  d.ints("jnt_bodyid", m.jnt_bodyid, mj->jnt_bodyid, m.njnt);
  d.ints("jnt_qposadr", m.jnt_qposadr, mj->jnt_qposadr, m.njnt);
  d.ints("jnt_dofadr", m.jnt_dofadr, mj->jnt_dofadr, m.njnt);
  d.nums("jnt_pos", m.jnt_pos, mj->jnt_pos, 3 * m.njnt);
  d.nums("jnt_axis", m.jnt_axis, mj->jnt_axis, 3 * m.njnt);
  d.ints("jnt_limited", m.jnt_limited, mj->jnt_limited, m.njnt);
  d.nums("jnt_range", m.jnt_range, mj->jnt_range, 2 * m.njnt);
  d.nums("jnt_stiffness", m.jnt_stiffness, mj->jnt_stiffness, m.njnt);

  d.ints("dof_bodyid", m.dof_bodyid, mj->dof_bodyid, m.nv);
  d.ints("dof_jntid", m.dof_jntid, mj->dof_jntid, m.nv);
  d.ints("dof_parentid", m.dof_parentid, mj->dof_parentid, m.nv);
  d.nums("dof_damping", m.dof_damping, mj->dof_damping, m.nv);
  d.nums("dof_armature", m.dof_armature, mj->dof_armature, m.nv);

  d.ints("geom_type", m.geom_type, mj->geom_type, m.ngeom);
  d.ints("geom_bodyid", m.geom_bodyid, mj->geom_bodyid, m.ngeom);
  d.nums("geom_size", m.geom_size, mj->geom_size, 3 * m.ngeom);
  d.nums("geom_pos", m.geom_pos, mj->geom_pos, 3 * m.ngeom);
  d.nums("geom_quat", m.geom_quat, mj->geom_quat, 4 * m.ngeom);
  d.nums("geom_friction", m.geom_friction, mj->geom_friction, 3 * m.ngeom);
  d.ints("geom_condim", m.geom_condim, mj->geom_condim, m.ngeom);
  d.nums("geom_margin", m.geom_margin, mj->geom_margin, m.ngeom);
  d.ints("geom_contype", m.geom_contype, mj->geom_contype, m.ngeom);
  d.ints("geom_conaffinity", m.geom_conaffinity, mj->geom_conaffinity, m.ngeom);
  d.ints("geom_rgba", m.geom_rgba, mj->geom_rgba, 4 * m.ngeom);  // floats, bit for bit

  d.ints("site_bodyid", m.site_bodyid, mj->site_bodyid, m.nsite);
  d.nums("site_pos", m.site_pos, mj->site_pos, 3 * m.nsite);
  d.nums("site_quat", m.site_quat, mj->site_quat, 4 * m.nsite);

  // Actuators: MuJoCo's general actuator form. motor: gain 1, no bias; position: gain kp, bias
  // (0, -kp, -kv); velocity: gain kv, bias (0, 0, -kv). Joint transmission, gear[0].
  d.ints("actuator_trnid", m.actuator_trnid, mj->actuator_trnid, m.nu, 2);
  if (m.actuator_kind.size() == static_cast<size_t>(m.nu) && m.actuator_kp.size() == static_cast<size_t>(m.nu) &&
      m.actuator_kv.size() == static_cast<size_t>(m.nu) && m.actuator_gear.size() == static_cast<size_t>(m.nu)) {
    for (int u = 0; u < m.nu; ++u) {
      d.exact("actuator_trntype (joint)", u, mjTRN_JOINT, mj->actuator_trntype[u]);
      d.exact("actuator_dyntype (none)", u, mjDYN_NONE, mj->actuator_dyntype[u]);
      d.exact("actuator_gaintype (fixed)", u, mjGAIN_FIXED, mj->actuator_gaintype[u]);
      d.num("actuator_gear", u, m.actuator_gear[u], mj->actuator_gear[6 * u]);
      const double* gain = mj->actuator_gainprm + mjNGAIN * u;
      const double* bias = mj->actuator_biasprm + mjNBIAS * u;
      switch (m.actuator_kind[u]) {
        case kActMotor:
          d.exact("actuator_biastype (motor: none)", u, mjBIAS_NONE, mj->actuator_biastype[u]);
          d.num("actuator gain (motor: 1)", u, 1.0, gain[0]);
          d.num("actuator_kp (motor: 0)", u, m.actuator_kp[u], 0.0);
          d.num("actuator_kv (motor: 0)", u, m.actuator_kv[u], 0.0);
          break;
        case kActPosition:
          d.exact("actuator_biastype (position: affine)", u, mjBIAS_AFFINE, mj->actuator_biastype[u]);
          d.num("actuator_kp (gainprm[0])", u, m.actuator_kp[u], gain[0]);
          d.num("actuator_kp (-biasprm[1])", u, m.actuator_kp[u], -bias[1]);
          d.num("actuator_kv (-biasprm[2])", u, m.actuator_kv[u], -bias[2]);
          break;
        case kActVelocity:
          d.exact("actuator_biastype (velocity: affine)", u, mjBIAS_AFFINE, mj->actuator_biastype[u]);
          d.num("actuator_kv (gainprm[0])", u, m.actuator_kv[u], gain[0]);
          d.num("actuator_kv (-biasprm[2])", u, m.actuator_kv[u], -bias[2]);
          d.num("actuator biasprm[1] (velocity: 0)", u, 0.0, bias[1]);
          d.num("actuator_kp (velocity: 0)", u, m.actuator_kp[u], 0.0);
          break;
        default:
          d.note("actuator_kind[" + std::to_string(u) + "]: unknown kind");
      }
    }
  } else {
    d.note("actuator arrays: wrong sizes");
  }
  d.ints("actuator_ctrllimited", m.actuator_ctrllimited, mj->actuator_ctrllimited, m.nu);
  d.nums("actuator_ctrlrange", m.actuator_ctrlrange, mj->actuator_ctrlrange, 2 * m.nu);
  d.ints("actuator_forcelimited", m.actuator_forcelimited, mj->actuator_forcelimited, m.nu);
  d.nums("actuator_forcerange", m.actuator_forcerange, mj->actuator_forcerange, 2 * m.nu);

  d.nums("key_time", m.key_time, mj->key_time, m.nkey);
  d.nums("key_qpos", m.key_qpos, mj->key_qpos, m.nkey * m.nq);
  d.nums("key_qvel", m.key_qvel, mj->key_qvel, m.nkey * m.nv);
  d.nums("key_ctrl", m.key_ctrl, mj->key_ctrl, m.nkey * m.nu);
  {  // key_act: ours per actuator (0 where stateless), MuJoCo's per activation (na)
    std::vector<double> act;
    for (int k = 0; k < m.nkey; ++k)
      for (int u = 0; u < m.nu && static_cast<int>(m.key_act.size()) == m.nkey * m.nu; ++u)
        if (m.actuator_dyntype[u] != kDynNone) act.push_back(m.key_act[static_cast<size_t>(k * m.nu + u)]);
    d.nums("key_act", act, mj->key_act, m.nkey * mj->na);
  }
  d.nums("qpos0", m.qpos0, mj->qpos0, m.nq);
  d.nums("qpos_spring", m.qpos_spring, mj->qpos_spring, m.nq);

  auto names = [&](const char* field, const std::vector<std::string>& ours, int type, int n) {
    if (static_cast<int>(ours.size()) != n) return d.size(field, static_cast<int>(ours.size()), n);
    for (int i = 0; i < n; ++i) d.text(field, i, ours[i], mj_name(mj, type, i));
  };
  names("body_name", m.body_name, mjOBJ_BODY, m.nbody);
  names("jnt_name", m.jnt_name, mjOBJ_JOINT, m.njnt);
  names("geom_name", m.geom_name, mjOBJ_GEOM, m.ngeom);
  names("site_name", m.site_name, mjOBJ_SITE, m.nsite);
  names("actuator_name", m.actuator_name, mjOBJ_ACTUATOR, m.nu);
  names("key_name", m.key_name, mjOBJ_KEY, m.nkey);
  return d.out();
}

std::string joined(const std::vector<std::string>& lines, size_t max_lines = 25) {
  std::string s;
  for (size_t i = 0; i < lines.size() && i < max_lines; ++i) s += "\n  " + lines[i];
  if (lines.size() > max_lines) s += "\n  ... " + std::to_string(lines.size() - max_lines) + " more";
  return s;
}

// Compiles a file both ways; ADD_FAILUREs on any difference.
void expect_same_as_mujoco(const std::string& path) {
  std::string error;
  const MjModelPtr mj = mujoco_load(path, &error);
  ASSERT_TRUE(mj) << "MuJoCo refused " << path << ": " << error;
  const Model ours = load_mjcf(path);
  const std::vector<std::string> diff = compare_with_mujoco(ours, mj.get());
  EXPECT_TRUE(diff.empty()) << path << ": " << diff.size() << " differences from MuJoCo:" << joined(diff);
}

#define RLT_REQUIRE_MUJOCO() (void)0
#else
#define RLT_REQUIRE_MUJOCO() GTEST_SKIP() << "MuJoCo (libmujoco-dev) not found at build time"
#endif

// ---- every data file, compared with MuJoCo -----------------------------------------------------

class MjcfFile : public ::testing::TestWithParam<std::string> {};

TEST_P(MjcfFile, CompilesLikeMuJoCo) {
  RLT_REQUIRE_MUJOCO();
#if RLT_TEST_MUJOCO
  const std::string path = data_path(GetParam());
  // MuJoCo 3 features (actuator dynamics, integrators, tendons' two-value springlength):
  // libmujoco-dev here is 2.2.2; those files are checked against MuJoCo 3.17 by the mujoco_peer_act_*
  // and mujoco_peer_tendon_* tests (tools/mujoco_peer.py).
  if (GetParam().rfind("act_", 0) == 0 || GetParam().rfind("tendon_", 0) == 0)
    GTEST_SKIP() << "MuJoCo 3 file, checked by mujoco_peer_" << GetParam();
  // Meshes: MuJoCo 2.2.2's mesh volume and inertia differ from MuJoCo 3's (which we follow); these
  // files are checked against MuJoCo 3.17 by tests/sim/test_mjcf_mesh.cpp and mujoco_peer_mesh_*.
  if (GetParam().rfind("mesh_", 0) == 0 || GetParam().rfind("multiccd_", 0) == 0)
    GTEST_SKIP() << "MuJoCo 3 meshes, checked by test_mjcf_mesh.cpp and mujoco_peer_" << GetParam();
  // Height fields from PNG: 2.2.2 sizes the geom differently (geom_size[2] 0.15 against MuJoCo 3.17's
  // 0.0875, which we follow); checked against MuJoCo 3.17 by mujoco_peer_hfield_png.
  if (GetParam() == "hfield_png.xml") GTEST_SKIP() << "MuJoCo 3 height field, checked by mujoco_peer_hfield_png";
  std::string error;
  if (!mujoco_load(path, &error)) {
    // An attribute of MuJoCo 3 that 2.2.2's schema does not know (actuatorfrcrange, ls_iterations,
    // the spring/damper flags, ...): such files are checked against MuJoCo 3 by their peer tests.
    if (error.find("Schema violation: unrecognized attribute") != std::string::npos)
      GTEST_SKIP() << "MuJoCo 2.2.2 predates an attribute of " << path << " (" << error << ")";
    // A data file MuJoCo refuses must be refused here as well (the dynamics tests' files included).
    EXPECT_THROW(load_mjcf(path), MjcfError) << "MuJoCo refuses " << path << " (" << error << ") but we compile it";
    return;
  }
  expect_same_as_mujoco(path);
#endif
}

std::string file_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - 4);
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(DataFiles, MjcfFile, ::testing::ValuesIn(data_files()), file_test_name);

TEST(MjcfData, OurFilesAreThere) {
  // The comparison above is parametrized by the directory listing: make sure it is not empty.
  const std::vector<std::string> files = data_files();
  for (const char* f : kOurFiles) {
    EXPECT_NE(std::find(files.begin(), files.end(), f), files.end()) << f;
  }
}

// ---- inline variants: accepted by both and equal, or refused by both ---------------------------

struct Variant {
  const char* name;
  const char* xml;  // the contents of <mujoco>
};

std::string wrap(const char* body) { return std::string("<mujoco>") + body + "</mujoco>"; }

const Variant kAccepted[] = {
    {"single_box_keeps_its_frame",
     "<worldbody><body><joint/><geom type='box' size='.3 .2 .1' euler='10 20 30'/></body></worldbody>"},
    {"two_boxes_sorted_axes",
     "<worldbody><body><joint/><geom type='box' size='.3 .2 .1'/><geom type='box' size='.1 .1 .1' pos='0 0 "
     ".5'/></body></worldbody>"},
    {"two_spheres_degenerate",
     "<worldbody><body><joint/><geom size='.1' pos='-.2 0 0'/><geom size='.1' pos='.2 0 0'/></body></worldbody>"},
    {"capsules_every_direction",
     "<worldbody><body><joint/><geom type='capsule' size='.1' fromto='0 0 0 0 0 -1'/><geom type='capsule' size='.1' "
     "fromto='0 0 0 0 0 1'/><geom type='capsule' size='.1 .3 .4' fromto='0 0 0 1 1 1'/><geom type='capsule' size='.1' "
     "fromto='0 0 0 1e-11 0 -1'/></body></worldbody>"},
    {"box_fromto", "<worldbody><body><joint/><geom type='box' size='.1 .2' fromto='0 0 0 0 1 0'/></body></worldbody>"},
    {"orientation_forms",
     "<compiler eulerseq='zyX'/><worldbody><body euler='10 20 30'><joint/><geom size='.1' euler='10 20 30'/><geom "
     "size='.1' axisangle='1 1 0 30'/><geom size='.1' xyaxes='1 1 0 0 1 1'/><geom size='.1' zaxis='0 0 -1'/><geom "
     "size='.1' zaxis='1 0 0'/><geom size='.1' quat='1 1 1 1'/><geom size='.1' quat='-1 0 0 0'/></body></worldbody>"},
    {"extrinsic_euler_radian",
     "<compiler angle='radian' eulerseq='XYZ'/><worldbody><body euler='0.1 0.2 0.3'><joint range='-1 1' limited='true' "
     "ref='0.5'/><geom size='.1' axisangle='0 0 1 1.5'/></body></worldbody>"},
    {"massless_parent_welded_child",
     "<worldbody><body><joint/><body pos='1 0 0'><geom size='0.1'/></body></body></worldbody>"},
    {"massless_welded_leaf", "<worldbody><body><joint/><geom size='0.1'/><body pos='1 0 0'/></body></worldbody>"},
    {"static_massless",
     "<worldbody><body pos='0 0 1' euler='0 0 30'><body pos='1 2 3' euler='10 0 0'/></body></worldbody>"},
    {"plane_in_static_body",
     "<worldbody><body pos='0 0 1'><geom type='plane' size='1 1 1' pos='1 2 3' euler='10 0 0'/></body></worldbody>"},
    {"plane_has_no_mass",
     "<worldbody><body pos='0 0 1'><geom type='plane' size='1 1 1' mass='3'/><geom size='0.1'/></body></worldbody>"},
    {"group_outside_inertia_range",
     "<worldbody><body pos='0 0 1'><geom size='.1' group='6'/><geom size='.2' pos='1 0 0'/></body></worldbody>"},
    {"inertiafromgeom_false",
     "<compiler inertiafromgeom='false'/><worldbody><body><joint/><inertial pos='1 0 0' mass='2' diaginertia='1 1 "
     "1'/><geom size='.1'/></body></worldbody>"},
    {"inertiafromgeom_true_overrides",
     "<compiler inertiafromgeom='true'/><worldbody><body><joint/><inertial pos='1 1 1' mass='3' diaginertia='1 1 "
     "1'/><geom size='.1'/></body><body><joint/><inertial pos='1 1 1' mass='3' diaginertia='1 1 "
     "1'/></body></worldbody>"},
    {"fullinertia",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='1' fullinertia='1 1 1 0.1 0.2 -0.3'/></body></worldbody>"},
    {"triangle_equality", "<worldbody><body><inertial pos='0 0 0' mass='1' diaginertia='1 1 2'/></body></worldbody>"},
    {"range_zero_without_limited", "<worldbody><body><joint range='0 0'/><geom size='.1'/></body></worldbody>"},
    {"autolimits_class_range",
     "<compiler autolimits='true'/><default><joint range='-1 1'/></default><worldbody><body><joint/><geom "
     "size='.1'/></body></worldbody>"},
    {"unlimited_range_degrees",
     "<worldbody><body><joint range='-30 30' limited='false' ref='10'/><joint type='slide' range='-1 2' "
     "limited='false' ref='0.3'/><geom size='.1'/></body></worldbody>"},
    {"nested_default_order",
     "<default><default class='a'><joint axis='1 0 0'/></default><joint axis='0 1 0' "
     "damping='3'/></default><worldbody><body><joint class='a'/><geom size='.1'/></body></worldbody>"},
    {"two_top_level_defaults",
     "<default class='main'><joint damping='1'/></default><default><joint armature='2'/><default "
     "class='a'/></default><worldbody><body><joint class='a'/><geom size='.1'/></body></worldbody>"},
    {"childclass_and_main",
     "<default><joint damping='3'/><default class='a'><joint axis='1 0 0'/></default></default><worldbody><body "
     "childclass='a'><joint/><geom size='.1'/><body><joint class='main'/><geom size='.1'/></body></body></worldbody>"},
    {"freejoint_ignores_defaults",
     "<default><joint damping='3' armature='.5' pos='1 2 3' type='slide'/></default><worldbody><body pos='1 2 3' "
     "quat='0 1 0 0'><freejoint/><geom size='.1'/></body></worldbody>"},
    {"actuator_gain_defaults",
     "<default><velocity kv='5'/><default class='a'><motor gear='3'/></default></default><worldbody><body><joint "
     "name='h'/><geom size='.1'/></body></worldbody><actuator><position joint='h'/><motor joint='h'/><velocity "
     "joint='h'/><position class='a' joint='h'/><velocity class='a' joint='h'/></actuator>"},
    {"ball_then_slide",
     "<worldbody><body><joint type='ball'/><joint type='slide'/><geom size='.1'/></body></worldbody>"},
    {"hinge_then_ball", "<worldbody><body><joint/><joint type='ball'/><geom size='.1'/></body></worldbody>"},
    {"six_dofs",
     "<worldbody><body><joint/><joint axis='1 0 0'/><joint axis='0 1 0'/><joint type='slide'/><joint type='slide' "
     "axis='1 0 0'/><joint type='slide' axis='0 1 0'/><geom size='.1'/></body></worldbody>"},
    {"key_defaults",
     "<worldbody><body><freejoint/><geom size='.1'/></body><body><joint type='ball'/><joint type='slide' "
     "ref='.2'/><geom size='.1'/></body></worldbody><keyframe><key qvel='1 2 3 4 5 6 7 8 9 10'/><key time='2' "
     "name='k'/></keyframe>"},
    {"mass_check_passes_welded_child",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='1' diaginertia='1e-20 1e-20 1e-20'/><body><inertial pos='0 "
     "0 0' mass='1' diaginertia='1 1 1'/></body></body></worldbody>"},
    {"mass_check_at_minval",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='1' diaginertia='1e-20 1e-20 1e-20'/><body><inertial pos='0 "
     "0 0' mass='1e-15' diaginertia='1 1 1'/></body></body></worldbody>"},
    {"unlimited_reversed_ctrlrange_and_six_gears",
     "<worldbody><body><joint name='h'/><geom size='.1'/></body></worldbody><actuator><motor joint='h' ctrlrange='1 "
     "-1' ctrllimited='false' gear='2 3 4 5 6 7'/></actuator>"},
    {"contact_parameters",
     "<custom><numeric name='rltrain/soft_constraints' size='1' data='1'/>"
     "<numeric name='user_gain' size='3' data='1 2 3'/><text name='note' data='hello'/></custom>"
     "<default><geom margin='0.01' condim='1'/></default>"
     "<worldbody><geom type='plane' size='1 1 1' condim='1'/><body><freejoint/><geom size='.1' margin='0.05' "
     "condim='3' friction='1 0.02 0.001'/>"
     "<geom type='box' size='.1 .1 .1' pos='0 0 1'/></body></worldbody>"},
    // Joint springs: stiffness and springref from nested default classes, overridden per joint;
    // springref in degrees for hinges (not slides); free and ball springs rest at qpos0 (MuJoCo
    // ignores their springref); <freejoint> takes no defaults.
    {"joint_springs",
     "<default><joint stiffness='3' springref='10'/><default class='a'><joint stiffness='7' damping='1'/>"
     "<default class='b'><joint springref='-20'/></default></default></default>"
     "<worldbody><body><joint ref='5'/><joint class='a' axis='1 0 0'/><joint class='b' axis='0 1 0' stiffness='0.5'/>"
     "<joint type='slide' springref='0.3'/><joint type='slide' class='b'/><geom size='.1'/></body>"
     "<body><joint type='ball' springref='5' stiffness='2'/><geom size='.1'/></body>"
     "<body pos='1 2 3' quat='0 1 1 0'><joint type='free' stiffness='4' springref='1'/><geom size='.1'/></body>"
     "<body><freejoint/><geom size='.1'/></body></worldbody>"},
    {"joint_springs_radian",
     "<compiler angle='radian'/><default class='main'><joint stiffness='2' springref='0.5'/></default>"
     "<worldbody><body childclass='main'><joint/><joint type='slide' springref='-0.25'/><geom "
     "size='.1'/></body></worldbody>"},
    {"mass_check_jointless_parent",
     "<worldbody><body><inertial pos='0 0 0' mass='0' diaginertia='0 0 0'/><body><joint/><inertial pos='0 0 0' "
     "mass='1' diaginertia='1 1 1'/></body></body></worldbody>"},
};

class MjcfAccepted : public ::testing::TestWithParam<Variant> {};

TEST_P(MjcfAccepted, CompilesLikeMuJoCo) {
  const std::string xml = wrap(GetParam().xml);
  ASSERT_EQ(error_of(xml), "") << "MuJoCo 2.2.2 compiles this; we must too";
#if RLT_TEST_MUJOCO  // without MuJoCo, only the line above: the list stands as recorded from it
  const TempFile file(xml);
  expect_same_as_mujoco(file.path());
#endif
}

INSTANTIATE_TEST_SUITE_P(Variants, MjcfAccepted, ::testing::ValuesIn(kAccepted),
                         [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

// Each of these is refused by MuJoCo 2.2.2 (checked here) and must be refused by us.
const Variant kRefused[] = {
    {"range_without_limited",
     "<compiler autolimits='false'/><worldbody><body><joint range='-30 30'/><geom size='.1'/></body></worldbody>"},
    {"class_range_without_limited",
     "<compiler autolimits='false'/><default><joint range='-1 1'/></default><worldbody><body><joint/><geom "
     "size='.1'/></body></worldbody>"},
    {"ctrlrange_without_ctrllimited",
     "<compiler autolimits='false'/><worldbody><body><joint name='h'/><geom "
     "size='.1'/></body></worldbody><actuator><motor joint='h' ctrlrange='-1 1'/></actuator>"},
    {"forcerange_without_forcelimited",
     "<compiler autolimits='false'/><worldbody><body><joint name='h'/><geom "
     "size='.1'/></body></worldbody><actuator><motor joint='h' forcerange='-1 1'/></actuator>"},
    {"free_joint_below_root",
     "<worldbody><body><joint/><geom size='.1'/><body><freejoint/><geom size='.1'/></body></body></worldbody>"},
    {"free_joint_plus_hinge", "<worldbody><body><freejoint/><joint/><geom size='.1'/></body></worldbody>"},
    {"ball_then_hinge", "<worldbody><body><joint type='ball'/><joint/><geom size='.1'/></body></worldbody>"},
    {"ball_then_ball", "<worldbody><body><joint type='ball'/><joint type='ball'/><geom size='.1'/></body></worldbody>"},
    {"ball_slide_hinge",
     "<worldbody><body><joint type='ball'/><joint type='slide'/><joint/><geom size='.1'/></body></worldbody>"},
    {"massless_moving_body", "<worldbody><body><joint/><geom size='0.1' mass='0'/></body></worldbody>"},
    {"massless_body_moving_child",
     "<worldbody><body><joint/><body><joint/><geom size='0.1'/></body></body></worldbody>"},
    {"zero_inertia_moving_body",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 1e-20'/></body></worldbody>"},
    {"mass_check_massless_child",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='1' diaginertia='1e-20 1e-20 1e-20'/><body><inertial pos='0 "
     "0 0' mass='0' diaginertia='1 1 1'/></body></body></worldbody>"},
    {"mass_check_grandchild",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='1' diaginertia='1e-20 1e-20 1e-20'/><body><body><inertial "
     "pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></body></body></worldbody>"},
    {"mass_check_below_minval",
     "<worldbody><body><joint/><inertial pos='0 0 0' mass='0.5e-15' diaginertia='1 1 1'/><body><inertial pos='0 0 0' "
     "mass='0.6e-15' diaginertia='1 1 1'/></body></body></worldbody>"},
    {"geoms_without_mass",
     "<worldbody><body><joint/><geom size='0.1' mass='0'/><geom size='0.1' mass='0'/></body></worldbody>"},
    {"plane_in_moving_body",
     "<worldbody><body><joint/><geom size='0.1'/><geom type='plane' size='1 1 1'/></body></worldbody>"},
    {"plane_zero_spacing", "<worldbody><geom type='plane' size='1 1 0'/></worldbody>"},
    {"sphere_zero_size", "<worldbody><geom size='0'/></worldbody>"},
    {"box_zero_size", "<worldbody><geom type='box' size='1 1 0'/></worldbody>"},
    {"fromto_too_close",
     "<worldbody><body><joint/><geom type='capsule' size='.1' fromto='0 0 0 0 0 1e-7'/></body></worldbody>"},
    {"fromto_on_sphere", "<worldbody><body><joint/><geom size='.1' fromto='0 0 0 0 0 1'/></body></worldbody>"},
    {"fromto_and_pos",
     "<worldbody><body><joint/><geom type='capsule' size='.1' fromto='0 0 0 0 0 1' pos='1 1 1'/></body></worldbody>"},
    {"ball_range_from_nonzero",
     "<worldbody><body><joint type='ball' range='-10 30' limited='true'/><geom size='.1'/></body></worldbody>"},
    {"range_reversed", "<worldbody><body><joint range='30 -10' limited='true'/><geom size='.1'/></body></worldbody>"},
    {"triangle_inequality",
     "<worldbody><body><inertial pos='0 0 0' mass='1' diaginertia='1 1 2.00000000000001'/></body></worldbody>"},
    {"fullinertia_not_positive",
     "<worldbody><body><inertial pos='0 0 0' mass='1' fullinertia='1 1 0 0 0 0'/></body></worldbody>"},
    {"inertial_without_pos", "<worldbody><body><joint/><inertial mass='1' diaginertia='1 1 1'/></body></worldbody>"},
    {"two_orientations", "<worldbody><body euler='0 0 1' quat='1 0 0 0'><joint/><geom size='.1'/></body></worldbody>"},
    {"joint_in_world", "<worldbody><joint/></worldbody>"},
    {"duplicate_joint", "<worldbody><body><joint name='h'/><joint name='h'/><geom size='.1'/></body></worldbody>"},
    {"duplicate_body", "<worldbody><body name='b'><joint/><geom size='.1'/></body><body name='b'/></worldbody>"},
    {"key_qpos_size",
     "<worldbody><body><joint/><geom size='.1'/></body></worldbody><keyframe><key qpos='1 2'/></keyframe>"},
    {"ctrlrange_reversed",
     "<worldbody><body><joint name='h'/><geom size='.1'/></body></worldbody><actuator><motor joint='h' "
     "ctrllimited='true' ctrlrange='1 -1'/></actuator>"},
    {"ctrllimited_without_range",
     "<worldbody><body><joint name='h'/><geom size='.1'/></body></worldbody><actuator><motor joint='h' "
     "ctrllimited='true'/></actuator>"},
    {"forcerange_reversed",
     "<worldbody><body><joint name='h'/><geom size='.1'/></body></worldbody><actuator><motor joint='h' "
     "forcelimited='true' forcerange='1 -1'/></actuator>"},
    {"rgba_short", "<worldbody><geom size='1' rgba='1 0 0'/></worldbody>"},
    {"condim_2", "<worldbody><geom size='1' condim='2'/></worldbody>"},
    {"numeric_without_name", "<custom><numeric data='1'/></custom><worldbody/>"},
};

class MjcfRefused : public ::testing::TestWithParam<Variant> {};

TEST_P(MjcfRefused, RefusedByBoth) {
  const std::string xml = wrap(GetParam().xml);
  EXPECT_NE(error_of(xml), "") << "we compile what MuJoCo refuses: " << xml;
#if RLT_TEST_MUJOCO  // without MuJoCo, the list stands as recorded from MuJoCo 2.2.2
  const TempFile file(xml);
  std::string error;
  EXPECT_FALSE(mujoco_load(file.path(), &error)) << "MuJoCo accepts " << xml;
#endif
}

INSTANTIATE_TEST_SUITE_P(Variants, MjcfRefused, ::testing::ValuesIn(kRefused),
                         [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

// ---- the comparison itself finds planted differences -------------------------------------------

TEST(MjcfMutation, ComparisonCatchesEachPlantedDifference) {
  RLT_REQUIRE_MUJOCO();
#if RLT_TEST_MUJOCO
  const std::string path = data_path("features.xml");
  std::string error;
  const MjModelPtr mj = mujoco_load(path, &error);
  ASSERT_TRUE(mj) << error;
  const Model base = load_mjcf(path);
  ASSERT_TRUE(compare_with_mujoco(base, mj.get()).empty());
  struct Mutation {
    const char* what;
    std::function<void(Model&)> apply;
  };
  const Mutation mutations[] = {
      {"body_mass", [](Model& m) { m.body_mass[2] *= 1 + 1e-6; }},
      {"body_ipos", [](Model& m) { m.body_ipos[3 * 3 + 1] += 1e-6; }},
      {"body_iquat", [](Model& m) { m.body_iquat[4 * 1 + 0] = -m.body_iquat[4 * 1 + 0]; }},
      {"body_inertia", [](Model& m) { std::swap(m.body_inertia[3 * 4], m.body_inertia[3 * 4 + 1]); }},
      {"body_quat", [](Model& m) { m.body_quat[4 * 2 + 1] += 1e-6; }},
      {"jnt_axis", [](Model& m) { m.jnt_axis[3 * 2] = -m.jnt_axis[3 * 2]; }},
      {"jnt_range", [](Model& m) { m.jnt_range[2 * 1] *= 180 / kPi; }},
      {"jnt_limited", [](Model& m) { m.jnt_limited[0] ^= 1; }},
      {"dof_parentid", [](Model& m) { m.dof_parentid[3] = -1; }},
      {"dof_damping", [](Model& m) { m.dof_damping[0] += 1e-6; }},
      {"jnt_stiffness", [](Model& m) { m.jnt_stiffness[1] += 1e-6; }},
      {"qpos_spring", [](Model& m) { m.qpos_spring[m.nq - 1] += 1e-6; }},
      {"geom_quat",
       [](Model& m) {
         const auto g = std::find(m.geom_name.begin(), m.geom_name.end(), "thigh_pad") - m.geom_name.begin();
         m.geom_quat[4 * g + 2] = -m.geom_quat[4 * g + 2];  // the box tilts about y: this component is not 0
       }},
      {"geom_size", [](Model& m) { m.geom_size[3 * 3 + 1] *= 2; }},
      {"geom_rgba", [](Model& m) { m.geom_rgba[1] += 1e-3f; }},
      {"actuator_kp", [](Model& m) { m.actuator_kp[1] = 31; }},
      {"actuator_gear", [](Model& m) { m.actuator_gear[0] = 1; }},
      {"key_qpos", [](Model& m) { m.key_qpos[m.nq + 2] += 1e-6; }},
      {"qpos0", [](Model& m) { m.qpos0[0] = 0; }},
      {"jnt_name", [](Model& m) { m.jnt_name[1] = "hip2"; }},
      {"nsite", [](Model& m) { m.nsite = 0; }},
  };
  for (const Mutation& mu : mutations) {
    Model changed = base;
    mu.apply(changed);
    const std::vector<std::string> diff = compare_with_mujoco(changed, mj.get());
    EXPECT_FALSE(diff.empty()) << "a change to " << mu.what << " went unnoticed";
  }
#endif
}

// ---- bad input: one line naming file, line and element ----------------------------------------

TEST(MjcfErrors, MalformedXmlNamesTheLine) {
  const std::string xml =
      "<mujoco>\n  <worldbody>\n    <body>\n      <geom size='.1'>\n    </body>\n  </worldbody>\n</mujoco>\n";
  const std::string msg = error_of(xml, "robot.xml");
  // tinyxml2 names the element left open: the geom on line 4
  EXPECT_TRUE(starts_with(msg, "robot.xml:4: xml: malformed XML (XML_ERROR_MISMATCHED_ELEMENT)")) << msg;
  EXPECT_NE(msg.find("geom"), std::string::npos) << msg;
  const std::string quote =
      error_of("<mujoco>\n<worldbody>\n\n<body pos='0 0 1>\n</body></worldbody></mujoco>", "q.xml");
  EXPECT_TRUE(starts_with(quote, "q.xml:4: xml: malformed XML")) << quote;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(MjcfErrors, UnknownElement) {
  const std::string xml = "<mujoco>\n  <worldbody/>\n  <tendons>\n  </tendons>\n</mujoco>";
  const std::string msg = error_of(xml, "a.xml");
  EXPECT_TRUE(starts_with(msg, "a.xml:3: tendons: unsupported element in <mujoco>")) << msg;
  const std::string in_body =
      error_of("<mujoco><worldbody>\n<body name='torso'>\n<composite/></body></worldbody></mujoco>");
  EXPECT_TRUE(
      starts_with(in_body, "test.xml:3: composite: unsupported element in <body> (supported: body, inertial, joint"))
      << in_body;
  const std::string equality = error_of("<mujoco>\n<equality><flex flex='a'/></equality></mujoco>");
  EXPECT_TRUE(starts_with(equality, "test.xml:2: flex: equality \"flex\" is not supported yet")) << equality;
  const std::string nested =
      error_of("<mujoco><worldbody><body><joint name='j'>\n<geom size='1'/></joint></body></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(nested, "test.xml:2: geom: unsupported element in <joint> (it takes no child elements)"))
      << nested;
  const std::string sensor = error_of("<mujoco><worldbody/>\n\n<sensor><rangefinder camera='c'/></sensor></mujoco>");
  EXPECT_TRUE(starts_with(sensor, "test.xml:3: rangefinder: attribute \"camera\": camera rangefinders are not supported"))
      << sensor;
  const std::string tendon_default = error_of("<mujoco><default>\n<flex width='1'/></default></mujoco>");
  EXPECT_TRUE(starts_with(tendon_default, "test.xml:2: flex: unsupported element in <default>")) << tendon_default;
  // visual-only sections and elements are skipped whatever they hold
  EXPECT_EQ(
      error_of("<mujoco><visual><quality shadowsize='0'/></visual><asset><material name='m' rgba='1 0 0 1'/></asset>"
               "<worldbody><light pos='0 0 1'/><camera name='c' pos='0 0 1'/></worldbody></mujoco>"),
      "");
}

TEST(MjcfErrors, UnsupportedAttributeListsTheSupportedOnes) {
  const std::string msg =
      error_of("<mujoco><worldbody><body>\n<joint name='hip' stifness='3'/></body></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(msg, "test.xml:2: joint hip: unsupported attribute \"stifness\" (supported: ")) << msg;
  EXPECT_NE(msg.find("damping"), std::string::npos) << msg;
  // a physics attribute away from its default is unsupported too
  const std::string fuse = error_of("<mujoco>\n\n<compiler fusestatic='true'/><worldbody/></mujoco>");
  EXPECT_TRUE(starts_with(fuse, "test.xml:3: compiler: attribute \"fusestatic\"")) << fuse;
  EXPECT_NE(fuse.find("not supported"), std::string::npos) << fuse;
  EXPECT_EQ(error_of("<mujoco><compiler fusestatic='false'/><worldbody><body><joint/><geom size='1'/></body></worldbody>"
                     "</mujoco>"),
            "");
}

TEST(MjcfErrors, NegativeStiffness) {
  const std::string msg = error_of(
      "<mujoco><worldbody><body>\n<joint name='knee' stiffness='-3'/><geom size='1'/></body></worldbody></mujoco>",
      "robot.xml");
  EXPECT_TRUE(starts_with(msg, "robot.xml:2: joint knee: attribute \"stiffness\" must be non-negative")) << msg;
  const std::string cls =
      error_of("<mujoco><default>\n\n<joint stiffness='-1e-9'/></default><worldbody/></mujoco>", "robot.xml");
  EXPECT_TRUE(starts_with(cls, "robot.xml:3: joint: attribute \"stiffness\" must be non-negative")) << cls;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(
      error_of(
          "<mujoco><worldbody><body><joint stiffness='0' springref='-7'/><geom size='1'/></body></worldbody></mujoco>"),
      "");
}

TEST(MjcfErrors, UnsupportedGeomType) {
  const std::string msg = error_of("<mujoco><worldbody>\n<geom name='s' type='sdf'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(msg, "test.xml:2: geom s: geom type \"sdf\" is not supported")) << msg;
  // height fields are supported (tests/sim/test_hfield.cpp); one naming no hfield is refused
  const std::string hf =
      error_of("<mujoco><worldbody>\n<geom name='hf' type='hfield' hfield='h'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(hf, "test.xml:2: geom hf: hfield \"h\" is not defined in <asset>")) << hf;
  // mesh geoms are supported (tests/sim/test_mjcf_mesh.cpp); one naming no mesh is refused
  const std::string mesh = error_of("<mujoco><worldbody>\n<geom type='mesh' mesh='m'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(mesh, "test.xml:2: geom: mesh \"m\" not found")) << mesh;
}

TEST(MjcfErrors, BadNumbers) {
  const std::string msg = error_of("<mujoco><worldbody>\n<body name='b' pos='0 0 1x'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(msg, "test.xml:2: body b: attribute \"pos\": \"1x\" is not a finite number")) << msg;
  const std::string count = error_of("<mujoco><worldbody>\n<body pos='0 0'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(count, "test.xml:2: body: attribute \"pos\": expected 3 numbers, got 2")) << count;
  const std::string nan = error_of("<mujoco>\n<option timestep='nan'/></mujoco>");
  EXPECT_TRUE(starts_with(nan, "test.xml:2: option: attribute \"timestep\": \"nan\" is not a finite number")) << nan;
  const std::string integer = error_of("<mujoco><worldbody>\n<geom size='1' contype='1.5'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(integer, "test.xml:2: geom: attribute \"contype\": \"1.5\" is not an integer")) << integer;
  const std::string word = error_of("<mujoco>\n<compiler angle='degrees'/></mujoco>");
  EXPECT_TRUE(starts_with(word, "test.xml:2: compiler: attribute \"angle\": \"degrees\" is not one of degree, radian"))
      << word;
}

TEST(MjcfErrors, ActuatorJointMissing) {
  const std::string base =
      "<mujoco><worldbody><body><joint name='hip'/><geom size='.1'/></body></worldbody>\n<actuator>\n";
  const std::string unknown = error_of(base + "<motor name='m' joint='knee'/></actuator></mujoco>");
  EXPECT_TRUE(starts_with(unknown, "test.xml:3: motor m: unknown joint \"knee\"")) << unknown;
  const std::string absent = error_of(base + "<position kp='1'/></actuator></mujoco>");
  EXPECT_TRUE(starts_with(absent, "test.xml:3: position: a transmission target is required")) << absent;
  const std::string tendon = error_of(base + "<motor tendon='t'/></actuator></mujoco>");
  EXPECT_TRUE(starts_with(tendon, "test.xml:3: motor: unknown tendon \"t\"")) << tendon;
}

TEST(MjcfErrors, DuplicateNames) {
  const std::string msg = error_of(
      "<mujoco><worldbody>\n<body name='leg'><joint/><geom size='.1'/></body>\n<body name='leg'><joint/><geom "
      "size='.1'/></body></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(msg, "test.xml:3: body leg: duplicate body name \"leg\" (first at line 2)")) << msg;
  const std::string world = error_of("<mujoco><worldbody>\n<body name='world'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(world, "test.xml:2: body world: duplicate body name \"world\" (the world body)")) << world;
  // names are unique per object type only
  EXPECT_EQ(
      error_of(
          "<mujoco><worldbody><body name='x'><joint name='x'/><geom name='x' size='.1'/></body></worldbody></mujoco>"),
      "");
  const std::string cls = error_of("<mujoco><default>\n<default class='a'/>\n<default class='a'/></default></mujoco>");
  EXPECT_TRUE(starts_with(cls, "test.xml:3: default: duplicate default class \"a\"")) << cls;
}

TEST(MjcfErrors, FreeJointOnlyOnRootChildren) {
  const std::string msg = error_of(
      "<mujoco><worldbody><body name='a'><joint/><geom size='.1'/>\n<body name='b'>\n<freejoint name='float'/><geom "
      "size='.1'/></body></body></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(
      msg, "test.xml:3: freejoint float: a free joint can only be used in a body whose parent is the world"))
      << msg;
  const std::string typed = error_of(
      "<mujoco><worldbody><body><joint/><geom size='.1'/><body>\n<joint type='free'/><geom "
      "size='.1'/></body></body></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(typed, "test.xml:2: joint: a free joint can only be used")) << typed;
}

TEST(MjcfErrors, SemanticErrorsNameTheElement) {
  struct Case {
    const char* xml;
    const char* prefix;
  };
  const Case cases[] = {
      {"<compiler autolimits='false'/><worldbody><body>\n<joint name='j' range='-1 1'/><geom "
       "size='1'/></body></worldbody>",
       "test.xml:2: joint j: has \"range\" but not \"limited\""},
      {"<worldbody><body name='b'>\n<joint/></body></worldbody>", "test.xml:1: body b: a body with joints needs mass"},
      {"<worldbody><body><joint/>\n<geom name='g' type='capsule' size='.1' fromto='0 0 0 0 0 1' euler='0 0 "
       "1'/></body></worldbody>",
       "test.xml:2: geom g: \"fromto\" fixes the orientation"},
      {"<worldbody><body>\n<freejoint/>\n<joint type='ball'/></body></worldbody>",
       "test.xml:3: joint: more than 6 degrees of freedom in one body"},
      {"<worldbody><body>\n<joint type='free' limited='true' range='0 1'/><geom size='1'/></body></worldbody>",
       "test.xml:2: joint: a free joint cannot be limited"},
      {"<worldbody><body>\n<joint name='b' type='ball' range='0 1' limited='true'/>\n<joint name='h'/><geom "
       "size='1'/></body></worldbody>",
       "test.xml:3: joint h: a ball joint followed by a rotation"},
      {"<worldbody><body><joint name='ball' type='ball'/><geom size='1'/></body>"
       "</worldbody>\n<actuator><position joint='ball' inheritrange='1'/></actuator>",
       "test.xml:2: position: inheritrange can only be used with hinge and slide joints"},
      {"<worldbody><body childclass='nope'/></worldbody>", "test.xml:1: body: unknown default class \"nope\""},
      {"<compiler coordinate='global'/>", "test.xml:1: compiler: coordinate=\"global\" is not supported"},
      {"<option integrator='Implicit'/>",
       "test.xml:1: option: attribute \"integrator\": \"Implicit\" is not one of Euler, RK4, implicitfast, implicit"},
      {"<worldbody><body><joint/><geom size='1'/></body></worldbody>\n<keyframe><key name='k' qpos='1 2'/></keyframe>",
       "test.xml:2: key k: attribute \"qpos\": expected 1 numbers (nq), got 2"},
      {"<worldbody><body><joint/><geom size='1'/></body></worldbody>\n<keyframe><key act='1'/></keyframe>",
       "test.xml:2: key: attribute \"act\": expected 0 numbers"},
      {"<worldbody><body>\n<inertial pos='0 0 0' mass='1' diaginertia='1 1 1' fullinertia='1 1 1 0 0 "
       "0'/></body></worldbody>",
       "test.xml:2: inertial: exactly one of \"diaginertia\" and \"fullinertia\" is required"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(wrap(c.xml));
    EXPECT_TRUE(starts_with(msg, c.prefix)) << "got: " << msg << "\nwant: " << c.prefix << "...";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(MjcfErrors, RootMustBeMujoco) {
  const std::string msg = error_of("<robot name='r'/>");
  EXPECT_TRUE(starts_with(msg, "test.xml:1: robot r: the root element must be <mujoco>")) << msg;
  const std::string empty = error_of("");
  EXPECT_TRUE(starts_with(empty, "test.xml:")) << empty;
}

TEST(MjcfErrors, UnreadableFile) {
  const std::string path = data_path("no_such_file.xml");
  try {
    load_mjcf(path);
    FAIL() << "no error for a missing file";
  } catch (const MjcfError& e) {
    EXPECT_TRUE(starts_with(e.what(), path + ":0: mujoco: cannot open the file")) << e.what();
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 0);
  }
}

TEST(MjcfErrors, ErrorCarriesFileLineElement) {
  try {
    parse_mjcf("<mujoco>\n<worldbody>\n<site name='s' pos='1'/></worldbody></mujoco>", "robots/r.xml");
    FAIL() << "no error";
  } catch (const MjcfError& e) {
    EXPECT_EQ(e.file(), "robots/r.xml");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.element(), "site");
  }
}

// ---- hand-computed values (no MuJoCo needed) ---------------------------------------------------

// rltrain's numerics in <custom><numeric name="rltrain/...">: rltrain/soft_constraints = 1 is a
// no-op, anything else and the removed spring-damper parameters stop with file:line: element: what
// (MuJoCo accepts any numeric: these are our rules).
TEST(MjcfErrors, ContactParameterRefusals) {
  auto custom = [](const std::string& numeric) {
    return "<mujoco>\n<custom>\n" + numeric + "\n</custom><worldbody><geom size='1'/></worldbody></mujoco>";
  };
  const std::string unknown = error_of(custom("<numeric name='rltrain/soft_constraint' data='1'/>"));
  EXPECT_TRUE(starts_with(unknown,
                          "test.xml:3: numeric rltrain/soft_constraint: unknown rltrain parameter "
                          "\"rltrain/soft_constraint\" (known: rltrain/soft_constraints)"))
      << unknown;
  for (const char* removed : {"contact_stiffness", "contact_damping", "friction_velocity", "limit_stiffness",
                              "limit_damping", "contact_margin"}) {
    const std::string name = std::string("rltrain/") + removed;
    const std::string what = error_of(custom("<numeric name='" + name + "' data='1'/>"));
    EXPECT_TRUE(
        starts_with(what, "test.xml:3: numeric " + name + ": " + name +
                              ": the spring-damper contact and limit law was removed; contacts and joint limits "
                              "follow MuJoCo's soft constraints"))
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  const std::string zero = error_of(custom("<numeric name='rltrain/soft_constraints' data='0'/>"));
  EXPECT_TRUE(starts_with(zero,
                          "test.xml:3: numeric rltrain/soft_constraints: rltrain/soft_constraints: expected 1 "
                          "(MuJoCo's soft constraints, the only contact and limit law; the spring-damper law was "
                          "removed), got \"0\""))
      << zero;
  const std::string two = error_of(custom("<numeric name='rltrain/soft_constraints' data='1 2'/>"));
  EXPECT_TRUE(
      starts_with(two, "test.xml:3: numeric rltrain/soft_constraints: attribute \"data\": expected 1 number, got 2"))
      << two;
  const std::string nan = error_of(custom("<numeric name='rltrain/soft_constraints' data='nan'/>"));
  EXPECT_TRUE(starts_with(
      nan, "test.xml:3: numeric rltrain/soft_constraints: attribute \"data\": \"nan\" is not a finite number"))
      << nan;
  const std::string no_data = error_of(custom("<numeric name='rltrain/soft_constraints'/>"));
  EXPECT_TRUE(starts_with(no_data, "test.xml:3: numeric rltrain/soft_constraints: attribute \"data\" is required"))
      << no_data;
  const std::string size = error_of(custom("<numeric name='rltrain/soft_constraints' size='2' data='1'/>"));
  EXPECT_TRUE(starts_with(size, "test.xml:3: numeric rltrain/soft_constraints: attribute \"size\"")) << size;
  const std::string other = error_of(custom("<tuple name='t'/><plugin/>"));
  EXPECT_TRUE(starts_with(other, "test.xml:3: plugin: unsupported element in <custom> (supported: numeric")) << other;
  const std::string condim = error_of("<mujoco><worldbody>\n<geom size='1' condim='5'/></worldbody></mujoco>");
  EXPECT_TRUE(starts_with(condim, "test.xml:2: geom: attribute \"condim\": expected 1, 3, 4 or 6, got 5")) << condim;
  for (const char* c : {"4", "6"})  // torsional and rolling friction (sim/constraints.h)
    EXPECT_EQ(error_of(std::string("<mujoco><worldbody>\n<geom size='1' condim='") + c + "'/></worldbody></mujoco>"),
              "");
  const std::string margin = error_of("<mujoco><default>\n<geom margin='-0.1'/></default></mujoco>");
  EXPECT_TRUE(starts_with(margin, "test.xml:2: geom: attribute \"margin\" must be non-negative")) << margin;
  EXPECT_EQ(unknown.find('\n'), std::string::npos) << unknown;
  // Other people's numerics pass untouched, and rltrain/soft_constraints = 1 changes nothing.
  EXPECT_EQ(error_of(custom("<numeric name='my/gain' size='4' data='1 2'/><text name='t' data='x'/>")), "");
  EXPECT_EQ(error_of(custom("<numeric name='rltrain/soft_constraints' data='1'/>")), "");
}

// Per-geom contact values reach the Model (defaults where absent).
TEST(MjcfValues, ContactParametersReachTheModel) {
  const Model defaults = parse_mjcf("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>", "d.xml");
  const Model m = parse_mjcf(
      "<mujoco><custom><numeric name='rltrain/soft_constraints' data='1'/></custom>"
      "<default><geom margin='0.01' condim='1'/></default>"
      "<worldbody><geom size='1'/><geom size='1' margin='0.05' condim='3'/><geom size='1' "
      "condim='1'/></worldbody></mujoco>",
      "p.xml");
  EXPECT_EQ(m.geom_margin, (std::vector<double>{0.01, 0.05, 0.01}));
  EXPECT_EQ(m.geom_condim, (std::vector<int>{1, 3, 1}));
  EXPECT_EQ(defaults.geom_margin, (std::vector<double>{0}));
  EXPECT_EQ(defaults.geom_condim, (std::vector<int>{3}));
}

TEST(MjcfValues, GeomMassAndInertiaFormulas) {
  const Model m = parse_mjcf(
      "<mujoco><worldbody>"
      "<body name='s'><joint/><geom size='0.1'/></body>"
      "<body name='c'><joint/><geom type='capsule' size='0.1 0.3'/></body>"
      "<body name='b'><joint/><geom type='box' size='0.1 0.2 0.3' mass='2'/></body>"
      "</worldbody></mujoco>",
      "inline");
  const int s = m.body_id("s"), c = m.body_id("c"), b = m.body_id("b");
  const double ms = 1000 * 4.0 / 3.0 * kPi * 1e-3;
  EXPECT_NEAR(m.body_mass[s], ms, 1e-12);
  EXPECT_NEAR(m.body_inertia[3 * s], 0.4 * ms * 0.01, 1e-14);
  // capsule: cylinder of height 0.6 plus a sphere split into two end caps
  const double r = 0.1, h = 0.6, cyl = 1000 * kPi * r * r * h, sph = 1000 * 4.0 / 3.0 * kPi * r * r * r;
  EXPECT_NEAR(m.body_mass[c], cyl + sph, 1e-12);
  const double cap_axial = cyl * r * r / 2 + 0.4 * sph * r * r;
  // each cap: a hemisphere's own inertia about its center of mass (3r/8 from the flat face), moved
  // to h/2 + 3r/8 from the middle
  const double hemi = sph / 2, hemi_own = 0.4 * hemi * r * r - hemi * (3 * r / 8) * (3 * r / 8);
  const double cap_lateral = cyl * (3 * r * r + h * h) / 12 + 2 * (hemi_own + hemi * std::pow(h / 2 + 3 * r / 8, 2));
  EXPECT_NEAR(m.body_inertia[3 * c + 2], cap_axial, 1e-12);
  EXPECT_NEAR(m.body_inertia[3 * c], cap_lateral, 1e-12);
  EXPECT_NEAR(m.body_mass[b], 2, 1e-15);
  EXPECT_NEAR(m.body_inertia[3 * b], 2.0 / 3 * (0.04 + 0.09), 1e-15);
  EXPECT_NEAR(m.body_inertia[3 * b + 2], 2.0 / 3 * (0.01 + 0.04), 1e-15);
}

TEST(MjcfValues, FullInertiaIsDiagonalizedExactly) {
  // R diag(I) R^T must give back the tensor written in the file, the moments in decreasing order
  const double full[6] = {0.004, 0.003, 0.002, 0.0005, -0.0003, 0.0002};  // xx yy zz xy xz yz
  const Model m = parse_mjcf(
      "<mujoco><worldbody><body euler='10 20 30'><joint/><inertial pos='0.05 0 0' mass='0.5' "
      "fullinertia='0.004 0.003 0.002 0.0005 -0.0003 0.0002'/></body></worldbody></mujoco>",
      "inline");
  Eigen::Matrix3d want;
  want << full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2];
  const double* q = &m.body_iquat[4];
  // unit within MuJoCo's mjEPS: its eigen solver's normvec leaves a norm within 1e-14 of 1 (MuJoCo 3.17
  // gives this quaternion a squared norm of 1 + 1.1e-15, as ours)
  EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1, 1e-14);
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
  const Eigen::Vector3d I(&m.body_inertia[3]);
  EXPECT_LT((R * I.asDiagonal() * R.transpose() - want).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_GT(I(0), I(1));
  EXPECT_GT(I(1), I(2));
  EXPECT_NEAR(R.determinant(), 1, 1e-14);
}

TEST(MjcfValues, ParallelAxisAndPrincipalOrder) {
  // two unit point-like spheres on the x axis: the center of mass between them, the moments in
  // decreasing order, the axis along x the smallest
  const Model m = parse_mjcf(
      "<mujoco><worldbody><body><joint/><geom size='0.01' mass='1' pos='-0.5 0 0.2'/>"
      "<geom size='0.01' mass='1' pos='0.5 0 0.2'/></body></worldbody></mujoco>",
      "inline");
  EXPECT_NEAR(m.body_mass[1], 2, 1e-15);
  EXPECT_NEAR(m.body_ipos[3], 0, 1e-15);
  EXPECT_NEAR(m.body_ipos[5], 0.2, 1e-15);
  const double own = 0.4 * 1e-4;
  EXPECT_NEAR(m.body_inertia[3], 2 * own + 0.5, 1e-12);
  EXPECT_NEAR(m.body_inertia[4], 2 * own + 0.5, 1e-12);
  EXPECT_NEAR(m.body_inertia[5], 2 * own, 1e-12);
  // the third principal axis (body_iquat applied to z) lies along x
  const double* q = &m.body_iquat[4];
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
  EXPECT_NEAR(std::abs(R(0, 2)), 1, 1e-12);
}

TEST(MjcfValues, AddressesUnitsAndQpos0) {
  const Model m = parse_mjcf(
      "<mujoco><compiler autolimits='true'/><worldbody>"
      "<body name='root' pos='1 2 3' euler='0 0 90'><freejoint name='free'/><geom size='.1'/>"
      "  <body name='arm'><joint name='ball' type='ball' range='0 90'/><geom size='.1'/>"
      "    <body name='hand'><joint name='hinge' range='-90 45' ref='30'/><joint name='slide' type='slide' ref='0.25' "
      "range='-1 1'/><geom size='.1'/></body>"
      "  </body>"
      "</body></worldbody>"
      "<keyframe><key name='rest'/></keyframe></mujoco>",
      "inline");
  EXPECT_EQ(m.nq, 7 + 4 + 1 + 1);
  EXPECT_EQ(m.nv, 6 + 3 + 1 + 1);
  EXPECT_EQ(m.jnt_qposadr, (std::vector<int>{0, 7, 11, 12}));
  EXPECT_EQ(m.jnt_dofadr, (std::vector<int>{0, 6, 9, 10}));
  EXPECT_EQ(m.dof_parentid, (std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(m.body_dofadr, (std::vector<int>{-1, 0, 6, 9}));
  EXPECT_EQ(m.body_jntadr, (std::vector<int>{-1, 0, 1, 2}));
  EXPECT_EQ(m.body_jntnum, (std::vector<int>{0, 1, 1, 2}));
  const double c = std::sqrt(0.5);
  const std::vector<double> qpos0 = {1, 2, 3, c, 0, 0, c, 1, 0, 0, 0, kPi / 6, 0.25};
  ASSERT_EQ(m.qpos0.size(), qpos0.size());
  for (size_t i = 0; i < qpos0.size(); ++i) EXPECT_NEAR(m.qpos0[i], qpos0[i], 1e-15) << i;
  const int ball = m.joint_id("ball"), hinge = m.joint_id("hinge"), slide = m.joint_id("slide");
  EXPECT_NEAR(m.jnt_range[2 * ball + 1], kPi / 2, 1e-15);
  EXPECT_NEAR(m.jnt_range[2 * hinge], -kPi / 2, 1e-15);
  EXPECT_NEAR(m.jnt_range[2 * slide], -1, 0);  // lengths are not converted
  EXPECT_EQ(m.jnt_limited, (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(m.key_id("rest"), 0);
  EXPECT_EQ(m.key_qpos, m.qpos0);
  EXPECT_EQ(m.key_qvel, std::vector<double>(m.nv, 0.0));
  EXPECT_EQ(m.body_id("hand"), 3);
  EXPECT_EQ(m.body_id("world"), 0);
  EXPECT_EQ(m.body_id("nope"), -1);
  EXPECT_EQ(m.joint_id(""), -1);
}

TEST(MjcfValues, KeyframeActGoesToTheStatefulActuatorsInOrder) {
  // MuJoCo's key act holds na numbers, one per actuator with dynamics, in actuator order
  const Model m = parse_mjcf(
      "<mujoco><worldbody><body><joint name='a' axis='1 0 0'/><joint name='b' axis='0 1 0'/>"
      "<geom size='0.1'/></body></worldbody><actuator><motor joint='a'/>"
      "<general joint='a' dyntype='integrator'/><motor joint='b'/><general joint='b' dyntype='filter'/>"
      "</actuator><keyframe><key name='k' act='0.25 -0.5'/></keyframe></mujoco>",
      "inline.xml");
  EXPECT_EQ(m.key_act, (std::vector<double>{0, 0.25, 0, -0.5}));
  const std::string what = error_of(
      "<mujoco><worldbody><body><joint name='a'/><geom size='0.1'/></body></worldbody><actuator>"
      "<general joint='a' dyntype='integrator'/><motor joint='a'/></actuator>\n<keyframe><key act='1 2'/></keyframe>"
      "</mujoco>");
  EXPECT_TRUE(starts_with(what, "test.xml:2: key: attribute \"act\": expected 1 numbers (na), got 2")) << what;
}

TEST(MjcfValues, JointSpringsInheritAndConvert) {
  // main: stiffness 3, springref 10 deg; class a (in main): stiffness 7; class b (in a): springref -20
  const Model m = parse_mjcf(
      "<mujoco><default><joint stiffness='3' springref='10'/><default class='a'><joint stiffness='7'/>"
      "<default class='b'><joint springref='-20'/></default></default></default><worldbody>"
      "<body><joint ref='5'/><joint class='a' axis='1 0 0'/><joint class='b' axis='0 1 0' stiffness='0.5'/>"
      "<joint type='slide' springref='0.3'/><joint type='slide' class='b'/><geom size='.1'/></body>"
      "<body pos='1 2 3'><joint type='ball' springref='5'/><geom size='.1'/></body>"
      "<body pos='4 5 6'><freejoint/><geom size='.1'/></body></worldbody></mujoco>",
      "inline");
  const double deg = kPi / 180;
  EXPECT_EQ(m.jnt_stiffness, (std::vector<double>{3, 7, 0.5, 3, 7, 3, 0}));
  const std::vector<double> spring = {10 * deg, 10 * deg, -20 * deg, 0.3, -20,         // slides are not converted
                                      1,        0,        0,         0,                // ball: qpos0, springref ignored
                                      4,        5,        6,         1,   0,   0, 0};  // free: the body's pos/quat
  ASSERT_EQ(m.qpos_spring.size(), spring.size());
  for (size_t i = 0; i < spring.size(); ++i) EXPECT_NEAR(m.qpos_spring[i], spring[i], 1e-15) << i;
  EXPECT_NEAR(m.qpos0[0], 5 * deg, 1e-15);  // ref and springref are independent
}

TEST(MjcfValues, OurDataFilesLoadWithUnitQuaternions) {
  for (const std::string file : kOurFiles) {
    SCOPED_TRACE(file);
    Model m;
    ASSERT_NO_THROW(m = load_mjcf(data_path(file)));
    auto unit = [](const std::vector<double>& q, const char* what) {
      for (size_t i = 0; i + 3 < q.size(); i += 4) {
        // within MuJoCo's mjEPS (its normvec leaves a norm within 1e-14 of 1; its body_iquat of
        // free_tree.xml has a squared norm of 1 + 2e-15)
        EXPECT_NEAR(q[i] * q[i] + q[i + 1] * q[i + 1] + q[i + 2] * q[i + 2] + q[i + 3] * q[i + 3], 1, 1e-14)
            << what << " " << i / 4;
      }
    };
    unit(m.body_quat, "body_quat");
    unit(m.body_iquat, "body_iquat");
    unit(m.geom_quat, "geom_quat");
    unit(m.site_quat, "site_quat");
    for (int j = 0; j < m.njnt; ++j)
      EXPECT_NEAR(std::hypot(m.jnt_axis[3 * j], m.jnt_axis[3 * j + 1], m.jnt_axis[3 * j + 2]), 1, 1e-15);
  }
}

TEST(MjcfValues, TreeOrderIsDepthFirstWithOwnElementsFirst) {
  // a child body written before its parent's geom and joint still comes after them
  const Model m = parse_mjcf(
      "<mujoco><worldbody>"
      "<body name='a'><body name='a1'><joint name='j_a1'/><geom name='g_a1' size='.1'/></body>"
      "  <geom name='g_a' size='.1'/><joint name='j_a'/></body>"
      "<geom name='g_world' type='plane' size='1 1 1'/>"
      "<body name='b'><joint name='j_b'/><geom name='g_b' size='.1'/></body>"
      "</worldbody></mujoco>",
      "inline");
  EXPECT_EQ(m.body_name, (std::vector<std::string>{"world", "a", "a1", "b"}));
  EXPECT_EQ(m.jnt_name, (std::vector<std::string>{"j_a", "j_a1", "j_b"}));
  EXPECT_EQ(m.geom_name, (std::vector<std::string>{"g_world", "g_a", "g_a1", "g_b"}));
  EXPECT_EQ(m.dof_parentid, (std::vector<int>{-1, 0, -1}));
}

}  // namespace
}  // namespace rlt

namespace rlt {
namespace {

// Sensors: compiled addresses and names, the site zone from a default class, refusals.
TEST(MjcfSensors, CompileAddressesNamesAndRefusals) {
  const std::string body =
      "<mujoco><default><default class='pad'><site type='box' size='.1 .2 .3'/></default></default>"
      "<worldbody><body name='b'><joint name='j'/><geom size='.1'/><site name='s' class='pad'/>"
      "<site name='t' size='.2'/></body></worldbody>";
  const Model m = parse_mjcf(body +
                                 "<sensor><jointpos name='q' joint='j'/><framequat name='fq' objtype='site' "
                                 "objname='s'/><touch name='touch' site='s' noise='0.1' cutoff='3' user='1'/>"
                                 "<gyro site='t'/></sensor></mujoco>",
                             "s.xml");
  ASSERT_EQ(m.nsensor, 4);
  EXPECT_EQ(m.nsensordata, 1 + 4 + 1 + 3);
  EXPECT_EQ(m.sensor_id("touch"), 2);
  EXPECT_EQ(m.sensor_adr[2], 5);
  EXPECT_EQ(m.sensor_dim[1], 4);
  EXPECT_EQ(m.sensor_cutoff[2], 3);
  EXPECT_EQ(m.sensor_noise[2], 0.1);
  EXPECT_EQ(m.site_type[0], 6);
  EXPECT_EQ(m.site_size[2], 0.3);
  EXPECT_EQ(m.site_type[1], 2);
  EXPECT_EQ(m.site_size[3], 0.2);
  EXPECT_EQ(m.site_size[4], 0.005);
  EXPECT_EQ(m.sensor_id("nope"), -1);
  // models without sensors have no sensor rows
  const Model none = parse_mjcf(body + "</mujoco>", "n.xml");
  EXPECT_EQ(none.nsensor, 0);
  EXPECT_EQ(HostModel<double>(none).view().nsensordata, 0);
  auto refusal = [&](const std::string& sensor) {
    try {
      parse_mjcf(body + "<sensor>\n" + sensor + "</sensor></mujoco>", "r.xml");
    } catch (const MjcfError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // contact sensors: MuJoCo's data fields in order, one object per side, slots of num x the fields
  const Model contact = parse_mjcf(body + "<sensor><contact name='c' body1='b' num='3' data='found force pos' "
                                          "reduce='maxforce'/><contact site='s'/></sensor></mujoco>", "c.xml");
  EXPECT_EQ(contact.sensor_dim, (std::vector<int>{3 * 7, 1}));
  EXPECT_EQ(contact.sensor_intprm, (std::vector<int>{1 | 2 | 16, kReduceMaxForce, 1, kReduceNone}));
  EXPECT_EQ(contact.sensor_objtype[1], kSensObjSite);
  EXPECT_EQ(contact.sensor_reftype[1], kSensObjNone);
  EXPECT_NE(refusal("<contact body1='b' subtree1='b'/>").find("at most one can be given"), std::string::npos);
  EXPECT_NE(refusal("<contact body1='b' geom2='x'/>").find("unknown object \"x\""), std::string::npos);
  EXPECT_NE(refusal("<contact data='force found'/>").find("must be in order"), std::string::npos);
  // linvel, angvel (MuJoCo 3.17): 3 each, bits 7 and 8; not with netforce (as MuJoCo)
  const Model vel = parse_mjcf(body + "<sensor><contact data='found linvel angvel' num='2'/></sensor></mujoco>", "v.xml");
  EXPECT_EQ(vel.sensor_dim, (std::vector<int>{2 * 7}));
  EXPECT_EQ(vel.sensor_intprm, (std::vector<int>{1 | 1 << kConDataLinVel | 1 << kConDataAngVel, kReduceNone}));
  EXPECT_TRUE(starts_with(refusal("<contact data='found angvel' reduce='netforce'/>"),
                          "r.xml:2: contact: netforce reduction is incompatible with linvel or angvel"));
  EXPECT_NE(refusal("<contact data='angvel linvel'/>").find("must be in order"), std::string::npos);
  EXPECT_NE(refusal("<contact site='s' site2='s'/>").find("unsupported attribute \"site2\""), std::string::npos);
  EXPECT_EQ(parse_mjcf(body + "<sensor><clock/><clock cutoff='1'/></sensor></mujoco>", "t.xml").nsensordata, 2);
  EXPECT_TRUE(starts_with(refusal("<tactile/>"), "r.xml:2: tactile: tactile sensors are not supported"));
  EXPECT_TRUE(starts_with(refusal("<user dim='1'/>"), "r.xml:2: user: user sensors are not supported"));
  EXPECT_TRUE(starts_with(refusal("<plugin/>"), "r.xml:2: plugin: plugin sensors are not supported"));
  EXPECT_TRUE(starts_with(refusal("<geomdist geom1='a' geom2='b'/>"), "r.xml:2: geomdist: "));  // not MuJoCo's
  EXPECT_EQ(parse_mjcf(body + "<sensor><e_potential/><e_kinetic cutoff='2'/></sensor></mujoco>", "e.xml").nsensordata, 2);
  // e_kinetic under the energy flag: the previous substep's (marked in sensor_intprm); not under RK4
  const Model lagged = parse_mjcf(
      "<mujoco><option><flag energy='enable'/></option><worldbody/><sensor><e_kinetic/></sensor></mujoco>", "k.xml");
  EXPECT_EQ(lagged.sensor_intprm, (std::vector<int>{1, 0}));
  EXPECT_EQ(HostModel<double>(lagged).view().nenergy_lag, 2);
  EXPECT_NE(error_of("<mujoco><option integrator='RK4'><flag energy='enable'/></option><worldbody/><sensor>"
                     "<e_kinetic/></sensor></mujoco>")
                .find("under the RK4 integrator is not supported"),
            std::string::npos);
  EXPECT_NE(refusal("<framelinacc objtype='site' objname='s' reftype='site' refname='t'/>").find("no reference frame"),
            std::string::npos);
  EXPECT_EQ(parse_mjcf(body + "<sensor><rangefinder site='s' data='dist normal'/></sensor></mujoco>", "n.xml").sensor_dim,
            (std::vector<int>{4}));
  EXPECT_NE(refusal("<rangefinder site='s' data='point dist'/>").find("must be in order"), std::string::npos);
  EXPECT_NE(refusal("<rangefinder site='s' data='far'/>").find("unknown field \"far\""), std::string::npos);
  EXPECT_NE(refusal("<ballquat joint='j'/>").find("must be a ball joint"), std::string::npos);
  EXPECT_NE(refusal("<jointlimitpos joint='j'/>").find("must be limited"), std::string::npos);  // j: not limited
  EXPECT_NE(refusal("<tendonactuatorfrc tendon='a'/>").find("unknown object \"a\""), std::string::npos);
  EXPECT_NE(refusal("<tendonpos tendon='a'/>").find("unknown object \"a\""), std::string::npos);
  EXPECT_NE(refusal("<jointpos joint='x'/>").find("unknown object \"x\""), std::string::npos);
  EXPECT_NE(refusal("<framepos objtype='camera' objname='c'/>").find("unknown object \"c\""), std::string::npos);
  // cameras of every mode; a trackcom camera read by a sensor keeps subtree_com (nsubtree)
  const std::string cams = "<mujoco><worldbody><body name='b'><joint/><geom size='.1'/><camera name='c' pos='0 0 1'/>"
                           "<camera name='tr' mode='trackcom'/></body></worldbody>";
  const Model cam = parse_mjcf(cams + "<sensor><framepos objtype='camera' objname='c'/></sensor></mujoco>", "c.xml");
  EXPECT_EQ(cam.ncam, 2);
  EXPECT_EQ(cam.cam_bodyid, (std::vector<int>{1, 1}));
  EXPECT_EQ(cam.cam_pos[2], 1);
  EXPECT_EQ(cam.cam_mode, (std::vector<int>{kCamFixed, kCamTrackCom}));
  EXPECT_EQ(cam.sensor_objtype[0], kSensObjCamera);
  EXPECT_EQ(HostModel<double>(cam).view().nsubtree, 0);
  const Model tr = parse_mjcf(cams + "<sensor><framepos objtype='camera' objname='tr'/></sensor></mujoco>", "c.xml");
  EXPECT_EQ(HostModel<double>(tr).view().nsubtree, tr.nbody);
  // the geometry sensors: objects, references, sizes; MuJoCo's refusals
  const Model geo = parse_mjcf(cams.substr(0, cams.size() - 12) + "<site name='z' type='box' size='.1 .2 .3'/>"
                                   "<body name='o'><geom name='g2' size='.1'/></body></worldbody><sensor>"
                                   "<insidesite site='z' objtype='body' objname='b'/><distance geom1='g2' body2='b'/>"
                                   "<normal body1='o' body2='b' cutoff='1'/><fromto body1='b' geom2='g2'/>"
                                   "<camprojection site='z' camera='tr'/></sensor></mujoco>",
                               "g.xml");
  EXPECT_EQ(geo.sensor_type, (std::vector<int>{kSensInsideSite, kSensGeomDist, kSensGeomNormal, kSensGeomFromTo,
                                               kSensCamProjection}));
  EXPECT_EQ(geo.sensor_dim, (std::vector<int>{1, 1, 3, 6, 2}));
  EXPECT_EQ(geo.sensor_objtype, (std::vector<int>{kSensObjBody, kSensObjGeom, kSensObjBody, kSensObjBody, kSensObjSite}));
  EXPECT_EQ(geo.sensor_reftype,
            (std::vector<int>{kSensObjSite, kSensObjBody, kSensObjBody, kSensObjGeom, kSensObjCamera}));
  EXPECT_EQ(geo.sensor_refid[4], 1);
  EXPECT_EQ(HostModel<double>(geo).view().nsubtree, geo.nbody);  // insidesite on a body, the trackcom camera
  const std::string world = "<mujoco><worldbody><site name='s'/><body name='b'><geom name='g' size='.1'/>"
                            "<camera name='c'/></body><body name='b2'><geom name='g2' size='.1'/></body></worldbody>"
                            "<sensor>\n";
  auto geo_error = [&](const std::string& sensor) { return error_of(world + sensor + "</sensor></mujoco>"); };
  EXPECT_TRUE(starts_with(geo_error("<distance geom1='g' body1='b' geom2='g2'/>"),
                          "test.xml:2: distance: at most one of \"geom1\", \"body1\" can be given"));
  EXPECT_TRUE(starts_with(geo_error("<normal geom1='g'/>"), "test.xml:2: normal: one of \"geom2\", \"body2\" is required"));
  EXPECT_TRUE(starts_with(geo_error("<fromto body1='b' body2='b'/>"),
                          "test.xml:2: fromto: 1st body/geom must be different from 2nd body/geom"));
  EXPECT_TRUE(starts_with(geo_error("<distance geom1='g' geom2='x'/>"), "test.xml:2: distance: attribute \"geom2\": unknown"));
  EXPECT_TRUE(starts_with(geo_error("<distance geom1='g' geom2='g2' cutoff='-1'/>"),
                          "test.xml:2: distance: attribute \"cutoff\" must be non-negative"));
  EXPECT_TRUE(starts_with(error_of("<mujoco><asset><hfield name='r' nrow='2' ncol='2' size='1 1 1 1'/></asset>"
                                   "<worldbody><geom name='f' type='hfield' hfield='r'/><body name='b'><geom name='g' "
                                   "size='.1'/></body></worldbody><sensor>\n<distance geom1='g' geom2='f'/></sensor>"
                                   "</mujoco>"),
                          "test.xml:2: distance: height fields are not supported in geom distance sensors"));
  EXPECT_TRUE(starts_with(geo_error("<insidesite site='s' objtype='joint' objname='b'/>"), "test.xml:2: insidesite: "));
  EXPECT_TRUE(starts_with(geo_error("<insidesite site='s' objname='b'/>"),
                          "test.xml:2: insidesite: attribute \"objtype\" is required"));
  EXPECT_TRUE(starts_with(geo_error("<insidesite site='q' objtype='body' objname='b'/>"),
                          "test.xml:2: insidesite: attribute \"site\": unknown site \"q\""));
  EXPECT_TRUE(starts_with(geo_error("<camprojection site='s'/>"),
                          "test.xml:2: camprojection: attribute \"camera\" is required"));
  EXPECT_TRUE(starts_with(geo_error("<camprojection site='s' camera='nope'/>"),
                          "test.xml:2: camprojection: attribute \"camera\": unknown camera \"nope\""));
  EXPECT_NE(refusal("<framepos objname='s'/>").find("\"objtype\" and \"objname\" are required"), std::string::npos);
  EXPECT_NE(refusal("<gyro site='s' bogus='1'/>").find("unsupported attribute \"bogus\""), std::string::npos);
  EXPECT_NE(refusal("<gyro name='g' site='s'/><gyro name='g' site='t'/>").find("duplicate sensor name"),
            std::string::npos);
}

// Cameras as MuJoCo 3.17 compiles them (values read from its library): <default> classes through
// class and childclass (pose, mode, optics), intrinsics from sensorsize in float (pixel values over
// lengths), fovy from the sensor height, targets, and the qpos0 constants of mj_setConst.
TEST(MjcfCameras, DefaultsOpticsAndModesAsMuJoCo) {
  const Model m = parse_mjcf(
      "<mujoco><default><camera mode='trackcom' pos='0 0 1' resolution='64 48' sensorsize='0.004 0.003' "
      "focal='0.002 0.002' ipd='0.1'/><default class='k'><camera mode='targetbody' principalpixel='3 4' "
      "euler='0 0 30'/></default><default class='f'><camera fovy='60'/></default></default><worldbody>"
      "<body name='b'><camera name='c'/><camera name='c2' class='k'/><camera class='f'/></body>"
      "<body childclass='k'><camera name='c3' target='b'/><camera name='c4' mode='targetbody' focalpixel='30 40'/>"
      "</body></worldbody></mujoco>",
      "cam.xml");
  ASSERT_EQ(m.ncam, 5);
  EXPECT_EQ(m.cam_mode, (std::vector<int>{kCamTrackCom, kCamTargetBody, kCamTrackCom, kCamTargetBody, kCamTargetBody}));
  EXPECT_EQ(m.cam_targetbodyid, (std::vector<int>{-1, -1, -1, 1, -1}));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(m.cam_fovy[static_cast<size_t>(i)], 73.73979461915735, 1e-12) << i;
  EXPECT_NEAR(m.cam_fovy[4], 61.92751520437556, 1e-12);
  EXPECT_EQ(m.cam_intrinsic[16], static_cast<double>(0.0018750001f));  // 30 / (64 / 0.004), in float
  EXPECT_EQ(m.cam_intrinsic[17], static_cast<double>(0.0025f));
  EXPECT_EQ(m.cam_intrinsic[18], static_cast<double>(0.00018750002f));
  EXPECT_EQ(m.cam_intrinsic[19], static_cast<double>(0.00025f));
  EXPECT_EQ(m.cam_resolution[8], 64);
  EXPECT_EQ(m.cam_sensorsize[9], static_cast<double>(0.003f));
  EXPECT_EQ(m.cam_ipd[2], 0.1);
  EXPECT_EQ(m.cam_pos[14], 1);
  EXPECT_NEAR(m.cam_quat[4], 0.9659258262890683, 1e-15);  // class k's euler
  EXPECT_NEAR(m.cam_quat[7], 0.25881904510252074, 1e-15);
  EXPECT_EQ(m.cam_quat[8], 1);  // class f: none
  // mj_setConst's cam_pos0, cam_poscom0 (a target's subtree com), cam_mat0
  const Model c = parse_mjcf(
      "<mujoco><worldbody><body name='a' pos='0.1 0.2 1' euler='10 20 30'><joint type='hinge' axis='0 1 0'/>"
      "<geom size='.1' pos='.2 0 0'/><camera name='c1' mode='track' pos='1 2 3' euler='5 6 7'/>"
      "<camera name='c5' mode='trackcom' target='b' pos='1 2 3' euler='5 6 7'/><body name='b' pos='0 0 -0.5'>"
      "<joint type='hinge' axis='1 0 0'/><geom size='.1' pos='0 .3 0'/></body></body></worldbody></mujoco>",
      "c.xml");
  const double pos0[3] = {0.9001654905404711, 1.700656298273723, 3.2089671616864432};
  const double com0[3] = {1.2121294553211917, 1.3721164592968051, 3.5760367176064545};
  const double mat0[9] = {0.710299908671419,   -0.5287544224798878, 0.46464265887812484,
                          0.6593404548204441,  0.7309135356810252,  -0.17616914598031075,
                          -0.24646339358724853, 0.4314906303342201,  0.8677969990471468};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(c.cam_pos0[static_cast<size_t>(k)], pos0[k], 1e-14);
    EXPECT_NEAR(c.cam_poscom0[static_cast<size_t>(3 + k)], com0[k], 1e-14);
  }
  for (int k = 0; k < 9; ++k) EXPECT_NEAR(c.cam_mat0[static_cast<size_t>(k)], mat0[k], 1e-14);
  // MuJoCo's refusals, with file:line
  auto cam_error = [](const std::string& attrs) {
    return error_of("<mujoco><worldbody>\n<camera " + attrs + "/></worldbody></mujoco>");
  };
  EXPECT_TRUE(starts_with(cam_error("fovy='40' sensorsize='1 1' resolution='2 2'"),
                          "test.xml:2: camera: at most one of \"fovy\" and \"sensorsize\""));
  EXPECT_TRUE(starts_with(cam_error("focal='1 1'"), "test.xml:2: camera: focal/principal require sensorsize"));
  EXPECT_TRUE(starts_with(cam_error("sensorsize='1 1' resolution='0 2'"),
                          "test.xml:2: camera: sensorsize requires positive resolution"));
  EXPECT_TRUE(starts_with(cam_error("fovy='180'"), "test.xml:2: camera: fovy too large"));
  EXPECT_TRUE(starts_with(cam_error("mode='orbit'"), "test.xml:2: camera: "));
  EXPECT_TRUE(starts_with(cam_error("target='nobody'"), "test.xml:2: camera: camera target: unknown body \"nobody\""));
  EXPECT_TRUE(starts_with(cam_error("fromto='0 0 0 1 1 1'"), "test.xml:2: camera: attribute \"fromto\" is not"));
  EXPECT_TRUE(starts_with(error_of("<mujoco><default>\n<camera target='x'/></default><worldbody/></mujoco>"),
                          "test.xml:2: camera: unsupported attribute \"target\""));
}

// The geometry sensors on a static scene against closed forms (no MuJoCo needed): sphere-sphere
// and sphere-plane distances (the narrow phase), an ellipsoid's (GJK, within ccd_tolerance), the
// normal and fromto of the closest pair, cutoff 0 and clamping; insidesite; camprojection through
// fovy and through sensorsize and focal length; a targetbody camera's frame.
TEST(MjcfSensors, GeometrySensorsMatchClosedForms) {
  const Model model = parse_mjcf(
      "<mujoco><worldbody><geom name='plane' type='plane' size='5 5 .1' contype='0' conaffinity='0'/>"
      "<geom name='a' pos='0 0 1' size='0.1' contype='0' conaffinity='0'/>"
      "<geom name='b' pos='0.5 0 1' size='0.2' contype='0' conaffinity='0'/>"
      "<geom name='e' type='ellipsoid' pos='0 1 1' size='0.1 0.2 0.3' contype='0' conaffinity='0'/>"
      "<site name='zone' type='box' pos='0 0 1' size='0.05 0.05 0.05'/><site name='far' pos='0.1 0.2 -1'/>"
      "<camera name='c' resolution='200 100'/>"
      "<camera name='cs' resolution='200 100' sensorsize='0.004 0.002' focal='0.003 0.0025'/>"
      "<camera name='t' mode='targetbody' target='tb' pos='1 0 0'/>"
      "<body name='tb' pos='0 0 1'><geom size='0.01' contype='0' conaffinity='0'/></body></worldbody><sensor>"
      "<distance geom1='a' geom2='b' cutoff='1'/><normal geom1='a' geom2='b' cutoff='1'/>"
      "<fromto geom1='a' geom2='b' cutoff='1'/><distance geom1='plane' geom2='a' cutoff='2'/>"
      "<distance geom1='a' geom2='e' cutoff='2'/><distance geom1='a' geom2='b'/>"
      "<distance geom1='a' geom2='b' cutoff='0.15'/><normal geom1='plane' geom2='b' cutoff='0.5'/>"
      "<insidesite site='zone' objtype='geom' objname='a'/><insidesite site='zone' objtype='geom' objname='b'/>"
      "<camprojection site='far' camera='c'/><camprojection site='far' camera='cs'/>"
      "<framexaxis objtype='camera' objname='t'/><framezaxis objtype='camera' objname='t'/></sensor></mujoco>",
      "geo.xml");
  const HostModel<double> host(model);
  const ModelView<double>& m = host.view();
  std::vector<double> row(static_cast<size_t>(data_size(m)), 0.0);
  const DataView<double> d = data_view(m, row.data());
  reset_data(m, d);
  int ncon = 0;
  physics_step(m, d, static_cast<const double*>(nullptr), 1, &ncon);
  const double* s = d.sensordata;
  EXPECT_NEAR(s[0], 0.2, 1e-15);                           // |ab| - ra - rb
  EXPECT_EQ(std::vector<double>(s + 1, s + 4), (std::vector<double>{1, 0, 0}));
  const double fromto[6] = {0.1, 0, 1, 0.3, 0, 1};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(s[4 + k], fromto[k], 1e-15) << k;
  EXPECT_NEAR(s[10], 0.9, 1e-15);                          // the plane
  EXPECT_NEAR(s[11], 0.7, 1e-6);                           // the ellipsoid (GJK's tolerance)
  EXPECT_EQ(s[12], 0);                                     // cutoff 0: apart reads 0
  EXPECT_EQ(s[13], 0.15);                                  // not found below the cutoff
  EXPECT_EQ(std::vector<double>(s + 14, s + 17), (std::vector<double>{0, 0, 0}));  // none found
  EXPECT_EQ(s[17], 1);                                     // a's center in the zone
  EXPECT_EQ(s[18], 0);
  const double f = 0.5 / std::tan(45 * kPi / 360) * 100;   // fovy 45, 100 rows
  EXPECT_NEAR(s[19], -f * (0.1 / -1) + 100, 1e-12);
  EXPECT_NEAR(s[20], f * (0.2 / -1) + 50, 1e-12);
  const double fx = static_cast<double>(0.003f / 0.004f * 200.0f), fy = static_cast<double>(0.0025f / 0.002f * 100.0f);
  EXPECT_NEAR(s[21], -fx * (0.1 / -1) + 100, 1e-12);
  EXPECT_NEAR(s[22], fy * (0.2 / -1) + 50, 1e-12);
  // camera t at (1, 0, 0) looking at (0, 0, 1): z from the target to it, x level
  const double r = std::sqrt(2.0);
  EXPECT_NEAR(s[23], 0, 1e-15);
  EXPECT_NEAR(s[24], 1, 1e-15);
  EXPECT_NEAR(s[25], 0, 1e-15);
  EXPECT_NEAR(s[26], 1 / r, 1e-15);
  EXPECT_NEAR(s[27], 0, 1e-15);
  EXPECT_NEAR(s[28], -1 / r, 1e-15);
}

}  // namespace
}  // namespace rlt
