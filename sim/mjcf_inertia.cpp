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
  // MuJoCo's mjCGeom::GetVolume and SetInertia (solid), each formula in its order of operations: a
  // body's principal axes, when its geoms' inertias sum to a nearly symmetric one, follow their last bits
  const double* s = g.size;
  double volume = 0;
  if (mesh) {
    volume = mesh->volume;
  } else {
    switch (g.type) {
      case kGeomSphere:
        volume = 4 * kPi * s[0] * s[0] * s[0] / 3;
        break;
      case kGeomCapsule:
        volume = kPi * s[0] * s[0] * (2 * s[1] + 4 * s[0] / 3);  // (MuJoCo 3.17: pi (r r h + 4 r r r / 3); see below)
        break;
      case kGeomCylinder:
        volume = kPi * s[0] * s[0] * (2 * s[1]);
        break;
      case kGeomEllipsoid:
        volume = 4 * kPi * s[0] * s[1] * s[2] / 3;
        break;
      case kGeomBox:
      case kGeomHField:  // MuJoCo: a box of the geom's size (radius_x, radius_y, elevation_z / 4 + base_z / 2)
        volume = s[0] * s[1] * s[2] * 8;
        break;
      default:
        volume = 0;  // a plane has no mass
    }
  }
  *mass = 0;
  inertia[0] = inertia[1] = inertia[2] = 0;
  if (g.has_mass) {
    if (g.mass == 0 || !(volume > mjuu::kUserEps)) return;  // MuJoCo: no mass where the volume is below mjEPS
    *mass = g.mass;
  } else {
    if (g.density == 0) return;
    *mass = g.density * volume;
  }
  const double m = *mass;
  if (mesh) {  // the mesh's equivalent inertia box
    const double* b = mesh->boxsz;
    inertia[0] = m * (b[1] * b[1] + b[2] * b[2]) / 3;
    inertia[1] = m * (b[0] * b[0] + b[2] * b[2]) / 3;
    inertia[2] = m * (b[0] * b[0] + b[1] * b[1]) / 3;
    return;
  }
  switch (g.type) {
    case kGeomSphere:
      inertia[0] = inertia[1] = inertia[2] = 2 * m * s[0] * s[0] / 5;
      break;
    case kGeomCapsule: {  // a cylinder and two hemispheres moved to its ends, mass split by volume
      // (MuJoCo 3.17 takes the volume as pi (r r h + 4 r r r / 3) and splits the mass as m 4r / (4r + 3h)
      // and m minus that: read from its library, its masses bit for bit on 300 of 300 capsules; with
      // them the shipped humanoid's zero-control run from "stand" parts from MuJoCo at its first foot
      // contacts, step 7, by 5e-3 in qvel, from a last-bit change of its capsules' masses: an open
      // item. This form, rltrain's before, is kept meanwhile; it differs from MuJoCo's in the last bit)
      const double r = s[0], h = 2 * s[1];
      const double density = g.has_mass ? m / volume : g.density;
      const double sphere_mass = density * 4 * kPi * r * r * r / 3;  // both hemispheres
      const double cylinder_mass = density * kPi * r * r * h;
      inertia[0] = inertia[1] = cylinder_mass * (3 * r * r + h * h) / 12;
      inertia[2] = cylinder_mass * r * r / 2;
      const double sphere_inertia = 2 * sphere_mass * r * r / 5;
      inertia[0] += sphere_inertia + sphere_mass * h * (3 * r + 2 * h) / 8;
      inertia[1] += sphere_inertia + sphere_mass * h * (3 * r + 2 * h) / 8;
      inertia[2] += sphere_inertia;
      break;
    }
    case kGeomCylinder: {  // radius s[0], half-height s[1]
      const double r = s[0], h = 2 * s[1];
      inertia[0] = inertia[1] = m * (3 * r * r + h * h) / 12;
      inertia[2] = m * r * r / 2;
      break;
    }
    case kGeomEllipsoid: {
      const double s00 = s[0] * s[0], s11 = s[1] * s[1], s22 = s[2] * s[2];
      inertia[0] = m * (s11 + s22) / 5;
      inertia[1] = m * (s00 + s22) / 5;
      inertia[2] = m * (s00 + s11) / 5;
      break;
    }
    case kGeomBox:
    case kGeomHField: {
      const double s00 = s[0] * s[0], s11 = s[1] * s[1], s22 = s[2] * s[2];
      inertia[0] = m * (s11 + s22) / 3;
      inertia[1] = m * (s00 + s22) / 3;
      inertia[2] = m * (s00 + s11) / 3;
      break;
    }
    default:
      break;
  }
}

// ---- body mass and inertia (MuJoCo's mjCBody::InertiaFromGeom and inertial) ----

namespace {

// MuJoCo's mjuu_globalinertia: a diagonal inertia in the frame quat as a full one (xx, yy, zz, xy,
// xz, yz) in the parent frame, in its order of operations.
void global_inertia(const double local[3], const double quat[4], double global[6]) {
  double r[9];
  mjuu::quat2mat(r, quat);
  const double t[9] = {r[0] * local[0], r[3] * local[0], r[6] * local[0],  //
                       r[1] * local[1], r[4] * local[1], r[7] * local[1],  //
                       r[2] * local[2], r[5] * local[2], r[8] * local[2]};
  global[0] = r[0] * t[0] + r[1] * t[3] + r[2] * t[6];
  global[1] = r[3] * t[1] + r[4] * t[4] + r[5] * t[7];
  global[2] = r[6] * t[2] + r[7] * t[5] + r[8] * t[8];
  global[3] = r[0] * t[1] + r[1] * t[4] + r[2] * t[7];
  global[4] = r[0] * t[2] + r[1] * t[5] + r[2] * t[8];
  global[5] = r[3] * t[2] + r[4] * t[5] + r[5] * t[8];
}

// MuJoCo's mjuu_offcenter: a point mass at d as a full inertia (parallel axis theorem).
void offcenter_inertia(double mass, const double d[3], double out[6]) {
  out[0] = mass * (d[1] * d[1] + d[2] * d[2]);
  out[1] = mass * (d[0] * d[0] + d[2] * d[2]);
  out[2] = mass * (d[0] * d[0] + d[1] * d[1]);
  out[3] = -mass * d[0] * d[1];
  out[4] = -mass * d[0] * d[2];
  out[5] = -mass * d[1] * d[2];
}

}  // namespace

void MjcfCompiler::compile_bodies() {
  m.body_ipos.assign(3 * m.nbody, 0);
  m.body_iquat.assign(4 * m.nbody, 0);
  m.body_mass.assign(m.nbody, 0);
  m.body_inertia.assign(3 * m.nbody, 0);
  for (int b = 0; b < m.nbody; ++b) m.body_iquat[4 * b] = 1;
  for (int b = 1; b < m.nbody; ++b) {  // the world has no inertia
    // MuJoCo's selection: the body's geoms in inertiagrouprange with a mass above mjEPS
    std::vector<int> sel;
    for (int g = 0; g < m.ngeom; ++g) {
      const int group = m_geoms[g].group;
      if (m.geom_bodyid[g] == b && group >= m_opt.inertiagrouprange[0] && group <= m_opt.inertiagrouprange[1] &&
          m_geom_mass[g] > mjuu::kUserEps) {
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
      // the centre of mass, then the geoms' inertias about it summed as full matrices, then their
      // principal axes (MuJoCo's operations in its order: the axes of a nearly symmetric sum, e.g.
      // a capsule and a mesh along it, follow the last bits of these sums)
      double mass = 0, com[3] = {0, 0, 0};
      for (int g : sel) {
        mass += m_geom_mass[g];
        for (int k = 0; k < 3; ++k) com[k] += m_geom_mass[g] * m.geom_pos[3 * g + k];
      }
      if (mass < mjuu::kUserEps)
        fail(m_body_elem[b], "body mass is too small to compute a center of mass from its geoms");
      for (int k = 0; k < 3; ++k) ipos[k] = com[k] / mass;
      double total[6] = {0, 0, 0, 0, 0, 0};
      for (int g : sel) {
        const double d[3] = {m.geom_pos[3 * g] - ipos[0], m.geom_pos[3 * g + 1] - ipos[1],
                             m.geom_pos[3 * g + 2] - ipos[2]};
        double own[6], shift[6];
        global_inertia(&m_geom_inertia[3 * g], &m.geom_quat[4 * g], own);
        offcenter_inertia(m_geom_mass[g], d, shift);
        for (int j = 0; j < 6; ++j) total[j] = total[j] + own[j] + shift[j];
      }
      m.body_mass[b] = mass;
      principal_axes(total, inertia, iquat);
      if (inertia[2] < mjuu::kUserEps)
        fail(m_body_elem[b], "the inertia from its geoms must have positive eigenvalues");
    } else if (m_body_inertial[b]) {
      const Inertial& in = *m_body_inertial[b];
      std::copy_n(in.pos, 3, ipos);
      std::copy_n(in.quat, 4, iquat);
      m.body_mass[b] = in.mass;
      std::copy_n(in.inertia, 3, inertia);
    } else {
      // massless: MuJoCo leaves the body's own pos/quat (in its parent's frame) as the inertial
      // frame; it weighs nothing, but body_invweight0 is taken there (equality rows on the body)
      std::copy_n(&m.body_pos[3 * static_cast<size_t>(b)], 3, ipos);
      std::copy_n(&m.body_quat[4 * static_cast<size_t>(b)], 4, iquat);
    }
  }
}

// ---- sameframe (MuJoCo's user_model.cc) ----

namespace {

constexpr double kSameFrameEps = 1e-6;  // MuJoCo's kFrameEps

bool same_vec(const double* a, const double* b) {
  return std::abs(a[0] - b[0]) < kSameFrameEps && std::abs(a[1] - b[1]) < kSameFrameEps &&
         std::abs(a[2] - b[2]) < kSameFrameEps;
}

// Within kSameFrameEps per component, either sign (q and -q are one rotation).
bool same_quat(const double* a, const double* b) {
  bool minus = true, plus = true;
  for (int k = 0; k < 4; ++k) {
    minus = minus && std::abs(a[k] - b[k]) < kSameFrameEps;
    plus = plus && std::abs(a[k] + b[k]) < kSameFrameEps;
  }
  return minus || plus;
}

// A frame (pos, quat) fixed to a body whose inertial frame is (ipos, iquat), in MuJoCo's order of tests.
int frame_sameframe(const double* pos, const double* quat, const double* ipos, const double* iquat) {
  constexpr double zero[3] = {0, 0, 0}, unit[4] = {1, 0, 0, 0};
  if (same_vec(pos, zero) && same_quat(quat, unit)) return kSameFrameBody;
  if (same_quat(quat, unit)) return kSameFrameBodyRot;
  if (same_vec(pos, ipos) && same_quat(quat, iquat)) return kSameFrameInertia;
  if (same_quat(quat, iquat)) return kSameFrameInertiaRot;
  return kSameFrameNone;
}

}  // namespace

void MjcfCompiler::compile_sameframe() {
  constexpr double zero[3] = {0, 0, 0}, unit[4] = {1, 0, 0, 0};
  m.body_sameframe.assign(m.nbody, kSameFrameNone);
  for (int b = 0; b < m.nbody; ++b) {
    const double* ipos = &m.body_ipos[3 * static_cast<size_t>(b)];
    const double* iquat = &m.body_iquat[4 * static_cast<size_t>(b)];
    m.body_sameframe[b] = same_vec(ipos, zero) && same_quat(iquat, unit) ? kSameFrameBody
                          : same_quat(iquat, unit)                       ? kSameFrameBodyRot
                                                                         : kSameFrameNone;
  }
  m.geom_sameframe.assign(m.ngeom, kSameFrameNone);
  for (int g = 0; g < m.ngeom; ++g) {
    const size_t b = static_cast<size_t>(m.geom_bodyid[g]);
    m.geom_sameframe[g] =
        frame_sameframe(&m.geom_pos[3 * static_cast<size_t>(g)], &m.geom_quat[4 * static_cast<size_t>(g)],
                        &m.body_ipos[3 * b], &m.body_iquat[4 * b]);
  }
  m.site_sameframe.assign(m.nsite, kSameFrameNone);
  for (int s = 0; s < m.nsite; ++s) {
    const size_t b = static_cast<size_t>(m.site_bodyid[s]);
    m.site_sameframe[s] =
        frame_sameframe(&m.site_pos[3 * static_cast<size_t>(s)], &m.site_quat[4 * static_cast<size_t>(s)],
                        &m.body_ipos[3 * b], &m.body_iquat[4 * b]);
  }
}

}  // namespace rlt::mjcf_detail
