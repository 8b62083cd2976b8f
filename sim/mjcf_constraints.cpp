// MJCF compiler, constraint parameters (sim/mjcf_compiler.h): the joint and geom attributes of
// MuJoCo's constraint law (frictionloss, margin, solreflimit/solimplimit, solreffriction/
// solimpfriction, actuatorfrcrange; geom solref/solimp/solmix/priority/gap), the solver's <option>
// attributes and <flag>s, and the Model arrays they fill (sim/model_fields.h, "constraint
// parameters"; sim/constraints.h reads them). MuJoCo 3's semantics, checked against it in
// tests/sim/test_constraints.cpp and by tools/mujoco_peer.py (tests/data/mjcf/constraints_*.xml).
#include "sim/mjcf_compiler.h"
#include "sim/mjccd.h"

namespace rlt::mjcf_detail {

namespace {
// solref: 2 numbers, both positive (timeconst, dampratio) or both non-positive (direct -stiffness,
// -damping); MuJoCo warns on a mixed pair and uses the default, which sim/constraints.h does too.
void read_solref(Attrs& a, const char* name, double out[2]) { a.numbers(name, out, 2, 2); }
// solimp: 3 to 5 numbers (dmin, dmax, width[, midpoint, power]).
void read_solimp(Attrs& a, const char* name, double out[5]) { a.numbers(name, out, 3, 5); }
}  // namespace

void MjcfCompiler::read_joint_constraint_attrs(Attrs& a, JointSpec* j) {
  if (a.number("frictionloss", &j->frictionloss) && j->frictionloss < 0)
    a.fail("attribute \"frictionloss\" must be non-negative");
  if (a.number("margin", &j->margin) && j->margin < 0) a.fail("attribute \"margin\" must be non-negative");
  read_solref(a, "solreflimit", j->solreflimit);
  read_solimp(a, "solimplimit", j->solimplimit);
  read_solref(a, "solreffriction", j->solreffriction);
  read_solimp(a, "solimpfriction", j->solimpfriction);
  a.tri("actuatorfrclimited", &j->actfrclimited);
  a.numbers("actuatorfrcrange", j->actfrcrange, 2, 2);
}

void MjcfCompiler::read_geom_constraint_attrs(Attrs& a, GeomSpec* g) {
  read_solref(a, "solref", g->solref);
  read_solimp(a, "solimp", g->solimp);
  if (a.number("solmix", &g->solmix) && g->solmix < 0) a.fail("attribute \"solmix\" must be non-negative");
  if (a.number("gap", &g->gap) && g->gap < 0) a.fail("attribute \"gap\" must be non-negative");
  a.integer("priority", &g->priority);
}

// The solver: MuJoCo's Newton, CG and PGS all minimize the same strictly convex problem; rltrain
// solves it by its own choice of Newton or projected Gauss-Seidel (sim/constraints.h,
// ModelView::use_newton), whatever `solver` names, so `solver` is read (checked) and the converged
// answer is the same; `tolerance` is Newton's stopping tolerance, as MuJoCo's (Model::tolerance), and
// `iterations` its budget where it is below what convergence takes (Model::iterations,
// ModelView::newton_iterations: MuJoCo Playground's Go1 and G1 scenes stop MuJoCo after 1 and 3);
// under such a budget the line search is MuJoCo's, with `ls_iterations` and `ls_tolerance` (where the
// solve converges, its own exact one). What would change the answer is refused.
// noslip_iterations and noslip_tolerance run MuJoCo's noslip post-pass (sim/noslip.h).
void MjcfCompiler::read_option_constraints(Attrs& a) {
  const int solver = a.keyword("solver", {"PGS", "CG", "Newton"});
  int n = 0;
  const bool has_iterations = a.integer("iterations", &n);
  if (has_iterations && n < 0) a.fail("attribute \"iterations\" must be non-negative");
  // A budget of Newton iterations where MuJoCo runs Newton (its default); PGS's sweeps and CG's
  // iterations buy less than Newton's, so those files are solved to convergence.
  if (has_iterations && (solver < 0 || solver == 2)) m.iterations = n;
  if (a.integer("ls_iterations", &m.ls_iterations) && m.ls_iterations < 0)
    a.fail("attribute \"ls_iterations\" must be non-negative");
  if (a.number("tolerance", &m.tolerance) && !(m.tolerance >= 0))
    a.fail("attribute \"tolerance\" must be non-negative");
  if (a.number("ls_tolerance", &m.ls_tolerance) && !(m.ls_tolerance >= 0))
    a.fail("attribute \"ls_tolerance\" must be non-negative");
  // MuJoCo's noslip post-pass (sim/noslip.h): its sweeps and tolerance, as the file gives them
  if (a.number("noslip_tolerance", &m.noslip_tolerance) && m.noslip_tolerance < 0)
    a.fail("attribute \"noslip_tolerance\" must be non-negative");
  if (a.integer("noslip_iterations", &m.noslip_iterations) && m.noslip_iterations < 0)
    a.fail("attribute \"noslip_iterations\" must be non-negative");
  // MuJoCo's native convex collision (sim/mjccd.h): GJK's and EPA's iterations and tolerance
  if (a.integer("ccd_iterations", &m.ccd_iterations) &&
      (m.ccd_iterations < 1 || m.ccd_iterations > mjccd::kMaxIterations))
    a.fail("attribute \"ccd_iterations\" must be in [1, " + std::to_string(mjccd::kMaxIterations) + "]");
  if (a.number("ccd_tolerance", &m.ccd_tolerance) && !(m.ccd_tolerance >= 0))
    a.fail("attribute \"ccd_tolerance\" must be non-negative");
  const int cone = a.keyword("cone", {"pyramidal", "elliptic"});
  if (cone >= 0) m.cone = cone == 1 ? kConeElliptic : kConePyramidal;
  if (a.number("impratio", &m.impratio) && !(m.impratio > 0)) a.fail("attribute \"impratio\" must be positive");
  a.keyword("jacobian", {"dense", "sparse", "auto"});  // storage only: the same answer
  // misc: fluid forces, MuJoCo's inertia-box model (sim/dynamics.h fluid_forces)
  if (a.number("density", &m.density) && m.density < 0) a.fail("attribute \"density\" must be non-negative");
  if (a.number("viscosity", &m.viscosity) && m.viscosity < 0) a.fail("attribute \"viscosity\" must be non-negative");
  a.numbers("wind", m.wind, 3, 3);
  // Read by parts of MuJoCo this subset does not have (magnetometers, the override flag, SDF
  // collisions, sleeping): no effect here.
  a.ignore({"magnetic", "o_margin", "o_solref", "o_solimp", "o_friction", "sdf_iterations", "sdf_initpoints", "apirate", "sleep_tolerance"});
  if (const auto groups = a.text("actuatorgroupdisable");
      groups && groups->find_first_not_of(" \t\r\n") != std::string::npos)
    a.fail("attribute \"actuatorgroupdisable\" is not supported");
}

void MjcfCompiler::read_flags(const XMLElement* option) {
  for (const XMLElement* c = option->FirstChildElement(); c; c = c->NextSiblingElement()) {
    if (std::strcmp(c->Name(), "flag") != 0) unsupported_element(c, "flag");
    Attrs a(m_file, c);
    auto flag = [&](const char* name, bool* on) {
      const int k = a.keyword(name, {"disable", "enable"});
      if (k >= 0 && on) *on = k == 1;
      return k;
    };
    bool constraint = true;
    flag("constraint", &constraint);
    if (!constraint) m_flags.contact = m_flags.limit = m_flags.frictionloss = m_flags.equality = false;
    flag("contact", &m_flags.contact);
    flag("limit", &m_flags.limit);
    flag("frictionloss", &m_flags.frictionloss);
    flag("gravity", &m_flags.gravity);
    flag("spring", &m_flags.spring);
    flag("damper", &m_flags.damper);
    flag("eulerdamp", &m.eulerdamp);
    flag("refsafe", &m.refsafe);
    flag("equality", &m_flags.equality);
    // Read by the dynamics (Model::actuation, clampctrl, filterparent, sensor; MuJoCo's mjDSBL_*).
    flag("actuation", &m.actuation);
    flag("clampctrl", &m.clampctrl);
    flag("filterparent", &m.filterparent);
    flag("sensor", &m.sensor);
    // warmstart: where the file's iterations can stop the solver (ModelView::newton_warmstart)
    flag("warmstart", &m.warmstart);
    // No effect on the converged answer, or on nothing this subset has: island (the solver's path,
    // not its answer), midphase, autoreset, and the diagnostics energy, fwdinv, invdiscrete.
    for (const char* n : {"island", "midphase", "autoreset", "fwdinv", "invdiscrete"}) flag(n, nullptr);
    flag("energy", &m_flags.energy);  // (read by the e_kinetic sensor's compiler check)
    // Not supported away from MuJoCo's default. nativeccd and multiccd: the convex pairs follow
    // MuJoCo's nativeccd and its multicontact (sim/mjccd.h, sim/multiccd.h); MuJoCo's libccd path
    // and its single contacts without multiccd are not modelled.
    const struct {
      const char* name;
      const char* def;
    } kRefused[] = {{"override", "disable"}, {"sleep", "disable"},      {"diagexact", "disable"},
                    {"ipc", "disable"},      {"nativeccd", "enable"}, {"multiccd", "enable"}};
    for (const auto& r : kRefused) {
      const char* t = c->Attribute(r.name);
      flag(r.name, nullptr);
      if (t && std::strcmp(t, r.def) != 0)
        a.fail("flag " + quoted(r.name) + "=" + quoted(t) + " is not supported (only " + quoted(r.def) + ")");
    }
    a.finish();
    no_children(c);
  }
}

void MjcfCompiler::compile_constraints() {
  const size_t njnt = m_joints.size();
  m.jnt_solref.clear(), m.jnt_solimp.clear(), m.jnt_margin.clear();
  m.jnt_actfrclimited.clear(), m.jnt_actfrcrange.clear();
  for (size_t j = 0; j < njnt; ++j) {
    const JointSpec& s = m_joints[j];
    m.jnt_solref.insert(m.jnt_solref.end(), s.solreflimit, s.solreflimit + 2);
    m.jnt_solimp.insert(m.jnt_solimp.end(), s.solimplimit, s.solimplimit + 5);
    m.jnt_margin.push_back(s.margin);
    const bool has_range = s.actfrcrange[0] != 0 || s.actfrcrange[1] != 0;
    bool limited = s.actfrclimited == Tri::kTrue;
    if (s.actfrclimited == Tri::kAuto && has_range) {
      if (!m_opt.autolimits)
        fail(m_joint_elem[j],
             "has \"actuatorfrcrange\" but not \"actuatorfrclimited\": set actuatorfrclimited="
             "\"true\" or \"false\", or <compiler autolimits=\"true\"/>");
      limited = true;
    }
    if (limited && s.actfrcrange[0] > s.actfrcrange[1])
      fail(m_joint_elem[j], "actuatorfrcrange[0] must not be larger than actuatorfrcrange[1]");
    m.jnt_actfrclimited.push_back(limited ? 1 : 0);
    m.jnt_actfrcrange.insert(m.jnt_actfrcrange.end(), s.actfrcrange, s.actfrcrange + 2);
    if (!m_flags.limit) m.jnt_limited[j] = 0;
    if (!m_flags.spring) m.jnt_stiffness[j] = 0;
  }
  m.dof_frictionloss.clear(), m.dof_solref.clear(), m.dof_solimp.clear();
  for (int i = 0; i < m.nv; ++i) {
    const JointSpec& s = m_joints[static_cast<size_t>(m.dof_jntid[static_cast<size_t>(i)])];
    m.dof_frictionloss.push_back(m_flags.frictionloss ? s.frictionloss : 0);
    m.dof_solref.insert(m.dof_solref.end(), s.solreffriction, s.solreffriction + 2);
    m.dof_solimp.insert(m.dof_solimp.end(), s.solimpfriction, s.solimpfriction + 5);
    if (!m_flags.damper) m.dof_damping[static_cast<size_t>(i)] = 0;
  }
  m.geom_solref.clear(), m.geom_solimp.clear(), m.geom_solmix.clear(), m.geom_priority.clear(), m.geom_gap.clear();
  for (size_t g = 0; g < m_geoms.size(); ++g) {
    const GeomSpec& s = m_geoms[g];
    m.geom_solref.insert(m.geom_solref.end(), s.solref, s.solref + 2);
    m.geom_solimp.insert(m.geom_solimp.end(), s.solimp, s.solimp + 5);
    m.geom_solmix.push_back(s.solmix);
    m.geom_priority.push_back(s.priority);
    m.geom_gap.push_back(s.gap);
    if (!m_flags.contact) m.geom_contype[g] = m.geom_conaffinity[g] = 0;
  }
  if (!m_flags.gravity) m.gravity[0] = m.gravity[1] = m.gravity[2] = 0;
}

void MjcfCompiler::read_pair_attrs(Attrs& a, PairSpec* p) {
  if (a.integer("condim", &p->condim) && p->condim != 1 && p->condim != 3 && p->condim != 4 && p->condim != 6)
    a.fail("attribute \"condim\": expected 1, 3, 4 or 6, got " + std::to_string(p->condim));
  a.numbers("friction", p->friction, 1, 5);  // fewer than 5: the rest as before (MuJoCo)
  read_solref(a, "solref", p->solref);
  read_solref(a, "solreffriction", p->solreffriction);
  read_solimp(a, "solimp", p->solimp);
  if (a.number("margin", &p->margin) && p->margin < 0) a.fail("attribute \"margin\" must be non-negative");
  if (a.number("gap", &p->gap) && p->gap < 0) a.fail("attribute \"gap\" must be non-negative");
}

// <contact><pair>: the two geoms collide whatever contype/conaffinity, exclusions and the body tree
// say, with the pair's own condim, friction, solref, solimp, margin and gap (MuJoCo's mj_collision);
// the geoms' automatic contact is replaced by it. A pair of geoms named twice is refused (MuJoCo
// collides it twice). <flag contact="disable"/> drops pairs too.
void MjcfCompiler::read_pair(const XMLElement* c) {
  Attrs a(m_file, c);
  PairSpec p = find_class(a, a.text("class").value_or("main")).pair;
  read_pair_attrs(a, &p);
  a.ignore({"name"});
  int g[2];
  for (int k = 0; k < 2; ++k) {
    const char* attr = k == 0 ? "geom1" : "geom2";
    const auto name = a.text(attr);
    if (!name || name->empty()) a.fail(std::string("attribute ") + quoted(attr) + " is required");
    g[k] = -1;
    for (size_t i = 0; i < m.geom_name.size(); ++i)
      if (m.geom_name[i] == *name) g[k] = static_cast<int>(i);
    if (g[k] < 0) a.fail(std::string("attribute ") + quoted(attr) + ": unknown geom " + quoted(*name));
  }
  a.finish();
  no_children(c);
  if (g[0] == g[1]) a.fail("a geom cannot pair with itself");
  // An elliptic cone's friction rows take the pair's solreffriction in MuJoCo; here every row of a
  // contact takes solref, so a pair that sets it under elliptic cones is refused rather than moved
  // differently.
  if (m.cone == kConeElliptic && (p.solreffriction[0] != 0 || p.solreffriction[1] != 0))
    a.fail("attribute \"solreffriction\" with elliptic cones is not supported yet (solref is)");
  for (int q = 0; q < m.npair; ++q)
    if ((m.pair_geom1[q] == g[0] && m.pair_geom2[q] == g[1]) || (m.pair_geom1[q] == g[1] && m.pair_geom2[q] == g[0]))
      a.fail("the two geoms already form a pair (a pair named twice is not supported)");
  if (!m_flags.contact) return;
  m.pair_geom1.push_back(g[0]);
  m.pair_geom2.push_back(g[1]);
  m.pair_condim.push_back(p.condim);
  m.pair_friction.insert(m.pair_friction.end(), p.friction, p.friction + 5);
  m.pair_solref.insert(m.pair_solref.end(), p.solref, p.solref + 2);
  m.pair_solreffriction.insert(m.pair_solreffriction.end(), p.solreffriction, p.solreffriction + 2);
  m.pair_solimp.insert(m.pair_solimp.end(), p.solimp, p.solimp + 5);
  m.pair_margin.push_back(p.margin);
  m.pair_gap.push_back(p.gap);
  m.npair++;
}

void MjcfCompiler::read_equality_attrs(Attrs& a, EqualitySpec* q) {
  a.boolean("active", &q->active);
  read_solref(a, "solref", q->solref);
  read_solimp(a, "solimp", q->solimp);
}

void MjcfCompiler::read_contact(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  for (const XMLElement* c = section->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string n = c->Name();
    if (n == "pair") {
      read_pair(c);
      continue;
    }
    if (n != "exclude") unsupported_element(c, "exclude, pair");
    Attrs a(m_file, c);
    a.ignore({"name"});
    int b[2];
    for (int k = 0; k < 2; ++k) {
      const char* attr = k == 0 ? "body1" : "body2";
      const auto name = a.text(attr);
      if (!name || name->empty()) a.fail(std::string("attribute ") + quoted(attr) + " is required");
      b[k] = -1;
      for (size_t i = 0; i < m.body_name.size(); ++i)
        if (m.body_name[i] == *name) b[k] = static_cast<int>(i);
      if (b[k] < 0) a.fail(std::string("attribute ") + quoted(attr) + ": unknown body " + quoted(*name));
    }
    a.finish();
    no_children(c);
    const size_t nb = m.body_name.size();
    if (m.body_exclude.empty()) m.body_exclude.assign(nb * nb, 0);
    m.body_exclude[static_cast<size_t>(b[0]) * nb + static_cast<size_t>(b[1])] = 1;
    m.body_exclude[static_cast<size_t>(b[1]) * nb + static_cast<size_t>(b[0])] = 1;
  }
}

void MjcfCompiler::read_equality(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  auto find = [&](Attrs& a, const std::vector<std::string>& names, const char* attr, const char* what) {
    const auto name = a.text(attr);
    if (!name || name->empty()) return -1;
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == *name) return static_cast<int>(i);
    a.fail(std::string("attribute ") + quoted(attr) + ": unknown " + what + " " + quoted(*name));
  };
  // World pose of a body at qpos0: its frames composed up the tree (joints at qpos0 move nothing).
  auto world_pose = [&](int b, Vec3<double>* pos, Quat<double>* quat) {
    *pos = Vec3<double>::zero();
    *quat = Quat<double>{1, 0, 0, 0};
    for (; b > 0; b = m.body_parentid[static_cast<size_t>(b)]) {
      const Vec3<double> p = Vec3<double>::load(&m.body_pos[3 * static_cast<size_t>(b)]);
      const Quat<double> q = Quat<double>::load(&m.body_quat[4 * static_cast<size_t>(b)]);
      *pos = p + quat_rotate(q, *pos);
      *quat = quat_mul(q, *quat);
    }
  };
  for (const XMLElement* c = section->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string n = c->Name();
    if (n == "flex") fail(c, "equality \"flex\" is not supported yet (connect, weld, joint and tendon are)");
    if (n != "joint" && n != "connect" && n != "weld" && n != "tendon")
      unsupported_element(c, "connect, weld, joint, tendon");
    Attrs a(m_file, c);
    a.ignore({"name"});
    double data[11] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    EqualitySpec q = find_class(a, a.text("class").value_or("main")).equality;  // <default><equality>
    read_equality_attrs(a, &q);
    const double* solref = q.solref;
    const double* solimp = q.solimp;
    const bool active = q.active;
    int type = 0, o1 = -1, o2 = -1, objtype = kEqObjBody;
    if (n == "connect") {
      type = kEqConnect;
      if (a.has("site1") || a.has("site2")) {
        // site semantics: the two sites kept together; each site is fixed in its body, so this is
        // body semantics with each site's position as that body's anchor
        if (a.has("body1") || a.has("body2") || a.has("anchor"))
          a.fail("give either body1, body2, anchor or site1, site2");
        const int s1 = find(a, m.site_name, "site1", "site"), s2 = find(a, m.site_name, "site2", "site");
        if (s1 < 0 || s2 < 0) a.fail("attributes \"site1\" and \"site2\" are both required");
        o1 = m.site_bodyid[static_cast<size_t>(s1)];
        o2 = m.site_bodyid[static_cast<size_t>(s2)];
        for (int k = 0; k < 3; ++k) {
          data[k] = m.site_pos[3 * static_cast<size_t>(s1) + k];
          data[3 + k] = m.site_pos[3 * static_cast<size_t>(s2) + k];
        }
      } else {
        o1 = find(a, m.body_name, "body1", "body");
        if (o1 < 0) a.fail("attribute \"body1\" is required");
        o2 = std::max(0, find(a, m.body_name, "body2", "body"));
        if (a.numbers("anchor", data, 3, 3) == 0) a.fail("attribute \"anchor\" is required");
        // the anchor in body 2's frame, where it is at qpos0 (MuJoCo's mj_setConst)
        Vec3<double> p1, p2;
        Quat<double> q1, q2;
        world_pose(o1, &p1, &q1);
        world_pose(o2, &p2, &q2);
        const Vec3<double> world = p1 + quat_rotate(q1, Vec3<double>::load(data));
        const Quat<double> q2inv{q2.w, -q2.x, -q2.y, -q2.z};
        quat_rotate(q2inv, world - p2).store(data + 3);
      }
    } else if (n == "tendon") {  // tendon lengths coupled by a polynomial (sim/constraints.h)
      type = kEqTendon;
      o1 = find(a, m.tendon_name, "tendon1", "tendon");
      if (o1 < 0) a.fail("attribute \"tendon1\" is required");
      o2 = find(a, m.tendon_name, "tendon2", "tendon");
      double poly[5] = {0, 1, 0, 0, 0};
      a.numbers("polycoef", poly, 1, 5);
      std::copy(poly, poly + 5, data);
    } else if (n == "weld") {
      // MuJoCo's weld (sim/constraints.h weld_rows). Site semantics: the two sites' frames kept
      // together, eq_obj1id/2id the sites, only torquescale in eq_data. Body semantics: eq_data
      // anchor in body 2's frame (0-2), the point of body 1 kept on it (3-5), relpose quaternion
      // (6-9), torquescale (10); relpose's position is that point, its quaternion body 2's
      // orientation in body 1's frame; a zero quaternion (the default) means the pose at qpos0, the
      // point then where the anchor is (MuJoCo's mj_setConst).
      type = kEqWeld;
      data[10] = 1;
      a.number("torquescale", &data[10]);
      if (a.has("site1") || a.has("site2")) {
        if (a.has("body1") || a.has("body2") || a.has("anchor") || a.has("relpose"))
          a.fail("give either body1, body2, anchor, relpose or site1, site2");
        o1 = find(a, m.site_name, "site1", "site"), o2 = find(a, m.site_name, "site2", "site");
        if (o1 < 0 || o2 < 0) a.fail("attributes \"site1\" and \"site2\" are both required");
        if (o1 == o2) a.fail("site1 and site2 are the same site");
        objtype = kEqObjSite;
      } else {
        o1 = find(a, m.body_name, "body1", "body");
        if (o1 < 0) a.fail("attribute \"body1\" (or \"site1\" and \"site2\") is required");
        o2 = std::max(0, find(a, m.body_name, "body2", "body"));
        if (o1 == o2) a.fail("body1 and body2 are the same body");
        a.numbers("anchor", data, 3, 3);
        a.numbers("relpose", data + 3, 7, 7);
        const Quat<double> rel = Quat<double>::load(data + 6);
        const double qn = std::sqrt(rel.w * rel.w + rel.x * rel.x + rel.y * rel.y + rel.z * rel.z);
        if (qn > 0) {
          for (int k = 6; k < 10; ++k) data[k] /= qn;
        } else {
          Vec3<double> p1, p2;
          Quat<double> q1, q2;
          world_pose(o1, &p1, &q1);
          world_pose(o2, &p2, &q2);
          const Vec3<double> world = p2 + quat_rotate(q2, Vec3<double>::load(data));
          const Quat<double> q1inv{q1.w, -q1.x, -q1.y, -q1.z};
          quat_rotate(q1inv, world - p1).store(data + 3);
          quat_mul(q1inv, q2).store(data + 6);
        }
      }
    } else {
      type = kEqJoint;
      o1 = find(a, m.jnt_name, "joint1", "joint");
      if (o1 < 0) a.fail("attribute \"joint1\" is required");
      o2 = find(a, m.jnt_name, "joint2", "joint");
      for (int o : {o1, o2})
        if (o >= 0 && m.jnt_type[static_cast<size_t>(o)] != kJointHinge &&
            m.jnt_type[static_cast<size_t>(o)] != kJointSlide)
          a.fail("a joint equality takes hinge and slide joints only");
      double poly[5] = {0, 1, 0, 0, 0};
      a.numbers("polycoef", poly, 1, 5);
      std::copy(poly, poly + 5, data);
    }
    a.finish();
    no_children(c);
    m.eq_type.push_back(type);
    m.eq_obj1id.push_back(o1);
    m.eq_obj2id.push_back(o2);
    m.eq_objtype.push_back(objtype);
    m.eq_active.push_back(active && m_flags.equality ? 1 : 0);  // (flag equality="disable": no rows)
    m.eq_data.insert(m.eq_data.end(), data, data + 11);
    m.eq_solref.insert(m.eq_solref.end(), solref, solref + 2);
    m.eq_solimp.insert(m.eq_solimp.end(), solimp, solimp + 5);
    ++m.neq;
  }
}

}  // namespace rlt::mjcf_detail
