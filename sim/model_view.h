// ModelView<T>: what the dynamics (sim/dynamics.h) reads of a compiled Model (sim/model.h), as
// raw pointers and sizes in the scalar T (float or double), so that one RLT_HD function reads it on
// the host or on the device. HostModel<T> owns the converted arrays on the host.
//
// Layout: every real array lives in one block of T, every integer array in one block of int, at
// offsets that depend only on the sizes (model_offsets). A device copy uploads the two blocks and
// binds the same offsets to device pointers (ModelView<T>::bind), so host and device views never
// disagree about where a field is. The arrays are the lists of sim/model_fields.h: the offsets, the
// view's members, bind, HostModel's copy and its size checks are generated from them.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/common.h"
#include "sim/model.h"
#include "sim/model_fields.h"

namespace rlt {

// Element offsets of each field inside its block (the real or the integer one), and the blocks'
// sizes (host code).
struct ModelOffsets {
#define RLT_OFFSET_MEMBER(type, name, count, need, doc) i64 name;
  RLT_MODEL_FIELDS(RLT_OFFSET_MEMBER)
  RLT_MODEL_DERIVED_FIELDS(RLT_OFFSET_MEMBER)
#undef RLT_OFFSET_MEMBER
  i64 num_reals, num_ints;
};

// The sizes come from any object that has them as members (Model, ModelView): a new size is added
// here once, not at every call.
template <class Sizes>
ModelOffsets model_offsets(const Sizes& s) {
  const i64 nq = s.nq, nv = s.nv, nbody = s.nbody, njnt = s.njnt, ngeom = s.ngeom, nsite = s.nsite, nu = s.nu;
  const i64 neq = s.neq, nsensor = s.nsensor;
  const i64 nmesh = s.nmesh, nmeshvert = s.nmeshvert, nmeshgraph = s.nmeshgraph, nmeshface = s.nmeshface;
  const i64 nmeshpoly = s.nmeshpoly, nmeshpolyvert = s.nmeshpolyvert;
  const i64 nhfield = s.nhfield, nhfielddata = s.nhfielddata;
  const i64 ntendon = s.ntendon, nwrap = s.nwrap;
  const i64 npair = s.npair, ncam = s.ncam;
  ModelOffsets o{};
  i64 next_real = 0, next_int = 0;  // the fields in list order, each type in its own block
#define RLT_PLACE_FIELD(type, name, count, need, doc) o.name = next_##type, next_##type += (count);
  RLT_MODEL_FIELDS(RLT_PLACE_FIELD)
  RLT_MODEL_DERIVED_FIELDS(RLT_PLACE_FIELD)
#undef RLT_PLACE_FIELD
  o.num_reals = next_real, o.num_ints = next_int;
  return o;
}

template <class T>
struct ModelView {
  // The scalar of the model's reals: T, or float for a lane type (sim/lanes.h), whose envs share them.
  using Real = ModelReal<T>;
  // sizes
  int nq, nv, nbody, njnt, ngeom, nsite;
  int nu;   // actuators (sim/actuators.h)
  int neq;  // equality constraints (sim/constraints.h)
  // sensors (sim/sensors.h): their number, the scalars of their outputs (DataView::sensordata), and
  // the work rows they need (0 unless a sensor needs them, so models without pay nothing):
  // nsubtree = nbody when a subtree sensor is present, nbody_acc = nbody when an acceleration or
  // force sensor is (MuJoCo's mj_rnePostConstraint quantities).
  int nsensor, nsensordata, nsubtree, nbody_acc;
  // nclock = 1 with a clock sensor (DataView::time), nenergy_lag = 2 with an e_kinetic sensor under
  // the energy flag (DataView::energy_lag; sensor_intprm[2 i] = 1 marks it)
  int nclock, nenergy_lag;
  // distance, normal and fromto sensors: their narrow phase reads DataView::geom_bound, kept for
  // such a model even without contact pairs
  int ngeomdist;
  int nmesh, nmeshvert, nmeshgraph;  // meshes (sim/convex.h): their number, vertices, hull ints
  int nmeshface;                     // their triangles (sim/ray.h)
  int nmeshpoly, nmeshpolyvert;      // their hulls' polygons and the polygons' vertices (sim/contact.h)
  int nhfield, nhfielddata;          // height fields (sim/hfield.h) and their elevations
  int ntendon, nwrap;                // tendons and their wraps (sim/tendon.h)
  int npair;                         // explicit contact pairs (MJCF <contact><pair>; sim/contact.h)
  int ncam;                          // cameras (frame sensors: sim/sensors.h)
  // mocap bodies (MJCF body mocap="true"): rows of DataView::mocap_pos and mocap_quat, which
  // kinematics reads as those bodies' poses (0: body_mocapid absent, nothing read)
  int nmocap;
  // bodies that take a Cartesian wrench (DataView::xfrc_applied, MuJoCo's xfrc_applied): nbody where
  // the caller turns it on (apps/model_batch.h: rltrain.Physics), 0 otherwise (HostModel leaves it 0,
  // so robot envs carry neither the rows nor the Jacobian pass)
  int nbody_xfrc;
  // rows of DataView::actuator_length and actuator_moment: nu when an actuator has a site,
  // slider-crank, ball or free joint or body transmission (sim/transmission.h), else 0 (hinge and
  // slide joints and tendons need none)
  int nmoment;

  // options
  Real timestep;    // s
  Real gravity[3];  // m/s^2
  // MuJoCo's Euler integrator (eulerdamp, on by default): joint damping is integrated implicitly,
  // (M + dt diag(dof_damping)) qacc = f, which keeps stiff damping stable.
  int implicit_damping;  // 0/1
  int integrator;        // Integrator (sim/physics_step.h): Euler, RK4, implicitfast or implicit
  Real impratio;         // MuJoCo's option impratio (friction-to-normal impedance ratio of contacts)
  int cone;              // Cone (sim/model.h): MuJoCo's option cone, pyramidal or elliptic friction cones
  // 0/1: the float soft constraints are solved by Newton (sim/constraints.h newton_solve; double
  // always is, solves_by_newton below): models whose tree factorization is cheap
  // (tree_factor_cost <= kNewtonMaxFactorCost), and models with elliptic cones, a geom of condim 4
  // or 6 or an active weld, whose rows Gauss-Seidel converges slowly on
  int use_newton;
  // MuJoCo's noslip post-pass (sim/noslip.h): its sweeps (0: none) and stopping tolerance
  int noslip_iterations;
  Real noslip_tolerance;
  int refsafe;                    // 0/1: MuJoCo's refsafe flag, a standard solref's timeconst at least 2 timesteps
  // 0/1: MuJoCo's disable flags (Model::actuation, clampctrl, filterparent, sensor off); 0 is MuJoCo's default
  int disable_actuation, disable_clampctrl, disable_filterparent, disable_sensor;
  Real density, viscosity, wind[3];  // fluid forces (Model's; sim/dynamics.h fluid_forces)
  int ccd_iterations;             // MuJoCo's nativeccd (sim/mjccd.h): GJK's and EPA's most iterations
  Real ccd_tolerance;             // ... and their tolerance
  Real tolerance;                 // MuJoCo's option tolerance: newton_solve's stopping test (Model::tolerance)
  // newton_solve's most iterations (line searches): in float where Newton solves, the model's
  // `iterations` where it is below kNewtonMaxIter (MuJoCo Playground's scenes: Go1 1, G1 3), else
  // kNewtonMaxIter, which convergence never reaches; in double (the MuJoCo comparisons, run
  // converged) kNewtonMaxIter
  int newton_iterations;
  // 0/1: newton_solve starts from d.qacc_warmstart where its cost is below qacc_smooth's (MuJoCo's
  // warm start): in float where newton_iterations is the model's budget and its warmstart flag is
  // on. Where the solve runs to convergence the start changes only the path, and qacc_smooth was
  // measured faster (docs/ARCHITECTURE.md, Solver).
  int newton_warmstart;
  // MuJoCo's line search (sim/constraints.h mujoco_line_search) where newton_iterations is the model's
  // budget: its most evaluations (the model's ls_iterations) and its slope tolerance relative to the
  // step (tolerance * ls_tolerance); newton_ls_iterations -1: the solve's own exact line search
  int newton_ls_iterations;
  Real newton_ls_tolerance;
  int has_gravcomp;               // 0/1: some body_gravcomp != 0 (sim/dynamics.h gravcomp_forces)
  int ncon_max;  // most contacts the model's geom pairs can make (contact_capacity), sizes DataView::contact
  int nefc_max;  // most soft-constraint rows (constraint_capacity), sizes DataView::efc_*
  // geom pairs that may collide (geom_pair_allowed, or an explicit pair), listed in geom_collide: a
  // model fact, so detect_contacts does not run the filters over all ngeom^2 / 2 pairs every substep
  int ncollide;
  int ncollider;  // the geoms of those pairs (geom_collider): detect_contacts' per-geom bounds are theirs alone
  // the geoms and sites whose poses a substep itself reads (geom_substep, site_substep); the others
  // (visual geoms, sensor and marker sites) only sensors, env code and the viewer read, after a
  // control step, so physics_step places them in its last substep alone (kinematics' all_poses)
  int ngeom_substep, nsite_substep;

  // The arrays (sim/model_fields.h: shape and meaning of each), then the constants HostModel
  // computes (body_rootid, body_invweight0, dof_invweight0).
#define RLT_VIEW_MEMBER(type, name, count, need, doc) const RLT_FIELD_VIEW_TYPE_##type* name;
  RLT_MODEL_FIELDS(RLT_VIEW_MEMBER)
  RLT_MODEL_DERIVED_FIELDS(RLT_VIEW_MEMBER)
#undef RLT_VIEW_MEMBER

  // Points the array fields at the two blocks laid out by model_offsets (host or device memory).
  void bind(const Real* reals, const int* ints) {
    const ModelOffsets o = model_offsets(*this);
    const Real* const block_real = reals;
    const int* const block_int = ints;
#define RLT_BIND_FIELD(type, name, count, need, doc) name = block_##type + o.name;
    RLT_MODEL_FIELDS(RLT_BIND_FIELD)
    RLT_MODEL_DERIVED_FIELDS(RLT_BIND_FIELD)
#undef RLT_BIND_FIELD
  }
};

// The most Newton iterations (line searches) of a solve run to convergence (measured on the robots and
// the corpus: 1-6, elliptic cones up to ~15; MuJoCo's default `iterations` is 100).
constexpr int kNewtonMaxIter = 50;

// The view with its Newton solve run to convergence from qacc_smooth, as in double: no iterations
// budget, no warm start, the exact line search (the rows keep the warm start's field; tools and tests compare with it).
template <class T>
ModelView<T> without_newton_budget(ModelView<T> m) {
  m.newton_iterations = kNewtonMaxIter, m.newton_warmstart = 0, m.newton_ls_iterations = -1;
  return m;
}

// Whether the model's constraints are solved by Newton (sim/constraints.h newton_solve):
// m.use_newton's models, and in double every model (the MuJoCo comparisons' precision). The others
// run Gauss-Seidel. data_layout (sim/dynamics.h) sizes the solvers' workspaces from these two.
template <class T>
RLT_HD RLT_INLINE bool solves_by_newton(const ModelView<T>& m) {
  return m.use_newton != 0 || sizeof(T) == sizeof(double);
}
// Whether the rows need their z = D^-1/2 L^-T J^T (factor_row): Gauss-Seidel's and noslip's.
template <class T>
RLT_HD RLT_INLINE bool needs_z(const ModelView<T>& m) {
  return !solves_by_newton(m) || m.noslip_iterations > 0;
}

// Whether geoms g1 and g2 may touch (MuJoCo's filter): never two planes, never within one weld body
// (a body and the ancestors it is welded to, that is, up to the first one with a joint or the first
// mocap body, MuJoCo's body_weldid; bodies welded to the world count as the world), never two weld
// bodies without dofs (the world and mocap bodies: no force could act), never a body and its parent
// (unless one is the world, or the filterparent flag is disabled),
// and only where (contype1 & conaffinity2) || (contype2 & conaffinity1); never two bodies that a
// <contact><exclude> names (body_exclude).
template <class T>
RLT_HD inline int weld_body(const ModelView<T>& m, int b) {
  while (b > 0 && m.body_jntnum[b] == 0 && !(m.nmocap > 0 && m.body_mocapid[b] >= 0)) b = m.body_parentid[b];
  return b;
}
// The explicit contact pair (<contact><pair>) of geoms g1 and g2 in either order, -1 when none.
// Such a pair collides whatever the filters below say, with its own parameters, and replaces the
// filtered contact of the two geoms (MuJoCo's mj_collision).
template <class T>
RLT_HD inline int explicit_pair(const ModelView<T>& m, int g1, int g2) {
  for (int p = 0; p < m.npair; ++p)
    if ((m.pair_geom1[p] == g1 && m.pair_geom2[p] == g2) || (m.pair_geom1[p] == g2 && m.pair_geom2[p] == g1)) return p;
  return -1;
}
template <class T>
RLT_HD inline bool geom_pair_allowed(const ModelView<T>& m, int g1, int g2) {
  if (m.geom_type[g1] == kGeomPlane && m.geom_type[g2] == kGeomPlane) return false;
  if (!((m.geom_contype[g1] & m.geom_conaffinity[g2]) || (m.geom_contype[g2] & m.geom_conaffinity[g1]))) return false;
  if (m.body_exclude[m.geom_bodyid[g1] * m.nbody + m.geom_bodyid[g2]]) return false;  // <contact><exclude>
  const int w1 = weld_body(m, m.geom_bodyid[g1]), w2 = weld_body(m, m.geom_bodyid[g2]);
  if (w1 == w2) return false;
  if (m.body_dofnum[w1] == 0 && m.body_dofnum[w2] == 0) return false;  // the world and mocap bodies
  if (!m.disable_filterparent && w1 != 0 && w2 != 0 && (weld_body(m, m.body_parentid[w1]) == w2 || weld_body(m, m.body_parentid[w2]) == w1))
    return false;
  return true;
}

// geom_collide packs a pair as g1 << kGeomCollideShift | g2 (g1 the geom of the lower type number,
// detect_contacts' geom 1): no division per pair to unpack it, and no type comparison.
constexpr int kGeomCollideShift = 16;
constexpr int kGeomCollideMask = (1 << kGeomCollideShift) - 1;

// MuJoCo's mjMAXCONPAIR: most contacts one height-field pair makes (sim/hfield.h).
constexpr int kHFieldMaxContacts = 50;

// Most contact points one geom pair makes (sim/contact.h, detect_contacts), by type.
RLT_HD inline int pair_contact_capacity(int t1, int t2) {
  if (t1 > t2) {
    const int t = t1;
    t1 = t2;
    t2 = t;
  }
  // height fields: none with a plane or another height field; up to mjMAXCONPAIR with a primitive
  if (t2 == kGeomHField) return 0;
  if (t1 == kGeomHField) return t2 >= kGeomSphere && t2 <= kGeomMesh ? kHFieldMaxContacts : 0;
  if (t1 == kGeomPlane)
    return t2 == kGeomSphere     ? 1
           : t2 == kGeomCapsule  ? 2
           : t2 == kGeomBox      ? 8
           : t2 == kGeomCylinder ? 4
           : t2 == kGeomMesh     ? 4  // mjc_PlaneConvex: the support vertex and its polygon's corners
                                 : 1;
  if (t1 == kGeomSphere) return 1;                         // sphere-sphere, -capsule, -box, -cylinder, convex
  if (t1 == kGeomCapsule && t2 == kGeomCapsule) return 2;  // 2 when parallel
  if (t1 == kGeomCapsule && t2 == kGeomBox) return 2;      // mjc_CapsuleBox
  if (t1 == kGeomBox && t2 == kGeomBox) return 8;  // a clipped face polygon (<= 8) or one edge point
  // MuJoCo 3.17's multicontact (sim/multiccd.h): two of cylinder, box and mesh, a capsule with a
  // cylinder or a mesh
  if (t1 >= kGeomCylinder && t2 >= kGeomCylinder) return 4;
  if (t1 == kGeomCapsule && (t2 == kGeomCylinder || t2 == kGeomMesh)) return 2;
  return 1;  // the convex collider (sim/convex.h): one point
}

template <class T>
inline int contact_capacity(const ModelView<T>& m) {
  int n = 0;
  for (int g1 = 0; g1 < m.ngeom; ++g1)
    for (int g2 = g1 + 1; g2 < m.ngeom; ++g2)
      if (explicit_pair(m, g1, g2) >= 0 || geom_pair_allowed(m, g1, g2))
        n += pair_contact_capacity(m.geom_type[g1], m.geom_type[g2]);
  return n;
}

// Most soft-constraint rows (sim/constraints.h): per contact a pyramid of 2 (condim - 1) edges or
// an elliptic cone's condim rows (at least 4, the condim 3 pyramid, for the model's largest geom
// condim), one row per limited hinge or slide joint or tendon (two with a margin), one per dof or
// tendon with friction loss, and the active equality constraints' rows (a weld's 6).
template <class T>
inline int constraint_capacity(const ModelView<T>& m) {
  int condim = 1;
  for (int g = 0; g < m.ngeom; ++g) condim = m.geom_condim[g] > condim ? m.geom_condim[g] : condim;
  for (int p = 0; p < m.npair; ++p) condim = m.pair_condim[p] > condim ? m.pair_condim[p] : condim;
  const int per_contact = m.cone == kConeElliptic ? condim : 2 * (condim - 1);
  int n = (per_contact > 4 ? per_contact : 4) * m.ncon_max;
  for (int j = 0; j < m.njnt; ++j)  // a limit within its margin of both ends has two rows
    n += m.jnt_limited[j] && (m.jnt_type[j] == kJointHinge || m.jnt_type[j] == kJointSlide)
             ? (m.jnt_margin[j] > 0 ? 2 : 1)
             : 0;
  for (int i = 0; i < m.nv; ++i) n += m.dof_frictionloss[i] > 0 ? 1 : 0;  // friction-loss rows
  for (int e = 0; e < m.neq; ++e)  // equality rows: connect 3, weld 6, joint and tendon 1
    n += m.eq_active[e] ? (m.eq_type[e] == kEqConnect ? 3 : m.eq_type[e] == kEqWeld ? 6 : 1) : 0;
  for (int t = 0; t < m.ntendon; ++t)  // tendon friction loss and limits (sim/constraints.h)
    n += (m.tendon_frictionloss[t] > 0 ? 1 : 0) + (m.tendon_limited[t] ? (m.tendon_margin[t] > 0 ? 2 : 1) : 0);
  return n;
}

// The multiply-adds of factoring an nv x nv matrix with qM's pattern along the dof tree
// (tree_ltdl_factor, sim/dynamics.h): sum over dofs of a (a + 1) / 2, a the dof's ancestors. Host
// code; it picks the float constraint solver (HostModel: Newton up to kNewtonMaxFactorCost).
inline long tree_factor_cost(const Model& model) {
  long cost = 0;
  for (int i = 0; i < model.nv; ++i) {
    long a = 0;
    for (int j = model.dof_parentid[static_cast<size_t>(i)]; j >= 0; j = model.dof_parentid[static_cast<size_t>(j)]) ++a;
    cost += a * (a + 1) / 2;
  }
  return cost;
}
constexpr long kNewtonMaxFactorCost = 4000;

// MuJoCo's body_simple for body b (user_model.cc; host code): 0 not simple; otherwise its inertial
// frame is its frame (1e-6), it is a child of the world or of a static child of the world, no body
// hangs from it, and its joints sit at its origin (1e-6), hinges and slides along one coordinate
// axis each, no joint after a rotation: 2 when it has dofs, all from slides, else 1. Such a body's
// dofs have no off-diagonal mass-matrix entries, and MuJoCo's sparse factorization keeps none.
template <class T>
int model_body_simple(const ModelView<T>& m, int b) {
  if (b <= 0) return 0;
  const T eps = T(1e-6);
  auto small = [&](T x) { return (x < T(0) ? -x : x) < eps; };
  const T* ip = m.body_ipos + 3 * b;
  const T* iq = m.body_iquat + 4 * b;
  const bool same_frame = small(ip[0]) && small(ip[1]) && small(ip[2]) &&
                          (small(iq[0] - T(1)) || small(iq[0] + T(1))) && small(iq[1]) && small(iq[2]) && small(iq[3]);
  const int p = m.body_parentid[b];
  if (!same_frame || !(p == 0 || (m.body_parentid[p] == 0 && m.body_dofnum[p] == 0))) return 0;
  for (int c = b + 1; c < m.nbody; ++c)
    if (m.body_parentid[c] == b) return 0;
  bool rotation = false, slides_only = true;
  for (int k = 0; k < m.body_jntnum[b]; ++k) {
    const int j = m.body_jntadr[b] + k, type = m.jnt_type[j];
    const T* a = m.jnt_axis + 3 * j;
    const T* pos = m.jnt_pos + 3 * j;
    const int nonzero = ((a[0] < T(0) ? -a[0] : a[0]) > T(1e-14)) + ((a[1] < T(0) ? -a[1] : a[1]) > T(1e-14)) +
                        ((a[2] < T(0) ? -a[2] : a[2]) > T(1e-14));
    if (rotation || !small(pos[0]) || !small(pos[1]) || !small(pos[2]) ||
        ((type == kJointHinge || type == kJointSlide) && nonzero != 1))
      return 0;
    rotation = rotation || type == kJointBall || type == kJointHinge;
    slides_only = slides_only && type == kJointSlide;
  }
  return m.body_dofnum[b] > 0 && slides_only ? 2 : 1;
}

// Fills view.body_invweight0, body_invweight0_rot and dof_invweight0 (in the block `reals` that
// view is bound to) at qpos0, as MuJoCo's mj_setConst does; defined in sim/constraints.h,
// instantiated for float and double in sim/physics_instances.cpp.
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
  // Defined below the class, out of line, so that sim/physics_instances.cpp compiles it once for the
  // host (the extern template declarations below).
  explicit HostModel(const Model& model, bool implicit_damping = true);

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
  void fill_default_solparams(const Model& model, const ModelOffsets& o) {
    const double ref[2] = {0.02, 1}, imp[5] = {0.9, 0.95, 0.001, 0.5, 2};
    auto fill = [&](bool absent, i64 at, int n, const double* v, int k) {
      if (!absent) return;
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < k; ++c) m_reals[static_cast<size_t>(at + k * i + c)] = static_cast<T>(v[c]);
    };
    const double one = 1;
    fill(model.jnt_solref.empty(), o.jnt_solref, model.njnt, ref, 2);
    fill(model.jnt_solimp.empty(), o.jnt_solimp, model.njnt, imp, 5);
    fill(model.dof_solref.empty(), o.dof_solref, model.nv, ref, 2);
    fill(model.dof_solimp.empty(), o.dof_solimp, model.nv, imp, 5);
    fill(model.geom_solref.empty(), o.geom_solref, model.ngeom, ref, 2);
    fill(model.geom_solimp.empty(), o.geom_solimp, model.ngeom, imp, 5);
    fill(model.geom_solmix.empty(), o.geom_solmix, model.ngeom, &one, 1);
  }

  void put(i64 at, const std::vector<double>& src) {
    for (size_t k = 0; k < src.size(); ++k) m_reals[static_cast<size_t>(at) + k] = static_cast<T>(src[k]);
  }
  void put(i64 at, const std::vector<int>& src) {
    for (size_t k = 0; k < src.size(); ++k) m_ints[static_cast<size_t>(at) + k] = src[k];
  }

  // ---- checks (each throws ModelError("Model: ...") at the first problem) ----

  [[noreturn]] static void fail(const std::string& what) { throw ModelError("Model: " + what); }
  static std::string str(long v) { return std::to_string(v); }

  static void check(const Model& m) {
    check_sizes(m);  // first: the others index the arrays
    check_bodies(m);
    check_joints(m);
    check_body_joints(m);
    check_dofs(m);
    check_geoms(m);
    check_sites(m);
    check_sameframe(m);
    check_actuators(m);
    check_sensors(m);
    check_tendons(m);
  }

  // A sameframe flag (sim/model.h SameFrame) holds within MuJoCo's 1e-6: kinematics copies the frame
  // it names, so a wrong flag would move a geom or site silently.
  static void check_sameframe(const Model& m) {
    auto same = [](const double* a, const double* b, int n, double sign) {
      for (int k = 0; k < n; ++k)
        if (!(std::abs(a[k] - sign * b[k]) < 1e-6)) return false;
      return true;
    };
    auto same_quat = [&](const double* a, const double* b) { return same(a, b, 4, 1) || same(a, b, 4, -1); };
    const double zero[3] = {0, 0, 0}, unit[4] = {1, 0, 0, 0};
    auto holds = [&](int flag, const double* pos, const double* quat, const double* ipos, const double* iquat) {
      switch (flag) {
        case kSameFrameNone:
          return true;
        case kSameFrameBody:
          return same(pos, zero, 3, 1) && same_quat(quat, unit);
        case kSameFrameBodyRot:
          return same_quat(quat, unit);
        case kSameFrameInertia:
          return ipos && same(pos, ipos, 3, 1) && same_quat(quat, iquat);
        case kSameFrameInertiaRot:
          return iquat && same_quat(quat, iquat);
        default:
          return false;
      }
    };
    for (size_t b = 0; b < m.body_sameframe.size(); ++b)
      if (!holds(m.body_sameframe[b], &m.body_ipos[3 * b], &m.body_iquat[4 * b], nullptr, nullptr))
        fail("body " + str(static_cast<long>(b)) + " has body_sameframe " + str(m.body_sameframe[b]) +
             ", which its inertial frame does not satisfy");
    for (size_t g = 0; g < m.geom_sameframe.size(); ++g) {
      const size_t b = static_cast<size_t>(m.geom_bodyid[g]);
      if (!holds(m.geom_sameframe[g], &m.geom_pos[3 * g], &m.geom_quat[4 * g], &m.body_ipos[3 * b],
                 &m.body_iquat[4 * b]))
        fail("geom " + str(static_cast<long>(g)) + " has geom_sameframe " + str(m.geom_sameframe[g]) +
             ", which its frame does not satisfy");
    }
    for (size_t i = 0; i < m.site_sameframe.size(); ++i) {
      const size_t b = static_cast<size_t>(m.site_bodyid[i]);
      if (!holds(m.site_sameframe[i], &m.site_pos[3 * i], &m.site_quat[4 * i], &m.body_ipos[3 * b],
                 &m.body_iquat[4 * b]))
        fail("site " + str(static_cast<long>(i)) + " has site_sameframe " + str(m.site_sameframe[i]) +
             ", which its frame does not satisfy");
    }
  }

  // Sizes are non-negative (a world body at least) and every array has the length its size asks for
  // (sim/model_fields.h); an optional array may instead be empty (absent), and some go together.
  static void check_sizes(const Model& m) {
    if (m.nbody < 1) fail("nbody must be at least 1 (the world)");
    if (m.nq < 0 || m.nv < 0 || m.njnt < 0 || m.ngeom < 0 || m.nsite < 0 || m.nu < 0 || m.neq < 0 || m.nsensor < 0 ||
        m.nmesh < 0 || m.nmeshvert < 0 || m.nmeshgraph < 0 || m.nmeshface < 0 || m.ntendon < 0 || m.nwrap < 0)
      fail("negative size");
    if (m.nmeshpoly < 0 || m.nmeshpolyvert < 0) fail("negative size");
    if (m.npair < 0) fail("negative size");
    if (m.nmocap < 0) fail("negative size");
    if (m.ngeom > kGeomCollideMask + 1) fail("ngeom " + str(m.ngeom) + " over 65536 (geom_collide packs two geom ids in an int)");
    const long nq = m.nq, nv = m.nv, nbody = m.nbody, njnt = m.njnt, ngeom = m.ngeom, nsite = m.nsite, nu = m.nu;
    const long neq = m.neq, nsensor = m.nsensor, nmesh = m.nmesh, nmeshvert = m.nmeshvert, nmeshgraph = m.nmeshgraph;
    const long nmeshface = m.nmeshface;
    const long nmeshpoly = m.nmeshpoly, nmeshpolyvert = m.nmeshpolyvert;
    const long nhfield = m.nhfield, nhfielddata = m.nhfielddata;
    if (nhfield < 0 || nhfielddata < 0) fail("negative size");
    const long ntendon = m.ntendon, nwrap = m.nwrap;
    const long npair = m.npair, ncam = m.ncam;
    if (ncam < 0) fail("negative size");
    auto size = [](const char* name, size_t got, long want) {
      if (static_cast<long>(got) != want)
        fail(std::string(name) + " has " + std::to_string(got) + " elements, expected " + std::to_string(want));
    };
    auto size_required = size;
    auto size_optional = [&](const char* name, size_t got, long want) {
      if (got != 0) size(name, got, want);
    };
#define RLT_CHECK_SIZE(type, name, count, need, doc) size_##need(#name, m.name.size(), (count));
    RLT_MODEL_FIELDS(RLT_CHECK_SIZE)
#undef RLT_CHECK_SIZE
    if (m.jnt_limited.empty() != m.jnt_range.empty()) fail("jnt_limited and jnt_range must be given together");
    if (m.body_mocapid.empty() != (m.nmocap == 0)) fail("body_mocapid must be given exactly when nmocap > 0");
    size("key_mpos", m.key_mpos.size(), 3L * m.nkey * m.nmocap);
    size("key_mquat", m.key_mquat.size(), 4L * m.nkey * m.nmocap);
    if (!m.geom_contype.empty() || !m.geom_conaffinity.empty()) {
      // Contacts need the whole geom description.
      size("geom_type", m.geom_type.size(), ngeom), size("geom_size", m.geom_size.size(), 3 * ngeom);
      size("geom_friction", m.geom_friction.size(), 3 * ngeom);
      size("geom_contype", m.geom_contype.size(), ngeom), size("geom_conaffinity", m.geom_conaffinity.size(), ngeom);
    }
  }

  // The world is body 0 and every other body's parent comes before it (tree order).
  static void check_bodies(const Model& m) {
    if (m.body_parentid[0] != 0 && m.body_parentid[0] != -1) fail("body 0 must be the world");
    for (long b = 1; b < m.nbody; ++b) {
      const int p = m.body_parentid[static_cast<size_t>(b)];
      if (p < 0 || p >= b) fail("body " + str(b) + " has parent " + str(p) + " (need 0 <= parent < body)");
    }
    // Mocap bodies (MuJoCo's rule): children of the world without joints, each row used once.
    std::vector<int> mocap_body(static_cast<size_t>(m.nmocap), -1);
    for (size_t b = 0; b < m.body_mocapid.size(); ++b) {
      const int id = m.body_mocapid[b];
      if (id == -1) continue;
      if (id < 0 || id >= m.nmocap || mocap_body[static_cast<size_t>(id)] >= 0)
        fail("body " + str(static_cast<long>(b)) + " has mocap id " + str(id) + " (need -1, or 0..nmocap-1 once each)");
      mocap_body[static_cast<size_t>(id)] = static_cast<int>(b);
      if (b == 0 || m.body_parentid[b] != 0 || m.body_jntnum[b] != 0)
        fail("mocap body " + str(static_cast<long>(b)) + " is not a fixed child of the world");
    }
    for (int id = 0; id < m.nmocap; ++id)
      if (mocap_body[static_cast<size_t>(id)] < 0) fail("no body has mocap id " + str(id));
  }

  // Joints: known types, their qpos/dof blocks following each other through the model in joint
  // order, on a moving body (a free joint on a child of the world), springs non-negative and at rest
  // somewhere finite.
  static void check_joints(const Model& m) {
    for (size_t j = 0; j < m.jnt_stiffness.size(); ++j)
      if (!(m.jnt_stiffness[j] >= 0) || !std::isfinite(m.jnt_stiffness[j]))
        fail("joint " + std::to_string(j) + " has a negative or non-finite stiffness");
    for (size_t i = 0; i < m.qpos_spring.size(); ++i)
      if (!std::isfinite(m.qpos_spring[i])) fail("qpos_spring[" + std::to_string(i) + "] is not finite");
    int qadr = 0, dadr = 0;
    for (long j = 0; j < m.njnt; ++j) {
      const size_t js = static_cast<size_t>(j);
      const int type = m.jnt_type[js];
      if (type != kJointFree && type != kJointBall && type != kJointSlide && type != kJointHinge)
        fail("joint " + str(j) + " has unknown type " + str(type));
      if (m.jnt_qposadr[js] != qadr || m.jnt_dofadr[js] != dadr)
        fail("joint " + str(j) + " qpos/dof address out of order");
      const int b = m.jnt_bodyid[js];
      if (b < 1 || b >= m.nbody) fail("joint " + str(j) + " on body " + str(b));
      if (type == kJointFree && m.body_parentid[static_cast<size_t>(b)] != 0)
        fail("free joint " + str(j) + " is not on a child of the world");
      qadr += joint_nq(type), dadr += joint_nv(type);
    }
    if (qadr != m.nq || dadr != m.nv) fail("joint sizes do not add up to nq/nv");
  }

  // Each body's joints are consecutive and its own, a free joint alone, no rotation after a ball,
  // and the body's dof count and address match its joints'.
  static void check_body_joints(const Model& m) {
    for (long b = 0; b < m.nbody; ++b) {
      const size_t bs = static_cast<size_t>(b);
      const int num = m.body_jntnum[bs], adr = m.body_jntadr[bs];
      if (num < 0 || (num > 0 && (adr < 0 || adr + num > m.njnt)))
        fail("body " + str(b) + " joint range out of bounds");
      int dofs = 0;
      for (int k = 0; k < num; ++k) {
        if (m.jnt_bodyid[static_cast<size_t>(adr + k)] != b) fail("body " + str(b) + " joint list mismatch");
        if (m.jnt_type[static_cast<size_t>(adr + k)] == kJointFree && num != 1)
          fail("body " + str(b) + ": a free joint must be the body's only joint");
        // A ball's dofs rotate about the body's final axes (as MuJoCo's), which is only right when no
        // rotation follows it in the body; MuJoCo's compiler rejects that too.
        if (k > 0 && m.jnt_type[static_cast<size_t>(adr + k - 1)] == kJointBall &&
            m.jnt_type[static_cast<size_t>(adr + k)] != kJointSlide)
          fail("body " + str(b) + ": a ball joint followed by a rotation");
        dofs += joint_nv(m.jnt_type[static_cast<size_t>(adr + k)]);
      }
      if (m.body_dofnum[bs] != dofs) fail("body " + str(b) + " dof count mismatch");
      if (num > 0 && m.body_dofadr[bs] != m.jnt_dofadr[static_cast<size_t>(adr)])
        fail("body " + str(b) + " dof address mismatch");
    }
  }

  // Dofs: tree order (dof_parentid[i] < i) and on a moving body.
  static void check_dofs(const Model& m) {
    for (long i = 0; i < m.nv; ++i) {
      const int p = m.dof_parentid[static_cast<size_t>(i)];
      if (p < -1 || p >= i) fail("dof " + str(i) + " has parent " + str(p) + " (need -1 <= parent < dof)");
      const int b = m.dof_bodyid[static_cast<size_t>(i)];
      if (b < 1 || b >= m.nbody) fail("dof " + str(i) + " on body " + str(b));
    }
  }

  // Geoms: condim 1, 3, 4 or 6, margin non-negative and finite, a type with a collision routine, a body.
  static void check_geoms(const Model& m) {
    for (size_t g = 0; g < m.geom_condim.size(); ++g) {
      const int c = m.geom_condim[g];
      if (c != 1 && c != 3 && c != 4 && c != 6)
        fail("geom " + std::to_string(g) + " has condim " + std::to_string(c) + " (expected 1, 3, 4 or 6)");
    }
    for (size_t g = 0; g < m.geom_margin.size(); ++g)
      if (!(m.geom_margin[g] >= 0) || !std::isfinite(m.geom_margin[g]))
        fail("geom " + std::to_string(g) + " has a negative or non-finite margin");
    for (long g = 0; g < static_cast<long>(m.geom_type.size()); ++g) {
      const int t = m.geom_type[static_cast<size_t>(g)];
      if (t != kGeomPlane && t != kGeomSphere && t != kGeomCapsule && t != kGeomBox && t != kGeomCylinder &&
          t != kGeomEllipsoid && t != kGeomMesh && t != kGeomHField)
        fail("geom " + str(g) + " has unsupported type " + str(t));
      if (t == kGeomMesh) {  // a mesh, with a convex hull if the geom collides (the collider reads it)
        const size_t gi = static_cast<size_t>(g);
        const int id = m.geom_dataid.empty() ? -1 : m.geom_dataid[gi];
        if (id < 0 || id >= m.nmesh) fail("mesh geom " + str(g) + " has no mesh (geom_dataid)");
        const bool collides = !m.geom_contype.empty() && (m.geom_contype[gi] != 0 || m.geom_conaffinity[gi] != 0);
        if (collides && m.mesh_graphadr[static_cast<size_t>(id)] < 0)
          fail("mesh geom " + str(g) + " collides but its mesh has no convex hull (mesh_graphadr)");
      }
      if (t == kGeomHField) check_hfield_geom(m, g);
    }
    for (long g = 0; g < m.ngeom; ++g)
      if (m.geom_bodyid[static_cast<size_t>(g)] < 0 || m.geom_bodyid[static_cast<size_t>(g)] >= m.nbody)
        fail("geom " + str(g) + " body out of range");
  }

  // A height-field geom (sim/hfield.h): its hfield exists, has a grid of at least 2 x 2 inside
  // hfield_data and a positive size.
  static void check_hfield_geom(const Model& m, long g) {
    if (m.geom_dataid.size() != static_cast<size_t>(m.ngeom)) fail("hfield geom " + str(g) + " needs geom_dataid");
    const int h = m.geom_dataid[static_cast<size_t>(g)];
    if (h < 0 || h >= m.nhfield || m.hfield_nrow.empty() || m.hfield_ncol.empty() || m.hfield_adr.empty() ||
        m.hfield_size.empty())
      fail("geom " + str(g) + " has no hfield (geom_dataid " + str(h) + ")");
    const size_t hs = static_cast<size_t>(h);
    const long nrow = m.hfield_nrow[hs], ncol = m.hfield_ncol[hs], adr = m.hfield_adr[hs];
    if (nrow < 2 || ncol < 2 || adr < 0 || adr + nrow * ncol > m.nhfielddata ||
        m.hfield_data.size() != static_cast<size_t>(m.nhfielddata))
      fail("hfield " + str(h) + " has a bad grid (nrow, ncol, adr or hfield_data)");
    for (int k = 0; k < 4; ++k)
      if (!(m.hfield_size[4 * hs + k] > 0)) fail("hfield " + str(h) + " has a non-positive size");
  }

  static void check_sites(const Model& m) {
    for (long s = 0; s < m.nsite; ++s)
      if (m.site_bodyid[static_cast<size_t>(s)] < 0 || m.site_bodyid[static_cast<size_t>(s)] >= m.nbody)
        fail("site " + str(s) + " body out of range");
  }

  // Actuators: a known kind, driving an existing joint, tendon, site, slider-crank or body.
  static void check_actuators(const Model& m) {
    for (long a = 0; a < m.nu; ++a) {
      const size_t as = static_cast<size_t>(a);
      const int k = m.actuator_kind[as], j = m.actuator_trnid[as];
      if (k != kActMotor && k != kActPosition && k != kActVelocity && k != kActGeneral)
        fail("actuator " + str(a) + " has unknown kind " + str(k));
      const int trn = m.actuator_trntype.empty() ? kTrnJoint : m.actuator_trntype[as];
      if (trn == kTrnTendon) {
        if (j < 0 || j >= m.ntendon) fail("actuator " + str(a) + " drives tendon " + str(j));
        continue;
      }
      if (trn == kTrnSite || trn == kTrnSliderCrank) {  // (sim/transmission.h)
        if (m.actuator_trnid2.empty() || m.actuator_gear6.empty() || m.actuator_cranklength.empty())
          fail("actuator " + str(a) +
               ": a site or slider-crank transmission needs actuator_trnid2, _gear6 and "
               "_cranklength");
        const int j2 = m.actuator_trnid2[as];
        if (j < 0 || j >= m.nsite) fail("actuator " + str(a) + " drives site " + str(j));
        if (j2 < (trn == kTrnSite ? -1 : 0) || j2 >= m.nsite)
          fail("actuator " + str(a) + " has reference or slider site " + str(j2));
        if (trn == kTrnSliderCrank && !(m.actuator_cranklength[as] > 0))
          fail("actuator " + str(a) + ": the crank length must be positive");
        continue;
      }
      if (trn == kTrnBody) {
        if (j < 0 || j >= m.nbody) fail("actuator " + str(a) + " drives body " + str(j));
        continue;
      }
      if (trn != kTrnJoint && trn != kTrnJointInParent)
        fail("actuator " + str(a) + " has unknown transmission " + str(trn));
      if (j < 0 || j >= m.njnt) fail("actuator " + str(a) + " drives joint " + str(j));
      const int type = m.jnt_type[static_cast<size_t>(j)];
      const bool multi_dof = type == kJointBall || type == kJointFree;
      if (multi_dof && m.actuator_gear6.empty())
        fail("actuator " + str(a) + ": a ball or free joint transmission needs actuator_gear6");
      if (trn == kTrnJointInParent && !multi_dof)
        fail("actuator " + str(a) + ": jointinparent on a hinge or slide is stored as a joint transmission");
    }
  }

  // Sensors: a known type reading an existing object, outputs tiling sensordata in order.
  static void check_sensors(const Model& m) {
    int adr = 0;
    auto count = [&](int type) {
      return type == kSensObjBody || type == kSensObjXBody ? m.nbody
             : type == kSensObjGeom                        ? m.ngeom
             : type == kSensObjSite                        ? m.nsite
             : type == kSensObjJoint                       ? m.njnt
             : type == kSensObjActuator                    ? m.nu
             : type == kSensObjTendon                      ? m.ntendon
             : type == kSensObjCamera                      ? m.ncam
                                                           : 0;
    };
    for (long i = 0; i < m.nsensor; ++i) {
      const size_t is = static_cast<size_t>(i);
      if (m.sensor_type[is] < kSensJointPos || m.sensor_type[is] >= kNumSensorTypes)
        fail("sensor " + str(i) + " has unknown type " + str(m.sensor_type[is]));
      if (m.sensor_objtype[is] != kSensObjNone &&  // (none: e_potential, e_kinetic, objid -1)
          (m.sensor_objid[is] < 0 || m.sensor_objid[is] >= count(m.sensor_objtype[is])))
        fail("sensor " + str(i) + " reads object " + str(m.sensor_objid[is]) + " out of range");
      if (m.sensor_reftype[is] != kSensObjNone &&
          (m.sensor_refid[is] < 0 || m.sensor_refid[is] >= count(m.sensor_reftype[is])))
        fail("sensor " + str(i) + " reference " + str(m.sensor_refid[is]) + " out of range");
      if (m.sensor_adr[is] != adr || m.sensor_dim[is] < 1) fail("sensor " + str(i) + " address or dimension");
      adr += m.sensor_dim[is];
    }
    if (adr != m.nsensordata) fail("nsensordata must be the sum of sensor_dim");
    if (!m.site_type.empty() && m.site_size.empty()) fail("site_type and site_size must be given together");
  }

  // Tendons (sim/tendon.h): wraps tiling nwrap in order; a fixed tendon of hinge and slide joints;
  // a spatial one of sites, pulleys (divisor > 0) and sphere or cylinder geoms (side site or -1),
  // starting and ending with a site, a site on each side of a pulley or geom.
  static void check_tendons(const Model& m) {
    int adr = 0;
    for (long t = 0; t < m.ntendon; ++t) {
      const size_t ts = static_cast<size_t>(t);
      const int a = m.tendon_adr[ts], num = m.tendon_num[ts];
      if (a != adr || num < 1 || a + num > m.nwrap) fail("tendon " + str(t) + " wrap address or count");
      adr += num;
      const bool fixed = m.wrap_type[static_cast<size_t>(a)] == kWrapJoint;
      for (int k = 0; k < num; ++k) {
        const size_t w = static_cast<size_t>(a + k);
        const int type = m.wrap_type[w], id = m.wrap_objid[w];
        if (fixed) {
          if (type != kWrapJoint || id < 0 || id >= m.njnt) fail("tendon " + str(t) + ": bad joint wrap");
          const int jt = m.jnt_type[static_cast<size_t>(id)];
          if (jt != kJointHinge && jt != kJointSlide)
            fail("tendon " + str(t) + ": a fixed tendon needs hinge or slide joints");
        } else if (type == kWrapSite) {
          if (id < 0 || id >= m.nsite) fail("tendon " + str(t) + ": site out of range");
        } else if (type == kWrapPulley || type == kWrapSphere || type == kWrapCylinder) {
          if (k == 0 || k == num - 1 || m.wrap_type[w - 1] != kWrapSite || m.wrap_type[w + 1] != kWrapSite)
            fail("tendon " + str(t) + ": a pulley or geom needs a site on each side");
          if (type == kWrapPulley && !(m.wrap_prm[w] > 0))
            fail("tendon " + str(t) + ": a pulley's divisor must be positive");
          if (type != kWrapPulley) {
            const int gt = id >= 0 && id < m.ngeom && !m.geom_type.empty() ? m.geom_type[static_cast<size_t>(id)] : -1;
            if (gt != (type == kWrapSphere ? kGeomSphere : kGeomCylinder))
              fail("tendon " + str(t) + ": a wrap geom must be the sphere or cylinder its type says");
            if (m.wrap_prm[w] < -1 || m.wrap_prm[w] >= m.nsite) fail("tendon " + str(t) + ": side site out of range");
          }
        } else {
          fail("tendon " + str(t) + ": wrap type " + str(type) + " is not supported");
        }
      }
      if (!fixed && (m.wrap_type[static_cast<size_t>(a)] != kWrapSite ||
                     m.wrap_type[static_cast<size_t>(a + num - 1)] != kWrapSite))
        fail("tendon " + str(t) + ": a spatial tendon starts and ends with a site");
    }
    if (adr != m.nwrap) fail("nwrap must be the sum of tendon_num");
  }

  std::vector<T> m_reals;
  std::vector<int> m_ints;
  ModelView<T> m_view;
};

template <class T>
HostModel<T>::HostModel(const Model& model, bool implicit_damping) {
  check(model);
  const ModelOffsets o = model_offsets(model);
  m_reals.assign(static_cast<size_t>(o.num_reals), T(0));
  m_ints.assign(static_cast<size_t>(o.num_ints), 0);
  // Every array of the Model into its block. Optional ones (see check_sizes) may be empty: the
  // zeros left in the blocks then say so (no joint limited, every geom with contype =
  // conaffinity = 0, i.e. no contacts; margin 0).
#define RLT_COPY_FIELD(type, name, count, need, doc) put(o.name, model.name);
  RLT_MODEL_FIELDS(RLT_COPY_FIELD)
#undef RLT_COPY_FIELD
  // Absent condim means MuJoCo's default, 3.
  if (model.geom_condim.empty())
    for (int g = 0; g < model.ngeom; ++g) m_ints[static_cast<size_t>(o.geom_condim + g)] = 3;
  // Absent constraint parameters mean MuJoCo's defaults (solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2,
  // solmix 1; the rest 0).
  fill_default_solparams(model, o);
  // The derived constants: each body's tree root, then (set_invweight0, from the view) the
  // inverse weights.
  for (int b = 1; b < model.nbody; ++b) {
    const int p = model.body_parentid[static_cast<size_t>(b)];
    m_ints[static_cast<size_t>(o.body_rootid + b)] = p == 0 ? b : m_ints[static_cast<size_t>(o.body_rootid + p)];
  }

  m_view = ModelView<T>{};
  m_view.nq = model.nq, m_view.nv = model.nv, m_view.nbody = model.nbody, m_view.njnt = model.njnt;
  m_view.ngeom = model.ngeom, m_view.nsite = model.nsite;
  m_view.timestep = static_cast<T>(model.timestep);
  for (int k = 0; k < 3; ++k) m_view.gravity[k] = static_cast<T>(model.gravity[k]);
  m_view.implicit_damping = implicit_damping && model.eulerdamp ? 1 : 0;
  m_view.integrator = model.integrator;
  m_view.impratio = static_cast<T>(model.impratio);
  m_view.cone = model.cone;
  m_view.use_newton = model.cone == kConeElliptic ? 1 : 0;
  for (int c : model.geom_condim) m_view.use_newton = c > 3 ? 1 : m_view.use_newton;
  for (int c : model.pair_condim) m_view.use_newton = c > 3 ? 1 : m_view.use_newton;
  for (int e = 0; e < model.neq; ++e)
    if (model.eq_type[static_cast<size_t>(e)] == kEqWeld && model.eq_active[static_cast<size_t>(e)])
      m_view.use_newton = 1;
  // Newton is also the float solver wherever factoring its Hessian along the dof tree is cheap
  // (tree_ltdl_factor: sum over dofs of a(a + 1) / 2 multiply-adds, a the dof's ancestors; the G1
  // 1742): measured faster than Gauss-Seidel to convergence on every shipped robot and the corpus'
  // Go1 and G1 (1.1x-2.5x, docs/ARCHITECTURE.md), slower on dm_control's humanoid_CMU (8288).
  m_view.use_newton = tree_factor_cost(model) <= kNewtonMaxFactorCost ? 1 : m_view.use_newton;
  m_view.refsafe = model.refsafe ? 1 : 0;
  m_view.disable_actuation = model.actuation ? 0 : 1, m_view.disable_clampctrl = model.clampctrl ? 0 : 1;
  m_view.disable_filterparent = model.filterparent ? 0 : 1, m_view.disable_sensor = model.sensor ? 0 : 1;
  m_view.density = static_cast<T>(model.density), m_view.viscosity = static_cast<T>(model.viscosity);
  for (int k = 0; k < 3; ++k) m_view.wind[k] = static_cast<T>(model.wind[k]);
  m_view.ccd_iterations = model.ccd_iterations;
  m_view.ccd_tolerance = static_cast<T>(model.ccd_tolerance);
  m_view.tolerance = static_cast<T>(model.tolerance);
  const bool budget = sizeof(T) == sizeof(float) && m_view.use_newton && model.iterations < kNewtonMaxIter;
  m_view.newton_iterations = budget ? model.iterations : kNewtonMaxIter;
  m_view.newton_warmstart = budget && model.warmstart ? 1 : 0;
  m_view.newton_ls_iterations = budget ? model.ls_iterations : -1;
  m_view.newton_ls_tolerance = static_cast<T>(model.tolerance * model.ls_tolerance);
  m_view.has_gravcomp = 0;
  for (double g : model.body_gravcomp) m_view.has_gravcomp |= g != 0 ? 1 : 0;
  m_view.nu = model.nu;
  m_view.neq = model.neq;
  m_view.nsensor = model.nsensor, m_view.nsensordata = model.nsensordata;
  m_view.nhfield = model.nhfield, m_view.nhfielddata = model.nhfielddata;
  m_view.ntendon = model.ntendon, m_view.nwrap = model.nwrap;
  m_view.npair = model.npair;
  m_view.ncam = model.ncam;
  m_view.nmocap = model.nmocap;
  m_view.nmoment = 0;
  for (size_t a = 0; a < model.actuator_trntype.size(); ++a) {
    const int t = model.actuator_trntype[a], j = model.actuator_trnid[a];
    const bool rows = t != kTrnJoint && t != kTrnTendon;  // site, slider-crank, joint in parent, body
    const bool multi_dof = t == kTrnJoint && (model.jnt_type[static_cast<size_t>(j)] == kJointBall ||
                                              model.jnt_type[static_cast<size_t>(j)] == kJointFree);
    if (rows || multi_dof) m_view.nmoment = model.nu;
  }
  m_view.nsubtree = m_view.nbody_acc = m_view.nclock = m_view.nenergy_lag = m_view.ngeomdist = 0;
  m_view.nmesh = model.nmesh, m_view.nmeshvert = model.nmeshvert, m_view.nmeshgraph = model.nmeshgraph;
  m_view.nmeshface = model.nmeshface;
  m_view.nmeshpoly = model.nmeshpoly, m_view.nmeshpolyvert = model.nmeshpolyvert;
  for (int i = 0; i < model.nsensor; ++i) {
    const int t = model.sensor_type[static_cast<size_t>(i)];
    if (t == kSensSubtreeCom || t == kSensSubtreeLinVel || t == kSensSubtreeAngMom) m_view.nsubtree = model.nbody;
    // subtree_com also for a camera of mode trackcom or targetbodycom a sensor reads (sim/sensors.h
    // camera_frame) and for insidesite on a body (a massless one reads its subtree's com)
    if (t == kSensInsideSite && model.sensor_objtype[static_cast<size_t>(i)] == kSensObjBody)
      m_view.nsubtree = model.nbody;
    for (const int side : {0, 1}) {
      const size_t is = static_cast<size_t>(i);
      const int type = side == 0 ? model.sensor_objtype[is] : model.sensor_reftype[is];
      const int id = side == 0 ? model.sensor_objid[is] : model.sensor_refid[is];
      if (type == kSensObjCamera && id >= 0 && static_cast<size_t>(id) < model.cam_mode.size() &&
          (model.cam_mode[static_cast<size_t>(id)] == kCamTrackCom ||
           model.cam_mode[static_cast<size_t>(id)] == kCamTargetBodyCom))
        m_view.nsubtree = model.nbody;
    }
    if (t == kSensClock) m_view.nclock = 1;
    if (t == kSensGeomDist || t == kSensGeomNormal || t == kSensGeomFromTo) ++m_view.ngeomdist;
    if (t == kSensEKinetic && !model.sensor_intprm.empty() && model.sensor_intprm[2 * static_cast<size_t>(i)] == 1)
      m_view.nenergy_lag = 2;
    if (t == kSensAccelerometer || t == kSensForce || t == kSensTorque || t == kSensFrameLinAcc ||
        t == kSensFrameAngAcc)
      m_view.nbody_acc = model.nbody;
  }
  m_view.ncon_max = 0;
  m_view.bind(m_reals.data(), m_ints.data());
  // geom_collide's pairs in the order of the loop over g1 < g2, each as detect_contacts takes it:
  // the geom of the lower type number first (kGeomCollideShift)
  m_view.ncollide = 0;
  std::vector<char> collider(static_cast<size_t>(model.ngeom), 0);
  for (int g1 = 0; g1 < model.ngeom; ++g1)
    for (int g2 = g1 + 1; g2 < model.ngeom; ++g2)
      if (geom_pair_allowed(m_view, g1, g2) || (model.npair > 0 && explicit_pair(m_view, g1, g2) >= 0)) {
        const bool keep = model.geom_type[static_cast<size_t>(g1)] <= model.geom_type[static_cast<size_t>(g2)];
        const int first = keep ? g1 : g2, second = keep ? g2 : g1;
        m_ints[static_cast<size_t>(o.geom_collide + m_view.ncollide++)] = first << kGeomCollideShift | second;
        collider[static_cast<size_t>(g1)] = collider[static_cast<size_t>(g2)] = 1;
      }
  m_view.ncollider = 0;
  for (int g = 0; g < model.ngeom; ++g)
    if (collider[static_cast<size_t>(g)]) m_ints[static_cast<size_t>(o.geom_collider + m_view.ncollider++)] = g;
  // the geoms and sites a substep reads: colliders; tendon wrapping geoms, their side sites and the
  // path's sites; site and slider-crank transmissions' sites; site equalities' sites
  {
    std::vector<char> geom_used = collider, site_used(static_cast<size_t>(model.nsite), 0);
    auto use_site = [&](int s) {
      if (s >= 0 && s < model.nsite) site_used[static_cast<size_t>(s)] = 1;
    };
    for (size_t w = 0; w < model.wrap_type.size(); ++w) {
      const int type = model.wrap_type[w], id = model.wrap_objid[w];
      if (type == kWrapSite) use_site(id);
      if ((type == kWrapSphere || type == kWrapCylinder) && id >= 0 && id < model.ngeom) {
        geom_used[static_cast<size_t>(id)] = 1;
        use_site(static_cast<int>(model.wrap_prm[w]));
      }
    }
    for (int a = 0; a < model.nu; ++a) {
      const size_t ia = static_cast<size_t>(a);
      const int trn = model.actuator_trntype.empty() ? kTrnJoint : model.actuator_trntype[ia];
      if (trn == kTrnSite || trn == kTrnSliderCrank) {
        use_site(model.actuator_trnid[ia]);
        if (!model.actuator_trnid2.empty()) use_site(model.actuator_trnid2[ia]);
      }
    }
    for (int e = 0; e < model.neq; ++e)
      if (!model.eq_objtype.empty() && model.eq_objtype[static_cast<size_t>(e)] == kEqObjSite)
        use_site(model.eq_obj1id[static_cast<size_t>(e)]), use_site(model.eq_obj2id[static_cast<size_t>(e)]);
    m_view.ngeom_substep = m_view.nsite_substep = 0;
    for (int g = 0; g < model.ngeom; ++g)
      if (geom_used[static_cast<size_t>(g)]) m_ints[static_cast<size_t>(o.geom_substep + m_view.ngeom_substep++)] = g;
    for (int s = 0; s < model.nsite; ++s)
      if (site_used[static_cast<size_t>(s)]) m_ints[static_cast<size_t>(o.site_substep + m_view.nsite_substep++)] = s;
  }
  m_view.noslip_iterations = model.noslip_iterations;  // (data_layout reads it: before set_invweight0)
  m_view.noslip_tolerance = static_cast<T>(model.noslip_tolerance);
  m_view.ncon_max = contact_capacity(m_view);
  m_view.nefc_max = constraint_capacity(m_view);
  // each dof's tree's first dof (dofs are in tree order: a parent comes first)
  for (int i = 0; i < model.nv; ++i) {
    const int p = model.dof_parentid[static_cast<size_t>(i)];
    m_ints[static_cast<size_t>(o.dof_treestart + i)] = p < 0 ? i : m_ints[static_cast<size_t>(o.dof_treestart + p)];
  }
  // the joints at their bodies' origins (+0 exactly: kinematics' shortcut gives the same bits)
  for (int j = 0; j < model.njnt; ++j) {
    bool at_origin = true;
    for (int k = 0; k < 3; ++k) {
      const double p = model.jnt_pos[static_cast<size_t>(3 * j + k)];
      at_origin = at_origin && p == 0 && !std::signbit(p);
    }
    m_ints[static_cast<size_t>(o.jnt_at_origin + j)] = at_origin ? 1 : 0;
  }
  // each dof's chain length (its parent's plus one: a parent comes first)
  for (int i = 0; i < model.nv; ++i) {
    const int p = model.dof_parentid[static_cast<size_t>(i)];
    m_ints[static_cast<size_t>(o.dof_depth + i)] = p < 0 ? 1 : m_ints[static_cast<size_t>(o.dof_depth + p)] + 1;
  }
  // each dof's subtree's last dof (a subtree is contiguous in tree order: the dof, then its descendants)
  for (int i = 0; i < model.nv; ++i) m_ints[static_cast<size_t>(o.dof_subtreeend + i)] = i;
  for (int i = model.nv - 1; i >= 0; --i) {
    const int p = model.dof_parentid[static_cast<size_t>(i)], end = m_ints[static_cast<size_t>(o.dof_subtreeend + i)];
    if (p >= 0 && end > m_ints[static_cast<size_t>(o.dof_subtreeend + p)]) m_ints[static_cast<size_t>(o.dof_subtreeend + p)] = end;
  }
  // implicitfast's constants (sim/physics_step.h): MuJoCo's simple dofs and standalone free bodies
  for (int i = 0; i < model.nv; ++i)
    m_ints[static_cast<size_t>(o.dof_simple + i)] =
        model_body_simple(m_view, model.dof_bodyid[static_cast<size_t>(i)]) != 0 ? 1 : 0;
  for (int b = 1; b < model.nbody; ++b) {
    const size_t ub = static_cast<size_t>(b);
    bool alone = model.body_jntnum[ub] == 1 && model.jnt_type[static_cast<size_t>(model.body_jntadr[ub])] == kJointFree;
    for (int c = b + 1; c < model.nbody && alone; ++c) {  // below b: no dofs, no mass
      int a = c;
      while (a > b) a = model.body_parentid[static_cast<size_t>(a)];
      if (a == b) alone = model.body_dofnum[static_cast<size_t>(c)] == 0 && model.body_mass[static_cast<size_t>(c)] == 0;
    }
    m_ints[static_cast<size_t>(o.body_freebody + b)] = alone ? 1 : 0;
  }
  set_invweight0(m_view, m_reals);
}

#ifndef __CUDACC__
// Compiled once, in sim/physics_instances.cpp, for the host (nvcc's translation units make their own).
extern template class HostModel<float>;
extern template class HostModel<double>;
#endif

}  // namespace rlt
