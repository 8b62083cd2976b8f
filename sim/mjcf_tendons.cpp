// MJCF compiler, tendons (sim/mjcf_compiler.h): <default><tendon>, <tendon><fixed> (joints with
// coefs) and <tendon><spatial> (sites and pulleys) into the Model's tendon and wrap arrays
// (sim/model_fields.h, "tendons"; sim/tendon.h reads them). MuJoCo 3's semantics; the lengths at
// qpos0 and qpos_spring are HostModel's (set_invweight0, sim/constraints.h), as MuJoCo's
// mj_setConst. A spatial tendon's <geom> (a sphere or cylinder, with an optional sidesite) sits
// between two sites.
#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

void MjcfCompiler::read_tendon_attrs(Attrs& a, TendonSpec* t) {
  a.tri("limited", &t->limited);
  a.numbers("range", t->range, 2, 2);
  if (a.number("margin", &t->margin) && t->margin < 0) a.fail("attribute \"margin\" must be non-negative");
  a.numbers("solreflimit", t->solreflimit, 2, 2);
  a.numbers("solimplimit", t->solimplimit, 3, 5);
  if (a.number("frictionloss", &t->frictionloss) && t->frictionloss < 0)
    a.fail("attribute \"frictionloss\" must be non-negative");
  a.numbers("solreffriction", t->solreffriction, 2, 2);
  a.numbers("solimpfriction", t->solimpfriction, 3, 5);
  if (a.number("stiffness", &t->stiffness) && t->stiffness < 0) a.fail("attribute \"stiffness\" must be non-negative");
  if (a.number("damping", &t->damping) && t->damping < 0) a.fail("attribute \"damping\" must be non-negative");
  // springlength: one value (both ends of the deadband) or MuJoCo 3's two
  if (a.numbers("springlength", t->springlength, 1, 2) == 1) t->springlength[1] = t->springlength[0];
  if (t->springlength[0] > t->springlength[1]) a.fail("attribute \"springlength\": the first value exceeds the second");
  if (a.number("width", &t->width) && t->width < 0) a.fail("attribute \"width\" must be non-negative");
  a.numbers("rgba", t->rgba, 4, 4);
  a.integer("group", &t->group);
  a.only_default("armature", 0);
  a.only_default("stiffnesspoly", 0);
  a.only_default("dampingpoly", 0);
  a.only_default_text("actuatorfrclimited", "false");
  a.only_default("actuatorfrcrange", 0);
  a.ignore({"material", "user"});
}

void MjcfCompiler::read_tendons(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  for (const XMLElement* e = section->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string kind = e->Name();
    if (kind != "fixed" && kind != "spatial") unsupported_element(e, "fixed, spatial");
    Attrs a(m_file, e);
    TendonSpec s = find_class(a, a.text("class").value_or("main")).tendon;
    read_tendon_attrs(a, &s);
    const std::string name = a.text("name").value_or("");
    check_name(m_tendon_names, "tendon", e, name);
    const bool limited = resolve_limited(a, s.limited, s.range, "");
    a.finish();
    const int adr = m.nwrap;
    const bool fixed = kind == "fixed";
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string w = c->Name();
      no_children(c);
      Attrs ca(m_file, c);
      int type = 0, id = -1;
      double prm = 0;
      if (fixed) {
        if (w != "joint") unsupported_element(c, "joint");
        const auto joint = ca.text("joint");
        if (!joint) ca.fail("attribute \"joint\" is required");
        id = m.joint_id(*joint);
        if (id < 0) ca.fail("unknown joint " + quoted(*joint));
        if (m.jnt_type[static_cast<size_t>(id)] != kJointHinge && m.jnt_type[static_cast<size_t>(id)] != kJointSlide)
          ca.fail("joint " + quoted(*joint) + ": a fixed tendon takes hinge and slide joints only");
        if (!ca.number("coef", &prm)) ca.fail("attribute \"coef\" is required");
        type = kWrapJoint;
      } else if (w == "site") {
        const auto site = ca.text("site");
        if (!site) ca.fail("attribute \"site\" is required");
        for (size_t k = 0; k < m.site_name.size() && id < 0; ++k)
          if (m.site_name[k] == *site) id = static_cast<int>(k);
        if (id < 0) ca.fail("unknown site " + quoted(*site));
        type = kWrapSite;
      } else if (w == "pulley") {
        prm = 0;
        if (!ca.number("divisor", &prm) || !(prm > 0)) ca.fail("attribute \"divisor\": a positive number is required");
        type = kWrapPulley;
      } else if (w == "geom") {  // a sphere or cylinder to wrap around, optionally a side site
        const auto geom = ca.text("geom");
        if (!geom) ca.fail("attribute \"geom\" is required");
        for (size_t k = 0; k < m.geom_name.size() && id < 0; ++k)
          if (m.geom_name[k] == *geom) id = static_cast<int>(k);
        if (id < 0) ca.fail("unknown geom " + quoted(*geom));
        const int gt = m.geom_type[static_cast<size_t>(id)];
        if (gt != kGeomSphere && gt != kGeomCylinder) ca.fail("geom " + quoted(*geom) + " is not a sphere or cylinder");
        type = gt == kGeomSphere ? kWrapSphere : kWrapCylinder;
        prm = -1;
        if (const auto side = ca.text("sidesite")) {
          for (size_t k = 0; k < m.site_name.size() && prm < 0; ++k)
            if (m.site_name[k] == *side) prm = static_cast<double>(k);
          if (prm < 0) ca.fail("unknown site " + quoted(*side));
        }
      } else {
        unsupported_element(c, "site, geom, pulley");
      }
      ca.finish();
      m.wrap_type.push_back(type);
      m.wrap_objid.push_back(id);
      m.wrap_prm.push_back(prm);
      ++m.nwrap;
    }
    const int num = m.nwrap - adr;
    if (num == 0) fail(e, "a tendon needs at least one wrap element");
    if (!fixed) {
      // MuJoCo's rules for a spatial path (a pulley, more strictly here: sites at both ends, a site
      // on each side of a pulley and of a geom)
      for (int k = adr; k < m.nwrap; ++k) {
        const int type = m.wrap_type[static_cast<size_t>(k)];
        if (type == kWrapSite) continue;
        if (k == adr || k == m.nwrap - 1 || m.wrap_type[static_cast<size_t>(k - 1)] != kWrapSite ||
            m.wrap_type[static_cast<size_t>(k + 1)] != kWrapSite)
          fail(e, type == kWrapPulley ? "a pulley must have a site on each side"
                                      : "a wrapping geom must have a site on each side");
      }
      if (num < 2 || m.wrap_type[static_cast<size_t>(adr)] != kWrapSite ||
          m.wrap_type[static_cast<size_t>(m.nwrap - 1)] != kWrapSite)
        fail(e, "a spatial tendon must start and end with a site");
    }
    m.tendon_adr.push_back(adr);
    m.tendon_num.push_back(num);
    m.tendon_limited.push_back(limited && m_flags.limit ? 1 : 0);
    m.tendon_range.insert(m.tendon_range.end(), s.range, s.range + 2);
    m.tendon_margin.push_back(s.margin);
    m.tendon_solref_lim.insert(m.tendon_solref_lim.end(), s.solreflimit, s.solreflimit + 2);
    m.tendon_solimp_lim.insert(m.tendon_solimp_lim.end(), s.solimplimit, s.solimplimit + 5);
    m.tendon_frictionloss.push_back(m_flags.frictionloss ? s.frictionloss : 0);
    m.tendon_solref_fri.insert(m.tendon_solref_fri.end(), s.solreffriction, s.solreffriction + 2);
    m.tendon_solimp_fri.insert(m.tendon_solimp_fri.end(), s.solimpfriction, s.solimpfriction + 5);
    m.tendon_stiffness.push_back(m_flags.spring ? s.stiffness : 0);
    m.tendon_damping.push_back(m_flags.damper ? s.damping : 0);
    m.tendon_lengthspring.insert(m.tendon_lengthspring.end(), s.springlength, s.springlength + 2);
    for (int k = 0; k < 4; ++k) m.tendon_rgba.push_back(static_cast<float>(s.rgba[k]));
    m.tendon_width.push_back(s.width);
    m.tendon_group.push_back(s.group);
    m.tendon_name.push_back(name);
    ++m.ntendon;
  }
}

}  // namespace rlt::mjcf_detail
