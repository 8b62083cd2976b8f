// ModelView<T>: what the dynamics (sim/dynamics.h) reads of a compiled Model (sim/model.h), as
// raw pointers and sizes in the scalar T (float or double), so that one RLT_HD function reads it on
// the host or on the device. HostModel<T> owns the converted arrays on the host.
//
// Layout: every real array lives in one block of T, every integer array in one block of int, at
// offsets that depend only on the sizes (model_offsets). A device copy uploads the two blocks and
// binds the same offsets to device pointers (ModelView<T>::bind), so host and device views never
// disagree about where a field is.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/common.h"
#include "sim/model.h"

namespace rlt {

// Element offsets of each field inside the real and the integer block (host code).
struct ModelOffsets {
  // reals
  i64 body_pos, body_quat, body_ipos, body_iquat, body_mass, body_inertia;
  i64 jnt_pos, jnt_axis;
  i64 dof_damping, dof_armature;
  i64 geom_pos, geom_quat;
  i64 site_pos, site_quat;
  i64 qpos0;
  // (added for actuators, joint limits and contacts: sim/actuators.h, sim/constraints.h, sim/contact.h)
  i64 jnt_range, geom_size, geom_friction;
  i64 actuator_gear, actuator_ctrlrange, actuator_forcerange, actuator_kp, actuator_kv;
  // (added for per-geom contact parameters, after every earlier field so their offsets stay put)
  i64 geom_margin;
  // (added for joint springs, sim/dynamics.h passive_forces)
  i64 jnt_stiffness, qpos_spring;
  // (added for soft constraints, sim/constraints.h, last)
  i64 body_invweight0, dof_invweight0;
  i64 num_reals;
  // ints
  i64 body_parentid, body_rootid, body_jntadr, body_jntnum, body_dofadr, body_dofnum;
  i64 jnt_type, jnt_qposadr, jnt_dofadr;
  i64 dof_bodyid, dof_parentid;
  i64 geom_bodyid, site_bodyid;
  i64 jnt_limited, geom_type, geom_contype, geom_conaffinity;
  i64 actuator_kind, actuator_trnid, actuator_ctrllimited, actuator_forcelimited;
  i64 geom_condim;  // (added, last)
  i64 num_ints;
};

inline ModelOffsets model_offsets(int nq, int nv, int nbody, int njnt, int ngeom, int nsite, int nu = 0) {
  ModelOffsets o{};
  i64 r = 0, n = 0;
  auto real = [&](i64& field, i64 count) { field = r, r += count; };
  auto integer = [&](i64& field, i64 count) { field = n, n += count; };
  real(o.body_pos, 3 * nbody), real(o.body_quat, 4 * nbody), real(o.body_ipos, 3 * nbody);
  real(o.body_iquat, 4 * nbody), real(o.body_mass, nbody), real(o.body_inertia, 3 * nbody);
  real(o.jnt_pos, 3 * njnt), real(o.jnt_axis, 3 * njnt);
  real(o.dof_damping, nv), real(o.dof_armature, nv);
  real(o.geom_pos, 3 * ngeom), real(o.geom_quat, 4 * ngeom);
  real(o.site_pos, 3 * nsite), real(o.site_quat, 4 * nsite);
  real(o.qpos0, nq);
  real(o.jnt_range, 2 * njnt), real(o.geom_size, 3 * ngeom), real(o.geom_friction, 3 * ngeom);
  real(o.actuator_gear, nu), real(o.actuator_ctrlrange, 2 * nu), real(o.actuator_forcerange, 2 * nu);
  real(o.actuator_kp, nu), real(o.actuator_kv, nu);
  real(o.geom_margin, ngeom);
  real(o.jnt_stiffness, njnt), real(o.qpos_spring, nq);
  real(o.body_invweight0, nbody), real(o.dof_invweight0, nv);
  o.num_reals = r;
  integer(o.body_parentid, nbody), integer(o.body_rootid, nbody), integer(o.body_jntadr, nbody);
  integer(o.body_jntnum, nbody), integer(o.body_dofadr, nbody), integer(o.body_dofnum, nbody);
  integer(o.jnt_type, njnt), integer(o.jnt_qposadr, njnt), integer(o.jnt_dofadr, njnt);
  integer(o.dof_bodyid, nv), integer(o.dof_parentid, nv);
  integer(o.geom_bodyid, ngeom), integer(o.site_bodyid, nsite);
  integer(o.jnt_limited, njnt), integer(o.geom_type, ngeom), integer(o.geom_contype, ngeom);
  integer(o.geom_conaffinity, ngeom);
  integer(o.actuator_kind, nu), integer(o.actuator_trnid, nu), integer(o.actuator_ctrllimited, nu);
  integer(o.actuator_forcelimited, nu);
  integer(o.geom_condim, ngeom);
  o.num_ints = n;
  return o;
}

template <class T>
struct ModelView {
  // sizes
  int nq, nv, nbody, njnt, ngeom, nsite;
  int nu;                // actuators (sim/actuators.h)

  // options
  T timestep;            // s
  T gravity[3];          // m/s^2
  // MuJoCo's Euler integrator (eulerdamp, on by default): joint damping is integrated implicitly,
  // (M + dt diag(dof_damping)) qacc = f, which keeps stiff damping stable.
  int implicit_damping;  // 0/1
  int ncon_max;          // most contacts the model's geom pairs can make (contact_capacity), sizes DataView::contact
  int nefc_max;          // most soft-constraint rows (constraint_capacity), sizes DataView::efc_*

  // bodies (nbody); body 0 is the world
  const int* body_parentid;  // (nbody)
  const int* body_rootid;    // (nbody) the ancestor that is a child of the world (0 for the world)
  const T* body_pos;         // (nbody x 3) frame position in the parent frame
  const T* body_quat;        // (nbody x 4) frame orientation in the parent frame
  const T* body_ipos;        // (nbody x 3) center of mass in the body frame
  const T* body_iquat;       // (nbody x 4) principal axes of inertia in the body frame
  const T* body_mass;        // (nbody)
  const T* body_inertia;     // (nbody x 3) principal moments
  const int* body_jntadr;    // (nbody) first joint, -1 if none
  const int* body_jntnum;    // (nbody)
  const int* body_dofadr;    // (nbody) first dof, -1 if none
  const int* body_dofnum;    // (nbody)

  // joints (njnt)
  const int* jnt_type;       // (njnt) JointType
  const int* jnt_qposadr;    // (njnt)
  const int* jnt_dofadr;     // (njnt)
  const T* jnt_pos;          // (njnt x 3) anchor in the body frame
  const T* jnt_axis;         // (njnt x 3) unit axis in the body frame
  const T* jnt_stiffness;    // (njnt) joint spring (N m/rad or N/m), 0 for none (passive_forces)

  // dofs (nv)
  const int* dof_bodyid;     // (nv)
  const int* dof_parentid;   // (nv) previous dof in the tree, -1 at a root
  const T* dof_damping;      // (nv)
  const T* dof_armature;     // (nv)

  // geoms and sites (poses only: kinematics places them)
  const int* geom_bodyid;    // (ngeom)
  const T* geom_pos;         // (ngeom x 3)
  const T* geom_quat;        // (ngeom x 4)
  const int* site_bodyid;    // (nsite)
  const T* site_pos;         // (nsite x 3)
  const T* site_quat;        // (nsite x 4)

  const T* qpos0;            // (nq) reference configuration (hinge/slide angles are qpos - qpos0)
  const T* qpos_spring;      // (nq) rest configuration of the joint springs (springref; qpos0 for free/ball)

  // joint limits (njnt)
  const int* jnt_limited;    // (njnt) 0/1 (hinge and slide only)
  const T* jnt_range;        // (njnt x 2) rad or m, in qpos units

  // geom shapes and contact filtering (ngeom)
  const int* geom_type;        // (ngeom) GeomType
  const T* geom_size;          // (ngeom x 3) MuJoCo's meaning per type
  const T* geom_friction;      // (ngeom x 3) sliding, torsional, rolling (only sliding acts: condim 1 or 3)
  const int* geom_contype;     // (ngeom)
  const int* geom_conaffinity; // (ngeom)

  // actuators (nu), each driving one hinge or slide joint
  const int* actuator_kind;         // (nu) ActuatorKind
  const int* actuator_trnid;        // (nu) joint id
  const int* actuator_ctrllimited;  // (nu)
  const int* actuator_forcelimited; // (nu)
  const T* actuator_gear;           // (nu)
  const T* actuator_ctrlrange;      // (nu x 2)
  const T* actuator_forcerange;     // (nu x 2)
  const T* actuator_kp;             // (nu) position servo gain
  const T* actuator_kv;             // (nu) velocity gain (velocity servo; damping of a position servo)

  // per-geom contact parameters (ngeom) (sim/contact.h)
  const int* geom_condim;      // (ngeom) 1 frictionless, 3 sliding friction; a pair takes the max
  const T* geom_margin;        // (ngeom) m; a pair's contact acts from max(both) apart (pair_active_margin)

  // MuJoCo's inverse weights at qpos0 (mj_setConst), which scale the soft constraints' regularizer
  // (sim/constraints.h)
  const T* body_invweight0;    // (nbody) translational: mean diagonal of J M^-1 J^T at the body's centre of mass
  const T* dof_invweight0;     // (nv) diagonal of M^-1

  // Points the array fields at the two blocks laid out by model_offsets (host or device memory).
  void bind(const T* reals, const int* ints) {
    const ModelOffsets o = model_offsets(nq, nv, nbody, njnt, ngeom, nsite, nu);
    body_pos = reals + o.body_pos, body_quat = reals + o.body_quat, body_ipos = reals + o.body_ipos;
    body_iquat = reals + o.body_iquat, body_mass = reals + o.body_mass, body_inertia = reals + o.body_inertia;
    jnt_pos = reals + o.jnt_pos, jnt_axis = reals + o.jnt_axis;
    dof_damping = reals + o.dof_damping, dof_armature = reals + o.dof_armature;
    geom_pos = reals + o.geom_pos, geom_quat = reals + o.geom_quat;
    site_pos = reals + o.site_pos, site_quat = reals + o.site_quat;
    qpos0 = reals + o.qpos0;
    body_parentid = ints + o.body_parentid, body_rootid = ints + o.body_rootid;
    body_jntadr = ints + o.body_jntadr, body_jntnum = ints + o.body_jntnum;
    body_dofadr = ints + o.body_dofadr, body_dofnum = ints + o.body_dofnum;
    jnt_type = ints + o.jnt_type, jnt_qposadr = ints + o.jnt_qposadr, jnt_dofadr = ints + o.jnt_dofadr;
    dof_bodyid = ints + o.dof_bodyid, dof_parentid = ints + o.dof_parentid;
    geom_bodyid = ints + o.geom_bodyid, site_bodyid = ints + o.site_bodyid;
    jnt_range = reals + o.jnt_range, geom_size = reals + o.geom_size, geom_friction = reals + o.geom_friction;
    actuator_gear = reals + o.actuator_gear, actuator_ctrlrange = reals + o.actuator_ctrlrange;
    actuator_forcerange = reals + o.actuator_forcerange, actuator_kp = reals + o.actuator_kp;
    actuator_kv = reals + o.actuator_kv;
    jnt_limited = ints + o.jnt_limited, geom_type = ints + o.geom_type, geom_contype = ints + o.geom_contype;
    geom_conaffinity = ints + o.geom_conaffinity;
    actuator_kind = ints + o.actuator_kind, actuator_trnid = ints + o.actuator_trnid;
    actuator_ctrllimited = ints + o.actuator_ctrllimited, actuator_forcelimited = ints + o.actuator_forcelimited;
    geom_margin = reals + o.geom_margin, geom_condim = ints + o.geom_condim;
    jnt_stiffness = reals + o.jnt_stiffness, qpos_spring = reals + o.qpos_spring;
    body_invweight0 = reals + o.body_invweight0, dof_invweight0 = reals + o.dof_invweight0;
  }
};

// Whether geoms g1 and g2 may touch (MuJoCo's filter): never two planes, never within one weld body
// (a body and the ancestors it is welded to, that is, up to the first one with a joint; bodies
// welded to the world count as the world), never a body and its parent (unless one is the world),
// and only where (contype1 & conaffinity2) || (contype2 & conaffinity1).
template <class T>
RLT_HD inline int weld_body(const ModelView<T>& m, int b) {
  while (b > 0 && m.body_jntnum[b] == 0) b = m.body_parentid[b];
  return b;
}
template <class T>
RLT_HD inline bool geom_pair_allowed(const ModelView<T>& m, int g1, int g2) {
  if (m.geom_type[g1] == kGeomPlane && m.geom_type[g2] == kGeomPlane) return false;
  if (!((m.geom_contype[g1] & m.geom_conaffinity[g2]) || (m.geom_contype[g2] & m.geom_conaffinity[g1]))) return false;
  const int w1 = weld_body(m, m.geom_bodyid[g1]), w2 = weld_body(m, m.geom_bodyid[g2]);
  if (w1 == w2) return false;
  if (w1 != 0 && w2 != 0 &&
      (weld_body(m, m.body_parentid[w1]) == w2 || weld_body(m, m.body_parentid[w2]) == w1))
    return false;
  return true;
}

// Most contact points one geom pair makes (sim/contact.h, detect_contacts), by type.
RLT_HD inline int pair_contact_capacity(int t1, int t2) {
  if (t1 > t2) { const int t = t1; t1 = t2; t2 = t; }
  if (t1 == kGeomPlane) return t2 == kGeomSphere ? 1 : t2 == kGeomCapsule ? 2 : t2 == kGeomBox ? 8 : 0;
  if (t1 == kGeomSphere) return 1;                        // sphere-sphere, -capsule, -box
  if (t1 == kGeomCapsule) return t2 == kGeomCapsule ? 2 : 4;  // capsule-capsule (2 when parallel), capsule-box
  return 8;                                               // box-box: a clipped face polygon (<= 8) or one edge point
}

template <class T>
inline int contact_capacity(const ModelView<T>& m) {
  int n = 0;
  for (int g1 = 0; g1 < m.ngeom; ++g1)
    for (int g2 = g1 + 1; g2 < m.ngeom; ++g2)
      if (geom_pair_allowed(m, g1, g2)) n += pair_contact_capacity(m.geom_type[g1], m.geom_type[g2]);
  return n;
}

// Most soft-constraint rows (sim/constraints.h): a pyramid of 4 edges per contact, one row per
// limited hinge or slide joint.
template <class T>
inline int constraint_capacity(const ModelView<T>& m) {
  int n = 4 * m.ncon_max;
  for (int j = 0; j < m.njnt; ++j)
    n += m.jnt_limited[j] && (m.jnt_type[j] == kJointHinge || m.jnt_type[j] == kJointSlide) ? 1 : 0;
  return n;
}

// Fills view.body_invweight0 and view.dof_invweight0 (in the block `reals` that view is bound to)
// at qpos0, as MuJoCo's mj_setConst does; defined in sim/constraints.h, instantiated for float and
// double in sim/model.cpp.
template <class T>
void set_invweight0(const ModelView<T>& view, std::vector<T>& reals);

// Thrown by HostModel for a Model whose arrays do not fit its sizes or its tree.
class ModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Owns a Model's dynamics arrays in T on the host and hands out views of them. Checks the Model
// (array sizes, tree order, joint and dof bookkeeping) once, so the RLT_HD code can trust it.
template <class T>
class HostModel {
 public:
  explicit HostModel(const Model& model, bool implicit_damping = true) {
    check(model);
    const ModelOffsets o =
        model_offsets(model.nq, model.nv, model.nbody, model.njnt, model.ngeom, model.nsite, model.nu);
    m_reals.assign(static_cast<size_t>(o.num_reals), T(0));
    m_ints.assign(static_cast<size_t>(o.num_ints), 0);
    auto put = [&](i64 at, const std::vector<double>& src) {
      for (size_t k = 0; k < src.size(); ++k) m_reals[static_cast<size_t>(at) + k] = static_cast<T>(src[k]);
    };
    auto put_int = [&](i64 at, const std::vector<int>& src) {
      for (size_t k = 0; k < src.size(); ++k) m_ints[static_cast<size_t>(at) + k] = src[k];
    };
    put(o.body_pos, model.body_pos), put(o.body_quat, model.body_quat), put(o.body_ipos, model.body_ipos);
    put(o.body_iquat, model.body_iquat), put(o.body_mass, model.body_mass), put(o.body_inertia, model.body_inertia);
    put(o.jnt_pos, model.jnt_pos), put(o.jnt_axis, model.jnt_axis);
    put(o.dof_damping, model.dof_damping), put(o.dof_armature, model.dof_armature);
    put(o.geom_pos, model.geom_pos), put(o.geom_quat, model.geom_quat);
    put(o.site_pos, model.site_pos), put(o.site_quat, model.site_quat);
    put(o.qpos0, model.qpos0);
    put_int(o.body_parentid, model.body_parentid);
    std::vector<int> rootid(static_cast<size_t>(model.nbody), 0);
    for (int b = 1; b < model.nbody; ++b) {
      const int p = model.body_parentid[static_cast<size_t>(b)];
      rootid[static_cast<size_t>(b)] = p == 0 ? b : rootid[static_cast<size_t>(p)];
    }
    put_int(o.body_rootid, rootid);
    put_int(o.body_jntadr, model.body_jntadr), put_int(o.body_jntnum, model.body_jntnum);
    put_int(o.body_dofadr, model.body_dofadr), put_int(o.body_dofnum, model.body_dofnum);
    put_int(o.jnt_type, model.jnt_type), put_int(o.jnt_qposadr, model.jnt_qposadr);
    put_int(o.jnt_dofadr, model.jnt_dofadr);
    put_int(o.dof_bodyid, model.dof_bodyid), put_int(o.dof_parentid, model.dof_parentid);
    put_int(o.geom_bodyid, model.geom_bodyid), put_int(o.site_bodyid, model.site_bodyid);
    // Optional groups (see check): empty means absent, and the zeros left in the blocks say so
    // (no joint limited, every geom with contype = conaffinity = 0, i.e. no contacts).
    put(o.jnt_range, model.jnt_range), put_int(o.jnt_limited, model.jnt_limited);
    put(o.geom_size, model.geom_size), put(o.geom_friction, model.geom_friction);
    put_int(o.geom_type, model.geom_type), put_int(o.geom_contype, model.geom_contype);
    put_int(o.geom_conaffinity, model.geom_conaffinity);
    put(o.actuator_gear, model.actuator_gear), put(o.actuator_ctrlrange, model.actuator_ctrlrange);
    put(o.actuator_forcerange, model.actuator_forcerange), put(o.actuator_kp, model.actuator_kp);
    put(o.actuator_kv, model.actuator_kv);
    put_int(o.actuator_kind, model.actuator_kind), put_int(o.actuator_trnid, model.actuator_trnid);
    put_int(o.actuator_ctrllimited, model.actuator_ctrllimited);
    put_int(o.actuator_forcelimited, model.actuator_forcelimited);
    // Per-geom contact parameters; empty means MuJoCo's defaults (condim 3, margin 0).
    put(o.geom_margin, model.geom_margin);
    if (model.geom_condim.empty()) {
      for (int g = 0; g < model.ngeom; ++g) m_ints[static_cast<size_t>(o.geom_condim + g)] = 3;
    } else {
      put_int(o.geom_condim, model.geom_condim);
    }
    put(o.jnt_stiffness, model.jnt_stiffness), put(o.qpos_spring, model.qpos_spring);

    m_view = ModelView<T>{};
    m_view.nq = model.nq, m_view.nv = model.nv, m_view.nbody = model.nbody, m_view.njnt = model.njnt;
    m_view.ngeom = model.ngeom, m_view.nsite = model.nsite;
    m_view.timestep = static_cast<T>(model.timestep);
    for (int k = 0; k < 3; ++k) m_view.gravity[k] = static_cast<T>(model.gravity[k]);
    m_view.implicit_damping = implicit_damping ? 1 : 0;
    m_view.nu = model.nu;
    m_view.ncon_max = 0;
    m_view.bind(m_reals.data(), m_ints.data());
    m_view.ncon_max = contact_capacity(m_view);
    m_view.nefc_max = constraint_capacity(m_view);
    set_invweight0(m_view, m_reals);
  }

  // Copies share nothing with the original, so the view is rebound to the copy's own arrays.
  HostModel(const HostModel& other) : m_reals(other.m_reals), m_ints(other.m_ints), m_view(other.m_view) {
    m_view.bind(m_reals.data(), m_ints.data());
  }
  HostModel& operator=(const HostModel& other) {
    if (this != &other) {
      m_reals = other.m_reals, m_ints = other.m_ints, m_view = other.m_view;
      m_view.bind(m_reals.data(), m_ints.data());
    }
    return *this;
  }

  HostModel(HostModel&& other) noexcept
      : m_reals(std::move(other.m_reals)), m_ints(std::move(other.m_ints)), m_view(other.m_view) {
    m_view.bind(m_reals.data(), m_ints.data());
  }
  HostModel& operator=(HostModel&& other) noexcept {
    m_reals = std::move(other.m_reals), m_ints = std::move(other.m_ints), m_view = other.m_view;
    m_view.bind(m_reals.data(), m_ints.data());
    return *this;
  }

  const ModelView<T>& view() const { return m_view; }
  // The two blocks to upload; a device view is view() rebound with ModelView::bind.
  const std::vector<T>& reals() const { return m_reals; }
  const std::vector<int>& ints() const { return m_ints; }

 private:
  static void check(const Model& m) {
    auto fail = [](const std::string& what) { throw ModelError("Model: " + what); };
    auto size = [&](const char* name, size_t got, long want) {
      if (static_cast<long>(got) != want)
        fail(std::string(name) + " has " + std::to_string(got) + " elements, expected " + std::to_string(want));
    };
    if (m.nbody < 1) fail("nbody must be at least 1 (the world)");
    if (m.nq < 0 || m.nv < 0 || m.njnt < 0 || m.ngeom < 0 || m.nsite < 0) fail("negative size");
    const long nb = m.nbody, nj = m.njnt, nv = m.nv, ng = m.ngeom, ns = m.nsite;
    size("body_parentid", m.body_parentid.size(), nb), size("body_pos", m.body_pos.size(), 3 * nb);
    size("body_quat", m.body_quat.size(), 4 * nb), size("body_ipos", m.body_ipos.size(), 3 * nb);
    size("body_iquat", m.body_iquat.size(), 4 * nb), size("body_mass", m.body_mass.size(), nb);
    size("body_inertia", m.body_inertia.size(), 3 * nb), size("body_jntadr", m.body_jntadr.size(), nb);
    size("body_jntnum", m.body_jntnum.size(), nb), size("body_dofadr", m.body_dofadr.size(), nb);
    size("body_dofnum", m.body_dofnum.size(), nb);
    size("jnt_type", m.jnt_type.size(), nj), size("jnt_bodyid", m.jnt_bodyid.size(), nj);
    size("jnt_qposadr", m.jnt_qposadr.size(), nj), size("jnt_dofadr", m.jnt_dofadr.size(), nj);
    size("jnt_pos", m.jnt_pos.size(), 3 * nj), size("jnt_axis", m.jnt_axis.size(), 3 * nj);
    size("jnt_stiffness", m.jnt_stiffness.size(), nj);
    size("dof_bodyid", m.dof_bodyid.size(), nv), size("dof_parentid", m.dof_parentid.size(), nv);
    size("dof_damping", m.dof_damping.size(), nv), size("dof_armature", m.dof_armature.size(), nv);
    size("geom_bodyid", m.geom_bodyid.size(), ng), size("geom_pos", m.geom_pos.size(), 3 * ng);
    size("geom_quat", m.geom_quat.size(), 4 * ng);
    size("site_bodyid", m.site_bodyid.size(), ns), size("site_pos", m.site_pos.size(), 3 * ns);
    size("site_quat", m.site_quat.size(), 4 * ns);
    size("qpos0", m.qpos0.size(), m.nq), size("qpos_spring", m.qpos_spring.size(), m.nq);
    for (size_t j = 0; j < m.jnt_stiffness.size(); ++j)
      if (!(m.jnt_stiffness[j] >= 0) || !std::isfinite(m.jnt_stiffness[j]))
        fail("joint " + std::to_string(j) + " has a negative or non-finite stiffness");
    for (size_t i = 0; i < m.qpos_spring.size(); ++i)
      if (!std::isfinite(m.qpos_spring[i])) fail("qpos_spring[" + std::to_string(i) + "] is not finite");
    // Optional groups: each may be left empty (a model built for the contact-free dynamics alone),
    // and is then absent; when given it must be whole.
    auto optional = [&](const char* name, size_t got, long want) {
      if (got != 0) size(name, got, want);
    };
    optional("jnt_limited", m.jnt_limited.size(), nj), optional("jnt_range", m.jnt_range.size(), 2 * nj);
    if (m.jnt_limited.empty() != m.jnt_range.empty()) fail("jnt_limited and jnt_range must be given together");
    optional("geom_type", m.geom_type.size(), ng), optional("geom_size", m.geom_size.size(), 3 * ng);
    optional("geom_friction", m.geom_friction.size(), 3 * ng);
    optional("geom_contype", m.geom_contype.size(), ng), optional("geom_conaffinity", m.geom_conaffinity.size(), ng);
    optional("geom_condim", m.geom_condim.size(), ng), optional("geom_margin", m.geom_margin.size(), ng);
    for (size_t g = 0; g < m.geom_condim.size(); ++g) {
      const int c = m.geom_condim[g];
      if (c != 1 && c != 3)
        fail("geom " + std::to_string(g) + " has condim " + std::to_string(c) +
             " (expected 1 or 3: MuJoCo's soft constraints here take no torsional or rolling friction)");
    }
    for (size_t g = 0; g < m.geom_margin.size(); ++g)
      if (!(m.geom_margin[g] >= 0) || !std::isfinite(m.geom_margin[g]))
        fail("geom " + std::to_string(g) + " has a negative or non-finite margin");
    if (!m.geom_contype.empty() || !m.geom_conaffinity.empty()) {
      // Contacts need the whole geom description.
      size("geom_type", m.geom_type.size(), ng), size("geom_size", m.geom_size.size(), 3 * ng);
      size("geom_friction", m.geom_friction.size(), 3 * ng);
      size("geom_contype", m.geom_contype.size(), ng), size("geom_conaffinity", m.geom_conaffinity.size(), ng);
    }
    for (long g = 0; g < static_cast<long>(m.geom_type.size()); ++g) {
      const int t = m.geom_type[static_cast<size_t>(g)];
      if (t != kGeomPlane && t != kGeomSphere && t != kGeomCapsule && t != kGeomBox)
        fail("geom " + std::to_string(g) + " has unsupported type " + std::to_string(t));
    }
    if (m.nu < 0) fail("negative size");
    const long nu = m.nu;
    size("actuator_kind", m.actuator_kind.size(), nu), size("actuator_trnid", m.actuator_trnid.size(), nu);
    size("actuator_gear", m.actuator_gear.size(), nu);
    size("actuator_ctrllimited", m.actuator_ctrllimited.size(), nu);
    size("actuator_ctrlrange", m.actuator_ctrlrange.size(), 2 * nu);
    size("actuator_forcelimited", m.actuator_forcelimited.size(), nu);
    size("actuator_forcerange", m.actuator_forcerange.size(), 2 * nu);
    size("actuator_kp", m.actuator_kp.size(), nu), size("actuator_kv", m.actuator_kv.size(), nu);
    for (long a = 0; a < nu; ++a) {
      const size_t as = static_cast<size_t>(a);
      const int k = m.actuator_kind[as], j = m.actuator_trnid[as];
      if (k != kActMotor && k != kActPosition && k != kActVelocity)
        fail("actuator " + std::to_string(a) + " has unknown kind " + std::to_string(k));
      if (j < 0 || j >= m.njnt) fail("actuator " + std::to_string(a) + " drives joint " + std::to_string(j));
      const int type = m.jnt_type[static_cast<size_t>(j)];
      if (type != kJointHinge && type != kJointSlide)
        fail("actuator " + std::to_string(a) + " drives a free or ball joint (only hinge and slide are supported)");
    }

    if (m.body_parentid[0] != 0 && m.body_parentid[0] != -1) fail("body 0 must be the world");
    for (long b = 1; b < nb; ++b) {
      const int p = m.body_parentid[static_cast<size_t>(b)];
      if (p < 0 || p >= b) fail("body " + std::to_string(b) + " has parent " + std::to_string(p) + " (need 0 <= parent < body)");
    }
    // Joints: each body's joints are consecutive, in order, and their qpos/dof blocks follow each
    // other through the model in joint order.
    int qadr = 0, dadr = 0;
    for (long j = 0; j < nj; ++j) {
      const size_t js = static_cast<size_t>(j);
      const int type = m.jnt_type[js];
      if (type != kJointFree && type != kJointBall && type != kJointSlide && type != kJointHinge)
        fail("joint " + std::to_string(j) + " has unknown type " + std::to_string(type));
      if (m.jnt_qposadr[js] != qadr || m.jnt_dofadr[js] != dadr)
        fail("joint " + std::to_string(j) + " qpos/dof address out of order");
      const int b = m.jnt_bodyid[js];
      if (b < 1 || b >= m.nbody) fail("joint " + std::to_string(j) + " on body " + std::to_string(b));
      if (type == kJointFree && m.body_parentid[static_cast<size_t>(b)] != 0)
        fail("free joint " + std::to_string(j) + " is not on a child of the world");
      qadr += joint_nq(type), dadr += joint_nv(type);
    }
    if (qadr != m.nq || dadr != m.nv) fail("joint sizes do not add up to nq/nv");
    for (long b = 0; b < nb; ++b) {
      const size_t bs = static_cast<size_t>(b);
      const int num = m.body_jntnum[bs], adr = m.body_jntadr[bs];
      if (num < 0 || (num > 0 && (adr < 0 || adr + num > m.njnt)))
        fail("body " + std::to_string(b) + " joint range out of bounds");
      int dofs = 0;
      for (int k = 0; k < num; ++k) {
        if (m.jnt_bodyid[static_cast<size_t>(adr + k)] != b) fail("body " + std::to_string(b) + " joint list mismatch");
        if (m.jnt_type[static_cast<size_t>(adr + k)] == kJointFree && num != 1)
          fail("body " + std::to_string(b) + ": a free joint must be the body's only joint");
        // A ball's dofs rotate about the body's final axes (as MuJoCo's), which is only right when no
        // rotation follows it in the body; MuJoCo's compiler rejects that too.
        if (k > 0 && m.jnt_type[static_cast<size_t>(adr + k - 1)] == kJointBall &&
            m.jnt_type[static_cast<size_t>(adr + k)] != kJointSlide)
          fail("body " + std::to_string(b) + ": a ball joint followed by a rotation");
        dofs += joint_nv(m.jnt_type[static_cast<size_t>(adr + k)]);
      }
      if (m.body_dofnum[bs] != dofs) fail("body " + std::to_string(b) + " dof count mismatch");
      if (num > 0 && m.body_dofadr[bs] != m.jnt_dofadr[static_cast<size_t>(adr)])
        fail("body " + std::to_string(b) + " dof address mismatch");
    }
    for (long i = 0; i < nv; ++i) {
      const int p = m.dof_parentid[static_cast<size_t>(i)];
      if (p < -1 || p >= i) fail("dof " + std::to_string(i) + " has parent " + std::to_string(p) + " (need -1 <= parent < dof)");
      const int b = m.dof_bodyid[static_cast<size_t>(i)];
      if (b < 1 || b >= m.nbody) fail("dof " + std::to_string(i) + " on body " + std::to_string(b));
    }
    for (long g = 0; g < ng; ++g)
      if (m.geom_bodyid[static_cast<size_t>(g)] < 0 || m.geom_bodyid[static_cast<size_t>(g)] >= m.nbody)
        fail("geom " + std::to_string(g) + " body out of range");
    for (long s = 0; s < ns; ++s)
      if (m.site_bodyid[static_cast<size_t>(s)] < 0 || m.site_bodyid[static_cast<size_t>(s)] >= m.nbody)
        fail("site " + std::to_string(s) + " body out of range");
  }

  std::vector<T> m_reals;
  std::vector<int> m_ints;
  ModelView<T> m_view;
};

}  // namespace rlt
