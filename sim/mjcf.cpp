// MJCF subset compiler: tinyxml2 parse -> default classes -> body tree (MuJoCo's depth-first order,
// a body's own joints/geoms/sites before its children's) -> geom and body inertia -> joint and dof
// addresses -> actuators -> sensors -> keyframes. This file holds the pipeline (MjcfCompiler::compile), errors
// and names, <compiler>, <option> and <custom>; the other steps live beside it, one file per concern
// (sim/mjcf_compiler.h lists them). Each rule follows MuJoCo 2.2.2's compiler (user_objects.cc,
// user_model.cc); tests/sim/test_mjcf.cpp checks the result against libmujoco.
#include "sim/mjcf.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/mjcf_compiler.h"

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
    : std::runtime_error(format_message(file, line, element, name, what)),
      m_file(file),
      m_line(line),
      m_element(element) {}

namespace mjcf_detail {

Model MjcfCompiler::compile(const std::string& text) {
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
    const auto slash = m_file.find_last_of('/');
    m_main_dir = slash == std::string::npos ? "" : m_file.substr(0, slash + 1);
    expand_includes(&doc, doc.RootElement(), m_file, "");
  }
  {
    Attrs a(m_file, root);
    a.ignore({"model"});
    a.finish();
  }

  // MuJoCo reads the sections in this order wherever they stand in the file.
  std::vector<const XMLElement*> compilers, options, defaults, worldbodies, actuators, sensors, keyframes, customs,
      contacts, equalities, assets, tendons;
  for (const XMLElement* s = root->FirstChildElement(); s; s = s->NextSiblingElement()) {
    const std::string n = s->Name();
    if (n == "compiler") compilers.push_back(s);
    else if (n == "option") options.push_back(s);
    else if (n == "default") defaults.push_back(s);
    else if (n == "worldbody") worldbodies.push_back(s);
    else if (n == "actuator") actuators.push_back(s);
    else if (n == "sensor") sensors.push_back(s);
    else if (n == "keyframe") keyframes.push_back(s);
    else if (n == "custom") customs.push_back(s);
    else if (n == "contact") contacts.push_back(s);
    else if (n == "equality") equalities.push_back(s);
    else if (n == "asset") assets.push_back(s);  // meshes (sim/mjcf_mesh.cpp), hfields (sim/mjcf_hfield.cpp)
    else if (n == "tendon") tendons.push_back(s);
    else if (n == "visual" || n == "statistic" || n == "size") continue;  // visual / sizing only
    else
      unsupported_element(s,
                          "compiler, option, default, asset, worldbody, contact, equality, tendon, actuator, sensor, "
                          "keyframe, custom; ignored: visual, statistic, size");
  }
  for (const XMLElement* s : compilers) read_compiler(s);
  for (const XMLElement* s : options) read_option(s);
  for (const XMLElement* s : customs) read_custom(s);
  m_classes["main"] = DefaultClass{};
  for (const XMLElement* s : defaults) read_default(s, nullptr);  // each top-level one adds to "main"
  {
    // asset directories for the mesh and texture readers (MuJoCo's rule): the main file's
    // directory + meshdir (texturedir), else + assetdir; an absolute directory stands alone
    auto resolve = [&](const std::string& dir) {
      const std::string d = dir.empty() ? m_opt.assetdir : dir;
      std::string out = !d.empty() && d[0] == '/' ? d : m_main_dir + d;
      if (!out.empty() && out.back() != '/') out += '/';
      return out;
    };
    m.meshdir = resolve(m_opt.meshdir);
    m.texturedir = resolve(m_opt.texturedir);
  }
  for (const XMLElement* s : assets) read_assets(s);   // sim/mjcf_mesh.cpp
  for (const XMLElement* s : assets) read_hfields(s);  // sim/mjcf_hfield.cpp

  add_world();
  // Several <worldbody> sections (an included robot, then the scene's floor) are one world body, as
  // in MuJoCo: the world's own geoms and sites of every section first, then the bodies, in order.
  // <replicate> (sim/mjcf_replicate.cpp) after <compiler>: its euler follows angle and eulerseq
  for (const XMLElement* s : worldbodies) expand_replicates(&doc, const_cast<XMLElement*>(s));
  for (const XMLElement* s : worldbodies) read_worldbody(s, false);
  for (const XMLElement* s : worldbodies) read_worldbody(s, true);
  compile_meshes();
  compile_geoms();
  compile_bodies();
  apply_mass_bounds();
  compile_joints();
  compile_mocap();
  check_moving_bodies();
  compile_constraints();
  for (const XMLElement* s : contacts) read_contact(s);
  for (const XMLElement* s : tendons) read_tendons(s);
  for (const XMLElement* s : equalities) read_equality(s);
  for (const XMLElement* s : actuators) read_actuators(s);
  for (const XMLElement* s : sensors) read_sensors(s);
  for (const XMLElement* s : keyframes) read_keyframes(s);
  m.nsite = static_cast<int>(m.site_bodyid.size());
  compile_sameframe();  // sim/mjcf_inertia.cpp
  m.nkey = static_cast<int>(m.key_time.size());
  set_const();
  set_length_range();  // sim/mjcf_lengthrange.cpp
  return std::move(m);
}

void MjcfCompiler::fail(const XMLElement* e, const std::string& what) const {
  const char* name = e->Attribute("name");
  const XmlOrigin* o = origin_of(e);
  throw MjcfError(o ? o->file : m_file, line_of(e), e->Name(), name ? name : "", o ? what + o->chain : what);
}

void MjcfCompiler::unsupported_element(const XMLElement* e, const char* expected) const {
  const XMLElement* parent = e->Parent() ? e->Parent()->ToElement() : nullptr;
  fail(e,
       std::string("unsupported element") + (parent ? " in <" + std::string(parent->Name()) + ">" : "") +
           (*expected ? std::string(" (supported: ") + expected + ")" : std::string(" (it takes no child elements)")));
}

void MjcfCompiler::no_children(const XMLElement* e) const {
  if (const XMLElement* c = e->FirstChildElement()) unsupported_element(c, "");
}

void MjcfCompiler::check_name(std::map<std::string, int>& seen, const char* what, const XMLElement* e,
                              const std::string& name) {
  if (name.empty()) return;
  const auto [it, inserted] = seen.emplace(name, e ? line_of(e) : 0);
  if (!inserted) {
    fail(e, std::string("duplicate ") + what + " name " + quoted(name) +
                (it->second > 0 ? " (first at line " + std::to_string(it->second) + ")" : " (the world body)"));
  }
}

const DefaultClass& MjcfCompiler::find_class(Attrs& a, const std::string& name) const {
  const auto it = m_classes.find(name);
  if (it == m_classes.end()) a.fail("unknown default class " + quoted(name));
  return it->second;
}

// ---- compiler, option ----

void MjcfCompiler::read_compiler(const XMLElement* e) {
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
  if (a.number("boundmass", &m_opt.boundmass) && m_opt.boundmass < 0)
    a.fail("attribute \"boundmass\" must be non-negative");
  if (a.number("boundinertia", &m_opt.boundinertia) && m_opt.boundinertia < 0)
    a.fail("attribute \"boundinertia\" must be non-negative");
  a.number("settotalmass", &m_opt.settotalmass);
  a.boolean("balanceinertia", &m_opt.balanceinertia);
  a.only_default_text("discardvisual", "false");
  a.only_default_text("fusestatic", "false");
  if (const auto d = a.text("meshdir")) m_opt.meshdir = *d;
  if (const auto d = a.text("texturedir")) m_opt.texturedir = *d;
  if (const auto d = a.text("assetdir")) m_opt.assetdir = *d;
  a.ignore({"strippath", "convexhull", "fitaabb", "usethread", "exactmeshinertia"});
  a.finish();
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    if (std::strcmp(c->Name(), "lengthrange") != 0) unsupported_element(c, "lengthrange");
    read_lengthrange(c);  // sim/mjcf_lengthrange.cpp
  }
}

void MjcfCompiler::read_option(const XMLElement* e) {
  Attrs a(m_file, e);
  if (a.number("timestep", &m.timestep) && !(m.timestep > 0)) a.fail("attribute \"timestep\" must be positive");
  a.numbers("gravity", m.gravity, 3, 3);
  if (const int k = a.keyword("integrator", {"Euler", "RK4", "implicitfast", "implicit"}); k >= 0) {
    const int integrators[] = {kIntEuler, kIntRK4, kIntImplicitFast, kIntImplicit};
    m.integrator = integrators[k];
  }
  read_option_constraints(a);
  a.finish();
  read_flags(e);
}

void MjcfCompiler::apply_mass_bounds() {
  for (int b = 1; b < m.nbody; ++b) {
    if (m_opt.boundmass > 0) m.body_mass[b] = std::max(m.body_mass[b], m_opt.boundmass);
    if (m_opt.boundinertia > 0) {
      for (int k = 0; k < 3; ++k) m.body_inertia[3 * b + k] = std::max(m.body_inertia[3 * b + k], m_opt.boundinertia);
    }
  }
  if (m_opt.settotalmass > 0) {
    double total = 0;
    for (int b = 1; b < m.nbody; ++b) total += m.body_mass[b];
    if (total < kMinVal) throw MjcfError(m_file, 0, "compiler", "", "settotalmass: the model has no mass to scale");
    const double scale = m_opt.settotalmass / total;
    for (int b = 1; b < m.nbody; ++b) {
      m.body_mass[b] *= scale;
      for (int k = 0; k < 3; ++k) m.body_inertia[3 * b + k] *= scale;
    }
  }
}

// ---- custom: rltrain's numerics ----

void MjcfCompiler::read_custom(const XMLElement* e) {
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
        a.fail(name +
               ": the spring-damper contact and limit law was removed; contacts and joint limits follow "
               "MuJoCo's soft constraints (default solref/solimp), which take no such parameter");
    if (key != "soft_constraints")
      a.fail("unknown rltrain parameter " + quoted(name) + " (known: " + prefix + "soft_constraints)");
    double value = 0;
    if (!a.number("data", &value)) a.fail("attribute \"data\" is required (one number)");
    int size = 1;
    if (a.integer("size", &size) && size != 1)
      a.fail("attribute \"size\": rltrain parameters take one number, got " + std::to_string(size));
    if (value != 1)
      a.fail(name +
             ": expected 1 (MuJoCo's soft constraints, the only contact and limit law; the spring-damper "
             "law was removed), got " +
             quoted(c->Attribute("data")));
    a.finish();
    no_children(c);
  }
}

}  // namespace mjcf_detail

Model parse_mjcf(const std::string& xml_text, const std::string& source_name) {
  return mjcf_detail::MjcfCompiler(source_name).compile(xml_text);
}

Model load_mjcf(const std::string& path) {
  // Only a regular file of sane size: a FIFO or device would block or never end.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw MjcfError(path, 0, "mujoco", "", "not a regular file (an MJCF model is an XML file)");
  constexpr std::uintmax_t kMaxMjcfBytes = 64u << 20;
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > kMaxMjcfBytes)
    throw MjcfError(path, 0, "mujoco", "",
                    "larger than 64 MiB; an MJCF file is XML (meshes and textures are separate)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MjcfError(path, 0, "mujoco", "", std::string("cannot open the file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw MjcfError(path, 0, "mujoco", "", "cannot read the file");
  return parse_mjcf(text.str(), path);
}

}  // namespace rlt
