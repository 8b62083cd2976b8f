// MJCF compiler, actuators and keyframes (sim/mjcf_compiler.h).
#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

// ---- actuators ----

void MjcfCompiler::read_actuators(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  for (const XMLElement* e = section->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string kind = e->Name();
    if (kind != "motor" && kind != "position" && kind != "velocity" && kind != "general" && kind != "intvelocity" &&
        kind != "damper" && kind != "adhesion" && kind != "muscle")
      unsupported_element(e, "general, motor, position, velocity, intvelocity, damper, adhesion, muscle");
    no_children(e);
    Attrs a(m_file, e);
    ActuatorSpec s = find_class(a, a.text("class").value_or("main")).actuator;
    read_actuator_attrs(a, kind, &s);
    const std::string name = a.text("name").value_or("");
    // the transmission: exactly one target (MuJoCo's OneActuator; jointinparent is joint for a hinge
    // or slide), then its site-specific attributes
    const char* const targets[] = {"joint", "jointinparent", "tendon", "site", "cranksite", "body"};
    std::string target_attr, target;
    for (const char* t : targets) {
      const auto v = a.text(t);
      if (!v) continue;
      if (!target_attr.empty()) a.fail("give one of \"" + target_attr + "\" and \"" + t + "\"");
      target_attr = t, target = *v;
    }
    const auto refsite = a.text("refsite"), slidersite = a.text("slidersite");
    const bool own_cranklength = e->Attribute("cranklength") != nullptr;  // (read with the class's attributes)
    a.finish();
    check_name(m_actuator_names, "actuator", e, name);
    if (target_attr.empty())
      a.fail(
          "a transmission target is required: attribute \"joint\", \"tendon\", \"site\", \"cranksite\" or "
          "\"body\"");
    if (kind == "muscle" && (target_attr == "site" || target_attr == "body" || refsite))  // MuJoCo's schema
      a.fail("attribute \"" + (refsite ? std::string("refsite") : target_attr) + "\" is not allowed in <muscle>");
    // (MuJoCo's schema: body only on general and adhesion, which takes nothing else)
    if (target_attr == "body" && kind != "general" && kind != "adhesion")
      a.fail("attribute \"body\" is not allowed on " + kind + " (general and adhesion take it)");
    if (kind == "adhesion" && target_attr != "body")
      a.fail("attribute " + quoted(target_attr) + " is not allowed on adhesion (its transmission is \"body\")");
    if ((own_cranklength || slidersite) && target_attr != "cranksite")
      a.fail("cranklength and slidersite can only be used in slidercrank transmission");
    if (refsite && target_attr != "site") a.fail("refsite can only be used with site transmission");
    auto find_site = [&](const std::string& site, const char* what) {
      for (size_t k = 0; k < m.site_name.size() && !site.empty(); ++k)
        if (m.site_name[k] == site) return static_cast<int>(k);
      a.fail("unknown " + std::string(what) + " " + quoted(site));
      return -1;
    };
    int jid = -1, jid2 = -1, trntype = kTrnJoint;
    if (target_attr == "tendon") {  // a tendon transmission (sim/tendon.h)
      trntype = kTrnTendon;
      for (size_t k = 0; k < m.tendon_name.size() && jid < 0 && !target.empty(); ++k)
        if (m.tendon_name[k] == target) jid = static_cast<int>(k);
      if (jid < 0) a.fail("unknown tendon " + quoted(target));
    } else if (target_attr == "site" || target_attr == "cranksite") {  // sim/transmission.h
      trntype = target_attr == "site" ? kTrnSite : kTrnSliderCrank;
      jid = find_site(target, "site");
      if (trntype == kTrnSite) {
        if (refsite) jid2 = find_site(*refsite, "reference site");
      } else {
        if (!slidersite) a.fail("missing base site for slider-crank: attribute \"slidersite\" is required");
        jid2 = find_site(*slidersite, "slider site");
        if (!(s.cranklength > 0)) a.fail("crank length must be positive (attribute \"cranklength\")");
      }
    } else if (target_attr == "body") {  // MuJoCo's mjTRN_BODY (sim/transmission.h)
      trntype = kTrnBody;
      jid = m.body_id(target);
      if (jid < 0) a.fail("unknown body " + quoted(target));
      // MuJoCo counts a contact in a gap (margin <= dist < margin + gap, no rows) among the body's;
      // rltrain's contact list does not keep those
      bool gap = false;
      for (double g : m.geom_gap) gap = gap || g != 0;
      for (double g : m.pair_gap) gap = gap || g != 0;
      if (gap) a.fail("a body transmission with a contact gap (geom or pair gap > 0) is not supported");
    } else {
      jid = m.joint_id(target);
      if (jid < 0) a.fail("unknown joint " + quoted(target));
      // jointinparent differs from joint on a ball or free joint only (the gear in the parent's frame)
      const bool multi_dof = m.jnt_type[jid] == kJointBall || m.jnt_type[jid] == kJointFree;
      if (target_attr == "jointinparent" && multi_dof) trntype = kTrnJointInParent;
    }
    const bool tendon = trntype == kTrnTendon;
    // inheritrange (MuJoCo's mjCActuator::Compile): a position-shaped servo takes its ctrlrange (or,
    // integrating, its actrange) from the joint's range, scaled about its middle.
    if (s.gaintype == kGainFixed && s.gainprm[0] == -s.biasprm[1] && s.biastype == kBiasAffine && s.inheritrange > 0) {
      double* range = nullptr;
      if (s.dyntype == kDynNone || s.dyntype == kDynFilterExact) range = s.ctrlrange;
      else if (s.dyntype == kDynIntegrator) range = s.actrange;
      else a.fail("inheritrange only available for position and intvelocity actuators");
      if ((trntype != kTrnJoint && trntype != kTrnTendon) || target_attr == "jointinparent")
        a.fail("inheritrange can only be used with joint and tendon transmission");
      if (trntype == kTrnJoint && m.jnt_type[jid] != kJointHinge && m.jnt_type[jid] != kJointSlide)
        a.fail("inheritrange can only be used with hinge and slide joints");
      const std::vector<double>& ranges = tendon ? m.tendon_range : m.jnt_range;
      const double lo = ranges.empty() ? 0 : ranges[2 * jid], hi = ranges.empty() ? 0 : ranges[2 * jid + 1];
      if (lo == hi)
        a.fail("inheritrange used but " + std::string(tendon ? "tendon " : "joint ") + quoted(target) +
               " has no range defined");
      const double mean = 0.5 * (hi + lo), radius = 0.5 * (hi - lo) * s.inheritrange;
      range[0] = mean - radius, range[1] = mean + radius;
    }
    check_muscle(a, s);
    const bool ctrllimited = resolve_limited(a, s.ctrllimited, s.ctrlrange, "ctrl");
    const bool forcelimited = resolve_limited(a, s.forcelimited, s.forcerange, "force");
    const bool actlimited = resolve_limited(a, s.actlimited, s.actrange, "act");
    // The kinds with their own formulas (sim/actuators.h): motor, and position/velocity servos
    // without dynamics; everything else is MuJoCo's general form.
    int act_kind = kActGeneral;
    if (s.dyntype == kDynNone && !s.actearly) {
      if (kind == "motor") act_kind = kActMotor;
      if (kind == "position" && s.biasprm[0] == 0) act_kind = kActPosition;
      if (kind == "velocity") act_kind = kActVelocity;
    }
    m.actuator_kind.push_back(act_kind);
    m.actuator_trnid.push_back(jid);
    m.actuator_trntype.push_back(trntype);
    m.actuator_trnid2.push_back(jid2);
    m.actuator_gear.push_back(s.gear[0]);
    m.actuator_gear6.insert(m.actuator_gear6.end(), s.gear, s.gear + 6);
    m.actuator_cranklength.push_back(trntype == kTrnSliderCrank ? s.cranklength : 0);
    m.actuator_ctrllimited.push_back(ctrllimited ? 1 : 0);
    m.actuator_ctrlrange.insert(m.actuator_ctrlrange.end(), s.ctrlrange, s.ctrlrange + 2);
    m.actuator_forcelimited.push_back(forcelimited ? 1 : 0);
    m.actuator_forcerange.insert(m.actuator_forcerange.end(), s.forcerange, s.forcerange + 2);
    m.actuator_kp.push_back(act_kind == kActPosition ? s.gainprm[0] : 0);
    m.actuator_kv.push_back(act_kind == kActVelocity ? s.gainprm[0] : act_kind == kActPosition ? -s.biasprm[2] : 0);
    m.actuator_dyntype.push_back(s.dyntype);
    m.actuator_gaintype.push_back(s.gaintype);
    m.actuator_biastype.push_back(s.biastype);
    m.actuator_dynprm.insert(m.actuator_dynprm.end(), s.dynprm, s.dynprm + kNumDynPrm);
    m.actuator_gainprm.insert(m.actuator_gainprm.end(), s.gainprm, s.gainprm + kNumGainPrm);
    m.actuator_biasprm.insert(m.actuator_biasprm.end(), s.biasprm, s.biasprm + kNumGainPrm);
    m.actuator_lengthrange.insert(m.actuator_lengthrange.end(), s.lengthrange, s.lengthrange + 2);
    m_actuator_elements.push_back(e);
    m.actuator_actlimited.push_back(actlimited ? 1 : 0);
    m.actuator_actrange.insert(m.actuator_actrange.end(), s.actrange, s.actrange + 2);
    m.actuator_actearly.push_back(s.actearly ? 1 : 0);
    m.actuator_name.push_back(name);
    m.nu++;
  }
}

// MuJoCo's muscle parameter checks (mjCActuator::Compile) on a muscle gain's or bias's prm.
void MjcfCompiler::check_muscle(Attrs& a, const ActuatorSpec& s) {
  for (int i = 0; i < 2; ++i) {
    const double* prm =
        i == 0 ? (s.gaintype == kGainMuscle ? s.gainprm : nullptr) : (s.biastype == kBiasMuscle ? s.biasprm : nullptr);
    if (!prm) continue;
    if (prm[0] >= prm[1]) a.fail("range[0]<range[1] required in muscle");
    if (prm[4] >= 1 || prm[5] <= 1) a.fail("lmin<1<lmax required in muscle");
    if (prm[3] <= 0 || prm[6] <= 0 || prm[7] <= 0 || prm[8] <= 0)
      a.fail("positive scale, vmax, fpmax, fvmax required in muscle");
  }
}

int MjcfCompiler::num_activations() const {
  int na = 0;
  for (int u = 0; u < m.nu; ++u) na += m.actuator_dyntype[u] != kDynNone ? 1 : 0;
  return na;
}

bool MjcfCompiler::resolve_limited(Attrs& a, Tri t, const double range[2], const std::string& what) {
  bool limited = t == Tri::kTrue;
  if (t == Tri::kAuto && (range[0] != 0 || range[1] != 0)) {
    if (!m_opt.autolimits) {
      a.fail("has \"" + what + "range\" but not \"" + what + "limited\": set " + what +
             "limited=\"true\" or \"false\", or <compiler autolimits=\"true\"/>");
    }
    limited = true;
  }
  if (limited && range[0] >= range[1]) a.fail(what + "range[0] must be smaller than " + what + "range[1]");
  return limited;
}

// ---- keyframes ----

void MjcfCompiler::read_keyframes(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  for (const XMLElement* e = section->FirstChildElement(); e; e = e->NextSiblingElement()) {
    if (std::strcmp(e->Name(), "key") != 0) unsupported_element(e, "key");
    no_children(e);
    Attrs a(m_file, e);
    const std::string name = a.text("name").value_or("");
    check_name(m_key_names, "key", e, name);
    double time = 0;
    a.number("time", &time);
    std::vector<double> qpos = m.qpos0, qvel(m.nv, 0.0), ctrl(m.nu, 0.0);
    read_key_vector(a, "qpos", &qpos, "nq");
    read_key_vector(a, "qvel", &qvel, "nv");
    read_key_vector(a, "ctrl", &ctrl, "nu");
    std::vector<double> none;
    // act: one number per stateful actuator (MuJoCo's na), in actuator order
    std::vector<double> act(static_cast<size_t>(num_activations()), 0.0), act_nu(static_cast<size_t>(m.nu), 0.0);
    read_key_vector(a, "act", &act, "na");
    for (int u = 0, k = 0; u < m.nu; ++u)
      if (m.actuator_dyntype[u] != kDynNone) act_nu[static_cast<size_t>(u)] = act[static_cast<size_t>(k++)];
    // mpos, mquat: MuJoCo's defaults are each mocap body's compiled pose
    std::vector<double> mpos(3 * static_cast<size_t>(m.nmocap)), mquat(4 * static_cast<size_t>(m.nmocap));
    for (int b = 1; b < m.nbody && m.nmocap > 0; ++b) {
      const int id = m.body_mocapid[static_cast<size_t>(b)];
      if (id < 0) continue;
      std::copy_n(&m.body_pos[3 * static_cast<size_t>(b)], 3, &mpos[3 * static_cast<size_t>(id)]);
      std::copy_n(&m.body_quat[4 * static_cast<size_t>(b)], 4, &mquat[4 * static_cast<size_t>(id)]);
    }
    read_key_mocap(a, "mpos", 3, &mpos);
    read_key_mocap(a, "mquat", 4, &mquat);
    a.finish();
    // MuJoCo's mjuu_normvec on each key_mquat: left as it is when its squared norm is below mjEPS
    // (1e-14) or its norm within mjEPS of 1
    for (int j = 0; j < m.nmocap; ++j) {
      double* q = &mquat[4 * static_cast<size_t>(j)];
      const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
      if (n2 < 1e-14) continue;
      const double n = std::sqrt(n2);
      if (std::abs(n - 1) > 1e-14)
        for (int k = 0; k < 4; ++k) q[k] /= n;
    }
    normalize_quaternions(&qpos);
    m.key_name.push_back(name);
    m.key_time.push_back(time);
    m.key_qpos.insert(m.key_qpos.end(), qpos.begin(), qpos.end());
    m.key_qvel.insert(m.key_qvel.end(), qvel.begin(), qvel.end());
    m.key_ctrl.insert(m.key_ctrl.end(), ctrl.begin(), ctrl.end());
    m.key_act.insert(m.key_act.end(), act_nu.begin(), act_nu.end());
    m.key_mpos.insert(m.key_mpos.end(), mpos.begin(), mpos.end());
    m.key_mquat.insert(m.key_mquat.end(), mquat.begin(), mquat.end());
  }
}

void MjcfCompiler::normalize_quaternions(std::vector<double>* qpos) const {
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[j] != kJointFree && m.jnt_type[j] != kJointBall) continue;
    double* q = qpos->data() + m.jnt_qposadr[j] + (m.jnt_type[j] == kJointFree ? 3 : 0);
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n < kMinVal) {
      q[0] = 1, q[1] = q[2] = q[3] = 0;
    } else {
      for (int k = 0; k < 4; ++k) q[k] /= n;
    }
  }
}

void MjcfCompiler::read_key_mocap(Attrs& a, const char* attr, int width, std::vector<double>* out) const {
  const auto values = a.list(attr);
  if (!values) return;
  const size_t n = values->size(), w = static_cast<size_t>(width);
  if (n > out->size() || n % w != 0) {
    a.fail("attribute " + quoted(attr) + ": expected " + std::to_string(out->size()) + " numbers (" +
           std::to_string(width) + " x nmocap, nmocap = " + std::to_string(m.nmocap) + "), or " +
           std::to_string(width) + " for each of the first mocap bodies (the others keep their body's), got " +
           std::to_string(n));
  }
  std::copy(values->begin(), values->end(), out->begin());
}

void MjcfCompiler::read_key_vector(Attrs& a, const char* attr, std::vector<double>* out, const char* size_name) {
  const auto values = a.list(attr);
  if (!values) return;
  if (values->size() != out->size()) {
    a.fail("attribute " + quoted(attr) + ": expected " + std::to_string(out->size()) + " numbers (" + size_name +
           "), got " + std::to_string(values->size()));
  }
  *out = *values;
}

}  // namespace rlt::mjcf_detail
