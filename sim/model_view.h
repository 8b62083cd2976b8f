// ModelView<T>: what the dynamics (sim/dynamics.h) reads of a compiled Model (sim/model.h), as
// raw pointers and sizes in the scalar T (float or double), so that one RLT_HD function reads it on
// the host or on the device. HostModel<T> owns the converted arrays on the host.
//
// Layout: every real array lives in one block of T, every integer array in one block of int, at
// offsets that depend only on the sizes (model_offsets). A device copy uploads the two blocks and
// binds the same offsets to device pointers (ModelView<T>::bind), so host and device views never
// disagree about where a field is.
#pragma once

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
  i64 num_reals;
  // ints
  i64 body_parentid, body_rootid, body_jntadr, body_jntnum, body_dofadr, body_dofnum;
  i64 jnt_type, jnt_qposadr, jnt_dofadr;
  i64 dof_bodyid, dof_parentid;
  i64 geom_bodyid, site_bodyid;
  i64 num_ints;
};

inline ModelOffsets model_offsets(int nq, int nv, int nbody, int njnt, int ngeom, int nsite) {
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
  o.num_reals = r;
  integer(o.body_parentid, nbody), integer(o.body_rootid, nbody), integer(o.body_jntadr, nbody);
  integer(o.body_jntnum, nbody), integer(o.body_dofadr, nbody), integer(o.body_dofnum, nbody);
  integer(o.jnt_type, njnt), integer(o.jnt_qposadr, njnt), integer(o.jnt_dofadr, njnt);
  integer(o.dof_bodyid, nv), integer(o.dof_parentid, nv);
  integer(o.geom_bodyid, ngeom), integer(o.site_bodyid, nsite);
  o.num_ints = n;
  return o;
}

template <class T>
struct ModelView {
  // sizes
  int nq, nv, nbody, njnt, ngeom, nsite;

  // options
  T timestep;            // s
  T gravity[3];          // m/s^2
  // MuJoCo's Euler integrator (eulerdamp, on by default): joint damping is integrated implicitly,
  // (M + dt diag(dof_damping)) qacc = f, which keeps stiff damping stable.
  int implicit_damping;  // 0/1

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

  // Points the array fields at the two blocks laid out by model_offsets (host or device memory).
  void bind(const T* reals, const int* ints) {
    const ModelOffsets o = model_offsets(nq, nv, nbody, njnt, ngeom, nsite);
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
  }
};

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
        model_offsets(model.nq, model.nv, model.nbody, model.njnt, model.ngeom, model.nsite);
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

    m_view = ModelView<T>{};
    m_view.nq = model.nq, m_view.nv = model.nv, m_view.nbody = model.nbody, m_view.njnt = model.njnt;
    m_view.ngeom = model.ngeom, m_view.nsite = model.nsite;
    m_view.timestep = static_cast<T>(model.timestep);
    for (int k = 0; k < 3; ++k) m_view.gravity[k] = static_cast<T>(model.gravity[k]);
    m_view.implicit_damping = implicit_damping ? 1 : 0;
    m_view.bind(m_reals.data(), m_ints.data());
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
    size("dof_bodyid", m.dof_bodyid.size(), nv), size("dof_parentid", m.dof_parentid.size(), nv);
    size("dof_damping", m.dof_damping.size(), nv), size("dof_armature", m.dof_armature.size(), nv);
    size("geom_bodyid", m.geom_bodyid.size(), ng), size("geom_pos", m.geom_pos.size(), 3 * ng);
    size("geom_quat", m.geom_quat.size(), 4 * ng);
    size("site_bodyid", m.site_bodyid.size(), ns), size("site_pos", m.site_pos.size(), 3 * ns);
    size("site_quat", m.site_quat.size(), 4 * ns);
    size("qpos0", m.qpos0.size(), m.nq);

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
