// Test helpers for the rigid-body dynamics (sim/dynamics.h): a builder that fills a Model for a
// tree of bodies and joints by hand, and a one-env simulation holder.
#pragma once

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "sim/dynamics.h"
#include "sim/model.h"
#include "sim/model_view.h"

namespace rlt {
namespace test {

using V3 = std::array<double, 3>;
using Q4 = std::array<double, 4>;

// Builds a Model body by body: joints, geoms and sites attach to the body added last, so bodies
// come out in tree order with their joints in order (MuJoCo's layout).
class ModelBuilder {
 public:
  ModelBuilder() {
    m_model.timestep = 0.002;
    add_body_arrays(0, {0, 0, 0}, {1, 0, 0, 0}, 0, {0, 0, 0}, {0, 0, 0}, {1, 0, 0, 0});
  }

  ModelBuilder& timestep(double dt) {
    m_model.timestep = dt;
    return *this;
  }
  ModelBuilder& gravity(V3 g) {
    for (int k = 0; k < 3; ++k) m_model.gravity[k] = g[static_cast<size_t>(k)];
    return *this;
  }

  // A body of the given mass with its center of mass at ipos and principal moments `inertia`
  // about axes iquat (both in the body frame); returns its id.
  int body(int parent, V3 pos, Q4 quat, double mass, V3 ipos, V3 inertia, Q4 iquat = {1, 0, 0, 0}) {
    add_body_arrays(parent, pos, quat, mass, ipos, inertia, iquat);
    return m_model.nbody - 1;
  }

  // A joint of the last body; returns its id.
  int joint(int type, V3 axis = {0, 0, 1}, V3 pos = {0, 0, 0}, double damping = 0, double armature = 0) {
    Model& m = m_model;
    const int b = m.nbody - 1;
    const int id = m.njnt++;
    m.jnt_type.push_back(type);
    m.jnt_bodyid.push_back(b);
    m.jnt_qposadr.push_back(m.nq);
    m.jnt_dofadr.push_back(m.nv);
    append(m.jnt_pos, pos);
    const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    append(m.jnt_axis, V3{axis[0] / n, axis[1] / n, axis[2] / n});
    m.jnt_limited.push_back(0);
    m.jnt_range.insert(m.jnt_range.end(), {0.0, 0.0});
    m.jnt_stiffness.push_back(0.0);
    m.jnt_name.emplace_back();
    if (m.body_jntnum[static_cast<size_t>(b)] == 0) m.body_jntadr[static_cast<size_t>(b)] = id;
    m.body_jntnum[static_cast<size_t>(b)]++;
    if (m.body_dofnum[static_cast<size_t>(b)] == 0) m.body_dofadr[static_cast<size_t>(b)] = m.nv;
    const int nq = joint_nq(type), nv = joint_nv(type);
    m.body_dofnum[static_cast<size_t>(b)] += nv;
    if (type == kJointFree) {
      append(m.qpos0, V3{0, 0, 0});
      m.qpos0.insert(m.qpos0.end(), {1.0, 0.0, 0.0, 0.0});
    } else if (type == kJointBall) {
      m.qpos0.insert(m.qpos0.end(), {1.0, 0.0, 0.0, 0.0});
    } else {
      m.qpos0.push_back(0.0);
    }
    m.qpos_spring.insert(m.qpos_spring.end(), m.qpos0.end() - nq, m.qpos0.end());
    for (int k = 0; k < nv; ++k) {
      m.dof_bodyid.push_back(b);
      m.dof_jntid.push_back(id);
      m.dof_damping.push_back(damping);
      m.dof_armature.push_back(armature);
    }
    m.nq += nq, m.nv += nv;
    return id;
  }

  // A spring on joint j: stiffness k, at rest at qpos = springref (hinge and slide; free and ball
  // springs rest at qpos0, as in MuJoCo).
  ModelBuilder& spring(int j, double k, double springref = 0) {
    Model& m = m_model;
    m.jnt_stiffness[static_cast<size_t>(j)] = k;
    const int type = m.jnt_type[static_cast<size_t>(j)];
    if (type == kJointHinge || type == kJointSlide)
      m.qpos_spring[static_cast<size_t>(m.jnt_qposadr[static_cast<size_t>(j)])] = springref;
    return *this;
  }

  int geom(V3 pos, Q4 quat) {
    Model& m = m_model;
    m.geom_type.push_back(kGeomSphere);
    m.geom_bodyid.push_back(m.nbody - 1);
    m.geom_size.insert(m.geom_size.end(), {0.05, 0.0, 0.0});
    append(m.geom_pos, pos);
    append(m.geom_quat, unit(quat));
    m.geom_friction.insert(m.geom_friction.end(), {1.0, 0.005, 0.0001});
    m.geom_contype.push_back(0);
    m.geom_conaffinity.push_back(0);
    m.geom_rgba.insert(m.geom_rgba.end(), {0.5f, 0.5f, 0.5f, 1.0f});
    m.geom_name.emplace_back();
    return m.ngeom++;
  }

  int site(V3 pos, Q4 quat) {
    Model& m = m_model;
    m.site_bodyid.push_back(m.nbody - 1);
    append(m.site_pos, pos);
    append(m.site_quat, unit(quat));
    m.site_name.emplace_back();
    return m.nsite++;
  }

  Model build() const {
    Model m = m_model;
    // dof_parentid: the previous dof of the same body, else the last dof of the nearest ancestor.
    std::vector<int> last_dof(static_cast<size_t>(m.nbody), -1);
    m.dof_parentid.assign(static_cast<size_t>(m.nv), -1);
    for (int b = 1; b < m.nbody; ++b) {
      const size_t bs = static_cast<size_t>(b);
      int prev = last_dof[static_cast<size_t>(m.body_parentid[bs])];
      for (int k = 0; k < m.body_dofnum[bs]; ++k) {
        const int dof = m.body_dofadr[bs] + k;
        m.dof_parentid[static_cast<size_t>(dof)] = prev;
        prev = dof;
      }
      last_dof[bs] = prev;
    }
    return m;
  }

 private:
  template <size_t N>
  static void append(std::vector<double>& v, const std::array<double, N>& x) {
    v.insert(v.end(), x.begin(), x.end());
  }
  static Q4 unit(Q4 q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    return {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
  }
  void add_body_arrays(int parent, V3 pos, Q4 quat, double mass, V3 ipos, V3 inertia, Q4 iquat) {
    Model& m = m_model;
    m.body_parentid.push_back(parent);
    append(m.body_pos, pos);
    const Q4 q = unit(quat), iq = unit(iquat);
    m.body_quat.insert(m.body_quat.end(), q.begin(), q.end());
    append(m.body_ipos, ipos);
    m.body_iquat.insert(m.body_iquat.end(), iq.begin(), iq.end());
    m.body_mass.push_back(mass);
    append(m.body_inertia, inertia);
    m.body_jntadr.push_back(-1);
    m.body_jntnum.push_back(0);
    m.body_dofadr.push_back(-1);
    m.body_dofnum.push_back(0);
    m.body_name.emplace_back();
    m.nbody++;
  }

  Model m_model;
};

// One env: the model converted to T and a data row bound to it, reset to qpos0.
template <class T>
class Sim {
 public:
  explicit Sim(const Model& model, bool implicit_damping = true)
      : m_host(model, implicit_damping), m_row(static_cast<size_t>(data_size(m_host.view())), T(0)) {
    d = data_view(m_host.view(), m_row.data());
    reset_data(m(), d);
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  const ModelView<T>& m() const { return m_host.view(); }
  int nq() const { return m().nq; }
  int nv() const { return m().nv; }

  // State from double arrays (for float sims fed the double reference state).
  void set_state(const std::vector<double>& qpos, const std::vector<double>& qvel) {
    for (int i = 0; i < nq(); ++i) d.qpos[i] = static_cast<T>(qpos[static_cast<size_t>(i)]);
    for (int i = 0; i < nv(); ++i) d.qvel[i] = static_cast<T>(qvel[static_cast<size_t>(i)]);
  }
  std::vector<double> get(const T* p, int n) const {
    std::vector<double> out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<double>(p[i]);
    return out;
  }

 private:
  HostModel<T> m_host;
  std::vector<T> m_row;

 public:
  DataView<T> d;
};

// A random state: hinge/slide uniform, ball/free quaternions uniform on the sphere, velocities uniform.
inline void random_state(const Model& model, std::mt19937_64& rng, std::vector<double>& qpos, std::vector<double>& qvel,
                         double speed = 2.0) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> n01(0.0, 1.0);
  qpos.assign(static_cast<size_t>(model.nq), 0.0);
  qvel.assign(static_cast<size_t>(model.nv), 0.0);
  for (int j = 0; j < model.njnt; ++j) {
    const size_t a = static_cast<size_t>(model.jnt_qposadr[static_cast<size_t>(j)]);
    const int type = model.jnt_type[static_cast<size_t>(j)];
    size_t qa = a;
    if (type == kJointFree) {
      for (int k = 0; k < 3; ++k) qpos[qa++] = u(rng);
    }
    if (type == kJointFree || type == kJointBall) {
      double q[4], s = 0;
      for (double& c : q) c = n01(rng), s += c * c;
      for (int k = 0; k < 4; ++k) qpos[qa + static_cast<size_t>(k)] = q[k] / std::sqrt(s);
    } else {
      qpos[qa] = 2.5 * u(rng);
    }
  }
  for (double& v : qvel) v = speed * u(rng);
}

}  // namespace test
}  // namespace rlt
