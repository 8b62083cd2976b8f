// Constraint rows built in slots (sim/newton_lanes.h's SlotRows) for one env (F = float) or kLanes
// envs in SIMD lanes (F = LaneFloat), from one source: the CPU PhysicsBatch's physics in lanes
// (sim/slot_step.h; docs/ARCHITECTURE.md "Physics in lanes").
//
// A model's row candidates, in MuJoCo's order (constraint_rows): each dof's friction loss, each
// limited hinge or slide joint's lower then upper limit, then per geom pair the model may collide
// (HostModel's geom_collide list, in its order) pair_contact_capacity contact candidates, each with
// its condim's pyramid edges. The contacts come in as ContactSlots: per candidate, per lane, the
// depth (> 0: the contact makes rows, as constraint_rows' test), its point and normal. A candidate
// row makes a slot when some lane has it; the lanes without it hold an inert row (J = 0, aref = -1,
// R = 1). Each lane's slots, those it has, are constraint_rows' rows for its env in its order, bit
// for bit (the same arithmetic per lane: tests/sim/test_newton_lanes.cpp), so the solve in slots
// gives the env the same answer whichever envs share its lanes.
//
// Scope: the rows of MuJoCo Playground's robot scenes. SlotLayout refuses, with the reason, what
// is not here yet: equality constraints, tendons, an elliptic cone, contacts of condim 4 or 6,
// noslip (the rows' z), and a converged solve (no iterations budget).
#pragma once

#if !defined(__CUDACC__)
#include <string>
#include <vector>
#endif

#include "sim/constraints.h"
#include "sim/contact.h"
#include "sim/newton_lanes.h"

namespace rlt {

namespace slot_rows_detail {
using namespace constraint_detail;

// pow_ lane by lane (its exponent is the model's)
RLT_HD RLT_INLINE float pow_f(float a, float b) { return pow_(a, b); }
#if defined(RLT_LANES)
RLT_LANES_INLINE LaneFloat pow_f(LaneFloat a, float b) {
  if (b == 1.0f) return a;
  if (b == 2.0f) return a * a;
  LaneFloat r;
  for (int l = 0; l < kLanes; ++l) r.set_lane(l, powf(a.lane(l), b));
  return r;
}
#endif

// impedance(), lane by lane: the same operations on the branch each lane takes.
template <class F>
RLT_HD RLT_INLINE F slot_impedance(const float* imp, F dist) {
  if (imp[0] == imp[1] || imp[2] <= float(kMinVal)) return F(0.5f * (imp[0] + imp[1]));
  const F x0 = dist / F(imp[2]);
  const F x = select(x0 < F(0), -x0, x0);
  F y = x;
  if (imp[4] != 1.0f) {
    const F lo = F(1.0f / pow_(imp[3], imp[4] - 1.0f)) * pow_f(x, imp[4]);
    const F hi = F(1) - F(1.0f / pow_(1.0f - imp[3], imp[4] - 1.0f)) * pow_f(F(1) - x, imp[4]);
    y = select(x <= F(imp[3]), lo, hi);
  }
  const F inside = F(imp[0]) + y * F(imp[1] - imp[0]);
  return select(x >= F(1), F(imp[1]), select(x <= F(0), F(imp[0]), inside));
}

// finish_row's aref and R for a row whose J is written (Newton: no z), from the scalar constants
// of its SolParams; vel = J qvel (unit_dof >= 0: that entry alone, as finish_row).
template <class F>
RLT_HD RLT_INLINE void slot_finish(const ModelView<F>& m, const DataView<F>& d, const F* J, F dist, float diag_approx,
                                   const SolParams<float>& sp, bool friction, F imp_dist, int unit_dof, F* aref, F* R) {
  F vel = F(0);
  if (unit_dof >= 0) vel += J[unit_dof] * d.qvel[unit_dof];
  else
    for (int i = 0; i < m.nv; ++i) vel += J[i] * d.qvel[i];
  const F dimp = slot_impedance(sp.imp, imp_dist);
  const float dmax = sp.imp[1];
  const float K = friction ? 0.0f
                  : sp.ref[0] > 0.0f
                      ? 1.0f / max_(float(kMinVal), dmax * dmax * sp.ref[0] * sp.ref[0] * sp.ref[1] * sp.ref[1])
                      : -sp.ref[0] / max_(float(kMinVal), dmax * dmax);
  const float B =
      sp.ref[1] > 0.0f ? 2.0f / max_(float(kMinVal), dmax * sp.ref[0]) : -sp.ref[1] / max_(float(kMinVal), dmax);
  const F r = (F(1) - dimp) / dimp * F(diag_approx);
  *aref = F(-B) * vel - F(K) * dimp * dist;
  *R = select(r > F(1e-15f), r, F(1e-15f));
}

}  // namespace slot_rows_detail

// The contact candidates of a step in slots: candidate c (pair[c], an index into the model's
// geom_collide list) holds per lane the depth (> 0: a contact), point and normal (3 values each).
template <class F>
struct ContactSlots {
  int n = 0;
  const int* pair = nullptr;
  const F* depth = nullptr;
  const F* pos = nullptr;
  const F* normal = nullptr;
};

#if !defined(__CUDACC__)
// Host: a model's row candidates (see the top of this file), built once.
struct SlotLayout {
  int nv = 0;
  std::vector<int> friction_dofs;
  std::vector<int> limited_joints;  // hinge and slide joints with a range
  // per contact candidate: its geom_collide pair, and the dof chains of its rows (newton_lanes.h's
  // deep, top, deep_b, top_b: geom 2's body's chain below where it meets geom 1's, then geom 1's)
  std::vector<int> cand_pair, cand_deep, cand_top, cand_deep_b, cand_top_b, cand_edges;
  int max_slots = 0;  // every candidate row at once

  // False, with the reason, for a model this file does not cover yet.
  bool build(const ModelView<float>& m, std::string* why) {
    using namespace constraint_detail;
    *this = SlotLayout();
    nv = m.nv;
    if (m.neq > 0) return *why = "equality constraints", false;
    if (m.ntendon > 0) return *why = "tendons", false;
    if (m.cone == kConeElliptic) return *why = "an elliptic cone", false;
    if (needs_z(m)) return *why = "the rows' z (noslip, or Gauss-Seidel)", false;
    if (m.newton_ls_iterations < 0) return *why = "no iterations budget (a converged solve)", false;
    for (int i = 0; i < m.nv; ++i)
      if (m.dof_frictionloss[i] > 0.0f) friction_dofs.push_back(i);
    for (int j = 0; j < m.njnt; ++j)
      if (m.jnt_limited[j] && (m.jnt_type[j] == kJointHinge || m.jnt_type[j] == kJointSlide))
        limited_joints.push_back(j);
    max_slots = static_cast<int>(friction_dofs.size() + 2 * limited_joints.size());
    int two_chain = 0;  // contact rows that can lie on two chains (newton_lanes.h: at most kSlotMaxCross)
    for (int k = 0; k < m.ncollide; ++k) {
      const int g1 = m.geom_collide[k] >> kGeomCollideShift, g2 = m.geom_collide[k] & kGeomCollideMask;
      const ContactParams<float> cp = contact_params(m, g1, g2);
      const int edges = contact_row_count(m, contact_dim(cp));
      if (contact_dim(cp) > 3) return *why = "a contact of condim 4 or 6", false;
      // the chains: each body's dofs below where its path to the root meets the other's (J is zero
      // on the common ones: both sides add the same column with opposite signs); geom 2's first,
      // or geom 1's alone where geom 2 is on the world
      const int e1 = last_dof(m, m.geom_bodyid[g1]), e2 = last_dof(m, m.geom_bodyid[g2]);
      auto below_meeting = [&](int from, int other) {
        std::vector<int> path;
        for (int i = from; i >= 0; i = m.dof_parentid[i]) {
          bool common = false;
          for (int o = other; o >= 0 && !common; o = m.dof_parentid[o]) common = o == i;
          if (common) break;
          path.push_back(i);
        }
        return path;
      };
      std::vector<int> pa = below_meeting(e2, e1), pb = below_meeting(e1, e2);
      if (pa.empty()) pa.swap(pb);
      const int deep = pa.empty() ? -1 : pa.front(), top = pa.empty() ? 0 : pa.back();
      const int deep_b = pb.empty() ? -1 : pb.front(), top_b = pb.empty() ? 0 : pb.back();
      if (deep_b >= 0) two_chain += pair_contact_capacity(m.geom_type[g1], m.geom_type[g2]) * edges;
      if (two_chain > kSlotMaxCross) return *why = "more contact rows on two chains than kSlotMaxCross", false;
      for (int r = 0; r < pair_contact_capacity(m.geom_type[g1], m.geom_type[g2]); ++r) {
        cand_pair.push_back(k), cand_edges.push_back(edges);
        cand_deep.push_back(deep), cand_top.push_back(top), cand_deep_b.push_back(deep_b), cand_top_b.push_back(top_b);
        max_slots += edges;
      }
    }
    return true;
  }
};
#endif

// The rows in slots for the current state of every lane (kinematics, com quantities and qvel in
// d; the contacts in cs, its candidates the layout's): the slot structure in the int arrays and
// each lane's rows in the F arrays of `out` (capacity layout.max_slots; J max_slots x nv). fm is
// the float view of the same model (its constants: solref, solimp, friction, invweights). h is the
// timestep. Returns the slots.
template <class F>
struct SlotRowsOut {
  int* deep;
  int* top;
  int* deep_b;
  int* top_b;
  int* kind;
  F* J;
  F* aref;
  F* R;
  F* fl;
  F* real;    // 1 in the lanes that have the slot's row, 0 in those holding an inert one
  int* cand;  // the contact candidate a slot is an edge of, -1 for a friction loss or a limit
};
#if !defined(__CUDACC__)
template <class F>
int build_slot_rows(const ModelView<float>& fm, const ModelView<F>& m, const DataView<F>& d, const SlotLayout& layout,
                    const ContactSlots<F>& cs, float h, const SlotRowsOut<F>& out) {
  using namespace slot_rows_detail;
  const int nv = m.nv;
  int n = 0;
  auto open = [&](int s, int kind, int deep, int top, int deep_b, int top_b) {  // slot s, J zero
    out.deep[s] = deep, out.top[s] = top, out.deep_b[s] = deep_b, out.top_b[s] = top_b, out.kind[s] = kind;
    out.cand[s] = -1;
    F* J = out.J + s * nv;
    for (int i = 0; i < nv; ++i) J[i] = F(0);
    out.fl[s] = F(0), out.real[s] = F(1);
    return J;
  };
  // a lane without the row: inert
  auto inert = [&](int s, MaskOf<F> have) {
    F* J = out.J + s * nv;
    for (int i = 0; i < nv; ++i) J[i] = select(have, J[i], F(0));
    out.aref[s] = select(have, out.aref[s], F(-1));
    out.R[s] = select(have, out.R[s], F(1));
    out.real[s] = select(have, F(1), F(0));
  };
  for (int dof : layout.friction_dofs) {  // every lane has these
    F* J = open(n, kScalarFriction, dof, dof, -1, 0);
    J[dof] = F(1);
    const SolParams<float> sp = sol_params(fm, fm.dof_solref + 2 * dof, fm.dof_solimp + 5 * dof, h);
    slot_finish(m, d, J, F(0), static_cast<float>(fm.dof_invweight0[dof]), sp, true, F(0), dof, &out.aref[n],
                &out.R[n]);
    out.fl[n] = F(static_cast<float>(fm.dof_frictionloss[dof]));
    ++n;
  }
  for (int j : layout.limited_joints) {
    const int dof = fm.jnt_dofadr[j];
    const F q = d.qpos[fm.jnt_qposadr[j]];
    const float lo = fm.jnt_range[2 * j], hi = fm.jnt_range[2 * j + 1], margin = fm.jnt_margin[j];
    for (int side = 0; side < 2; ++side) {
      const F dist = side == 0 ? q - F(lo) : F(hi) - q;
      const auto have = dist < F(margin);
      if (!any(have)) continue;
      F* J = open(n, kScalarInequality, dof, dof, -1, 0);
      J[dof] = select(have, F(side == 0 ? 1.0f : -1.0f), F(0));
      const SolParams<float> sp = sol_params(fm, fm.jnt_solref + 2 * j, fm.jnt_solimp + 5 * j, h);
      const F r = margin == 0.0f ? dist : dist - F(margin);
      slot_finish(m, d, J, r, static_cast<float>(fm.dof_invweight0[dof]), sp, false, r, dof, &out.aref[n], &out.R[n]);
      inert(n, have);
      ++n;
    }
  }
  for (int c = 0; c < cs.n; ++c) {
    const F depth = cs.depth[c];
    const auto have = depth > F(0);
    if (!any(have)) continue;
    const int k = cs.pair[c];
    const int g1 = fm.geom_collide[k] >> kGeomCollideShift, g2 = fm.geom_collide[k] & kGeomCollideMask;
    const constraint_detail::ContactParams<float> cp = constraint_detail::contact_params(fm, g1, g2);
    const int dim = constraint_detail::contact_dim(cp), edges = constraint_detail::contact_row_count(fm, dim);
    const float mu = cp.mu;
    const int b1 = fm.geom_bodyid[g1], b2 = fm.geom_bodyid[g2];
    const Vec3<F> p{cs.pos[3 * c], cs.pos[3 * c + 1], cs.pos[3 * c + 2]};
    const Vec3<F> nrm{cs.normal[3 * c], cs.normal[3 * c + 1], cs.normal[3 * c + 2]};
    // contact_frame, lane by lane
    Vec3<F> t = Vec3<F>::zero();
    if (fm.geom_type[g1] == kGeomPlane && fm.geom_type[g2] == kGeomCapsule) {
      const F* x = d.geom_xmat + 9 * g2;
      const Vec3<F> axis{x[2], x[5], x[8]};
      t = axis - dot(axis, nrm) * nrm;
    }
    const auto flat = !(dot(t, t) > F(1e-12f));
    const F ay = select(nrm.y < F(0), -nrm.y, nrm.y);
    const auto near_y = ay < F(0.5f);
    const Vec3<F> a{F(0), select(near_y, F(1), F(0)), select(near_y, F(0), F(1))};
    t = select(flat, a - dot(a, nrm) * nrm, t);
    const Vec3<F> t1 = (F(1) / m_sqrt(dot(t, t))) * t, t2 = cross(nrm, t1);
    const int s0 = n;
    for (int e = 0; e < edges; ++e) {
      open(s0 + e, kScalarInequality, layout.cand_deep[static_cast<size_t>(c)], layout.cand_top[static_cast<size_t>(c)],
           layout.cand_deep_b[static_cast<size_t>(c)], layout.cand_top_b[static_cast<size_t>(c)]);
      out.cand[s0 + e] = c;
    }
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? b2 : b1;
      const float sign = side == 0 ? 1.0f : -1.0f;
      for (int i = last_dof(fm, b); i >= 0; i = fm.dof_parentid[i]) {
        const Vec3<F> col = point_jacobian_col(m, d, b, p, i);
        const F jn = F(sign) * dot(nrm, col);
        if (edges == 1) {
          out.J[s0 * nv + i] += jn;
          continue;
        }
        for (int kk = 1; kk < dim; ++kk) {  // (sliding only: SlotLayout refuses condim 4 and 6)
          const Vec3<F> axis = kk == 1 ? t1 : t2;
          const F jk = F(sign) * F(cp.fr[kk - 1]) * dot(axis, col);
          out.J[(s0 + 2 * kk - 2) * nv + i] += jn + jk;
          out.J[(s0 + 2 * kk - 1) * nv + i] += jn - jk;
        }
      }
    }
    const float tw = static_cast<float>(fm.body_invweight0[b1]) + static_cast<float>(fm.body_invweight0[b2]);
    const SolParams<float> sp = sol_params(fm, cp.ref, cp.imp, h);
    float diag_approx = edges == 1 ? tw : 2.0f * mu * mu * (tw + mu * mu * tw);
    if (edges > 1 && fm.impratio != 1.0f)
      diag_approx = diag_approx / max_(float(constraint_detail::kMinVal), static_cast<float>(fm.impratio));
    for (int e = 0; e < edges; ++e) {
      slot_finish(m, d, out.J + (s0 + e) * nv, -depth, diag_approx, sp, false, -depth, -1, &out.aref[s0 + e],
                  &out.R[s0 + e]);
      inert(s0 + e, have);
    }
    n += edges;
  }
  return n;
}
#endif

#if defined(RLT_LANES) && !defined(__CUDACC__)
// Host: the contact candidates of kLanes envs from their contact lists (after detect_contacts):
// lane l's contact of rank r on geom_collide pair k in the candidate (pair k's first) + r; the
// others' depth -1 (no contact). For the tests and the bench; a batch stepped in lanes collides
// into the slots itself. False, with the reason, for a contact off the layout.
struct ContactSlotsHost {
  std::vector<LaneFloat> depth, pos, normal;
  std::vector<float> ldepth, lpos, lnormal;  // one lane's (lane_view)
  ContactSlots<LaneFloat> view(const SlotLayout& lay) const {
    ContactSlots<LaneFloat> c;
    c.n = static_cast<int>(lay.cand_pair.size()), c.pair = lay.cand_pair.data();
    c.depth = depth.data(), c.pos = pos.data(), c.normal = normal.data();
    return c;
  }
  ContactSlots<float> lane_view(const SlotLayout& lay, int l) {
    const size_t n = lay.cand_pair.size();
    ldepth.resize(n), lpos.resize(3 * n), lnormal.resize(3 * n);
    for (size_t c = 0; c < n; ++c) ldepth[c] = depth[c].lane(l);
    for (size_t c = 0; c < 3 * n; ++c) lpos[c] = pos[c].lane(l), lnormal[c] = normal[c].lane(l);
    ContactSlots<float> cs;
    cs.n = static_cast<int>(n), cs.pair = lay.cand_pair.data();
    cs.depth = ldepth.data(), cs.pos = lpos.data(), cs.normal = lnormal.data();
    return cs;
  }
};
inline bool contact_slots_from_envs(const ModelView<float>& m, const SlotLayout& lay, const DataView<float>* envs,
                                    ContactSlotsHost* out, std::string* why) {
  const size_t n = lay.cand_pair.size();
  out->depth.assign(n, LaneFloat(-1.0f)), out->pos.assign(3 * n, LaneFloat(0.0f)),
      out->normal.assign(3 * n, LaneFloat(0.0f));
  std::vector<int> first(static_cast<size_t>(m.ncollide), -1), count(static_cast<size_t>(m.ncollide), 0);
  for (size_t k = n; k-- > 0;) first[static_cast<size_t>(lay.cand_pair[k])] = static_cast<int>(k);
  for (size_t k = 0; k < n; ++k) ++count[static_cast<size_t>(lay.cand_pair[k])];
  for (int l = 0; l < kLanes; ++l) {
    const DataView<float>& d = envs[l];
    std::vector<int> rank(static_cast<size_t>(m.ncollide), 0);
    for (int i = 0; i < static_cast<int>(d.ncon[0]); ++i) {
      const float* con = d.contact + kContactStride * i;
      const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
      int k = 0;
      while (k < m.ncollide && m.geom_collide[k] != ((g1 << kGeomCollideShift) | g2)) ++k;
      if (k == m.ncollide || rank[static_cast<size_t>(k)] >= count[static_cast<size_t>(k)])
        return *why = "a contact off the layout's candidates", false;
      const size_t c = static_cast<size_t>(first[static_cast<size_t>(k)] + rank[static_cast<size_t>(k)]++);
      out->depth[c].set_lane(l, con[kConDepth]);
      for (size_t j = 0; j < 3; ++j)
        out->pos[3 * c + j].set_lane(l, con[kConPos + j]), out->normal[3 * c + j].set_lane(l, con[kConNormal + j]);
    }
  }
  return true;
}

// Host: room for a layout's rows (build_slot_rows' output) and the solve's forces.
template <class F>
struct SlotRowsBuffer {
  std::vector<int> deep, top, deep_b, top_b, kind, cand;
  std::vector<F> J, aref, R, fl, real, force;
  explicit SlotRowsBuffer(const SlotLayout& lay) {
    const size_t n = static_cast<size_t>(lay.max_slots);
    deep.resize(n), top.resize(n), deep_b.resize(n), top_b.resize(n), kind.resize(n), cand.resize(n);
    J.resize(n * static_cast<size_t>(lay.nv)), aref.resize(n), R.resize(n), fl.resize(n), real.resize(n),
        force.resize(n);
  }
  SlotRowsOut<F> out() {
    return {deep.data(), top.data(), deep_b.data(), top_b.data(), kind.data(), J.data(),
            aref.data(), R.data(),   fl.data(),     real.data(),  cand.data()};
  }
  SlotRows<F> rows(int n) {
    SlotRows<F> r;
    r.n = n, r.deep = deep.data(), r.top = top.data(), r.deep_b = deep_b.data(), r.top_b = top_b.data();
    r.kind = kind.data(), r.J = J.data(), r.aref = aref.data(), r.R = R.data(), r.fl = fl.data(),
    r.force = force.data();
    return r;
  }
};
#endif

}  // namespace rlt
