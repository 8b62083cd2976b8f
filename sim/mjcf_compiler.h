// Internal to the MJCF subset compiler (sim/mjcf.h is the interface): the attribute reader, what
// default classes carry, and the MjcfCompiler class, whose steps live in one file per concern:
//   sim/mjcf.cpp            the pipeline (MjcfCompiler::compile, MuJoCo's section order), errors and
//                           names, <compiler>, <option>, <custom>; parse_mjcf and load_mjcf
//   sim/mjcf_defaults.cpp   default classes and the element attributes they share with the tree
//   sim/mjcf_tree.cpp       the body tree (bodies, joints, geoms, sites, inertials), then joint and
//                           dof addresses, limits and qpos0
//   sim/mjcf_inertia.cpp    geom frames (fromto), sizes, mass and inertia; body mass and inertia
//   sim/mjcf_actuators.cpp  actuators and keyframes
//   sim/mjcf_sensors.cpp    sensors, and the zones (type, size) of sites
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
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/model.h"
#include "sim/spatial.h"

namespace rlt::mjcf_detail {

using tinyxml2::XMLElement;

constexpr double kPi = 3.14159265358979323846;
constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL
constexpr double kEps = 1e-6;      // MuJoCo's mjEPS

enum class Tri { kAuto, kFalse, kTrue };  // limited / ctrllimited / forcelimited

inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// ---- small vector and quaternion helpers (MuJoCo's conventions: quat = w x y z, Hamilton) -------

// Array forms of sim/spatial.h's (the parser works on double[4] / double[3]); out may alias a or b.
inline void quat_mul(const double a[4], const double b[4], double out[4]) {
  quat_mul(Quat<double>::load(a), Quat<double>::load(b)).store(out);
}

inline double norm3(const double v[3]) { return norm(Vec3<double>::load(v)); }

inline void cross3(const double a[3], const double b[3], double out[3]) { cross(Vec3<double>::load(a), Vec3<double>::load(b)).store(out); }

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

// Principal axes of a symmetric 3x3 inertia: moments in decreasing order (MuJoCo's order) and the
// rotation whose columns are the axes, right-handed; each axis points where its largest component
// is positive, so the result does not depend on the solver's sign choices.
inline void principal_axes(const Eigen::Matrix3d& inertia, double moments[3], double quat[4]) {
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(inertia);
  const Eigen::Vector3d values = solver.eigenvalues();  // ascending
  const Eigen::Matrix3d vectors = solver.eigenvectors();
  Eigen::Matrix3d axes;
  for (int k = 0; k < 3; ++k) {
    moments[k] = values(2 - k);
    axes.col(k) = vectors.col(2 - k);
  }
  for (int k = 0; k < 2; ++k) {
    Eigen::Index imax = 0;
    axes.col(k).cwiseAbs().maxCoeff(&imax);
    if (axes(imax, k) < 0) axes.col(k) = -axes.col(k);
  }
  axes.col(2) = axes.col(0).cross(axes.col(1));
  mat_to_quat(axes, quat);
}

// ---- attribute access: every attribute an element carries must be read or explicitly ignored ----

class Attrs {
 public:
  Attrs(const std::string& file, const XMLElement* e) : m_file(file), m_e(e) {}

  [[noreturn]] void fail(const std::string& what) const {
    const char* name = m_e->Attribute("name");
    throw MjcfError(m_file, m_e->GetLineNum(), m_e->Name(), name ? name : "", what);
  }

  const char* raw(const char* name) {
    m_known.insert(name);
    return m_e->Attribute(name);
  }
  bool has(const char* name) { return raw(name) != nullptr; }

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
      const std::string want = min_n == max_n ? std::to_string(min_n) : std::to_string(min_n) + " to " +
                                                                             std::to_string(max_n);
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
        os << "attribute " << quoted(name) << " is not supported (only its default value " << value
           << " is accepted)";
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
};

// MuJoCo keeps one actuator default per class for motor, position and velocity alike: `gain` is its
// gainprm[0] and `bias` its biasprm[0..2]; each shortcut element rewrites them (see read_actuator).
struct ActuatorSpec {
  double gear = 1;
  Tri ctrllimited = Tri::kAuto, forcelimited = Tri::kAuto;
  double ctrlrange[2] = {0, 0}, forcerange[2] = {0, 0};
  double gain = 1;
  double bias[3] = {0, 0, 0};
};

struct DefaultClass {
  JointSpec joint;
  GeomSpec geom;
  ActuatorSpec actuator;
};

struct CompilerOptions {
  bool degree = true;  // MuJoCo's default angle unit
  char eulerseq[4] = "xyz";
  bool autolimits = false;  // MuJoCo 2.2.2's default
  int inertiafromgeom = 2;  // 0 false, 1 true, 2 auto
  int inertiagrouprange[2] = {0, 5};
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

  // ---- compiler, option ----
  void read_compiler(const XMLElement* e);
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

  // ---- the body tree ----
  void add_world();
  void read_worldbody(const XMLElement* e);
  void read_body(const XMLElement* e, int parent, const std::string& inherited_class);

  // A body's own elements first, then its child bodies: MuJoCo's numbering.
  void read_body_contents(const XMLElement* e, int body, const std::string& cls);
  void read_joint(const XMLElement* e, int body, const std::string& cls);

  struct GeomFrame {
    bool has_pos = false, has_orientation = false, has_fromto = false;
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0}, fromto[6] = {0, 0, 0, 0, 0, 0};
  };
  void read_geom(const XMLElement* e, int body, const std::string& cls);
  void read_site(const XMLElement* e, int body, const std::string& cls);
  void read_inertial(const XMLElement* e, int body);

  // ---- geoms: frame from fromto, sizes, mass and inertia in the geom frame ----
  void compile_geoms();
  bool geom_body_moves(int geom) const;

  // MuJoCo's mjCGeom::GetVolume and SetInertia (capsule: a cylinder plus two hemispheres).
  static void geom_mass_inertia(const GeomSpec& g, double* mass, double inertia[3]);

  // ---- body mass and inertia (MuJoCo's mjCBody::GeomFrame and inertial) ----
  void compile_bodies();

  // ---- joints and dofs: addresses, limits, qpos0 ----
  void compile_joints();

  // MuJoCo 2.2.2 refuses a body with joints unless it, or one of its jointless children, has
  // mass and each principal moment of at least mjMINVAL (checked against libmujoco in the tests).
  void check_moving_bodies() const;

  // ---- actuators ----
  void read_actuators(const XMLElement* section);
  bool resolve_limited(Attrs& a, Tri t, const double range[2], const std::string& what);

  // ---- sensors (and the site zones touch sensors read) ----
  void read_sensors(const XMLElement* section);
  void read_contact_sensor(const XMLElement* e);
  void read_site_zone(Attrs& a, const XMLElement* e, const std::string& cls, int* type, double size[3]);

  // ---- keyframes ----
  void read_keyframes(const XMLElement* section);

  // The quaternions of free and ball joints in a keyframe's qpos are made unit (as MuJoCo); a
  // zero quaternion becomes the identity.
  void normalize_quaternions(std::vector<double>* qpos) const;
  static void read_key_vector(Attrs& a, const char* attr, std::vector<double>* out, const char* size_name);

  std::string m_file;
  CompilerOptions m_opt;
  std::map<std::string, DefaultClass> m_classes;
  Model m;

  // per-object state of the compile, parallel to the Model arrays
  std::vector<const XMLElement*> m_body_elem, m_joint_elem, m_geom_elem;
  std::vector<std::optional<Inertial>> m_body_inertial;
  std::vector<JointSpec> m_joints;
  std::vector<GeomSpec> m_geoms;
  std::vector<GeomFrame> m_geom_frames;
  std::vector<double> m_geom_mass, m_geom_inertia;
  std::map<std::string, int> m_body_names, m_joint_names, m_geom_names, m_site_names, m_actuator_names, m_key_names;
  std::map<std::string, int> m_sensor_names;
};

}  // namespace rlt::mjcf_detail
