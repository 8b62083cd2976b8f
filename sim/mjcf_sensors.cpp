// MJCF compiler, sensors (sim/mjcf_compiler.h): <sensor> children into the sensor_* arrays of the
// Model (computed by sim/sensors.h), and the zones of sites (type, size) that touch sensors read.
// MuJoCo 3's rules: each sensor reads one named object (a rangefinder its site: sim/ray.h); outputs
// are laid out in order (sensor_adr); noise is kept (Model::sensor_noise) but not applied, as
// MuJoCo's mj_step does not apply it; cutoff clamps; user is MuJoCo's user data and is ignored.
#include <cstring>
#include <sstream>

#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

namespace {

struct SensorKind {
  const char* name;
  int type;
  const char* attr;  // the attribute naming the sensed object ("" for frame sensors: objtype/objname; null: none)
  int objtype;
  int dim;
};

constexpr SensorKind kSensorKinds[] = {
    {"jointpos", kSensJointPos, "joint", kSensObjJoint, 1},
    {"jointvel", kSensJointVel, "joint", kSensObjJoint, 1},
    {"actuatorpos", kSensActuatorPos, "actuator", kSensObjActuator, 1},
    {"actuatorvel", kSensActuatorVel, "actuator", kSensObjActuator, 1},
    {"actuatorfrc", kSensActuatorFrc, "actuator", kSensObjActuator, 1},
    {"framepos", kSensFramePos, "", kSensObjNone, 3},
    {"framequat", kSensFrameQuat, "", kSensObjNone, 4},
    {"framexaxis", kSensFrameXAxis, "", kSensObjNone, 3},
    {"frameyaxis", kSensFrameYAxis, "", kSensObjNone, 3},
    {"framezaxis", kSensFrameZAxis, "", kSensObjNone, 3},
    {"framelinvel", kSensFrameLinVel, "", kSensObjNone, 3},
    {"frameangvel", kSensFrameAngVel, "", kSensObjNone, 3},
    {"gyro", kSensGyro, "site", kSensObjSite, 3},
    {"velocimeter", kSensVelocimeter, "site", kSensObjSite, 3},
    {"accelerometer", kSensAccelerometer, "site", kSensObjSite, 3},
    {"force", kSensForce, "site", kSensObjSite, 3},
    {"torque", kSensTorque, "site", kSensObjSite, 3},
    {"touch", kSensTouch, "site", kSensObjSite, 1},
    {"magnetometer", kSensMagnetometer, "site", kSensObjSite, 3},
    {"subtreecom", kSensSubtreeCom, "body", kSensObjBody, 3},
    {"subtreelinvel", kSensSubtreeLinVel, "body", kSensObjBody, 3},
    {"subtreeangmom", kSensSubtreeAngMom, "body", kSensObjBody, 3},
    {"tendonpos", kSensTendonPos, "tendon", kSensObjTendon, 1},
    {"tendonvel", kSensTendonVel, "tendon", kSensObjTendon, 1},
    {"rangefinder", kSensRangefinder, "site", kSensObjSite, 1},
    {"jointactuatorfrc", kSensJointActFrc, "joint", kSensObjJoint, 1},
    {"tendonactuatorfrc", kSensTendonActFrc, "tendon", kSensObjTendon, 1},
    {"jointlimitpos", kSensJointLimitPos, "joint", kSensObjJoint, 1},
    {"jointlimitvel", kSensJointLimitVel, "joint", kSensObjJoint, 1},
    {"jointlimitfrc", kSensJointLimitFrc, "joint", kSensObjJoint, 1},
    {"tendonlimitpos", kSensTendonLimitPos, "tendon", kSensObjTendon, 1},
    {"tendonlimitvel", kSensTendonLimitVel, "tendon", kSensObjTendon, 1},
    {"tendonlimitfrc", kSensTendonLimitFrc, "tendon", kSensObjTendon, 1},
    {"ballquat", kSensBallQuat, "joint", kSensObjJoint, 4},
    {"ballangvel", kSensBallAngVel, "joint", kSensObjJoint, 3},
    {"e_potential", kSensEPotential, nullptr, kSensObjNone, 1},
    {"e_kinetic", kSensEKinetic, nullptr, kSensObjNone, 1},
    {"clock", kSensClock, nullptr, kSensObjNone, 1},
    {"framelinacc", kSensFrameLinAcc, "", kSensObjNone, 3},
    {"frameangacc", kSensFrameAngAcc, "", kSensObjNone, 3},
};

constexpr const char* kSupported =
    "jointpos, jointvel, actuatorpos, actuatorvel, actuatorfrc, framepos, framequat, framexaxis, frameyaxis, "
    "framezaxis, framelinvel, frameangvel, framelinacc, frameangacc, gyro, velocimeter, accelerometer, force, "
    "torque, touch, magnetometer, subtreecom, subtreelinvel, subtreeangmom, tendonpos, tendonvel, rangefinder (site; "
    "data dist, dir, origin, point, normal, depth), contact (data found, force, torque, dist, pos, normal, tangent, "
    "linvel, angvel), "
    "jointactuatorfrc, tendonactuatorfrc, jointlimitpos, jointlimitvel, jointlimitfrc, tendonlimitpos, "
    "tendonlimitvel, tendonlimitfrc, ballquat, ballangvel, e_potential, e_kinetic, clock, insidesite, distance, "
    "normal, fromto, camprojection";

// Appends one compiled sensor to the model's sensor arrays, its output at the end of sensordata.
struct SensorRow {
  int type, objtype, objid, reftype, refid, dim;
  double cutoff;
  int intprm0, intprm1;
  double noise;
};
void push_sensor(Model& m, const SensorRow& r, const std::string& name) {
  m.sensor_type.push_back(r.type);
  m.sensor_objtype.push_back(r.objtype);
  m.sensor_objid.push_back(r.objid);
  m.sensor_reftype.push_back(r.reftype);
  m.sensor_refid.push_back(r.refid);
  m.sensor_dim.push_back(r.dim);
  m.sensor_adr.push_back(m.nsensordata);
  m.sensor_cutoff.push_back(r.cutoff);
  m.sensor_intprm.push_back(r.intprm0), m.sensor_intprm.push_back(r.intprm1);
  m.sensor_noise.push_back(r.noise);
  m.sensor_name.push_back(name);
  m.nsensor++;
  m.nsensordata += r.dim;
}

int find_name(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

// The <default> element of class `cls` ("main": the top-level one), or null.
const XMLElement* find_default(const XMLElement* e, const std::string& cls, bool top) {
  for (const XMLElement* c = e->FirstChildElement("default"); c; c = c->NextSiblingElement("default")) {
    const char* name = c->Attribute("class");
    if ((name ? std::string(name) : top ? std::string("main") : std::string()) == cls) return c;
    if (const XMLElement* f = find_default(c, cls, false)) return f;
  }
  return nullptr;
}

}  // namespace

// A site's zone: its own type and size, else its default class's (the nearest <default> up the
// class chain with a <site> that sets them), else MuJoCo's sphere of 0.005.
void MjcfCompiler::read_site_zone(Attrs& a, const XMLElement* e, const std::string& cls, int* type, double size[3]) {
  *type = kGeomSphere;
  size[0] = size[1] = size[2] = 0.005;
  // The class chain, innermost last: its <site> defaults apply outermost first.
  std::vector<const XMLElement*> chain;
  const XMLElement* root = e->GetDocument()->RootElement();
  for (const XMLElement* d = root ? find_default(root, cls, true) : nullptr; d;
       d = d->Parent() ? d->Parent()->ToElement() : nullptr) {
    if (std::strcmp(d->Name(), "default") != 0) break;
    chain.insert(chain.begin(), d);
  }
  auto apply = [&](Attrs& from) {
    const int k = from.keyword("type", {"sphere", "capsule", "ellipsoid", "cylinder", "box"});
    if (k >= 0) *type = k + 2;  // MuJoCo's numbers: sphere 2, capsule 3, ellipsoid 4, cylinder 5, box 6
    from.numbers("size", size, 1, 3);
  };
  for (const XMLElement* d : chain)
    if (const XMLElement* s = d->FirstChildElement("site")) {
      Attrs da(m_file, s);
      apply(da);
    }
  apply(a);
}

void MjcfCompiler::read_sensors(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  for (const XMLElement* e = section->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string n = e->Name();
    const SensorKind* kind = nullptr;
    for (const SensorKind& k : kSensorKinds)
      if (n == k.name) kind = &k;
    if (!kind) {
      if (n == "contact") {
        read_contact_sensor(e);
        continue;
      }
      if (n == "insidesite" || n == "distance" || n == "normal" || n == "fromto" || n == "camprojection") {
        read_geometry_sensor(e);
        continue;
      }
      if (n == "tactile" || n == "user" || n == "plugin") fail(e, n + " sensors are not supported");
      unsupported_element(e, kSupported);
    }
    no_children(e);
    Attrs a(m_file, e);
    const std::string name = a.text("name").value_or("");
    double noise = 0, cutoff = 0;
    a.number("noise", &noise);
    if (a.number("cutoff", &cutoff) && cutoff < 0) a.fail("attribute \"cutoff\" must be non-negative");
    if (noise < 0) a.fail("attribute \"noise\" must be non-negative");
    a.ignore({"user"});  // MuJoCo's user data
    int objtype = kind->objtype, objid = -1, reftype = kSensObjNone, refid = -1;
    int lagged = 0;               // e_kinetic under the energy flag (sensor_intprm 1)
    int rf_spec = 1, rf_dim = 1;  // a rangefinder's data fields (MuJoCo's dataspec bits) and their scalars
    // The id of object `obj` of type `type` (a SensorObj), or a refusal naming `attr`.
    auto lookup = [&](int type, const std::string& obj, const char* attr) {
      const int id = type == kSensObjBody || type == kSensObjXBody ? m.body_id(obj)
                     : type == kSensObjJoint                       ? m.joint_id(obj)
                     : type == kSensObjGeom                        ? find_name(m.geom_name, obj)
                     : type == kSensObjSite                        ? find_name(m.site_name, obj)
                     : type == kSensObjTendon                      ? find_name(m.tendon_name, obj)
                     : type == kSensObjCamera                      ? find_name(m.cam_name, obj)
                                                                   : find_name(m.actuator_name, obj);
      if (obj.empty() || id < 0) a.fail("attribute " + quoted(attr) + ": unknown object " + quoted(obj));
      return id;
    };
    auto frame_type = [&](const char* attr) {
      const int k = a.keyword(attr, {"body", "xbody", "geom", "site", "camera"});
      return k < 0    ? -1
             : k == 0 ? kSensObjBody
             : k == 1 ? kSensObjXBody
             : k == 2 ? kSensObjGeom
             : k == 3 ? kSensObjSite
                      : kSensObjCamera;
    };
    if (kind->type == kSensRangefinder) {
      // MuJoCo 3's rangefinder on a site: one ray, its distance. The camera form (a depth image) and
      // the other data fields (dir, origin, point, normal, depth) are not supported.
      if (a.has("camera"))
        a.fail("attribute \"camera\": camera rangefinders are not supported (depth images; use site=)");
      // data: MuJoCo 3's fields in its order (dist, dir, origin, point, normal, depth), kept as its
      // dataspec bits in sensor_refid.
      if (const auto data = a.text("data")) {
        static const char* const kFields[] = {"dist", "dir", "origin", "point", "normal", "depth"};
        static const int kDims[] = {1, 3, 3, 3, 3, 1};
        std::istringstream words(*data);
        std::string w;
        int last = -1;
        rf_spec = 0, rf_dim = 0;
        while (words >> w) {
          int f = 0;
          while (f < 6 && w != kFields[f]) ++f;
          if (f == 6)
            a.fail("attribute \"data\": unknown field " + quoted(w) + " (dist, dir, origin, point, normal, depth)");
          if (f <= last)
            a.fail("attribute \"data\": fields must be in order: dist, dir, origin, point, normal, depth (as MuJoCo)");
          last = f, rf_spec |= 1 << f, rf_dim += kDims[f];
        }
        if (rf_spec == 0) a.fail("attribute \"data\": no field");
      }
    }
    if (!kind->attr) {
      // e_potential, e_kinetic, clock: no object (MuJoCo computes the energies on demand). Under the
      // energy flag MuJoCo 3.17's e_kinetic reads d->energy[1] left by the previous step's velocity
      // stage (its lazy flag is cleared only there), the kinetic energy one step late: marked with
      // sensor_intprm 1 (physics_substep keeps it). Under RK4 that value would be its last stage's:
      // refused.
      objid = -1;
      if (kind->type == kSensEKinetic && m_flags.energy) {
        if (m.integrator == kIntRK4)
          a.fail(
              "e_kinetic with <flag energy=\"enable\"/> under the RK4 integrator is not supported (MuJoCo 3 then "
              "reports the kinetic energy of the previous step's last Runge-Kutta stage)");
        lagged = 1;
      }
    } else if (*kind->attr) {
      const auto obj = a.text(kind->attr);
      if (!obj) a.fail("attribute " + quoted(kind->attr) + " is required");
      objid = lookup(objtype, *obj, kind->attr);
      const size_t o = static_cast<size_t>(objid);
      const bool ball_sensor = kind->type == kSensBallQuat || kind->type == kSensBallAngVel;
      if (objtype == kSensObjJoint && ball_sensor && m.jnt_type[o] != kJointBall)
        a.fail("joint " + quoted(*obj) + " must be a ball joint (as MuJoCo)");
      if (objtype == kSensObjJoint && !ball_sensor && m.jnt_type[o] != kJointHinge && m.jnt_type[o] != kJointSlide)
        a.fail("joint " + quoted(*obj) + " must be a hinge or slide joint" +
               (kind->type == kSensJointLimitPos || kind->type == kSensJointLimitVel || kind->type == kSensJointLimitFrc
                    ? " (ball joint limits are not modelled)"
                    : " (as MuJoCo)"));
      // MuJoCo requires a limited object (its own limited, before the limit flag: with
      // <flag limit="disable"/> the sensor compiles and reads 0).
      if ((kind->type == kSensJointLimitPos || kind->type == kSensJointLimitVel || kind->type == kSensJointLimitFrc) &&
          !m.jnt_limited[o] && m_flags.limit)
        a.fail("joint " + quoted(*obj) + " must be limited (as MuJoCo)");
      if ((kind->type == kSensTendonLimitPos || kind->type == kSensTendonLimitVel ||
           kind->type == kSensTendonLimitFrc) &&
          !m.tendon_limited[o] && m_flags.limit)
        a.fail("tendon " + quoted(*obj) + " must be limited (as MuJoCo)");
    } else {
      objtype = frame_type("objtype");
      const auto obj = a.text("objname");
      if (objtype < 0 || !obj) a.fail("attributes \"objtype\" and \"objname\" are required");
      objid = lookup(objtype, *obj, "objname");
      // framelinacc and frameangacc have no reference frame (MuJoCo's schema refuses one)
      const bool acc = kind->type == kSensFrameLinAcc || kind->type == kSensFrameAngAcc;
      const int rt = acc ? -1 : frame_type("reftype");
      const auto ref = a.text("refname");
      if (acc && ref) a.fail("attribute \"refname\": framelinacc and frameangacc have no reference frame");
      if ((rt >= 0) != ref.has_value()) a.fail("attributes \"reftype\" and \"refname\" go together");
      if (rt >= 0) reftype = rt, refid = lookup(rt, *ref, "refname");
    }
    a.finish();
    check_name(m_sensor_names, "sensor", e, name);
    int dim = kind->dim;
    if (kind->type == kSensRangefinder) refid = rf_spec, dim = rf_dim;
    push_sensor(m, {kind->type, objtype, objid, reftype, refid, dim, cutoff, lagged, 0, noise}, name);
  }
}

// insidesite (MuJoCo's mju_insideGeom: 1 when the object's position is inside the site's zone),
// distance, normal and fromto (mj_geomDistance between geom1 or body1's geoms and geom2 or body2's,
// searched up to cutoff), camprojection (the site in the camera's pixels), as MuJoCo 3.17 compiles
// them: object 1 in sensor_objtype/objid, object 2 (the site, the second geom or body, the camera)
// in sensor_reftype/refid.
void MjcfCompiler::read_geometry_sensor(const XMLElement* e) {
  no_children(e);
  Attrs a(m_file, e);
  const std::string n = e->Name();
  const std::string name = a.text("name").value_or("");
  double noise = 0, cutoff = 0;
  a.number("noise", &noise);
  if (a.number("cutoff", &cutoff) && cutoff < 0) a.fail("attribute \"cutoff\" must be non-negative");
  if (noise < 0) a.fail("attribute \"noise\" must be non-negative");
  a.ignore({"user"});
  auto required = [&](const char* attr) {
    const auto v = a.text(attr);
    if (!v) a.fail("attribute " + quoted(attr) + " is required");
    return *v;
  };
  auto site_id = [&](const char* attr) {
    const std::string s = required(attr);
    const int id = find_name(m.site_name, s);
    if (id < 0) a.fail("attribute " + quoted(attr) + ": unknown site " + quoted(s));
    return id;
  };
  int type, objtype, objid, reftype, refid, dim;
  if (n == "insidesite") {
    type = kSensInsideSite, dim = 1;
    reftype = kSensObjSite, refid = site_id("site");
    const int k = a.keyword("objtype", {"body", "xbody", "geom", "site", "camera"});
    if (k < 0) a.fail("attribute \"objtype\" is required (body, xbody, geom, site, camera)");
    objtype = k == 0   ? kSensObjBody
              : k == 1 ? kSensObjXBody
              : k == 2 ? kSensObjGeom
              : k == 3 ? kSensObjSite
                       : kSensObjCamera;
    const std::string obj = required("objname");
    objid = objtype == kSensObjBody || objtype == kSensObjXBody ? m.body_id(obj)
            : objtype == kSensObjGeom                           ? find_name(m.geom_name, obj)
            : objtype == kSensObjSite                           ? find_name(m.site_name, obj)
                                                                : find_name(m.cam_name, obj);
    if (objid < 0) a.fail("attribute \"objname\": unknown object " + quoted(obj));
  } else if (n == "camprojection") {
    type = kSensCamProjection, dim = 2;
    objtype = kSensObjSite, objid = site_id("site");
    const std::string cam = required("camera");
    reftype = kSensObjCamera, refid = find_name(m.cam_name, cam);
    if (refid < 0) a.fail("attribute \"camera\": unknown camera " + quoted(cam));
  } else {
    type = n == "distance" ? kSensGeomDist : n == "normal" ? kSensGeomNormal : kSensGeomFromTo;
    dim = n == "distance" ? 1 : n == "normal" ? 3 : 6;
    // one of geomK, bodyK for each side (as MuJoCo's schema)
    auto object = [&](const std::string& k, int* ot, int* id) {
      const auto g = a.text(("geom" + k).c_str()), b = a.text(("body" + k).c_str());
      if (g && b) a.fail("at most one of \"geom" + k + "\", \"body" + k + "\" can be given");
      if (!g && !b) a.fail("one of \"geom" + k + "\", \"body" + k + "\" is required");
      *ot = g ? kSensObjGeom : kSensObjBody;
      *id = g ? find_name(m.geom_name, *g) : m.body_id(*b);
      if (*id < 0) a.fail("attribute " + quoted("geom" + k) + ": unknown object " + quoted(g ? *g : *b));
    };
    object("1", &objtype, &objid);
    object("2", &reftype, &refid);
    if (objtype == reftype && objid == refid) a.fail("1st body/geom must be different from 2nd body/geom (as MuJoCo)");
    for (const auto& [ot, id] : {std::pair<int, int>{objtype, objid}, std::pair<int, int>{reftype, refid}})
      if (ot == kSensObjGeom && m.geom_type[static_cast<size_t>(id)] == kGeomHField)
        a.fail("height fields are not supported in geom distance sensors (as MuJoCo; a body's are)");
  }
  a.finish();
  check_name(m_sensor_names, "sensor", e, name);
  push_sensor(m, {type, objtype, objid, reftype, refid, dim, cutoff, 0, 0, noise}, name);
}

// <contact> (MuJoCo 3's contact sensor): the contacts matching object 1 (geom1, body1, subtree1 or
// site) and object 2 (geom2, body2, subtree2; none: any), num slots of the data fields (found,
// force, torque, dist, pos, normal, tangent, in that order), reduced as reduce says (none: the first
// num in contact order; mindist, maxforce: the num smallest distances, largest forces; netforce: one
// net wrench in slot 0). The data bits and the reduction go in sensor_intprm (sim/sensors.h).
void MjcfCompiler::read_contact_sensor(const XMLElement* e) {
  no_children(e);
  Attrs a(m_file, e);
  const std::string name = a.text("name").value_or("");
  double cutoff = 0;
  if (a.number("cutoff", &cutoff) && cutoff < 0) a.fail("attribute \"cutoff\" must be non-negative");
  a.ignore({"user", "noise"});
  const int reduce = a.keyword("reduce", {"none", "mindist", "maxforce", "netforce"});
  static const char* const kFields[] = {"found",  "force",   "torque", "dist",  "pos",
                                        "normal", "tangent", "linvel", "angvel"};
  static const int kSizes[] = {1, 3, 3, 1, 3, 3, 3, 3, 3};
  int spec = 1 << kConDataFound, size = 1;
  if (const auto data = a.text("data")) {
    std::istringstream words(*data);
    std::string w;
    int last = -1;
    spec = 0, size = 0;
    while (words >> w) {
      int f = 0;
      while (f < 9 && w != kFields[f]) ++f;
      if (f == 9) a.fail("attribute \"data\": unknown field " + quoted(w));
      if (f <= last)
        a.fail(
            "attribute \"data\": fields must be in order: found, force, torque, dist, pos, normal, tangent, linvel, "
            "angvel (as MuJoCo)");
      last = f, spec |= 1 << f, size += kSizes[f];
    }
    if (spec == 0) a.fail("attribute \"data\": no field");
  }
  if (reduce == kReduceNetForce && (spec & (1 << kConDataLinVel | 1 << kConDataAngVel)))
    a.fail("netforce reduction is incompatible with linvel or angvel (as MuJoCo)");
  int num = 1;
  if (a.integer("num", &num) && num < 1) a.fail("attribute \"num\" must be positive");
  // object 1 and object 2: at most one attribute each (as MuJoCo's schema)
  auto object = [&](std::initializer_list<const char*> attrs, int* type, int* id) {
    *type = kSensObjNone, *id = -1;
    const char* given = nullptr;
    for (const char* at : attrs) {
      const auto v = a.text(at);
      if (!v) continue;
      if (given) a.fail("attributes " + quoted(given) + " and " + quoted(at) + ": at most one can be given");
      given = at;
      const std::string k(at);
      if (k.rfind("geom", 0) == 0) *type = kSensObjGeom, *id = find_name(m.geom_name, *v);
      else if (k.rfind("body", 0) == 0) *type = kSensObjBody, *id = m.body_id(*v);
      else if (k.rfind("subtree", 0) == 0) *type = kSensObjXBody, *id = m.body_id(*v);
      else *type = kSensObjSite, *id = find_name(m.site_name, *v);
      if (*id < 0) a.fail("attribute " + quoted(at) + ": unknown object " + quoted(*v));
    }
  };
  int type1, id1, type2, id2;
  object({"geom1", "body1", "subtree1", "site"}, &type1, &id1);
  object({"geom2", "body2", "subtree2"}, &type2, &id2);
  a.finish();
  check_name(m_sensor_names, "sensor", e, name);
  push_sensor(m, {kSensContact, type1, id1, type2, id2, num * size, cutoff, spec, reduce < 0 ? kReduceNone : reduce, 0},
              name);
}

}  // namespace rlt::mjcf_detail
