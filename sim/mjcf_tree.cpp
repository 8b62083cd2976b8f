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
  m_body_mocap.push_back(0);
  m_body_names.emplace("world", 0);
}

void MjcfCompiler::read_worldbody(const XMLElement* e, bool bodies) {
  if (!bodies) {
    Attrs a(m_file, e);
    a.finish();
  }
  read_body_elements(e, 0, "main", bodies);
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
  double gravcomp = 0;  // misc: MuJoCo's gravity compensation (sim/dynamics.h gravcomp_forces)
  if (a.number("gravcomp", &gravcomp) && gravcomp != 0) {
    m.body_gravcomp.resize(static_cast<size_t>(id) + 1, 0.0);
    m.body_gravcomp[static_cast<size_t>(id)] = gravcomp;
  }
  bool mocap = false;  // MuJoCo's mocap body: its pose is an input (DataView::mocap_pos, mocap_quat)
  a.boolean("mocap", &mocap);
  a.finish();
  if (in_frame()) {
    FrameSpec f;
    std::copy_n(pos, 3, f.pos);
    std::copy_n(quat, 4, f.quat);
    std::copy_n(m_frame_pos, 3, f.frame_pos);
    std::copy_n(m_frame_quat, 4, f.frame_quat);
    apply_frame(&f);
    std::copy_n(f.pos, 3, pos);
    std::copy_n(f.quat, 4, quat);
  }
  m.body_parentid.push_back(parent);
  m.body_pos.insert(m.body_pos.end(), pos, pos + 3);
  m.body_quat.insert(m.body_quat.end(), quat, quat + 4);
  m.body_name.push_back(name);
  m_body_elem.push_back(e);
  m_body_inertial.emplace_back();
  m_body_mocap.push_back(mocap ? 1 : 0);
  double saved_pos[3], saved_quat[4];  // a body's contents are in its own frame
  std::copy_n(m_frame_pos, 3, saved_pos);
  std::copy_n(m_frame_quat, 4, saved_quat);
  std::fill_n(m_frame_pos, 3, 0.0);
  m_frame_quat[0] = 1, m_frame_quat[1] = m_frame_quat[2] = m_frame_quat[3] = 0;
  read_body_contents(e, id, cls);
  std::copy_n(saved_pos, 3, m_frame_pos);
  std::copy_n(saved_quat, 4, m_frame_quat);
}

void MjcfCompiler::read_body_contents(const XMLElement* e, int body, const std::string& cls) {
  read_body_elements(e, body, cls, false);
  read_body_elements(e, body, cls, true);
}

void MjcfCompiler::read_body_elements(const XMLElement* e, int body, const std::string& cls, bool bodies) {
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string n = c->Name();
    if (n == "frame") {
      Attrs a(m_file, c);
      std::string frame_cls = cls;
      if (const auto cc = a.text("childclass")) {
        find_class(a, *cc);
        frame_cls = *cc;
      }
      FrameSpec f;
      a.numbers("pos", f.pos, 3, 3);
      read_orientation(a, f.quat);
      a.ignore({"name"});
      a.finish();
      double saved_pos[3], saved_quat[4];
      std::copy_n(m_frame_pos, 3, saved_pos);
      std::copy_n(m_frame_quat, 4, saved_quat);
      std::copy_n(m_frame_pos, 3, f.frame_pos);
      std::copy_n(m_frame_quat, 4, f.frame_quat);
      apply_frame(&f);  // this frame in the body frame
      std::copy_n(f.pos, 3, m_frame_pos);
      std::copy_n(f.quat, 4, m_frame_quat);
      read_body_elements(c, body, frame_cls, bodies);
      std::copy_n(saved_pos, 3, m_frame_pos);
      std::copy_n(saved_quat, 4, m_frame_quat);
      continue;
    }
    if (bodies) {
      if (n == "body") read_body(c, body, cls);
      continue;
    }
    if (n == "body" || n == "light") continue;
    if (n == "camera") {
      read_camera(c, body, cls);
      continue;
    }
    if (n == "joint" || n == "freejoint") {
      if (body == 0) fail(c, "the world body cannot have joints");
      read_joint(c, body, cls);
    } else if (n == "geom") {
      read_geom(c, body, cls);
    } else if (n == "site") {
      read_site(c, body, cls);
    } else if (n == "inertial") {
      if (std::strcmp(e->Name(), "frame") == 0) fail(c, "an <inertial> inside a <frame> is not supported");
      if (body == 0) fail(c, "the world body cannot have an inertial");
      read_inertial(c, body);
    } else {
      unsupported_element(c, "body, inertial, joint, freejoint, geom, site, frame; ignored: camera, light");
    }
    no_children(c);
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
  if (in_frame()) {
    const Eigen::Matrix3d R = quat_to_mat(m_frame_quat);
    const Eigen::Vector3d p = R * Eigen::Vector3d(j.pos[0], j.pos[1], j.pos[2]);
    const Eigen::Vector3d ax = R * Eigen::Vector3d(j.axis[0], j.axis[1], j.axis[2]);
    for (int k = 0; k < 3; ++k) j.pos[k] = m_frame_pos[k] + p(k), j.axis[k] = ax(k);
  }
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
  GeomFrame f = find_class(a, a.text("class").value_or(cls)).geom_frame;
  read_frame_attrs(a, &f);
  std::copy_n(m_frame_pos, 3, f.frame_pos);
  std::copy_n(m_frame_quat, 4, f.frame_quat);
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
  FrameSpec f = find_class(a, site_class).site_frame;
  read_frame_attrs(a, &f);
  std::copy_n(m_frame_pos, 3, f.frame_pos);
  std::copy_n(m_frame_quat, 4, f.frame_quat);
  if (f.has_fromto) resolve_fromto(e, &f);
  apply_frame(&f);
  const double* pos = f.pos;
  const double* quat = f.quat;
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

// A camera (sensors read it; the viewer has its own camera): its class's attributes, then its own
// (read_camera_attrs), its pose in its body through the enclosing <frame>s, its mode and target
// (resolved once every body is known: camera_constants), and MuJoCo 3.17's compiled optics
// (mjCCamera::Compile): with a sensorsize, the intrinsics from focal / principal, pixel values
// overriding lengths (in float, as MuJoCo's), and fovy from the sensor height and focal length y;
// without one, intrinsics (znear, znear, 0, 0) with MuJoCo's default znear 0.01.
void MjcfCompiler::read_camera(const XMLElement* e, int body, const std::string& cls) {
  Attrs a(m_file, e);
  CameraSpec c = find_class(a, a.text("class").value_or(cls)).camera;
  read_camera_attrs(a, &c, true);
  FrameSpec& f = c.frame;
  std::copy_n(m_frame_pos, 3, f.frame_pos);
  std::copy_n(m_frame_quat, 4, f.frame_quat);
  apply_frame(&f);
  const std::string target = a.text("target").value_or("");
  const std::string name = a.text("name").value_or("");
  a.finish();
  if (!name.empty())
    for (const std::string& other : m.cam_name)
      if (other == name) a.fail("repeated camera name " + quoted(name));
  if (c.fovy >= 180) a.fail("fovy too large (at least 180 degrees)");
  const bool has_intrinsic = c.focal[0] || c.focal[1] || c.focalpixel[0] || c.focalpixel[1] || c.principal[0] ||
                             c.principal[1] || c.principalpixel[0] || c.principalpixel[1];
  const bool has_sensorsize = c.sensorsize[0] > 0 && c.sensorsize[1] > 0;
  if (has_intrinsic && !has_sensorsize) a.fail("focal/principal require sensorsize (as MuJoCo)");
  if (has_sensorsize && (c.resolution[0] <= 0 || c.resolution[1] <= 0))
    a.fail("sensorsize requires positive resolution (as MuJoCo)");
  float intrinsic[4] = {0.01f, 0.01f, 0, 0};  // MuJoCo's visual/map znear default
  double fovy = c.fovy;
  if (has_sensorsize) {
    const float density[2] = {static_cast<float>(c.resolution[0]) / c.sensorsize[0],
                              static_cast<float>(c.resolution[1]) / c.sensorsize[1]};
    intrinsic[0] = c.focalpixel[0] ? c.focalpixel[0] / density[0] : c.focal[0];
    intrinsic[1] = c.focalpixel[1] ? c.focalpixel[1] / density[1] : c.focal[1];
    intrinsic[2] = c.principalpixel[0] ? c.principalpixel[0] / density[0] : c.principal[0];
    intrinsic[3] = c.principalpixel[1] ? c.principalpixel[1] / density[1] : c.principal[1];
    fovy = static_cast<double>(std::atan2(c.sensorsize[1] / 2, intrinsic[1])) * 360.0 / kPi;  // float atan2
  }
  m.cam_bodyid.push_back(body);
  m.cam_pos.insert(m.cam_pos.end(), f.pos, f.pos + 3);
  m.cam_quat.insert(m.cam_quat.end(), f.quat, f.quat + 4);
  m.cam_mode.push_back(c.mode);
  m.cam_resolution.insert(m.cam_resolution.end(), c.resolution, c.resolution + 2);
  m.cam_fovy.push_back(fovy);
  m.cam_intrinsic.insert(m.cam_intrinsic.end(), intrinsic, intrinsic + 4);
  m.cam_sensorsize.insert(m.cam_sensorsize.end(), c.sensorsize, c.sensorsize + 2);
  m.cam_ipd.push_back(c.ipd);
  m.cam_name.push_back(name);
  m_cam_target.emplace_back(target, e);
  m.ncam++;
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
    principal_axes(full, in.inertia, in.quat);
    if (in.inertia[2] <= 0) a.fail("\"fullinertia\" must be positive definite");
  }
  for (double v : in.inertia) {
    if (v < 0) a.fail("inertia must be non-negative");
  }
  double* I = in.inertia;
  if (m_opt.balanceinertia && (I[0] + I[1] < I[2] || I[0] + I[2] < I[1] || I[1] + I[2] < I[0])) {
    I[0] = I[1] = I[2] = (I[0] + I[1] + I[2]) / 3;  // <compiler balanceinertia="true">: the mean
  }
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
          fail(e,
               "has \"range\" but not \"limited\": set limited=\"true\" or \"false\", or <compiler "
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

void MjcfCompiler::compile_mocap() {
  m.nmocap = 0;
  for (int b = 1; b < m.nbody; ++b) {
    if (!m_body_mocap[static_cast<size_t>(b)]) continue;
    if (m.body_parentid[b] != 0 || m.body_jntnum[b] > 0)
      fail(m_body_elem[static_cast<size_t>(b)],
           "mocap body '" + m.body_name[static_cast<size_t>(b)] +
               "' is not a fixed child of world (MuJoCo's rule: a mocap body is a child of the world body, "
               "in <worldbody> or its <frame>s and <replicate>s, and has no joints)");
    if (m.body_mocapid.empty()) m.body_mocapid.assign(static_cast<size_t>(m.nbody), -1);
    m.body_mocapid[static_cast<size_t>(b)] = m.nmocap++;
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
      fail(m_body_elem[b],
           "a body with joints needs mass and inertia of at least 1e-15 (add an <inertial> or a "
           "geom with mass, here or in a jointless child body)");
    }
  }
}

}  // namespace rlt::mjcf_detail
