// Internal to the MJCF subset compiler (sim/mjcf.h is the interface): the attribute reader, what
// default classes carry, and the MjcfCompiler class, whose steps live in one file per concern:
//   sim/mjcf.cpp            the pipeline (MjcfCompiler::compile, MuJoCo's section order), errors and
//                           names, <compiler>, <option>, <custom>; parse_mjcf and load_mjcf
//   sim/mjcf_defaults.cpp   default classes and the element attributes they share with the tree
//   sim/mjcf_tree.cpp       the body tree (bodies, joints, geoms, sites, inertials), then joint and
//                           dof addresses, limits and qpos0
//   sim/mjcf_inertia.cpp    geom frames (fromto), sizes, mass and inertia; body mass and inertia;
//                           the sameframe flags (sim/mjcf_user_math.h: MuJoCo's eigen solver)
//   sim/mjcf_actuators.cpp  actuators and keyframes
//   sim/mjcf_sensors.cpp    sensors, and the zones (type, size) of sites
//   sim/mjcf_setconst.cpp   the last steps: MuJoCo's mj_setConst where it changes the model, and
//   sim/mjcf_lengthrange.cpp  actuator_lengthrange (muscles)
// Each rule follows MuJoCo 2.2.2's compiler (user_objects.cc, user_model.cc); tests/sim/test_mjcf.cpp
// checks the result against libmujoco and every error message.
#pragma once

#include <tinyxml2.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/mjcf_user_math.h"
#include "sim/model.h"
#include "sim/spatial.h"

namespace rlt {
template <class T>
struct ModelView;
template <class T>
struct DataView;
}  // namespace rlt

namespace rlt::mjcf_detail {

using tinyxml2::XMLElement;

constexpr double kPi = 3.14159265358979323846;
constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL
constexpr double kEps = 1e-6;      // MuJoCo's mjEPS

enum class Tri { kAuto, kFalse, kTrue };  // limited / ctrllimited / forcelimited

inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The rest of an open binary stream, in blocks (mesh and height-field files: an istreambuf_iterator
// copy went byte by byte, 34% of loading the G1's 35 STL meshes under the sanitizers). in.bad()
// after it says whether reading failed.
inline std::string stream_bytes(std::istream& in) {
  std::string bytes;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) bytes.append(block, static_cast<size_t>(in.gcount()));
  return bytes;
}

// Where an element spliced in from an <include>d file came from (sim/mjcf_include.cpp): the compiler
// sets it as the element's tinyxml2 user data; elements of the main file have none.
struct XmlOrigin {
  std::string file;
  int line = 0;
  std::string chain;  // " (included from main.xml:3)", appended to error messages
};
inline const XmlOrigin* origin_of(const XMLElement* e) { return static_cast<const XmlOrigin*>(e->GetUserData()); }
inline int line_of(const XMLElement* e) {
  const XmlOrigin* o = origin_of(e);
  return o ? o->line : e->GetLineNum();
}
// Gives the elements of `to` (a deep clone of `from`) `from`'s origins: elements that already have
// one keep it, the others get a new one from `file` and `chain` (sim/mjcf_include.cpp).
void copy_origins(const tinyxml2::XMLNode* from, tinyxml2::XMLNode* to, const std::string& file,
                  const std::string& chain, std::vector<std::unique_ptr<XmlOrigin>>* origins);

// MuJoCo's position stage (mj_step1's part that the compile-time constants read, sim/mjcf_setconst.cpp):
// kinematics, centres of mass, tendons, transmissions' moment rows, the mass matrix and its factor,
// at d's qpos. set_const evaluates it at qpos0, set_length_range at every step of its simulation.
void position_stage(const ModelView<double>& m, const DataView<double>& d);

// ---- small vector and quaternion helpers (MuJoCo's conventions: quat = w x y z, Hamilton) -------

// Array forms of sim/spatial.h's (the parser works on double[4] / double[3]); out may alias a or b.
inline void quat_mul(const double a[4], const double b[4], double out[4]) {
  quat_mul(Quat<double>::load(a), Quat<double>::load(b)).store(out);
}

inline double norm3(const double v[3]) { return norm(Vec3<double>::load(v)); }

inline void cross3(const double a[3], const double b[3], double out[3]) {
  cross(Vec3<double>::load(a), Vec3<double>::load(b)).store(out);
}

// Rotation matrix (row-major) of a unit quaternion.
inline Eigen::Matrix3d quat_to_mat(const double q[4]) {
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
}

// MuJoCo's mju_mat2Quat: the branch on the largest component fixes the sign the same way.
inline void mat_to_quat(const Eigen::Matrix3d& m, double q[4]) {
  if (m(0, 0) + m(1, 1) + m(2, 2) > 0) {
    q[0] = 0.5 * std::sqrt(1 + m(0, 0) + m(1, 1) + m(2, 2));
    q[1] = 0.25 * (m(2, 1) - m(1, 2)) / q[0];
    q[2] = 0.25 * (m(0, 2) - m(2, 0)) / q[0];
    q[3] = 0.25 * (m(1, 0) - m(0, 1)) / q[0];
  } else if (m(0, 0) > m(1, 1) && m(0, 0) > m(2, 2)) {
    q[1] = 0.5 * std::sqrt(1 + m(0, 0) - m(1, 1) - m(2, 2));
    q[0] = 0.25 * (m(2, 1) - m(1, 2)) / q[1];
    q[2] = 0.25 * (m(0, 1) + m(1, 0)) / q[1];
    q[3] = 0.25 * (m(0, 2) + m(2, 0)) / q[1];
  } else if (m(1, 1) > m(2, 2)) {
    q[2] = 0.5 * std::sqrt(1 - m(0, 0) + m(1, 1) - m(2, 2));
    q[0] = 0.25 * (m(0, 2) - m(2, 0)) / q[2];
    q[1] = 0.25 * (m(0, 1) + m(1, 0)) / q[2];
    q[3] = 0.25 * (m(1, 2) + m(2, 1)) / q[2];
  } else {
    q[3] = 0.5 * std::sqrt(1 - m(0, 0) - m(1, 1) + m(2, 2));
    q[0] = 0.25 * (m(1, 0) - m(0, 1)) / q[3];
    q[1] = 0.25 * (m(0, 2) + m(2, 0)) / q[3];
    q[2] = 0.25 * (m(1, 2) + m(2, 1)) / q[3];
  }
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; ++i) q[i] /= n;
}

// MuJoCo's mjuu_z2quat: the rotation taking (0,0,1) to vec about the axis z x vec. When vec is
// (anti)parallel to z the axis is taken as x.
inline void z_to_quat(const double vec_in[3], double q[4]) {
  double vec[3] = {vec_in[0], vec_in[1], vec_in[2]};
  const double n = norm3(vec);
  for (double& v : vec) v /= n;
  const double z[3] = {0, 0, 1};
  double axis[3];
  cross3(z, vec, axis);
  const double s = norm3(axis);
  if (s < 1e-10) {
    axis[0] = 1, axis[1] = 0, axis[2] = 0;
  } else {
    for (double& a : axis) a /= s;
  }
  const double angle = std::atan2(s, vec[2]);
  q[0] = std::cos(angle / 2);
  for (int i = 0; i < 3; ++i) q[i + 1] = axis[i] * std::sin(angle / 2);
}

// MuJoCo's mjuu_fullInertia: the principal moments (decreasing) and axes (quat) of a full inertia
// (xx, yy, zz, xy, xz, yz), by MuJoCo 3.17's eigen solver with the body compiler's tolerance
// (sim/mjcf_user_math.h), so that nearly symmetric inertias get MuJoCo's axes, not just some axes.
inline void principal_axes(const double full[6], double moments[3], double quat[4]) {
  const double mat[9] = {full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]};
  mjuu::eig3(moments, quat, mat, mjuu::kEigTolBody);
}

// ---- attribute access: every attribute an element carries must be read or explicitly ignored ----

class Attrs {
 public:
  Attrs(const std::string& file, const XMLElement* e) : m_file(file), m_e(e) {}

  [[noreturn]] void fail(const std::string& what) const {
    const char* name = m_e->Attribute("name");
    const XmlOrigin* o = origin_of(m_e);
    throw MjcfError(o ? o->file : m_file, line_of(m_e), m_e->Name(), name ? name : "", o ? what + o->chain : what);
  }

  const char* raw(const char* name) {
    m_known.insert(name);
    return m_e->Attribute(name);
  }
  bool has(const char* name) { return raw(name) != nullptr; }
  // Whether the element sits in a <default> class.
  bool in_default() const {
    const XMLElement* p = m_e->Parent() ? m_e->Parent()->ToElement() : nullptr;
    return p && std::strcmp(p->Name(), "default") == 0;
  }

  // All numbers of a whitespace-separated list.
  std::optional<std::vector<double>> list(const char* name) {
    const char* text = raw(name);
    if (!text) return std::nullopt;
    std::vector<double> out;
    const char* p = text;
    const char* end = text + std::strlen(text);
    while (true) {
      while (p < end && std::strchr(" \t\r\n", *p)) ++p;
      if (p == end) break;
      const char* tok = p;
      while (p < end && !std::strchr(" \t\r\n", *p)) ++p;
      const char* start = (*tok == '+') ? tok + 1 : tok;  // from_chars does not take a leading '+'
      double v = 0;
      const auto res = std::from_chars(start, p, v);
      if (res.ec != std::errc() || res.ptr != p || start == p || !std::isfinite(v)) {
        fail("attribute " + quoted(name) + ": " + quoted(std::string(tok, p)) + " is not a finite number");
      }
      out.push_back(v);
    }
    return out;
  }

  // Between min_n and max_n numbers into out[0..n); the rest of out is left as it was.
  // Returns how many were read, 0 when the attribute is absent.
  int numbers(const char* name, double* out, int min_n, int max_n) {
    const auto values = list(name);
    if (!values) return 0;
    const int n = static_cast<int>(values->size());
    if (n < min_n || n > max_n) {
      const std::string want =
          min_n == max_n ? std::to_string(min_n) : std::to_string(min_n) + " to " + std::to_string(max_n);
      fail("attribute " + quoted(name) + ": expected " + want + (max_n == 1 ? " number" : " numbers") + ", got " +
           std::to_string(n));
    }
    std::copy(values->begin(), values->end(), out);
    return n;
  }
  bool number(const char* name, double* out) { return numbers(name, out, 1, 1) > 0; }

  bool integer(const char* name, int* out) {
    const char* text = raw(name);
    if (!text) return false;
    std::string s(text);
    const auto first = s.find_first_not_of(" \t\r\n");
    const auto last = s.find_last_not_of(" \t\r\n");
    s = first == std::string::npos ? "" : s.substr(first, last - first + 1);
    const char* start = (!s.empty() && s[0] == '+') ? s.c_str() + 1 : s.c_str();
    const char* stop = s.c_str() + s.size();
    const auto res = std::from_chars(start, stop, *out);
    if (res.ec != std::errc() || res.ptr != stop || start == stop) {
      fail("attribute " + quoted(name) + ": " + quoted(text) + " is not an integer");
    }
    return true;
  }

  std::optional<std::string> text(const char* name) {
    const char* t = raw(name);
    return t ? std::optional<std::string>(t) : std::nullopt;
  }

  // Index of the attribute's value in `words`, or -1 when absent.
  int keyword(const char* name, std::initializer_list<const char*> words) {
    const char* t = raw(name);
    if (!t) return -1;
    int i = 0;
    std::string expected;
    for (const char* w : words) {
      if (std::strcmp(t, w) == 0) return i;
      expected += (i ? ", " : "") + std::string(w);
      ++i;
    }
    fail("attribute " + quoted(name) + ": " + quoted(t) + " is not one of " + expected);
  }

  bool boolean(const char* name, bool* out) {
    const int k = keyword(name, {"false", "true"});
    if (k < 0) return false;
    *out = k == 1;
    return true;
  }

  void tri(const char* name, Tri* out) {
    const int k = keyword(name, {"false", "true", "auto"});
    if (k >= 0) *out = k == 0 ? Tri::kFalse : k == 1 ? Tri::kTrue : Tri::kAuto;
  }

  // Visual or bookkeeping attributes with no effect on the physics.
  void ignore(std::initializer_list<const char*> names) {
    for (const char* n : names) m_known.insert(n);
  }

  // Physics attributes this subset does not model: accepted only at MuJoCo's default value.
  void only_default(const char* name, double value) {
    const auto values = list(name);
    if (!values) return;
    for (double v : *values) {
      if (v != value) {
        std::ostringstream os;
        os << "attribute " << quoted(name) << " is not supported (only its default value " << value << " is accepted)";
        fail(os.str());
      }
    }
  }
  void only_default_text(const char* name, const char* value) {
    const char* t = raw(name);
    if (t && std::strcmp(t, value) != 0) {
      fail("attribute " + quoted(name) + "=" + quoted(t) + " is not supported (only " + quoted(value) + ")");
    }
  }

  // Stops on the first attribute that nothing above asked for.
  void finish() const {
    for (const tinyxml2::XMLAttribute* a = m_e->FirstAttribute(); a; a = a->Next()) {
      if (m_known.count(a->Name())) continue;
      std::string supported;
      for (const std::string& k : m_known) supported += (supported.empty() ? "" : ", ") + k;
      fail("unsupported attribute " + quoted(a->Name()) +
           (supported.empty() ? " (this element takes no attributes)" : " (supported: " + supported + ")"));
    }
  }

 private:
  const std::string& m_file;
  const XMLElement* m_e;
  std::set<std::string> m_known;
};

// ---- what default classes carry ----------------------------------------------------------------

struct JointSpec {
  int type = kJointHinge;
  double pos[3] = {0, 0, 0};
  double axis[3] = {0, 0, 1};
  Tri limited = Tri::kAuto;
  double range[2] = {0, 0};
  double ref = 0, damping = 0, armature = 0;
  double stiffness = 0, springref = 0;  // springref in the angle unit for hinges, as ref
  // MuJoCo's springdamper (timeconst, dampratio): both positive, the stiffness and damping are
  // computed from the joint's inertia at qpos0 at the compile's end (set_const); 0 0: off
  double springdamper[2] = {0, 0};
  // constraint parameters (sim/mjcf_constraints.cpp)
  double frictionloss = 0, margin = 0;
  double solreflimit[2] = {0.02, 1}, solimplimit[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double solreffriction[2] = {0.02, 1}, solimpfriction[5] = {0.9, 0.95, 0.001, 0.5, 2};
  Tri actfrclimited = Tri::kAuto;
  double actfrcrange[2] = {0, 0};
};

struct GeomSpec {
  int type = kGeomSphere;
  double size[3] = {0, 0, 0};
  double density = 1000;
  bool has_mass = false;
  double mass = 0;
  double friction[3] = {1, 0.005, 0.0001};
  int condim = 3;
  double margin = 0;
  int contype = 1, conaffinity = 1, group = 0;
  double rgba[4] = {0.5, 0.5, 0.5, 1};
  // contact parameters (sim/mjcf_constraints.cpp)
  double solref[2] = {0.02, 1}, solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double solmix = 1, gap = 0;
  int priority = 0;
  std::string mesh;    // the <asset><mesh> of a mesh geom (sim/mjcf_mesh.cpp)
  std::string hfield;  // type hfield: the <asset><hfield> name (sim/mjcf_hfield.cpp)
  std::string material;  // its <asset><material>, "" if none (only its alpha matters: geom_invisible)
};

// What <default><mesh> carries (MuJoCo's mjsMesh defaults that change the physics).
enum MeshInertia : int { kMeshInertiaConvex = 0, kMeshInertiaExact = 1, kMeshInertiaLegacy = 2, kMeshInertiaShell = 3 };
struct MeshSpec {
  double scale[3] = {1, 1, 1};
  int inertia = kMeshInertiaLegacy;  // MuJoCo 3's default
  int maxhullvert = -1;              // -1: no limit
};

// MuJoCo keeps one actuator default per class for every actuator element alike (its mjsActuator):
// the shortcut elements (motor, position, velocity, intvelocity, damper, muscle) rewrite parts of it as
// MuJoCo's mjs_setTo* do (read_actuator_attrs); `general` sets the fields directly.
struct ActuatorSpec {
  double gear[6] = {1, 0, 0, 0, 0, 0};
  double cranklength = 0;  // a slider-crank's rod (MuJoCo's default 0: cranksite refuses it)
  Tri ctrllimited = Tri::kAuto, forcelimited = Tri::kAuto, actlimited = Tri::kAuto;
  double ctrlrange[2] = {0, 0}, forcerange[2] = {0, 0}, actrange[2] = {0, 0};
  int gaintype = 0, biastype = 0, dyntype = 0;  // ActuatorGain, ActuatorBias, ActuatorDyn
  double gainprm[kNumGainPrm] = {1}, biasprm[kNumGainPrm] = {0}, dynprm[kNumDynPrm] = {1, 0, 0};
  double lengthrange[2] = {0, 0};  // MuJoCo's actuator lengthrange (a muscle's; 0 0: computed, mjcf_lengthrange.cpp)
  bool actearly = false;
  double inheritrange = 0;
  // biasprm[2] of a position/intvelocity default: -kv, or a dampratio when positive (a velocity
  // default's kv does not carry over)
  double position_bias2 = 0;
};

// A geom's or site's placement: pos, orientation, fromto (each from the element, else its class), and
// the <frame>s around it (frame_pos/frame_quat, applied last).
struct FrameSpec {
  bool has_pos = false, has_orientation = false, has_fromto = false;
  double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0}, fromto[6] = {0, 0, 0, 0, 0, 0};
  double frame_pos[3] = {0, 0, 0}, frame_quat[4] = {1, 0, 0, 0};
};

// A tendon's attributes (MJCF <tendon> defaults, <fixed>, <spatial>; sim/mjcf_tendons.cpp).
struct TendonSpec {
  Tri limited = Tri::kAuto;
  double range[2] = {0, 0}, margin = 0;
  double solreflimit[2] = {0.02, 1}, solimplimit[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double frictionloss = 0;
  double solreffriction[2] = {0.02, 1}, solimpfriction[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double stiffness = 0, damping = 0;
  double springlength[2] = {-1, -1};  // -1 -1: the length at qpos_spring
  double width = 0.003, rgba[4] = {0.5, 0.5, 0.5, 1};
  int group = 0;
};

// An explicit contact pair's parameters (<contact><pair>, <default><pair>): MuJoCo's mjs_defaultPair,
// all its own (not mixed from the geoms').
struct PairSpec {
  int condim = 3;
  double friction[5] = {1, 1, 0.005, 0.0001, 0.0001};
  double solref[2] = {0.02, 1}, solreffriction[2] = {0, 0}, solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double margin = 0, gap = 0;
};

// An equality constraint's shared attributes (<default><equality>).
struct EqualitySpec {
  bool active = true;
  double solref[2] = {0.02, 1}, solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
};

// A camera's attributes (MJCF <camera>, <default><camera>; sim/mjcf_tree.cpp read_camera): MuJoCo's
// mjs_defaultCamera values. The optics are MuJoCo's floats where its spec keeps floats.
struct CameraSpec {
  FrameSpec frame;  // pos and orientation (a class's, then the element's)
  int mode = 0;     // CameraMode
  int projection = 0;  // 0 perspective, 1 orthographic
  double fovy = 45, ipd = 0.068;
  int resolution[2] = {1, 1};
  float sensorsize[2] = {0, 0}, focal[2] = {0, 0}, focalpixel[2] = {0, 0}, principal[2] = {0, 0},
        principalpixel[2] = {0, 0};
};

struct DefaultClass {
  CameraSpec camera;  // <default><camera>
  TendonSpec tendon;
  JointSpec joint;
  GeomSpec geom;
  ActuatorSpec actuator;
  MeshSpec mesh;
  FrameSpec geom_frame, site_frame;  // pos / orientation / fromto in <default><geom> and <site>
  PairSpec pair;                     // misc: <default><pair>
  EqualitySpec equality;             // misc: <default><equality>
  double material_rgba[4] = {1, 1, 1, 1};  // <default><material rgba> (a material's alpha hides a geom from rays)
};

struct CompilerOptions {
  bool degree = true;  // MuJoCo's default angle unit
  char eulerseq[4] = "xyz";
  bool autolimits = true;   // MuJoCo 3's default (2.2.2 had false)
  int inertiafromgeom = 2;  // 0 false, 1 true, 2 auto
  int inertiagrouprange[2] = {0, 5};
  // compiler structure options (sim/mjcf.cpp read_compiler, apply_mass_bounds)
  double boundmass = 0, boundinertia = 0, settotalmass = -1;
  bool balanceinertia = false;
  std::string meshdir, texturedir, assetdir;
  // <compiler><lengthrange> (MuJoCo's mjLROpt; sim/mjcf_lengthrange.cpp): which actuators get a
  // computed actuator_lengthrange and how
  struct LengthRange {
    int mode = 1;  // 0 none, 1 muscle, 2 muscleuser (here: muscle), 3 all
    bool useexisting = true, uselimit = false;
    double accel = 20, maxforce = 0, timeconst = 1, timestep = 0.01, inttotal = 10, interval = 2, tolrange = 0.05;
    int line = 0;  // of the <lengthrange> element (0: none given), for errors
  } lengthrange;
};

struct Inertial {
  double pos[3] = {0, 0, 0};
  double quat[4] = {1, 0, 0, 0};
  double mass = 0;
  double inertia[3] = {0, 0, 0};
};

// ---- the compiler -------------------------------------------------------------------------------

// Compiles one MJCF text into a Model (parse_mjcf): compile() reads the sections in MuJoCo's order
// and runs the steps below, each in the file its section names (see the top of this header). The
// members after the steps are the compile's state: the Model being filled and, parallel to its
// arrays, what the later steps need of each object.
class MjcfCompiler {
 public:
  explicit MjcfCompiler(std::string file) : m_file(std::move(file)) {}
  Model compile(const std::string& text);

 private:
  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const;
  // `expected`: the elements this subset takes there ("" where none).
  [[noreturn]] void unsupported_element(const XMLElement* e, const char* expected) const;
  void no_children(const XMLElement* e) const;

  // Names are unique per object type (MuJoCo's rule); empty names are free.
  void check_name(std::map<std::string, int>& seen, const char* what, const XMLElement* e, const std::string& name);
  const DefaultClass& find_class(Attrs& a, const std::string& name) const;
  double to_radians(double deg) const { return m_opt.degree ? deg * kPi / 180.0 : deg; }

  // ---- include (sim/mjcf_include.cpp) ----

  // Replaces every <include file="..."/> under `parent` (a node of `doc`) by the children of the
  // included file's <mujoco> root, recursively, as MuJoCo: the path is tried relative to the main
  // file's directory, then to the including file's; a file included twice (a loop included) is
  // refused. `file`: the file `parent` comes from; `chain`: its " (included from ...)" suffix.
  void expand_includes(tinyxml2::XMLDocument* doc, tinyxml2::XMLElement* parent, const std::string& file,
                       const std::string& chain);
  std::string m_main_dir;                             // the main file's directory ("" for the cwd)
  std::set<std::string> m_included;                   // files included so far (as opened)
  std::vector<std::unique_ptr<XmlOrigin>> m_origins;  // user data of the spliced elements

  // ---- replicate (sim/mjcf_replicate.cpp) ----

  // Replaces every <replicate> in the body tree under `parent` (worldbody, body, frame, replicate) by
  // `count` <frame>s, each holding a copy of its children whose names carry the suffix (sep and the
  // copy's index), innermost replicate first, as MuJoCo 3's reader and mjs_attach. Run after the
  // <compiler> sections are read (euler follows angle and eulerseq).
  void expand_replicates(tinyxml2::XMLDocument* doc, tinyxml2::XMLElement* parent);
  void check_replicate_children(const XMLElement* e) const;
  static constexpr size_t kMaxReplicatedElements = 100000;  // elements all replicates may make
  size_t m_replicated = 0;                                   // elements the replicates made so far

  // ---- compiler, option ----
  void read_compiler(const XMLElement* e);
  // MuJoCo's boundmass / boundinertia (lower bounds on every moving body's mass and principal
  // moments), then settotalmass (scales every body's mass and inertia to that total), after the
  // body inertias are compiled.
  void apply_mass_bounds();
  void read_option(const XMLElement* e);

  // ---- custom: rltrain's numerics ----

  // <custom><numeric name="rltrain/<parameter>" data="value"/></custom>: MuJoCo keeps custom numerics
  // as user data (mjModel numeric_*), so such a file still loads there. Numerics with other names
  // and <text>/<tuple> are user data and ignored; an unknown rltrain/ name or a bad value stops.
  // rltrain/soft_constraints = 1 is accepted as a no-op (files written when a spring-damper law was
  // the other choice; MuJoCo's soft constraints are now the only law), 0 is refused, and so are the
  // removed spring-damper parameters.
  void read_custom(const XMLElement* e);

  // ---- default classes ----
  void read_default(const XMLElement* e, const DefaultClass* parent);

  // ---- element attributes shared by defaults and the tree ----
  void read_joint_attrs(Attrs& a, JointSpec* j);
  void read_geom_attrs(Attrs& a, GeomSpec* g);

  // MuJoCo 2.2.2's shortcut semantics: motor sets the gain to 1; position clears the bias, takes kp
  // (default: the class's current gain) as gain and -kp as bias[1]; velocity clears the bias, takes
  // kv (default: the current gain) as gain and -kv as bias[2]. kv on position (bias[2] = -kv) is an
  // extension from later MuJoCo versions.
  void read_actuator_attrs(Attrs& a, const std::string& kind, ActuatorSpec* s);

  // pos and one orientation attribute (MuJoCo's "alternative" frame specifiers) into quat.
  // Returns false when no orientation attribute is present (quat untouched).
  bool read_orientation(Attrs& a, double quat[4]);
  // Euler angles (the compiler's angle unit and eulerseq) as a unit quaternion.
  void euler_to_quat(const double euler[3], double quat[4]) const;

  // ---- the body tree ----
  void add_world();
  void read_worldbody(const XMLElement* e, bool bodies);
  void read_body(const XMLElement* e, int parent, const std::string& inherited_class);

  // A body's own elements first, then its child bodies: MuJoCo's numbering.
  void read_body_contents(const XMLElement* e, int body, const std::string& cls);
  void read_joint(const XMLElement* e, int body, const std::string& cls);
  // One pass over a body's (or <frame>'s) children: its joints, geoms and sites (bodies = false) or
  // its child bodies (true); <frame>s are entered in place, in document order (MuJoCo 3).
  void read_body_elements(const XMLElement* e, int body, const std::string& cls, bool bodies);
  // The <frame>s around the element being read, composed (identity outside frames): children's
  // pos/quat (joints: pos/axis) are mapped by it into the body frame.
  double m_frame_pos[3] = {0, 0, 0}, m_frame_quat[4] = {1, 0, 0, 0};
  bool in_frame() const {
    return m_frame_pos[0] != 0 || m_frame_pos[1] != 0 || m_frame_pos[2] != 0 || m_frame_quat[0] != 1;
  }

  using GeomFrame = FrameSpec;
  // pos, one orientation attribute and fromto of an element over its class's (`f`): fromto, from the
  // element or the class, decides the orientation (MuJoCo 3); pos and fromto together are refused
  // (on one element or, for an `element`, one of them from its class: MuJoCo 3 refuses both).
  void read_frame_attrs(Attrs& a, FrameSpec* f, bool element = true);
  // A fromto's center and orientation (MuJoCo: the z axis along from - to) into f->pos / f->quat;
  // returns the length. Then the enclosing <frame>s' transform.
  double resolve_fromto(const XMLElement* e, FrameSpec* f) const;
  static void apply_frame(FrameSpec* f);
  void read_geom(const XMLElement* e, int body, const std::string& cls);
  void read_site(const XMLElement* e, int body, const std::string& cls);
  void read_camera(const XMLElement* e, int body, const std::string& cls);
  void read_camera_attrs(Attrs& a, CameraSpec* c, bool element);  // sim/mjcf_defaults.cpp
  void camera_constants();  // cam_targetbodyid, cam_pos0, cam_poscom0, cam_mat0 (sim/mjcf_setconst.cpp)
  void read_geometry_sensor(const XMLElement* e);  // insidesite, distance, normal, fromto, camprojection
  void read_inertial(const XMLElement* e, int body);

  // ---- meshes (sim/mjcf_mesh.cpp) ----

  // One <asset><mesh> as read (its file or inline data), then as compiled by MuJoCo's mjCMesh:
  // vertices moved to the centre of mass and principal axes, volume, equivalent inertia box, hull.
  struct MeshAsset {
    const XMLElement* elem = nullptr;
    std::string name, file;
    MeshSpec spec;
    double refpos[3] = {0, 0, 0}, refquat[4] = {1, 0, 0, 0};
    std::vector<float> vert;  // as read (float, as MuJoCo keeps them), then compiled
    std::vector<int> face;
    bool need_hull = false;                             // a colliding geom uses it (MuJoCo's needhull_)
    std::vector<int> graph;                             // convex hull in MuJoCo's layout (mesh_graph), empty if none
    // The hull's faces merged into polygons (MuJoCo's mjCMesh::MakePolygons; with a hull only): each
    // a cycle of vertex ids, its unit normal (compiled frame), and per vertex the polygons through it.
    std::vector<std::vector<int>> polygons;
    std::vector<double> polynormal;
    std::vector<std::vector<int>> polymap;
    int extrema[27] = {};  // the hull vertex (local id) furthest along each of the 27 grid directions
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0};  // the frame the vertices were moved by
    double volume = 0;                                  // volume (shell: surface area)
    double boxsz[3] = {0, 0, 0};                        // half sizes of the equivalent inertia box
    double aamm[6] = {0, 0, 0, 0, 0, 0};                // axis-aligned bounds, compiled frame
  };
  // <asset>: <mesh> elements (texture, material, hfield, skin: visual here, ignored).
  void read_assets(const XMLElement* section);
  void read_material_alpha(const XMLElement* e);
  void read_mesh(const XMLElement* e);
  void read_mesh_attrs(Attrs& a, MeshSpec* s);
  void load_mesh_file(MeshAsset* mesh);
  // Every mesh as MuJoCo's mjCMesh::Process, then the Model's mesh arrays (before compile_geoms).
  void compile_meshes();
  void process_mesh(MeshAsset* mesh);
  void make_hull(MeshAsset* mesh, const std::vector<double>& vert);
  static void make_polygons(MeshAsset* mesh, const std::vector<double>& vert);
  // A mesh geom: its mesh id, frame moved by the mesh's, size from the mesh's bounds.
  void compile_mesh_geom(int geom);
  std::vector<MeshAsset> m_meshes;
  std::map<std::string, int> m_mesh_names, m_mesh_lines;  // name -> mesh id; -> line (check_name)
  std::map<std::string, double> m_material_alpha;  // <asset><material> name -> its rgba alpha (geom_invisible)

  // ---- geoms: frame from fromto, sizes, mass and inertia in the geom frame ----
  void compile_geoms();
  bool geom_body_moves(int geom) const;

  // MuJoCo's mjCGeom::GetVolume and SetInertia (capsule: a cylinder plus two hemispheres; mesh:
  // its volume and equivalent inertia box, `mesh`).
  static void geom_mass_inertia(const GeomSpec& g, double* mass, double inertia[3], const MeshAsset* mesh = nullptr);

  // ---- body mass and inertia (MuJoCo's mjCBody::InertiaFromGeom and inertial) ----
  void compile_bodies();
  // MuJoCo's sameframe flags (user_model.cc): which body, geom and site frames equal their body's
  // frame or inertial frame within 1e-6 (body_sameframe, geom_sameframe, site_sameframe); after
  // every frame is compiled, before mj_setConst's kinematics.
  void compile_sameframe();

  // ---- joints and dofs: addresses, limits, qpos0 ----
  void compile_joints();

  // MuJoCo 2.2.2 refuses a body with joints unless it, or one of its jointless children, has
  // mass and each principal moment of at least mjMINVAL (checked against libmujoco in the tests).
  void check_moving_bodies() const;
  // MuJoCo's mocap bodies (body mocap="true"): their ids in body order (body_mocapid, nmocap), each a
  // child of the world without joints, as MuJoCo's compiler requires.
  void compile_mocap();

  // ---- constraint parameters and options (sim/mjcf_constraints.cpp) ----
  void read_joint_constraint_attrs(Attrs& a, JointSpec* j);
  void read_geom_constraint_attrs(Attrs& a, GeomSpec* g);
  // <option> attributes of the constraint solver, and its <flag> child.
  void read_option_constraints(Attrs& a);
  void read_flags(const XMLElement* option);
  // The per-joint, per-dof and per-geom constraint arrays (after compile_joints and compile_geoms),
  // then the <flag>s that switch parts of the model off.
  void compile_constraints();
  // <contact>: <exclude body1 body2> into body_exclude; <pair> into the pair_* arrays.
  void read_contact(const XMLElement* section);
  void read_pair(const XMLElement* e);
  void read_pair_attrs(Attrs& a, PairSpec* p);
  void read_equality_attrs(Attrs& a, EqualitySpec* q);
  // <equality>: connect and weld (body and site semantics), joint and tendon; flex refused.
  void read_equality(const XMLElement* section);
  struct Flags {
    bool contact = true, limit = true, frictionloss = true, gravity = true, spring = true, damper = true,
         equality = true;
    bool energy = false;  // enable flag energy (sensors: MuJoCo's e_kinetic then lags a step; refused)
  } m_flags;

  // ---- tendons (sim/mjcf_tendons.cpp) ----
  void read_tendon_attrs(Attrs& a, TendonSpec* t);
  // <tendon>: <fixed> (joints and coefs) and <spatial> (sites, pulleys, sphere and cylinder geoms).
  void read_tendons(const XMLElement* section);

  // ---- actuators ----
  void read_actuators(const XMLElement* section);
  int num_activations() const;                                // MuJoCo's na: actuators with dynamics
  static void check_muscle(Attrs& a, const ActuatorSpec& s);  // MuJoCo's checks of a muscle's prm
  std::vector<const XMLElement*> m_actuator_elements;  // (nu) for errors after the actuator sections (set_length_range)
  bool resolve_limited(Attrs& a, Tri t, const double range[2], const std::string& what);

  // ---- sensors (and the site zones touch sensors read) ----
  void read_sensors(const XMLElement* section);
  void read_contact_sensor(const XMLElement* e);
  void read_site_zone(Attrs& a, const XMLElement* e, const std::string& cls, int* type, double size[3]);

  // ---- height fields (sim/mjcf_hfield.cpp) ----
  // The <hfield> children of an <asset> section (other asset elements are left to their readers).
  void read_hfields(const XMLElement* asset);
  // A geom of type hfield (from compile_geoms): its hfield id into geom_dataid, its size from the
  // hfield's (MuJoCo's); static or moving bodies alike.
  void compile_hfield_geom(int geom, GeomSpec* g);
  std::map<std::string, int> m_hfield_names, m_hfield_ids;  // name -> line (check_name), name -> hfield id
  // ---- the last step: MuJoCo's mj_setConst where it changes the model (sim/mjcf_setconst.cpp) ----
  // Position-like actuators' dampratio (biasprm[2] > 0) into -kv from the dof's inertia at qpos0;
  // joints' springdamper into jnt_stiffness and dof_damping from the same inertia.
  void set_const();
  // MuJoCo's actuator lengthrange (mj_setLengthRange, after mj_setConst): from the actuator's own
  // lengthrange, its joint's or tendon's range (uselimit) or a simulation (sim/mjcf_lengthrange.cpp).
  void set_length_range();
  void read_lengthrange(const XMLElement* e);

  // ---- keyframes ----
  void read_keyframes(const XMLElement* section);

  // The quaternions of free and ball joints in a keyframe's qpos are made unit (as MuJoCo); a
  // zero quaternion becomes the identity.
  void normalize_quaternions(std::vector<double>* qpos) const;
  static void read_key_vector(Attrs& a, const char* attr, std::vector<double>* out, const char* size_name);
  // A keyframe's mpos (width 3) or mquat (width 4): `out` holds the defaults (each mocap body's
  // body_pos or body_quat); the values given replace the first of them, as MuJoCo 3.17's keyframe
  // expansion does. A count that is not a multiple of the width, or beyond width x nmocap, is refused
  // (MuJoCo drops a partial tail silently and refuses a longer list).
  void read_key_mocap(Attrs& a, const char* attr, int width, std::vector<double>* out) const;

  std::string m_file;
  CompilerOptions m_opt;
  std::map<std::string, DefaultClass> m_classes;
  std::vector<std::pair<std::string, const XMLElement*>> m_cam_target;  // per camera: target body name, element
  Model m;

  // per-object state of the compile, parallel to the Model arrays
  std::vector<const XMLElement*> m_body_elem, m_joint_elem, m_geom_elem;
  std::vector<std::optional<Inertial>> m_body_inertial;
  std::vector<char> m_body_mocap;  // body mocap="true"
  std::vector<JointSpec> m_joints;
  std::vector<GeomSpec> m_geoms;
  std::vector<GeomFrame> m_geom_frames;
  std::vector<double> m_geom_mass, m_geom_inertia;
  std::map<std::string, int> m_body_names, m_joint_names, m_geom_names, m_site_names, m_actuator_names, m_key_names;
  std::map<std::string, int> m_sensor_names;
  std::map<std::string, int> m_tendon_names;
};

}  // namespace rlt::mjcf_detail
