// MJCF subset compiler: tinyxml2 parse -> default classes -> body tree (MuJoCo's depth-first order,
// a body's own joints/geoms/sites before its children's) -> geom and body inertia -> joint and dof
// addresses -> actuators -> keyframes. Each rule below follows MuJoCo 2.2.2's compiler
// (user_objects.cc, user_model.cc); tests/sim/test_mjcf.cpp checks the result against libmujoco.
#include "sim/mjcf.h"

#include <tinyxml2.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "sim/spatial.h"

namespace rlt {

namespace {
std::string format_message(const std::string& file, int line, const std::string& element, const std::string& name,
                           const std::string& what) {
  std::string msg = file + ":" + std::to_string(line) + ": " + element;
  if (!name.empty()) msg += " " + name;
  msg += ": " + what;
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';  // the message is one line whatever the input holds
  }
  return msg;
}
}  // namespace

MjcfError::MjcfError(const std::string& file, int line, const std::string& element, const std::string& name,
                     const std::string& what)
    : std::runtime_error(format_message(file, line, element, name, what)), m_file(file), m_line(line),
      m_element(element) {}

namespace {

using tinyxml2::XMLElement;

constexpr double kPi = 3.14159265358979323846;
constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL
constexpr double kEps = 1e-6;      // MuJoCo's mjEPS

enum class Tri { kAuto, kFalse, kTrue };  // limited / ctrllimited / forcelimited

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// ---- small vector and quaternion helpers (MuJoCo's conventions: quat = w x y z, Hamilton) -------

// Array forms of sim/spatial.h's (the parser works on double[4] / double[3]); out may alias a or b.
void quat_mul(const double a[4], const double b[4], double out[4]) {
  quat_mul(Quat<double>::load(a), Quat<double>::load(b)).store(out);
}

double norm3(const double v[3]) { return norm(Vec3<double>::load(v)); }

void cross3(const double a[3], const double b[3], double out[3]) { cross(Vec3<double>::load(a), Vec3<double>::load(b)).store(out); }

// Rotation matrix (row-major) of a unit quaternion.
Eigen::Matrix3d quat_to_mat(const double q[4]) {
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
}

// MuJoCo's mju_mat2Quat: the branch on the largest component fixes the sign the same way.
void mat_to_quat(const Eigen::Matrix3d& m, double q[4]) {
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
void z_to_quat(const double vec_in[3], double q[4]) {
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
void principal_axes(const Eigen::Matrix3d& inertia, double moments[3], double quat[4]) {
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

class MjcfCompiler {
 public:
  explicit MjcfCompiler(std::string file) : m_file(std::move(file)) {}

  Model compile(const std::string& text) {
    tinyxml2::XMLDocument doc;
    if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) {
      std::string detail = doc.ErrorStr() ? doc.ErrorStr() : "";
      // tinyxml2 prefixes "Error=... ErrorID=... Line number=N: "; keep what follows it
      const auto colon = detail.find(": ");
      if (detail.rfind("Error=", 0) == 0 && colon != std::string::npos) detail = detail.substr(colon + 2);
      std::string what = std::string("malformed XML (") + doc.ErrorName() + ")";
      if (!detail.empty()) what += ": " + detail;
      throw MjcfError(m_file, doc.ErrorLineNum(), "xml", "", what);
    }
    const XMLElement* root = doc.RootElement();
    if (!root) throw MjcfError(m_file, 1, "xml", "", "no root element");
    if (std::strcmp(root->Name(), "mujoco") != 0) fail(root, "the root element must be <mujoco>");
    {
      Attrs a(m_file, root);
      a.ignore({"model"});
      a.finish();
    }

    // MuJoCo reads the sections in this order wherever they stand in the file.
    std::vector<const XMLElement*> compilers, options, defaults, worldbodies, actuators, keyframes, customs;
    for (const XMLElement* s = root->FirstChildElement(); s; s = s->NextSiblingElement()) {
      const std::string n = s->Name();
      if (n == "compiler") compilers.push_back(s);
      else if (n == "option") options.push_back(s);
      else if (n == "default") defaults.push_back(s);
      else if (n == "worldbody") worldbodies.push_back(s);
      else if (n == "actuator") actuators.push_back(s);
      else if (n == "keyframe") keyframes.push_back(s);
      else if (n == "custom") customs.push_back(s);
      else if (n == "asset" || n == "visual" || n == "statistic" || n == "size") continue;  // visual / sizing only
      else unsupported_element(s, "compiler, option, default, worldbody, actuator, keyframe, custom; ignored: asset, visual, statistic, size");
    }
    for (const XMLElement* s : compilers) read_compiler(s);
    for (const XMLElement* s : options) read_option(s);
    for (const XMLElement* s : customs) read_custom(s);
    m_classes["main"] = DefaultClass{};
    for (const XMLElement* s : defaults) read_default(s, nullptr);  // each top-level one adds to "main"

    add_world();
    for (const XMLElement* s : worldbodies) read_worldbody(s);
    compile_geoms();
    compile_bodies();
    compile_joints();
    check_moving_bodies();
    for (const XMLElement* s : actuators) read_actuators(s);
    for (const XMLElement* s : keyframes) read_keyframes(s);
    m.nsite = static_cast<int>(m.site_bodyid.size());
    m.nkey = static_cast<int>(m.key_time.size());
    return std::move(m);
  }

 private:
  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const {
    const char* name = e->Attribute("name");
    throw MjcfError(m_file, e->GetLineNum(), e->Name(), name ? name : "", what);
  }
  // `expected`: the elements this subset takes there ("" where none).
  [[noreturn]] void unsupported_element(const XMLElement* e, const char* expected) const {
    const XMLElement* parent = e->Parent() ? e->Parent()->ToElement() : nullptr;
    fail(e, std::string("unsupported element") + (parent ? " in <" + std::string(parent->Name()) + ">" : "") +
                (*expected ? std::string(" (supported: ") + expected + ")" : std::string(" (it takes no child elements)")));
  }
  void no_children(const XMLElement* e) const {
    if (const XMLElement* c = e->FirstChildElement()) unsupported_element(c, "");
  }

  // Names are unique per object type (MuJoCo's rule); empty names are free.
  void check_name(std::map<std::string, int>& seen, const char* what, const XMLElement* e, const std::string& name) {
    if (name.empty()) return;
    const auto [it, inserted] = seen.emplace(name, e ? e->GetLineNum() : 0);
    if (!inserted) {
      fail(e, std::string("duplicate ") + what + " name " + quoted(name) +
                  (it->second > 0 ? " (first at line " + std::to_string(it->second) + ")" : " (the world body)"));
    }
  }

  const DefaultClass& find_class(Attrs& a, const std::string& name) const {
    const auto it = m_classes.find(name);
    if (it == m_classes.end()) a.fail("unknown default class " + quoted(name));
    return it->second;
  }

  double to_radians(double deg) const { return m_opt.degree ? deg * kPi / 180.0 : deg; }

  // ---- compiler, option ----

  void read_compiler(const XMLElement* e) {
    Attrs a(m_file, e);
    if (const int k = a.keyword("angle", {"degree", "radian"}); k >= 0) m_opt.degree = k == 0;
    if (const auto seq = a.text("eulerseq")) {
      if (seq->size() != 3 || seq->find_first_not_of("xyzXYZ") != std::string::npos) {
        a.fail("attribute \"eulerseq\": expected 3 letters from xyzXYZ, got " + quoted(*seq));
      }
      std::copy(seq->begin(), seq->end(), m_opt.eulerseq);
    }
    a.boolean("autolimits", &m_opt.autolimits);
    if (const int k = a.keyword("inertiafromgeom", {"false", "true", "auto"}); k >= 0) m_opt.inertiafromgeom = k;
    if (a.has("inertiagrouprange")) {
      double r[2];
      a.numbers("inertiagrouprange", r, 2, 2);
      m_opt.inertiagrouprange[0] = static_cast<int>(r[0]);
      m_opt.inertiagrouprange[1] = static_cast<int>(r[1]);
    }
    if (a.keyword("coordinate", {"local", "global"}) == 1) a.fail("coordinate=\"global\" is not supported (local only)");
    a.only_default("boundmass", 0);
    a.only_default("boundinertia", 0);
    a.only_default("settotalmass", -1);
    a.only_default_text("balanceinertia", "false");
    a.only_default_text("discardvisual", "false");
    a.ignore({"meshdir", "texturedir", "assetdir", "strippath", "convexhull", "fitaabb", "usethread",
              "exactmeshinertia"});
    a.finish();
    no_children(e);
  }

  void read_option(const XMLElement* e) {
    Attrs a(m_file, e);
    if (a.number("timestep", &m.timestep) && !(m.timestep > 0)) a.fail("attribute \"timestep\" must be positive");
    a.numbers("gravity", m.gravity, 3, 3);
    a.only_default_text("integrator", "Euler");
    a.finish();
    no_children(e);
  }

  // ---- custom: rltrain's numerics ----

  // <custom><numeric name="rltrain/<parameter>" data="value"/></custom>: MuJoCo keeps custom numerics
  // as user data (mjModel numeric_*), so such a file still loads there. Numerics with other names
  // and <text>/<tuple> are user data and ignored; an unknown rltrain/ name or a bad value stops.
  // rltrain/soft_constraints = 1 is accepted as a no-op (files written when a spring-damper law was
  // the other choice; MuJoCo's soft constraints are now the only law), 0 is refused, and so are the
  // removed spring-damper parameters.
  void read_custom(const XMLElement* e) {
    {
      Attrs a(m_file, e);
      a.finish();
    }
    static const char* const kRemoved[] = {"contact_stiffness", "contact_damping", "friction_velocity",
                                           "limit_stiffness",   "limit_damping",   "contact_margin"};
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string n = c->Name();
      Attrs a(m_file, c);
      if (n == "text" || n == "tuple") {
        continue;  // user data
      } else if (n != "numeric") {
        unsupported_element(c, "numeric; ignored: text, tuple");
      }
      const std::string name = a.text("name").value_or("");
      if (name.empty()) a.fail("attribute \"name\" is required");
      const std::string prefix = "rltrain/";
      if (name.compare(0, prefix.size(), prefix) != 0) {
        a.ignore({"size", "data"});  // someone else's user data
        a.finish();
        no_children(c);
        continue;
      }
      const std::string key = name.substr(prefix.size());
      for (const char* removed : kRemoved)
        if (key == removed)
          a.fail(name + ": the spring-damper contact and limit law was removed; contacts and joint limits follow "
                 "MuJoCo's soft constraints (default solref/solimp), which take no such parameter");
      if (key != "soft_constraints")
        a.fail("unknown rltrain parameter " + quoted(name) + " (known: " + prefix + "soft_constraints)");
      double value = 0;
      if (!a.number("data", &value)) a.fail("attribute \"data\" is required (one number)");
      int size = 1;
      if (a.integer("size", &size) && size != 1) a.fail("attribute \"size\": rltrain parameters take one number, got " + std::to_string(size));
      if (value != 1)
        a.fail(name + ": expected 1 (MuJoCo's soft constraints, the only contact and limit law; the spring-damper "
               "law was removed), got " + quoted(c->Attribute("data")));
      a.finish();
      no_children(c);
    }
  }

  // ---- default classes ----

  void read_default(const XMLElement* e, const DefaultClass* parent) {
    Attrs a(m_file, e);
    std::string name = "main";
    if (const auto c = a.text("class")) name = *c;
    else if (parent) a.fail("a nested <default> needs a class attribute");
    if (!parent && name != "main") a.fail("the top-level <default> is class \"main\"; nest other classes inside it");
    a.finish();
    if (parent && m_classes.count(name)) a.fail("duplicate default class " + quoted(name));
    DefaultClass cls = parent ? *parent : m_classes["main"];
    // MuJoCo applies a class's own elements before it reads the classes nested in it.
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string n = c->Name();
      Attrs ca(m_file, c);
      if (n == "default") {
        continue;
      } else if (n == "joint") {
        read_joint_attrs(ca, &cls.joint);
      } else if (n == "geom") {
        read_geom_attrs(ca, &cls.geom);
      } else if (n == "site") {
        ca.ignore({"type", "size", "rgba", "group", "material"});
      } else if (n == "motor" || n == "position" || n == "velocity") {
        read_actuator_attrs(ca, n, &cls.actuator);
      } else if (n == "camera" || n == "light" || n == "material" || n == "mesh" || n == "texture") {
        continue;  // visual
      } else {
        unsupported_element(c, "default, joint, geom, site, motor, position, velocity; ignored: camera, light, material, mesh, texture");
      }
      ca.finish();
      no_children(c);
    }
    m_classes[name] = cls;
    const DefaultClass& stored = m_classes[name];
    for (const XMLElement* c = e->FirstChildElement("default"); c; c = c->NextSiblingElement("default")) {
      read_default(c, &stored);
    }
  }

  // ---- element attributes shared by defaults and the tree ----

  void read_joint_attrs(Attrs& a, JointSpec* j) {
    if (const int t = a.keyword("type", {"free", "ball", "slide", "hinge"}); t >= 0) j->type = t;  // JointType order
    a.numbers("pos", j->pos, 3, 3);
    a.numbers("axis", j->axis, 3, 3);
    a.tri("limited", &j->limited);
    a.numbers("range", j->range, 2, 2);
    a.number("ref", &j->ref);
    if (a.number("damping", &j->damping) && j->damping < 0) a.fail("attribute \"damping\" must be non-negative");
    if (a.number("armature", &j->armature) && j->armature < 0) a.fail("attribute \"armature\" must be non-negative");
    if (a.number("stiffness", &j->stiffness) && j->stiffness < 0) a.fail("attribute \"stiffness\" must be non-negative");
    a.number("springref", &j->springref);
    a.only_default("frictionloss", 0);
    a.only_default("margin", 0);
    a.ignore({"group"});
  }

  void read_geom_attrs(Attrs& a, GeomSpec* g) {
    if (const auto t = a.text("type")) {
      if (*t == "plane") g->type = kGeomPlane;
      else if (*t == "sphere") g->type = kGeomSphere;
      else if (*t == "capsule") g->type = kGeomCapsule;
      else if (*t == "box") g->type = kGeomBox;
      else a.fail("geom type " + quoted(*t) + " is not supported (plane, sphere, capsule, box)");
    }
    a.numbers("size", g->size, 1, 3);
    if (a.number("density", &g->density) && g->density < 0) a.fail("attribute \"density\" must be non-negative");
    if (a.number("mass", &g->mass)) {
      if (g->mass < 0) a.fail("attribute \"mass\" must be non-negative");
      g->has_mass = true;
    }
    a.numbers("friction", g->friction, 1, 3);
    a.integer("contype", &g->contype);
    a.integer("conaffinity", &g->conaffinity);
    a.integer("group", &g->group);
    a.numbers("rgba", g->rgba, 4, 4);
    if (a.integer("condim", &g->condim) && g->condim != 1 && g->condim != 3 && g->condim != 4 && g->condim != 6)
      a.fail("attribute \"condim\": expected 1, 3, 4 or 6, got " + std::to_string(g->condim));
    if (a.number("margin", &g->margin) && g->margin < 0) a.fail("attribute \"margin\" must be non-negative");
    a.only_default("gap", 0);
    a.only_default("priority", 0);
    a.ignore({"material"});
  }

  // MuJoCo 2.2.2's shortcut semantics: motor sets the gain to 1; position clears the bias, takes kp
  // (default: the class's current gain) as gain and -kp as bias[1]; velocity clears the bias, takes
  // kv (default: the current gain) as gain and -kv as bias[2]. kv on position (bias[2] = -kv) is an
  // extension from later MuJoCo versions.
  void read_actuator_attrs(Attrs& a, const std::string& kind, ActuatorSpec* s) {
    double gear[6];
    if (a.numbers("gear", gear, 1, 6)) s->gear = gear[0];  // a joint transmission uses gear[0] only
    a.tri("ctrllimited", &s->ctrllimited);
    a.numbers("ctrlrange", s->ctrlrange, 2, 2);
    a.tri("forcelimited", &s->forcelimited);
    a.numbers("forcerange", s->forcerange, 2, 2);
    a.ignore({"group"});
    if (kind == "motor") {
      s->gain = 1;
    } else if (kind == "position") {
      s->bias[0] = s->bias[1] = s->bias[2] = 0;
      a.number("kp", &s->gain);
      s->bias[1] = -s->gain;
      double kv = 0;
      if (a.number("kv", &kv)) {
        if (kv < 0) a.fail("attribute \"kv\" must be non-negative");
        s->bias[2] = -kv;
      }
    } else {
      s->bias[0] = s->bias[1] = s->bias[2] = 0;
      a.number("kv", &s->gain);
      s->bias[2] = -s->gain;
    }
  }

  // pos and one orientation attribute (MuJoCo's "alternative" frame specifiers) into quat.
  // Returns false when no orientation attribute is present (quat untouched).
  bool read_orientation(Attrs& a, double quat[4]) {
    const char* which[] = {"quat", "euler", "axisangle", "xyaxes", "zaxis"};
    int count = 0;
    for (const char* w : which) count += a.has(w) ? 1 : 0;
    if (count > 1) a.fail("more than one orientation attribute (quat, euler, axisangle, xyaxes, zaxis)");
    if (count == 0) return false;
    double v[6];
    if (a.numbers("quat", v, 4, 4)) {
      const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
      if (n < kMinVal) a.fail("attribute \"quat\": zero quaternion");
      for (int i = 0; i < 4; ++i) quat[i] = v[i] / n;
    } else if (a.numbers("euler", v, 3, 3)) {
      double q[4] = {1, 0, 0, 0};
      for (int i = 0; i < 3; ++i) {
        const double angle = to_radians(v[i]);
        double rot[4] = {std::cos(angle / 2), 0, 0, 0};
        const char axis = m_opt.eulerseq[i];
        rot[1 + (std::tolower(axis) - 'x')] = std::sin(angle / 2);
        if (std::islower(axis)) quat_mul(q, rot, q);  // intrinsic: rotate about the moving axes
        else quat_mul(rot, q, q);                     // extrinsic: about the fixed axes
      }
      std::copy(q, q + 4, quat);
    } else if (a.numbers("axisangle", v, 4, 4)) {
      const double n = norm3(v);
      if (n < kEps) a.fail("attribute \"axisangle\": axis too small");
      const double angle = to_radians(v[3]);
      quat[0] = std::cos(angle / 2);
      for (int i = 0; i < 3; ++i) quat[i + 1] = v[i] / n * std::sin(angle / 2);
    } else if (a.numbers("xyaxes", v, 6, 6)) {
      Eigen::Vector3d x(v[0], v[1], v[2]), y(v[3], v[4], v[5]);
      if (x.norm() < kEps) a.fail("attribute \"xyaxes\": x axis too small");
      x.normalize();
      y -= x * x.dot(y);
      if (y.norm() < kEps) a.fail("attribute \"xyaxes\": y axis too small or parallel to x");
      y.normalize();
      Eigen::Matrix3d frame;
      frame.col(0) = x;
      frame.col(1) = y;
      frame.col(2) = x.cross(y);
      mat_to_quat(frame, quat);
    } else if (a.numbers("zaxis", v, 3, 3)) {
      if (norm3(v) < kEps) a.fail("attribute \"zaxis\": axis too small");
      z_to_quat(v, quat);
    }
    const double n = std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    for (int i = 0; i < 4; ++i) quat[i] /= n;  // products of unit quaternions drift from unit length
    return true;
  }

  // ---- the body tree ----

  void add_world() {
    m.nbody = 1;
    m.body_parentid.push_back(0);
    m.body_pos.insert(m.body_pos.end(), {0, 0, 0});
    m.body_quat.insert(m.body_quat.end(), {1, 0, 0, 0});
    m.body_name.push_back("world");
    m_body_elem.push_back(nullptr);
    m_body_inertial.emplace_back();
    m_body_names.emplace("world", 0);
  }

  void read_worldbody(const XMLElement* e) {
    Attrs a(m_file, e);
    a.finish();
    read_body_contents(e, 0, "main");
  }

  void read_body(const XMLElement* e, int parent, const std::string& inherited_class) {
    Attrs a(m_file, e);
    const int id = m.nbody++;
    const std::string name = a.text("name").value_or("");
    check_name(m_body_names, "body", e, name);
    std::string cls = inherited_class;
    if (const auto c = a.text("childclass")) {
      find_class(a, *c);
      cls = *c;
    }
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0};
    a.numbers("pos", pos, 3, 3);
    read_orientation(a, quat);
    a.finish();
    m.body_parentid.push_back(parent);
    m.body_pos.insert(m.body_pos.end(), pos, pos + 3);
    m.body_quat.insert(m.body_quat.end(), quat, quat + 4);
    m.body_name.push_back(name);
    m_body_elem.push_back(e);
    m_body_inertial.emplace_back();
    read_body_contents(e, id, cls);
  }

  // A body's own elements first, then its child bodies: MuJoCo's numbering.
  void read_body_contents(const XMLElement* e, int body, const std::string& cls) {
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string n = c->Name();
      if (n == "body" || n == "camera" || n == "light") continue;
      if (n == "joint" || n == "freejoint") {
        if (body == 0) fail(c, "the world body cannot have joints");
        read_joint(c, body, cls);
      } else if (n == "geom") {
        read_geom(c, body, cls);
      } else if (n == "site") {
        read_site(c, body, cls);
      } else if (n == "inertial") {
        if (body == 0) fail(c, "the world body cannot have an inertial");
        read_inertial(c, body);
      } else {
        unsupported_element(c, "body, inertial, joint, freejoint, geom, site; ignored: camera, light");
      }
      no_children(c);
    }
    for (const XMLElement* c = e->FirstChildElement("body"); c; c = c->NextSiblingElement("body")) {
      read_body(c, body, cls);
    }
  }

  void read_joint(const XMLElement* e, int body, const std::string& cls) {
    Attrs a(m_file, e);
    JointSpec j;  // <freejoint> takes no defaults (as MuJoCo)
    if (std::strcmp(e->Name(), "freejoint") == 0) {
      j.type = kJointFree;
      a.ignore({"group"});
    } else {
      j = find_class(a, a.text("class").value_or(cls)).joint;
      read_joint_attrs(a, &j);
    }
    const std::string name = a.text("name").value_or("");
    a.finish();
    check_name(m_joint_names, "joint", e, name);
    m_joints.push_back(j);
    m_joint_elem.push_back(e);
    m.jnt_bodyid.push_back(body);
    m.jnt_name.push_back(name);
  }

  struct GeomFrame {
    bool has_pos = false, has_orientation = false, has_fromto = false;
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0}, fromto[6] = {0, 0, 0, 0, 0, 0};
  };

  void read_geom(const XMLElement* e, int body, const std::string& cls) {
    Attrs a(m_file, e);
    GeomSpec g = find_class(a, a.text("class").value_or(cls)).geom;
    read_geom_attrs(a, &g);
    GeomFrame f;
    f.has_pos = a.numbers("pos", f.pos, 3, 3) > 0;
    f.has_orientation = read_orientation(a, f.quat);
    f.has_fromto = a.numbers("fromto", f.fromto, 6, 6) > 0;
    const std::string name = a.text("name").value_or("");
    a.finish();
    check_name(m_geom_names, "geom", e, name);
    m_geoms.push_back(g);
    m_geom_frames.push_back(f);
    m_geom_elem.push_back(e);
    m.geom_bodyid.push_back(body);
    m.geom_name.push_back(name);
  }

  void read_site(const XMLElement* e, int body, const std::string& cls) {
    Attrs a(m_file, e);
    find_class(a, a.text("class").value_or(cls));  // sites carry no physics; the class must exist
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0};
    a.numbers("pos", pos, 3, 3);
    read_orientation(a, quat);
    a.ignore({"type", "size", "rgba", "group", "material"});
    const std::string name = a.text("name").value_or("");
    a.finish();
    check_name(m_site_names, "site", e, name);
    m.site_bodyid.push_back(body);
    m.site_pos.insert(m.site_pos.end(), pos, pos + 3);
    m.site_quat.insert(m.site_quat.end(), quat, quat + 4);
    m.site_name.push_back(name);
  }

  void read_inertial(const XMLElement* e, int body) {
    Attrs a(m_file, e);
    if (m_body_inertial[body]) a.fail("a body has at most one <inertial>");
    Inertial in;
    if (!a.numbers("pos", in.pos, 3, 3)) a.fail("attribute \"pos\" is required");
    const bool oriented = read_orientation(a, in.quat);
    if (!a.number("mass", &in.mass)) a.fail("attribute \"mass\" is required");
    if (in.mass < 0) a.fail("attribute \"mass\" must be non-negative");
    double full[6];
    const bool has_diag = a.numbers("diaginertia", in.inertia, 3, 3) > 0;
    const bool has_full = a.numbers("fullinertia", full, 6, 6) > 0;
    a.finish();
    if (has_diag == has_full) a.fail("exactly one of \"diaginertia\" and \"fullinertia\" is required");
    if (has_full) {
      if (oriented) a.fail("\"fullinertia\" fixes the orientation; remove the orientation attribute");
      Eigen::Matrix3d I;
      I << full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2];
      principal_axes(I, in.inertia, in.quat);
      if (in.inertia[2] <= 0) a.fail("\"fullinertia\" must be positive definite");
    }
    for (double v : in.inertia) {
      if (v < 0) a.fail("inertia must be non-negative");
    }
    const double* I = in.inertia;
    if (I[0] + I[1] < I[2] || I[0] + I[2] < I[1] || I[1] + I[2] < I[0]) {
      a.fail("inertia must satisfy A + B >= C for every ordering (triangle inequality)");
    }
    m_body_inertial[body] = in;
  }

  // ---- geoms: frame from fromto, sizes, mass and inertia in the geom frame ----

  void compile_geoms() {
    m.ngeom = static_cast<int>(m_geoms.size());
    m_geom_mass.assign(m.ngeom, 0);
    m_geom_inertia.assign(3 * m.ngeom, 0);
    for (int i = 0; i < m.ngeom; ++i) {
      const XMLElement* e = m_geom_elem[i];
      GeomSpec& g = m_geoms[i];
      GeomFrame& f = m_geom_frames[i];
      if (f.has_fromto) {
        if (g.type != kGeomCapsule && g.type != kGeomBox) fail(e, "\"fromto\" is supported for capsule and box geoms only");
        if (f.has_pos) fail(e, "both \"pos\" and \"fromto\" given");
        if (f.has_orientation) fail(e, "\"fromto\" fixes the orientation; remove the orientation attribute");
        const double* ft = f.fromto;
        const double vec[3] = {ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]};  // from - to, as MuJoCo
        const double length = norm3(vec);
        if (length < kEps) fail(e, "\"fromto\" points too close");
        for (int k = 0; k < 3; ++k) f.pos[k] = 0.5 * (ft[k] + ft[k + 3]);
        z_to_quat(vec, f.quat);
        if (g.type == kGeomCapsule) {
          g.size[1] = 0.5 * length;
        } else {
          g.size[1] = g.size[0];  // a square box section of half side size[0]
          g.size[2] = 0.5 * length;
        }
      }
      const double* s = g.size;
      if (g.type == kGeomPlane) {
        if (!(s[2] > 0)) fail(e, "plane size[2] (grid spacing) must be positive");
        if (geom_body_moves(i)) fail(e, "plane geoms are only allowed in static bodies (no joint up to the world)");
      } else {
        const int n = g.type == kGeomSphere ? 1 : g.type == kGeomCapsule ? 2 : 3;
        for (int k = 0; k < n; ++k) {
          if (!(s[k] > 0)) fail(e, "size[" + std::to_string(k) + "] must be positive");
        }
      }
      m.geom_type.push_back(g.type);
      m.geom_size.insert(m.geom_size.end(), s, s + 3);
      m.geom_pos.insert(m.geom_pos.end(), f.pos, f.pos + 3);
      m.geom_quat.insert(m.geom_quat.end(), f.quat, f.quat + 4);
      m.geom_friction.insert(m.geom_friction.end(), g.friction, g.friction + 3);
      if (g.condim > 3)
        fail(e, "condim " + std::to_string(g.condim) + ": MuJoCo's soft-constraint law takes condim 1 or 3 here "
                "(no torsional or rolling friction)");
      m.geom_condim.push_back(g.condim);
      m.geom_margin.push_back(g.margin);
      m.geom_contype.push_back(g.contype);
      m.geom_conaffinity.push_back(g.conaffinity);
      for (double c : g.rgba) m.geom_rgba.push_back(static_cast<float>(c));
      geom_mass_inertia(g, &m_geom_mass[i], &m_geom_inertia[3 * i]);
    }
  }

  bool geom_body_moves(int geom) const {
    for (int b = m.geom_bodyid[geom]; b != 0; b = m.body_parentid[b]) {
      for (int j : m.jnt_bodyid) {
        if (j == b) return true;
      }
    }
    return false;
  }

  // MuJoCo's mjCGeom::GetVolume and SetInertia (capsule: a cylinder plus two hemispheres).
  static void geom_mass_inertia(const GeomSpec& g, double* mass, double inertia[3]) {
    const double* s = g.size;
    double volume = 0;
    switch (g.type) {
      case kGeomSphere: volume = 4 * kPi * s[0] * s[0] * s[0] / 3; break;
      case kGeomCapsule: volume = kPi * s[0] * s[0] * (2 * s[1] + 4 * s[0] / 3); break;
      case kGeomBox: volume = 8 * s[0] * s[1] * s[2]; break;
      default: volume = 0;  // a plane has no mass
    }
    if (volume == 0) {
      *mass = 0;
      inertia[0] = inertia[1] = inertia[2] = 0;
      return;
    }
    const double density = g.has_mass ? g.mass / volume : g.density;
    *mass = g.has_mass ? g.mass : density * volume;
    switch (g.type) {
      case kGeomSphere:
        inertia[0] = inertia[1] = inertia[2] = 2 * *mass * s[0] * s[0] / 5;
        break;
      case kGeomCapsule: {
        const double r = s[0], h = 2 * s[1];
        const double sphere_mass = density * 4 * kPi * r * r * r / 3;  // both hemispheres
        const double cylinder_mass = density * kPi * r * r * h;
        inertia[0] = inertia[1] = cylinder_mass * (3 * r * r + h * h) / 12;
        inertia[2] = cylinder_mass * r * r / 2;
        const double sphere_inertia = 2 * sphere_mass * r * r / 5;
        const double shift = sphere_mass * h * (3 * r + 2 * h) / 8;  // hemispheres moved to the ends
        inertia[0] += sphere_inertia + shift;
        inertia[1] += sphere_inertia + shift;
        inertia[2] += sphere_inertia;
        break;
      }
      case kGeomBox:
        inertia[0] = *mass * (s[1] * s[1] + s[2] * s[2]) / 3;
        inertia[1] = *mass * (s[0] * s[0] + s[2] * s[2]) / 3;
        inertia[2] = *mass * (s[0] * s[0] + s[1] * s[1]) / 3;
        break;
      default: break;
    }
  }

  // ---- body mass and inertia (MuJoCo's mjCBody::GeomFrame and inertial) ----

  void compile_bodies() {
    m.body_ipos.assign(3 * m.nbody, 0);
    m.body_iquat.assign(4 * m.nbody, 0);
    m.body_mass.assign(m.nbody, 0);
    m.body_inertia.assign(3 * m.nbody, 0);
    for (int b = 0; b < m.nbody; ++b) m.body_iquat[4 * b] = 1;
    for (int b = 1; b < m.nbody; ++b) {  // the world has no inertia
      std::vector<int> sel;
      for (int g = 0; g < m.ngeom; ++g) {
        const int group = m_geoms[g].group;
        if (m.geom_bodyid[g] == b && group >= m_opt.inertiagrouprange[0] && group <= m_opt.inertiagrouprange[1]) {
          sel.push_back(g);
        }
      }
      const bool from_geoms =
          !sel.empty() && (m_opt.inertiafromgeom == 1 || (m_opt.inertiafromgeom == 2 && !m_body_inertial[b]));
      double* ipos = &m.body_ipos[3 * b];
      double* iquat = &m.body_iquat[4 * b];
      double* inertia = &m.body_inertia[3 * b];
      if (from_geoms && sel.size() == 1) {  // one geom: its frame is the inertial frame
        const int g = sel[0];
        std::copy_n(&m.geom_pos[3 * g], 3, ipos);
        std::copy_n(&m.geom_quat[4 * g], 4, iquat);
        m.body_mass[b] = m_geom_mass[g];
        std::copy_n(&m_geom_inertia[3 * g], 3, inertia);
      } else if (from_geoms) {
        double mass = 0;
        Eigen::Vector3d com = Eigen::Vector3d::Zero();
        for (int g : sel) {
          mass += m_geom_mass[g];
          com += m_geom_mass[g] * Eigen::Vector3d(&m.geom_pos[3 * g]);
        }
        if (mass < kMinVal) fail(m_body_elem[b], "body mass is too small to compute a center of mass from its geoms");
        com /= mass;
        Eigen::Matrix3d total = Eigen::Matrix3d::Zero();
        for (int g : sel) {
          const Eigen::Matrix3d R = quat_to_mat(&m.geom_quat[4 * g]);
          const Eigen::Vector3d I(&m_geom_inertia[3 * g]);
          const Eigen::Vector3d d = Eigen::Vector3d(&m.geom_pos[3 * g]) - com;
          total += R * I.asDiagonal() * R.transpose();
          total += m_geom_mass[g] * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
        }
        for (int k = 0; k < 3; ++k) ipos[k] = com(k);
        m.body_mass[b] = mass;
        principal_axes(total, inertia, iquat);
      } else if (m_body_inertial[b]) {
        const Inertial& in = *m_body_inertial[b];
        std::copy_n(in.pos, 3, ipos);
        std::copy_n(in.quat, 4, iquat);
        m.body_mass[b] = in.mass;
        std::copy_n(in.inertia, 3, inertia);
      }
      // else: massless; MuJoCo leaves the body's own pos/quat here, we leave 0 and identity.
    }
  }

  // ---- joints and dofs: addresses, limits, qpos0 ----

  void compile_joints() {
    m.njnt = static_cast<int>(m_joints.size());
    m.body_jntadr.assign(m.nbody, -1);
    m.body_jntnum.assign(m.nbody, 0);
    m.body_dofadr.assign(m.nbody, -1);
    m.body_dofnum.assign(m.nbody, 0);
    std::vector<int> body_last_dof(m.nbody, -1);  // last dof on the path from the world to the body
    int j = 0;
    for (int b = 1; b < m.nbody; ++b) {
      body_last_dof[b] = body_last_dof[m.body_parentid[b]];
      bool after_ball = false;
      for (; j < m.njnt && m.jnt_bodyid[j] == b; ++j) {
        const XMLElement* e = m_joint_elem[j];
        JointSpec& s = m_joints[j];
        if (s.type == kJointFree && m.body_parentid[b] != 0) {
          fail(e, "a free joint can only be used in a body whose parent is the world");
        }
        if (after_ball && (s.type == kJointBall || s.type == kJointHinge)) {
          fail(e, "a ball joint followed by a rotation (hinge or ball) in the same body is not allowed (as MuJoCo)");
        }
        after_ball = after_ball || s.type == kJointBall;
        if (m.body_jntnum[b] == 0) {
          m.body_jntadr[b] = j;
          m.body_dofadr[b] = m.nv;
        }
        m.body_jntnum[b]++;
        m.body_dofnum[b] += joint_nv(s.type);
        if (m.body_dofnum[b] > 6) fail(e, "more than 6 degrees of freedom in one body");

        const double n = norm3(s.axis);
        if (n < kEps) fail(e, "attribute \"axis\" is too small");
        for (double& v : s.axis) v /= n;

        const bool has_range = s.range[0] != 0 || s.range[1] != 0;
        bool limited = s.limited == Tri::kTrue;
        if (s.limited == Tri::kAuto && has_range) {
          if (!m_opt.autolimits) {
            fail(e, "has \"range\" but not \"limited\": set limited=\"true\" or \"false\", or <compiler "
                    "autolimits=\"true\"/>");
          }
          limited = true;
        }
        if (s.type == kJointFree && limited) fail(e, "a free joint cannot be limited");
        if (limited && (s.type == kJointHinge || s.type == kJointBall)) {  // MuJoCo converts limits only
          s.range[0] = to_radians(s.range[0]);
          s.range[1] = to_radians(s.range[1]);
        }
        if (limited && s.range[0] >= s.range[1]) fail(e, "range[0] must be smaller than range[1]");
        if (limited && s.type == kJointBall && s.range[0] != 0) fail(e, "a ball joint's range[0] must be 0");

        m.jnt_type.push_back(s.type);
        m.jnt_qposadr.push_back(m.nq);
        m.jnt_dofadr.push_back(m.nv);
        m.jnt_pos.insert(m.jnt_pos.end(), s.pos, s.pos + 3);
        m.jnt_axis.insert(m.jnt_axis.end(), s.axis, s.axis + 3);
        m.jnt_limited.push_back(limited ? 1 : 0);
        m.jnt_range.insert(m.jnt_range.end(), s.range, s.range + 2);
        m.jnt_stiffness.push_back(s.stiffness);

        // Springs rest at springref (hinge, slide; converted like ref); free and ball joints'
        // springs rest at qpos0, and MuJoCo ignores their springref.
        switch (s.type) {
          case kJointFree:
            m.qpos0.insert(m.qpos0.end(), &m.body_pos[3 * b], &m.body_pos[3 * b] + 3);
            m.qpos0.insert(m.qpos0.end(), &m.body_quat[4 * b], &m.body_quat[4 * b] + 4);
            m.qpos_spring.insert(m.qpos_spring.end(), m.qpos0.end() - 7, m.qpos0.end());
            break;
          case kJointBall:
            m.qpos0.insert(m.qpos0.end(), {1, 0, 0, 0});
            m.qpos_spring.insert(m.qpos_spring.end(), {1, 0, 0, 0});
            break;
          case kJointHinge:
            m.qpos0.push_back(to_radians(s.ref));
            m.qpos_spring.push_back(to_radians(s.springref));
            break;
          default:
            m.qpos0.push_back(s.ref);
            m.qpos_spring.push_back(s.springref);
            break;
        }
        for (int k = 0; k < joint_nv(s.type); ++k) {
          m.dof_bodyid.push_back(b);
          m.dof_jntid.push_back(j);
          m.dof_parentid.push_back(body_last_dof[b]);
          m.dof_damping.push_back(s.damping);
          m.dof_armature.push_back(s.armature);
          body_last_dof[b] = m.nv++;
        }
        m.nq += joint_nq(s.type);
      }
    }
  }

  // MuJoCo 2.2.2 refuses a body with joints unless it, or one of its jointless children, has
  // mass and each principal moment of at least mjMINVAL (checked against libmujoco in the tests).
  void check_moving_bodies() const {
    auto solid = [&](int b) {
      return m.body_mass[b] >= kMinVal && m.body_inertia[3 * b] >= kMinVal && m.body_inertia[3 * b + 1] >= kMinVal &&
             m.body_inertia[3 * b + 2] >= kMinVal;
    };
    for (int b = 1; b < m.nbody; ++b) {
      if (m.body_jntnum[b] == 0 || solid(b)) continue;
      bool ok = false;
      for (int c = b + 1; c < m.nbody && !ok; ++c) ok = m.body_parentid[c] == b && m.body_jntnum[c] == 0 && solid(c);
      if (!ok) {
        fail(m_body_elem[b], "a body with joints needs mass and inertia of at least 1e-15 (add an <inertial> or a "
                             "geom with mass, here or in a jointless child body)");
      }
    }
  }

  // ---- actuators ----

  void read_actuators(const XMLElement* section) {
    {
      Attrs a(m_file, section);
      a.finish();
    }
    for (const XMLElement* e = section->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string kind = e->Name();
      if (kind != "motor" && kind != "position" && kind != "velocity") unsupported_element(e, "motor, position, velocity");
      no_children(e);
      Attrs a(m_file, e);
      ActuatorSpec s = find_class(a, a.text("class").value_or("main")).actuator;
      read_actuator_attrs(a, kind, &s);
      const std::string name = a.text("name").value_or("");
      const auto joint = a.text("joint");
      a.finish();
      check_name(m_actuator_names, "actuator", e, name);
      if (!joint) a.fail("attribute \"joint\" is required (only joint transmissions are supported)");
      const int jid = m.joint_id(*joint);
      if (jid < 0) a.fail("unknown joint " + quoted(*joint));
      if (m.jnt_type[jid] != kJointHinge && m.jnt_type[jid] != kJointSlide) {
        a.fail("joint " + quoted(*joint) + " is not a hinge or slide joint");
      }
      const bool ctrllimited = resolve_limited(a, s.ctrllimited, s.ctrlrange, "ctrl");
      const bool forcelimited = resolve_limited(a, s.forcelimited, s.forcerange, "force");
      m.actuator_kind.push_back(kind == "motor" ? kActMotor : kind == "position" ? kActPosition : kActVelocity);
      m.actuator_trnid.push_back(jid);
      m.actuator_gear.push_back(s.gear);
      m.actuator_ctrllimited.push_back(ctrllimited ? 1 : 0);
      m.actuator_ctrlrange.insert(m.actuator_ctrlrange.end(), s.ctrlrange, s.ctrlrange + 2);
      m.actuator_forcelimited.push_back(forcelimited ? 1 : 0);
      m.actuator_forcerange.insert(m.actuator_forcerange.end(), s.forcerange, s.forcerange + 2);
      m.actuator_kp.push_back(kind == "position" ? s.gain : 0);
      m.actuator_kv.push_back(kind == "velocity" ? s.gain : kind == "position" ? -s.bias[2] : 0);
      m.actuator_name.push_back(name);
      m.nu++;
    }
  }

  bool resolve_limited(Attrs& a, Tri t, const double range[2], const std::string& what) {
    bool limited = t == Tri::kTrue;
    if (t == Tri::kAuto && (range[0] != 0 || range[1] != 0)) {
      if (!m_opt.autolimits) {
        a.fail("has \"" + what + "range\" but not \"" + what + "limited\": set " + what +
               "limited=\"true\" or \"false\", or <compiler autolimits=\"true\"/>");
      }
      limited = true;
    }
    if (limited && range[0] >= range[1]) a.fail(what + "range[0] must be smaller than " + what + "range[1]");
    return limited;
  }

  // ---- keyframes ----

  void read_keyframes(const XMLElement* section) {
    {
      Attrs a(m_file, section);
      a.finish();
    }
    for (const XMLElement* e = section->FirstChildElement(); e; e = e->NextSiblingElement()) {
      if (std::strcmp(e->Name(), "key") != 0) unsupported_element(e, "key");
      no_children(e);
      Attrs a(m_file, e);
      const std::string name = a.text("name").value_or("");
      check_name(m_key_names, "key", e, name);
      double time = 0;
      a.number("time", &time);
      std::vector<double> qpos = m.qpos0, qvel(m.nv, 0.0), ctrl(m.nu, 0.0);
      read_key_vector(a, "qpos", &qpos, "nq");
      read_key_vector(a, "qvel", &qvel, "nv");
      read_key_vector(a, "ctrl", &ctrl, "nu");
      std::vector<double> none;
      read_key_vector(a, "act", &none, "na (this subset has no activation states)");
      read_key_vector(a, "mpos", &none, "3 x nmocap (this subset has no mocap bodies)");
      read_key_vector(a, "mquat", &none, "4 x nmocap (this subset has no mocap bodies)");
      a.finish();
      normalize_quaternions(&qpos);
      m.key_name.push_back(name);
      m.key_time.push_back(time);
      m.key_qpos.insert(m.key_qpos.end(), qpos.begin(), qpos.end());
      m.key_qvel.insert(m.key_qvel.end(), qvel.begin(), qvel.end());
      m.key_ctrl.insert(m.key_ctrl.end(), ctrl.begin(), ctrl.end());
    }
  }

  // The quaternions of free and ball joints in a keyframe's qpos are made unit (as MuJoCo); a
  // zero quaternion becomes the identity.
  void normalize_quaternions(std::vector<double>* qpos) const {
    for (int j = 0; j < m.njnt; ++j) {
      if (m.jnt_type[j] != kJointFree && m.jnt_type[j] != kJointBall) continue;
      double* q = qpos->data() + m.jnt_qposadr[j] + (m.jnt_type[j] == kJointFree ? 3 : 0);
      const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      if (n < kMinVal) {
        q[0] = 1, q[1] = q[2] = q[3] = 0;
      } else {
        for (int k = 0; k < 4; ++k) q[k] /= n;
      }
    }
  }

  static void read_key_vector(Attrs& a, const char* attr, std::vector<double>* out, const char* size_name) {
    const auto values = a.list(attr);
    if (!values) return;
    if (values->size() != out->size()) {
      a.fail("attribute " + quoted(attr) + ": expected " + std::to_string(out->size()) + " numbers (" + size_name +
             "), got " + std::to_string(values->size()));
    }
    *out = *values;
  }

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
};

}  // namespace

Model parse_mjcf(const std::string& xml_text, const std::string& source_name) {
  return MjcfCompiler(source_name).compile(xml_text);
}

Model load_mjcf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MjcfError(path, 0, "mujoco", "", std::string("cannot open the file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw MjcfError(path, 0, "mujoco", "", "cannot read the file");
  return parse_mjcf(text.str(), path);
}

}  // namespace rlt
