// MJCF compiler, default classes (sim/mjcf_compiler.h): <default> and the joint, geom and actuator
// attributes, and the frame attributes, that defaults share with the body tree.
#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

// ---- default classes ----

void MjcfCompiler::read_default(const XMLElement* e, const DefaultClass* parent) {
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
      read_frame_attrs(ca, &cls.geom_frame, false);
    } else if (n == "site") {
      read_frame_attrs(ca, &cls.site_frame, false);
      ca.ignore({"type", "size", "rgba", "group", "material"});
    } else if (n == "motor" || n == "position" || n == "velocity" || n == "general" || n == "intvelocity" ||
               n == "damper" || n == "adhesion" || n == "muscle") {
      read_actuator_attrs(ca, n, &cls.actuator);
    } else if (n == "mesh") {
      read_mesh_attrs(ca, &cls.mesh);  // sim/mjcf_mesh.cpp
    } else if (n == "tendon") {
      read_tendon_attrs(ca, &cls.tendon);
    } else if (n == "pair") {
      read_pair_attrs(ca, &cls.pair);
    } else if (n == "equality") {
      read_equality_attrs(ca, &cls.equality);
    } else if (n == "material") {
      ca.numbers("rgba", cls.material_rgba, 4, 4);  // its alpha hides geoms from rays (sim/ray.h); the rest is visual
      continue;
    } else if (n == "camera") {
      read_camera_attrs(ca, &cls.camera, false);
    } else if (n == "light" || n == "texture") {
      continue;  // visual
    } else {
      unsupported_element(c,
                          "default, joint, geom, site, mesh, tendon, general, motor, position, velocity, intvelocity, "
                          "damper, adhesion, muscle, pair, equality, camera; ignored: light, material, texture");
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

void MjcfCompiler::read_joint_attrs(Attrs& a, JointSpec* j) {
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
  if (a.numbers("springdamper", j->springdamper, 2, 2) && (j->springdamper[0] != 0 || j->springdamper[1] != 0) &&
      (j->springdamper[0] <= 0 || j->springdamper[1] <= 0))
    a.fail("attribute \"springdamper\": when defined, both values must be positive");
  read_joint_constraint_attrs(a, j);
  a.ignore({"group"});
}

void MjcfCompiler::read_geom_attrs(Attrs& a, GeomSpec* g) {
  if (const auto t = a.text("type")) {
    if (*t == "plane") g->type = kGeomPlane;
    else if (*t == "sphere") g->type = kGeomSphere;
    else if (*t == "capsule") g->type = kGeomCapsule;
    else if (*t == "box") g->type = kGeomBox;
    else if (*t == "cylinder") g->type = kGeomCylinder;
    else if (*t == "ellipsoid") g->type = kGeomEllipsoid;
    else if (*t == "mesh") g->type = kGeomMesh;
    else if (*t == "hfield") g->type = kGeomHField;
    else
      a.fail("geom type " + quoted(*t) +
             " is not supported (plane, hfield, sphere, capsule, cylinder, ellipsoid, box, mesh)");
  }
  if (const auto mesh = a.text("mesh")) g->mesh = *mesh;
  if (const auto h = a.text("hfield")) g->hfield = *h;
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
  read_geom_constraint_attrs(a, g);
  if (const auto mat = a.text("material")) g->material = *mat;
  a.ignore({"user"});  // user: MuJoCo's user data
}

void MjcfCompiler::read_actuator_attrs(Attrs& a, const std::string& kind, ActuatorSpec* s) {
  if (kind == "adhesion") {  // MuJoCo's mjs_setToAdhesion; its schema allows only these (and body)
    a.numbers("ctrlrange", s->ctrlrange, 2, 2);
    a.tri("forcelimited", &s->forcelimited);
    a.numbers("forcerange", s->forcerange, 2, 2);
    a.ignore({"group", "user"});
    a.number("gain", &s->gainprm[0]);
    s->ctrllimited = Tri::kTrue;
    s->gaintype = kGainFixed, s->biastype = kBiasNone;
    if (s->gainprm[0] < 0) a.fail("adhesion gain cannot be negative");
    if (s->ctrlrange[0] < 0 || s->ctrlrange[1] < 0) a.fail("adhesion control range cannot be negative");
    return;
  }
  // MuJoCo's 6D gear: given values replace the first entries, the rest keep the class's; joint, tendon
  // and slider-crank transmissions use gear[0] only (MuJoCo too), a site all six
  a.numbers("gear", s->gear, 1, 6);
  a.number("cranklength", &s->cranklength);  // (a slider-crank checks it)
  a.tri("ctrllimited", &s->ctrllimited);
  a.numbers("ctrlrange", s->ctrlrange, 2, 2);
  a.tri("forcelimited", &s->forcelimited);
  a.numbers("forcerange", s->forcerange, 2, 2);
  a.tri("actlimited", &s->actlimited);
  a.numbers("actrange", s->actrange, 2, 2);
  a.boolean("actearly", &s->actearly);
  a.ignore({"group", "user"});
  a.only_default("actdim", -1);
  a.numbers("lengthrange", s->lengthrange, 2, 2);
  // gainprm and biasprm: MuJoCo's 10 (a muscle uses 9); dynprm: 3 are modelled (MuJoCo takes 10)
  auto prm = [&](const char* name, double* out, int num) {
    double v[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const int n = a.numbers(name, v, 1, 10);
    if (!n) return;
    for (int k = num; k < n; ++k)
      if (v[k] != 0)
        a.fail("attribute " + quoted(name) + ": only the first " + std::to_string(num) +
               " parameters are supported (the rest must be 0)");
    for (int k = 0; k < num; ++k) out[k] = v[k];
  };
  if (kind == "general") {
    if (const int k = a.keyword("dyntype", {"none", "integrator", "filter", "filterexact", "muscle", "user"}); k >= 0) {
      if (k > kDynMuscle)
        a.fail("attribute \"dyntype\": only none, integrator, filter, filterexact and muscle are supported");
      s->dyntype = k;
    }
    if (const int k = a.keyword("gaintype", {"fixed", "affine", "muscle", "user"}); k >= 0) {
      if (k > kGainMuscle) a.fail("attribute \"gaintype\": only fixed, affine and muscle are supported");
      s->gaintype = k;
    }
    if (const int k = a.keyword("biastype", {"none", "affine", "muscle", "user"}); k >= 0) {
      if (k > kBiasMuscle) a.fail("attribute \"biastype\": only none, affine and muscle are supported");
      s->biastype = k;
    }
    prm("dynprm", s->dynprm, kNumDynPrm);
    prm("gainprm", s->gainprm, kNumGainPrm);
    prm("biasprm", s->biasprm, kNumGainPrm);
  } else if (kind == "muscle") {  // MuJoCo's mjs_setToMuscle: its defaults where the class left MuJoCo's own
    double* g = s->gainprm;
    if (s->dynprm[0] == 1) s->dynprm[0] = 0.01;                                 // tau act
    if (s->dynprm[1] == 0) s->dynprm[1] = 0.04;                                 // tau deact
    const double defaults[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2};  // range[2], force, scale, lmin,
    if (g[0] == 1) g[0] = defaults[0];                                          // lmax, vmax, fpmax, fvmax
    for (int k = 1; k < 9; ++k)
      if (g[k] == 0) g[k] = defaults[k];
    double timeconst[2] = {-1, -1}, range[2] = {-1, -1}, tausmooth = s->dynprm[2];
    a.numbers("timeconst", timeconst, 2, 2);
    if (a.in_default() && a.has("tausmooth"))
      a.fail("attribute \"tausmooth\" cannot be set in a default class (MuJoCo's schema: nodefault)");
    a.number("tausmooth", &tausmooth);
    a.numbers("range", range, 2, 2);
    if (tausmooth < 0) a.fail("muscle tausmooth cannot be negative");
    s->dynprm[2] = tausmooth;
    for (int k = 0; k < 2; ++k) {
      if (timeconst[k] >= 0) s->dynprm[k] = timeconst[k];
      if (range[k] >= 0) g[k] = range[k];
    }
    const char* const names[7] = {"force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"};
    for (int k = 0; k < 7; ++k) {
      double v = -1;
      a.number(names[k], &v);
      if (v >= 0) g[2 + k] = v;  // (MuJoCo: a negative value keeps the default)
    }
    for (int k = 0; k < kNumGainPrm; ++k) s->biasprm[k] = g[k];
    s->dyntype = kDynMuscle, s->gaintype = kGainMuscle, s->biastype = kBiasMuscle;
  } else if (kind == "motor") {
    s->gainprm[0] = 1;
    s->dyntype = kDynNone, s->gaintype = kGainFixed, s->biastype = kBiasNone;
  } else if (kind == "position" || kind == "intvelocity") {  // MuJoCo's mjs_setToPosition / IntVelocity
    double kp = s->gainprm[0];
    a.number("kp", &kp);
    s->gainprm[0] = kp;
    // biasprm[2] as MuJoCo's mjs_setToPosition: -kv, or a dampratio (positive), which the compile's
    // last step turns into -kv from the joint's inertia at qpos0 (sim/mjcf_setconst.cpp)
    double kv = 0, dampratio = 0;
    const bool has_kv = a.number("kv", &kv), has_dampratio = a.number("dampratio", &dampratio);
    if (has_kv && has_dampratio) a.fail("kv and dampratio cannot both be defined");
    if (has_kv && kv < 0) a.fail("attribute \"kv\" must be non-negative");
    if (has_dampratio && dampratio < 0) a.fail("attribute \"dampratio\" must be non-negative");
    if (has_kv) s->position_bias2 = -kv;
    if (has_dampratio) s->position_bias2 = dampratio;
    s->biasprm[0] = 0, s->biasprm[1] = -kp, s->biasprm[2] = s->position_bias2;
    double tc = 0;
    if (a.number("timeconst", &tc)) {
      if (tc < 0) a.fail("attribute \"timeconst\" must be non-negative");
      s->dynprm[0] = tc;
      s->dyntype = tc == 0 ? kDynNone : kDynFilterExact;
    }
    if (a.number("inheritrange", &s->inheritrange) && s->inheritrange > 0 &&
        (kind == "position" ? (s->ctrlrange[0] != 0 || s->ctrlrange[1] != 0)
                            : (s->actrange[0] != 0 || s->actrange[1] != 0)))
      a.fail(std::string(kind == "position" ? "ctrlrange" : "actrange") + " and inheritrange cannot both be defined");
    s->gaintype = kGainFixed, s->biastype = kBiasAffine;
    if (kind == "intvelocity") s->dyntype = kDynIntegrator;
  } else if (kind == "velocity") {  // mjs_setToVelocity
    double kv = s->gainprm[0];
    a.number("kv", &kv);
    s->biasprm[0] = s->biasprm[1] = 0;
    s->gainprm[0] = kv;
    s->biasprm[2] = -kv;
    s->dyntype = kDynNone, s->gaintype = kGainFixed, s->biastype = kBiasAffine;
  } else if (kind == "damper") {  // mjs_setToDamper
    double kv = s->gaintype == kGainAffine ? -s->gainprm[2] : 0;
    a.number("kv", &kv);
    s->gainprm[0] = s->gainprm[1] = 0;
    s->gainprm[2] = -kv;
    s->ctrllimited = Tri::kTrue;
    s->dyntype = kDynNone, s->gaintype = kGainAffine, s->biastype = kBiasNone;
    if (kv < 0) a.fail("damping coefficient cannot be negative");
    if (s->ctrlrange[0] < 0 || s->ctrlrange[1] < 0) a.fail("damper control range cannot be negative");
  }
}

// A camera's attributes over *c (its class's): pose, mode and optics as MuJoCo 3.17 reads them
// (element: a <camera> in the tree, which may not set both fovy and sensorsize, as MuJoCo's schema).
void MjcfCompiler::read_camera_attrs(Attrs& a, CameraSpec* c, bool element) {
  read_frame_attrs(a, &c->frame, false);
  if (c->frame.has_fromto) a.fail("attribute \"fromto\" is not a camera attribute");
  if (const int k = a.keyword("mode", {"fixed", "track", "trackcom", "targetbody", "targetbodycom"}); k >= 0)
    c->mode = k;
  if (const int k = a.keyword("projection", {"perspective", "orthographic"}); k >= 0) c->projection = k;
  if (element && a.has("fovy") && a.has("sensorsize"))
    a.fail("at most one of \"fovy\" and \"sensorsize\" can be given (as MuJoCo)");
  a.number("fovy", &c->fovy);
  a.number("ipd", &c->ipd);
  double r[2];
  if (a.numbers("resolution", r, 2, 2)) {
    for (int k = 0; k < 2; ++k) {
      if (r[k] != std::floor(r[k])) a.fail("attribute \"resolution\": expected integers");
      c->resolution[k] = static_cast<int>(r[k]);
    }
  }
  auto floats = [&](const char* name, float out[2]) {
    double v[2];
    if (a.numbers(name, v, 2, 2)) out[0] = static_cast<float>(v[0]), out[1] = static_cast<float>(v[1]);
  };
  floats("sensorsize", c->sensorsize);
  floats("focal", c->focal);
  floats("focalpixel", c->focalpixel);
  floats("principal", c->principal);
  floats("principalpixel", c->principalpixel);
  a.ignore({"user", "output"});  // MuJoCo's user data; the rendered outputs (visual)
}

void MjcfCompiler::read_frame_attrs(Attrs& a, FrameSpec* f, bool element) {
  FrameSpec own;
  own.has_pos = a.numbers("pos", own.pos, 3, 3) > 0;
  own.has_orientation = read_orientation(a, own.quat);
  own.has_fromto = a.numbers("fromto", own.fromto, 6, 6) > 0;
  if (own.has_fromto && own.has_pos) a.fail("both \"pos\" and \"fromto\" given");
  if (own.has_fromto && own.has_orientation)
    a.fail("\"fromto\" fixes the orientation; remove the orientation attribute");
  if (own.has_pos) {
    std::copy_n(own.pos, 3, f->pos);
    f->has_pos = true;
  }
  if (own.has_orientation) {
    std::copy_n(own.quat, 4, f->quat);
    f->has_orientation = true;
  }
  if (own.has_fromto) {
    std::copy_n(own.fromto, 6, f->fromto);
    f->has_fromto = true;
  }
  if (element && f->has_pos && f->has_fromto) {  // MuJoCo 3 refuses these wherever each comes from
    a.fail("both \"pos\" and \"fromto\" given (" + std::string(own.has_pos ? "fromto" : "pos") +
           " from the default class)");
  }
}

double MjcfCompiler::resolve_fromto(const XMLElement* e, FrameSpec* f) const {
  const double* ft = f->fromto;
  const double vec[3] = {ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]};  // from - to, as MuJoCo
  const double length = norm3(vec);
  if (length < kEps) fail(e, "\"fromto\" points too close");
  for (int k = 0; k < 3; ++k) f->pos[k] = 0.5 * (ft[k] + ft[k + 3]);
  z_to_quat(vec, f->quat);
  return length;
}

void MjcfCompiler::apply_frame(FrameSpec* f) {
  const double* fq = f->frame_quat;
  if (fq[0] == 1 && fq[1] == 0 && fq[2] == 0 && fq[3] == 0) {
    for (int k = 0; k < 3; ++k) f->pos[k] += f->frame_pos[k];
    return;
  }
  const Eigen::Vector3d p = quat_to_mat(fq) * Eigen::Vector3d(f->pos[0], f->pos[1], f->pos[2]);
  for (int k = 0; k < 3; ++k) f->pos[k] = f->frame_pos[k] + p(k);
  quat_mul(fq, f->quat, f->quat);
  const double n =
      std::sqrt(f->quat[0] * f->quat[0] + f->quat[1] * f->quat[1] + f->quat[2] * f->quat[2] + f->quat[3] * f->quat[3]);
  for (double& q : f->quat) q /= n;
}

// MuJoCo's ResolveOrientation for euler, in its order of operations (degrees / 180 pi, each
// rotation by mjuu_mulquat, then normvec): a body's principal axes can follow a geom frame's last bit.
void MjcfCompiler::euler_to_quat(const double euler[3], double quat[4]) const {
  double q[4] = {1, 0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const double angle = m_opt.degree ? euler[i] / 180.0 * kPi : euler[i];
    double rot[4] = {std::cos(angle / 2), 0, 0, 0};
    const char axis = m_opt.eulerseq[i];
    rot[1 + (std::tolower(axis) - 'x')] = std::sin(angle / 2);
    if (std::islower(axis)) mjuu::mulquat(q, q, rot);  // intrinsic: rotate about the moving axes
    else mjuu::mulquat(q, rot, q);                     // extrinsic: about the fixed axes
  }
  mjuu::normvec(q, 4);
  std::copy(q, q + 4, quat);
}

bool MjcfCompiler::read_orientation(Attrs& a, double quat[4]) {
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
    euler_to_quat(v, quat);
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

}  // namespace rlt::mjcf_detail
