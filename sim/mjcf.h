// The MJCF subset compiler (DESIGN.md D3, D9): reads a MuJoCo XML model and compiles it into a
// Model exactly as MuJoCo 2.2.2 would for the fields Model has (checked field by field against
// libmujoco in tests/sim/test_mjcf.cpp).
//
// Supported: compiler (angle, eulerseq, autolimits (default true, as MuJoCo 3), inertiafromgeom,
// inertiagrouprange, coordinate="local", boundmass, boundinertia, settotalmass, balanceinertia),
// include (sim/mjcf_include.cpp), frame (pos/orientation/childclass), option (timestep, gravity),
// default classes (nested; geom/site pos, orientation and fromto;
// class and childclass); worldbody/body trees (pos + one of quat/euler/axisangle/xyaxes/zaxis);
// joint (hinge, slide, ball, free: pos, axis, range, limited, ref, damping, armature, stiffness,
// springref (hinge/slide only; free and ball springs rest at qpos0, as in MuJoCo)) and freejoint;
// geom (plane, sphere, capsule, box: size, fromto for capsule and box, density or mass, friction,
// contype, conaffinity, condim, margin, group, rgba); inertial (diaginertia or fullinertia); site;
// actuator/motor|position|velocity on a hinge or slide joint, tendon, site or slider-crank (gear, ctrlrange/ctrllimited,
// forcerange/forcelimited, kp, kv); keyframe/key (time, qpos, qvel, ctrl). Visual-only elements
// (asset, visual, statistic, size, camera, light) and attributes (material, joint/site/actuator
// group, site type/size/rgba, model name, compiler strippath) are ignored; meshdir/texturedir/assetdir
// become Model::meshdir/texturedir. A few physics attributes are
// accepted at MuJoCo's default value only (joint frictionloss/margin 0, geom gap/priority 0, option
// integrator Euler, compiler discardvisual/fusestatic false). Anything else (tendon, equality,
// sensor, contact, mesh/cylinder/ellipsoid geoms, replicate, an unknown attribute, ...) stops with an MjcfError naming
// the file, line and element.
//
// Conventions the dynamics relies on (all MuJoCo's): hinge/slide displacement is qpos - qpos0
// (qpos0 = the joint's ref), so body_pos/body_quat place the body at qpos = qpos0; free joints
// take qpos0 from the body's pos/quat; ball joints start at 1 0 0 0. Keyframe quaternions are
// normalized. Bodies, joints, geoms and sites are numbered depth first, a body's own elements
// before its children's. A body without joints may be massless; a body with joints needs mass
// and inertia (itself or a jointless child), as MuJoCo 2.2.2 checks.
//
// Where this differs from MuJoCo 2.2.2 (each is stricter, or concerns a massless body):
//  * a body with no mass source (no inertial, no selected geom) gets body_ipos 0 and
//    body_iquat identity; MuJoCo copies the body's pos/quat there (meaningless at mass 0).
//  * errors here, silently accepted (or ignored) by MuJoCo: a limited free joint; fromto with an
//    orientation attribute; an actuator on a ball or free joint; a non-positive timestep;
//    negative damping, armature or stiffness; negative mass or density in a static body.
//  * position actuators accept kv (damping, as later MuJoCo versions do); 2.2.2 rejects it.
//  * body_iquat from several geoms or from fullinertia: the same principal frame (moments in
//    decreasing order, as MuJoCo) from Eigen's exact solver; MuJoCo's Jacobi iteration stops up to
//    ~1e-6 rad short, and either may point an axis the other way.
#pragma once

#include <stdexcept>
#include <string>

#include "sim/model.h"

namespace rlt {

// Bad input: one line, "<file>:<line>: <element>[ name]: <what>". Line 0 when the problem is the
// file itself (unreadable) rather than a place in it.
class MjcfError : public std::runtime_error {
 public:
  MjcfError(const std::string& file, int line, const std::string& element, const std::string& name,
            const std::string& what);
  const std::string& file() const { return m_file; }
  int line() const { return m_line; }
  const std::string& element() const { return m_element; }

 private:
  std::string m_file;
  int m_line;
  std::string m_element;
};

// Reads and compiles the MJCF file at `path`. Throws MjcfError.
Model load_mjcf(const std::string& path);

// Compiles MJCF text; `source_name` is the file name used in error messages. Throws MjcfError.
Model parse_mjcf(const std::string& xml_text, const std::string& source_name);

}  // namespace rlt
