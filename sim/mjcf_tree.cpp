// MJCF compiler, the body tree (sim/mjcf_compiler.h): <worldbody>, bodies and their joints, geoms,
// sites and inertials in MuJoCo's depth-first order; then joint and dof addresses, limits, qpos0.
#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

// ---- the body tree ----

void MjcfCompiler::add_world() {
  m.nbody = 1;
  m.body_parentid.push_back(0);
  m.body_pos.insert(m.body_pos.end(), {0, 0, 0});
  m.body_quat.insert(m.body_quat.end(), {1, 0, 0, 0});
  m.body_name.push_back("world");
  m_body_elem.push_back(nullptr);
  m_body_inertial.emplace_back();
  m_body_names.emplace("world", 0);
}

void MjcfCompiler::read_worldbody(const XMLElement* e) {
  Attrs a(m_file, e);
  a.finish();
  read_body_contents(e, 0, "main");
}

void MjcfCompiler::read_body(const XMLElement* e, int parent, const std::string& inherited_class) {
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

void MjcfCompiler::read_body_contents(const XMLElement* e, int body, const std::string& cls) {
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

void MjcfCompiler::read_joint(const XMLElement* e, int body, const std::string& cls) {
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

void MjcfCompiler::read_geom(const XMLElement* e, int body, const std::string& cls) {
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

void MjcfCompiler::read_site(const XMLElement* e, int body, const std::string& cls) {
  Attrs a(m_file, e);
  const std::string site_class = a.text("class").value_or(cls);
  find_class(a, site_class);  // sites carry no physics; the class must exist
  double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0};
  a.numbers("pos", pos, 3, 3);
  read_orientation(a, quat);
  int zone_type = kGeomSphere;
  double zone_size[3];
  read_site_zone(a, e, site_class, &zone_type, zone_size);  // touch sensors read it (sim/mjcf_sensors.cpp)
  m.site_type.push_back(zone_type);
  m.site_size.insert(m.site_size.end(), zone_size, zone_size + 3);
  a.ignore({"rgba", "group", "material"});
  const std::string name = a.text("name").value_or("");
  a.finish();
  check_name(m_site_names, "site", e, name);
  m.site_bodyid.push_back(body);
  m.site_pos.insert(m.site_pos.end(), pos, pos + 3);
  m.site_quat.insert(m.site_quat.end(), quat, quat + 4);
  m.site_name.push_back(name);
}

void MjcfCompiler::read_inertial(const XMLElement* e, int body) {
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

// ---- joints and dofs: addresses, limits, qpos0 ----

void MjcfCompiler::compile_joints() {
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

void MjcfCompiler::check_moving_bodies() const {
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

}  // namespace rlt::mjcf_detail
