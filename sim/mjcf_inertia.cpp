// MJCF compiler, geoms and inertia (sim/mjcf_compiler.h): geom frames from fromto, sizes, geom mass
// and inertia, and the body mass and inertia they add up to (MuJoCo's inertiafromgeom).
#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

// ---- geoms: frame from fromto, sizes, mass and inertia in the geom frame ----

void MjcfCompiler::compile_geoms() {
  m.ngeom = static_cast<int>(m_geoms.size());
  m_geom_mass.assign(m.ngeom, 0);
  m_geom_inertia.assign(3 * m.ngeom, 0);
  for (int i = 0; i < m.ngeom; ++i) {
    const XMLElement* e = m_geom_elem[i];
    GeomSpec& g = m_geoms[i];
    GeomFrame& f = m_geom_frames[i];
    if (f.has_fromto) {
      if (g.type != kGeomCapsule && g.type != kGeomCylinder && g.type != kGeomBox && g.type != kGeomEllipsoid)
        fail(e, "\"fromto\" is supported for capsule, cylinder, box and ellipsoid geoms only");
      const double length = resolve_fromto(e, &f);
      if (g.type == kGeomCapsule || g.type == kGeomCylinder) {
        g.size[1] = 0.5 * length;
      } else {  // box, ellipsoid: a square (round) section of half side (radius) size[0], as MuJoCo
        g.size[1] = g.size[0];
        g.size[2] = 0.5 * length;
      }
    }
    apply_frame(&f);
    if (!g.mesh.empty() || g.type == kGeomMesh) compile_mesh_geom(i);  // sim/mjcf_mesh.cpp: frame and size
    const double* s = g.size;
    if (g.type == kGeomMesh) {
      // sizes come from the mesh
    } else if (g.type == kGeomHField || !g.hfield.empty()) {
      compile_hfield_geom(i, &g);
    } else if (g.type == kGeomPlane) {
      if (!(s[2] > 0)) fail(e, "plane size[2] (grid spacing) must be positive");
      if (geom_body_moves(i)) fail(e, "plane geoms are only allowed in static bodies (no joint up to the world)");
    } else {
      const int n = g.type == kGeomSphere ? 1 : (g.type == kGeomCapsule || g.type == kGeomCylinder) ? 2 : 3;
      for (int k = 0; k < n; ++k) {
        if (!(s[k] > 0)) fail(e, "size[" + std::to_string(k) + "] must be positive");
      }
    }
    m.geom_type.push_back(g.type);
    m.geom_size.insert(m.geom_size.end(), s, s + 3);
    m.geom_pos.insert(m.geom_pos.end(), f.pos, f.pos + 3);
    m.geom_quat.insert(m.geom_quat.end(), f.quat, f.quat + 4);
    m.geom_friction.insert(m.geom_friction.end(), g.friction, g.friction + 3);
    m.geom_condim.push_back(g.condim);
    m.geom_margin.push_back(g.margin);
    m.geom_contype.push_back(g.contype);
    m.geom_conaffinity.push_back(g.conaffinity);
    for (double c : g.rgba) m.geom_rgba.push_back(static_cast<float>(c));
    // MuJoCo's mj_ray skips a geom whose material (else rgba) has alpha 0 (sim/ray.h)
    double alpha = g.rgba[3];
    if (!g.material.empty()) {
      const auto mat = m_material_alpha.find(g.material);
      if (mat == m_material_alpha.end()) fail(e, "material " + quoted(g.material) + " not found");
      alpha = mat->second;
    }
    m.geom_invisible.push_back(alpha == 0 ? 1 : 0);
    m.geom_group.push_back(g.group);
    geom_mass_inertia(g, &m_geom_mass[i], &m_geom_inertia[3 * i],
                      g.type == kGeomMesh ? &m_meshes[static_cast<size_t>(m.geom_dataid[i])] : nullptr);
  }
}

bool MjcfCompiler::geom_body_moves(int geom) const {
  for (int b = m.geom_bodyid[geom]; b != 0; b = m.body_parentid[b]) {
    for (int j : m.jnt_bodyid) {
      if (j == b) return true;
    }
  }
  return false;
}

void MjcfCompiler::geom_mass_inertia(const GeomSpec& g, double* mass, double inertia[3], const MeshAsset* mesh) {
  const double* s = g.size;
  double volume = 0;
  if (mesh) {  // MuJoCo's mjCGeom::GetVolume / SetInertia for a mesh: its equivalent inertia box
    volume = mesh->volume;
    inertia[0] = inertia[1] = inertia[2] = 0;
    if (g.has_mass) {
      *mass = g.mass;  // MuJoCo sets the inertia only when the volume exceeds mjEPS (else zero)
      if (g.mass == 0 || !(volume > kEps)) return;
    } else {
      *mass = g.density * volume;
    }
    const double* b = mesh->boxsz;
    inertia[0] = *mass * (b[1] * b[1] + b[2] * b[2]) / 3;
    inertia[1] = *mass * (b[0] * b[0] + b[2] * b[2]) / 3;
    inertia[2] = *mass * (b[0] * b[0] + b[1] * b[1]) / 3;
    return;
  }
  switch (g.type) {
    case kGeomSphere:
      volume = 4 * kPi * s[0] * s[0] * s[0] / 3;
      break;
    case kGeomCapsule:
      volume = kPi * s[0] * s[0] * (2 * s[1] + 4 * s[0] / 3);
      break;
    case kGeomBox:
    case kGeomHField:  // MuJoCo: a box of the geom's size (radius_x, radius_y, elevation_z / 4 + base_z / 2)
      volume = 8 * s[0] * s[1] * s[2];
      break;
    case kGeomCylinder:
      volume = kPi * s[0] * s[0] * 2 * s[1];
      break;
    case kGeomEllipsoid:
      volume = 4 * kPi * s[0] * s[1] * s[2] / 3;
      break;
    default:
      volume = 0;  // a plane has no mass
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
    case kGeomHField:
      inertia[0] = *mass * (s[1] * s[1] + s[2] * s[2]) / 3;
      inertia[1] = *mass * (s[0] * s[0] + s[2] * s[2]) / 3;
      inertia[2] = *mass * (s[0] * s[0] + s[1] * s[1]) / 3;
      break;
    case kGeomCylinder: {  // radius s[0], half-height s[1] (MuJoCo's mjCGeom::SetInertia, volume)
      const double r = s[0], h = 2 * s[1];
      inertia[0] = inertia[1] = *mass * (3 * r * r + h * h) / 12;
      inertia[2] = *mass * r * r / 2;
      break;
    }
    case kGeomEllipsoid:
      inertia[0] = *mass * (s[1] * s[1] + s[2] * s[2]) / 5;
      inertia[1] = *mass * (s[0] * s[0] + s[2] * s[2]) / 5;
      inertia[2] = *mass * (s[0] * s[0] + s[1] * s[1]) / 5;
      break;
    default:
      break;
  }
}

// ---- body mass and inertia (MuJoCo's mjCBody::GeomFrame and inertial) ----

void MjcfCompiler::compile_bodies() {
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
    else {
      // massless: MuJoCo leaves the body's own pos/quat (in its parent's frame) as the inertial
      // frame; it weighs nothing, but body_invweight0 is taken there (equality rows on the body)
      std::copy_n(&m.body_pos[3 * static_cast<size_t>(b)], 3, ipos);
      std::copy_n(&m.body_quat[4 * static_cast<size_t>(b)], 4, iquat);
    }
  }
}

}  // namespace rlt::mjcf_detail
