// Height fields (sim/mjcf_hfield.cpp, sim/hfield.h): the compiled elevations against MuJoCo 3's
// (inline text and PNG), every refusal of a bad <hfield> or file, fields in moving bodies (mass,
// contacts in the field's current frame, on both bodies), the contact capacity of hfield pairs, the
// geoms whose contacts come from MuJoCo's nativeccd (sim/mjccd.h: box, cylinder, ellipsoid, a mesh's
// hull) resting on a field, a box's exact depth on flat cells, the ccd options, and the float
// build's contacts against double's. The trajectories of spheres and capsules are MuJoCo 3 peer tests (mujoco_peer_hfield_*).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sim/contact.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"
#include "tests/temp_dir.h"

namespace rlt {
namespace {

using test::Sim;

std::string data_path(const std::string& name) { return std::string(RLT_TEST_DATA_DIR) + "/mjcf/" + name; }

std::string error_of(const std::string& xml, const std::string& name = "/tmp/rlt_hfield_test.xml") {
  try {
    parse_mjcf(xml, name);
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

TEST(HField, InlineElevationAsMujoco) {
  const Model m = load_mjcf(data_path("hfield_inline.xml"));
  ASSERT_EQ(m.nhfield, 1);
  EXPECT_EQ(m.hfield_nrow[0], 5);
  EXPECT_EQ(m.hfield_ncol[0], 6);
  EXPECT_EQ(m.nhfielddata, 30);
  // MuJoCo 3.17: row 0 is the text's last line, normalized by the maximum (4).
  const double row0[6] = {0, 0, 0.25, 0.25, 0.5, 0.75}, row4[6] = {0, 0.25, 0.5, 0.5, 0.25, 0};
  for (int c = 0; c < 6; ++c) {
    EXPECT_EQ(m.hfield_data[c], row0[c]);
    EXPECT_EQ(m.hfield_data[24 + c], row4[c]);
  }
  EXPECT_EQ(m.geom_type[0], kGeomHField);
  EXPECT_EQ(m.geom_dataid[0], 0);
  EXPECT_EQ(m.geom_dataid[1], -1);
  EXPECT_DOUBLE_EQ(m.geom_size[0], 1);
  EXPECT_DOUBLE_EQ(m.geom_size[1], 0.8);
  EXPECT_DOUBLE_EQ(m.geom_size[2], 0.125);  // MuJoCo: elevation_z / 4 + base_z / 2
}

TEST(HField, PngAsMujoco) {
  const Model m = load_mjcf(data_path("hfield_png.xml"));
  ASSERT_EQ(m.nhfield, 1);
  EXPECT_EQ(m.hfield_nrow[0], 7);
  EXPECT_EQ(m.hfield_ncol[0], 9);
  // MuJoCo 3.17's hfield_data[0:9] (float) for this RGB file: the red channel, image rows flipped.
  const double mj[9] = {0.50256413, 0.3025641, 0.25641027, 0.3948718, 0.61025643,
                        0.74358976, 0.6923077, 0.4974359,  0.3025641};
  for (int c = 0; c < 9; ++c) EXPECT_NEAR(m.hfield_data[c], mj[c], 1e-7) << c;
  double lo = 1, hi = 0;
  for (double v : m.hfield_data) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 1);
}

std::string hfield_scene(const std::string& hfield, const std::string& body = "") {
  return "<mujoco><asset>" + hfield + "</asset><worldbody><geom type=\"hfield\" hfield=\"t\"/>" + body +
         "<body pos=\"0 0 1\"><freejoint/><geom size=\"0.1\"/></body></worldbody></mujoco>";
}

TEST(HField, UnreadableFilesAreRefused) {
  const std::string dir = std::string(RLT_TEST_DATA_DIR) + "/mjcf/";
  // missing
  std::string e = error_of(hfield_scene("<hfield name=\"t\" file=\"no_such.png\" size=\"1 1 1 1\"/>"), dir + "x.xml");
  EXPECT_NE(e.find("x.xml:1: hfield t: cannot read " + dir + "no_such.png: no such file"), std::string::npos) << e;
  // not a PNG, truncated PNG, empty: written to a temporary directory
  const test::TempDir tmp_dir("rlt_hfield");  // its own, removed afterwards
  const std::string tmp = tmp_dir.path() + "/";
  {
    std::ofstream(tmp + "text.png") << "hello";
    std::ifstream in(dir + "hfield_terrain.png", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 60u);
    std::ofstream(tmp + "cut.png", std::ios::binary) << bytes.substr(0, 60);
    std::ofstream(tmp + "empty.png", std::ios::binary).flush();
    std::ofstream(tmp + "short.bin", std::ios::binary) << "abc";
  }
  e = error_of(hfield_scene("<hfield name=\"t\" file=\"text.png\" size=\"1 1 1 1\"/>"), tmp + "x.xml");
  EXPECT_NE(e.find("hfield t: cannot read " + tmp + "text.png: not a PNG file"), std::string::npos) << e;
  e = error_of(hfield_scene("<hfield name=\"t\" file=\"cut.png\" size=\"1 1 1 1\"/>"), tmp + "x.xml");
  EXPECT_NE(e.find("hfield t: cannot read " + tmp + "cut.png: PNG decoding failed"), std::string::npos) << e;
  e = error_of(hfield_scene("<hfield name=\"t\" file=\"empty.png\" size=\"1 1 1 1\"/>"), tmp + "x.xml");
  EXPECT_NE(e.find("hfield t: cannot read " + tmp + "empty.png: empty file"), std::string::npos) << e;
  e = error_of(hfield_scene("<hfield name=\"t\" file=\"short.bin\" size=\"1 1 1 1\"/>"), tmp + "x.xml");
  EXPECT_NE(e.find("hfield t: cannot read " + tmp + "short.bin: truncated header"), std::string::npos) << e;
  // the name defaults to the file's stem
  e = error_of(hfield_scene("<hfield file=\"dir/cut.png\" size=\"1 1 1 1\"/>"), tmp + "x.xml");
  EXPECT_NE(e.find("hfield cut: cannot read " + tmp + "dir/cut.png"), std::string::npos) << e;
}

TEST(HField, BadHFieldsAndGeomsAreRefused) {
  auto has = [](const std::string& e, const std::string& what) { EXPECT_NE(e.find(what), std::string::npos) << e; };
  has(error_of(hfield_scene("<hfield name=\"t\" nrow=\"2\" ncol=\"2\" elevation=\"1 2 3\" size=\"1 1 1 1\"/>")),
      "elevation data length must match nrow*ncol");
  has(error_of(hfield_scene("<hfield name=\"t\" nrow=\"2\" ncol=\"2\" size=\"1 1 0 1\"/>")),
      "size parameter is not positive");
  has(error_of(hfield_scene("<hfield name=\"t\" size=\"1 1 1 1\"/>")), "hfield not specified");
  has(error_of(hfield_scene("<hfield name=\"u\" nrow=\"2\" ncol=\"2\" size=\"1 1 1 1\"/>")),
      "hfield \"t\" is not defined");
  has(error_of("<mujoco><asset><hfield name=\"t\" nrow=\"2\" ncol=\"2\" size=\"1 1 1 1\"/></asset><worldbody>"
               "<geom type=\"box\" size=\"1 1 1\" hfield=\"t\"/></worldbody></mujoco>"),
      "for geoms of type hfield");
  has(error_of("<mujoco><asset><hfield name=\"t\" nrow=\"2\" ncol=\"2\" size=\"1 1 1 1\"/>"
               "<hfield name=\"t\" nrow=\"2\" ncol=\"2\" size=\"1 1 1 1\"/></asset></mujoco>"),
      "duplicate hfield name");
  // nrow / ncol without elevation: a flat field of zeros (dm_control's quadruped fills it at run time)
  const Model m = parse_mjcf(hfield_scene("<hfield name=\"t\" nrow=\"3\" ncol=\"4\" size=\"1 1 1 1\"/>"), "flat");
  EXPECT_EQ(m.nhfielddata, 12);
  for (double v : m.hfield_data) EXPECT_EQ(v, 0);
}

// A field in a moving body (MuJoCo allows it): its geom weighs as a box of the geom's size (MuJoCo's
// mjCGeom::GetVolume / SetInertia: radius_x, radius_y, elevation_z / 4 + base_z / 2).
TEST(HField, MovingFieldWeighsAsMujocosBox) {
  const Model m = parse_mjcf(
      "<mujoco><asset><hfield name=\"t\" nrow=\"2\" ncol=\"2\" size=\"1 0.5 0.2 0.4\"/></asset><worldbody>"
      "<body><freejoint/><geom type=\"hfield\" hfield=\"t\" density=\"300\"/></body></worldbody></mujoco>",
      "moving");
  const double sz = 0.2 / 4 + 0.4 / 2, mass = 300 * 8 * 1 * 0.5 * sz;  // 300 kg/m^3, 2 x 1 x 0.5 m
  EXPECT_DOUBLE_EQ(m.geom_size[2], sz);
  EXPECT_DOUBLE_EQ(m.body_mass[1], mass);
  EXPECT_NEAR(m.body_inertia[3], mass * (0.25 + sz * sz) / 3, 1e-12);
  EXPECT_NEAR(m.body_inertia[4], mass * (1 + sz * sz) / 3, 1e-12);
  EXPECT_NEAR(m.body_inertia[5], mass * (1 + 0.25) / 3, 1e-12);
}

// The field's contacts follow its body: the field of hfield_inline.xml turned and shifted as a
// world geom, and the same field carried by a free body posed there, give the same contacts
// (point, normal, depth, to rounding) with a sphere, a capsule, a box and an ellipsoid lying in its
// bumps; and a sphere thrown at a free field in zero gravity pushes it: the contact acts on both
// bodies, equal and opposite (linear momentum kept to rounding).
TEST(HField, ContactsFollowTheMovingField) {
  const std::string field =
      "<hfield name=\"b\" nrow=\"5\" ncol=\"6\" size=\"1 0.8 0.3 0.1\" elevation=\"0 1 2 2 1 0 1 2 3 3 2 1 "
      "0 1 4 2 1 0 2 2 1 0 0 1 0 0 1 1 2 3\"/>";
  const std::string others =
      "<body pos=\"-0.5 0.3 0.12\"><freejoint/><geom size=\"0.08\"/></body>"
      "<body pos=\"0.4 -0.2 0.05\" euler=\"0 80 20\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.2\"/></body>"
      "<body pos=\"-0.3 -0.4 0.1\" euler=\"10 20 30\"><freejoint/><geom type=\"box\" size=\"0.1 0.08 0.06\"/></body>"
      "<body pos=\"0.5 0.4 0.2\" euler=\"30 10 0\"><freejoint/><geom type=\"ellipsoid\" size=\"0.1 0.07 0.05\"/>"
      "</body>";
  const std::string pose = "pos=\"0.1 0.05 -0.05\" euler=\"8 -5 10\"";
  auto contacts = [&](bool moving) {
    const std::string ground = moving ? "<body " + pose + "><freejoint/><geom type=\"hfield\" hfield=\"b\"/></body>"
                                      : "<geom type=\"hfield\" hfield=\"b\" " + pose + "/>";
    Sim<double> s(parse_mjcf("<mujoco><asset>" + field + "</asset><worldbody>" + ground + others + "</worldbody></mujoco>",
                             moving ? "moving" : "static"));
    kinematics(s.m(), s.d);
    detect_contacts(s.m(), s.d);
    return s.get(s.d.contact, kContactStride * static_cast<int>(s.d.ncon[0]));
  };
  const std::vector<double> fixed = contacts(false), moving = contacts(true);
  ASSERT_EQ(moving.size(), fixed.size());
  const size_t n = fixed.size() / kContactStride;
  EXPECT_GE(n, 8u);  // every geom touches, several prisms each
  std::vector<int> per_geom(6, 0);
  for (size_t c = 0; c < n; ++c) {
    const double* a = fixed.data() + kContactStride * c;
    const double* b = moving.data() + kContactStride * c;
    EXPECT_EQ(a[kConGeom1], 0);
    EXPECT_EQ(b[kConGeom1], 0);
    EXPECT_EQ(a[kConGeom2], b[kConGeom2]);
    ++per_geom[static_cast<size_t>(b[kConGeom2])];
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(a[kConPos + k], b[kConPos + k], 1e-12) << "contact " << c;
      EXPECT_NEAR(a[kConNormal + k], b[kConNormal + k], 1e-12) << "contact " << c;
    }
    EXPECT_NEAR(a[kConDepth], b[kConDepth], 1e-12) << "contact " << c;
  }
  for (int g = 1; g <= 4; ++g) EXPECT_GT(per_geom[static_cast<size_t>(g)], 0) << "geom " << g;

  // A 0.3 kg sphere at 2 m/s across a free 16 kg field (both centres of mass at their origins).
  Sim<double> s(parse_mjcf("<mujoco><option gravity=\"0 0 0\"/><asset>" + field +
                               "</asset><worldbody><body euler=\"0 0 10\"><freejoint/><geom type=\"hfield\" "
                               "hfield=\"b\" density=\"20\"/></body><body pos=\"-1.2 0.1 0.3\"><freejoint/>"
                               "<geom size=\"0.1\" mass=\"0.3\"/></body></worldbody></mujoco>",
                           "push"));
  const double m0 = 20 * 8 * 1 * 0.8 * (0.3 / 4 + 0.1 / 2), m1 = 0.3;
  s.d.qvel[6] = 2.0, s.d.qvel[8] = -0.6;
  int touching = 0;
  for (int k = 0; k < 400; ++k) {
    physics_step(s.m(), s.d, static_cast<const double*>(nullptr), 1, nullptr);
    touching += s.d.ncon[0] > 0;
  }
  EXPECT_GT(touching, 10);
  EXPECT_GT(std::hypot(s.d.qvel[0], s.d.qvel[1], s.d.qvel[2]), 0.01) << "the field was pushed";
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(m0 * s.d.qvel[k] + m1 * s.d.qvel[6 + k], k == 0 ? m1 * 2.0 : k == 2 ? m1 * -0.6 : 0.0, 1e-9)
        << "momentum " << k;
}

// 50 contacts (MuJoCo's mjMAXCONPAIR) per height-field pair with a primitive; none with a plane.
TEST(HField, ContactCapacity) {
  EXPECT_EQ(pair_contact_capacity(kGeomHField, kGeomSphere), kHFieldMaxContacts);
  EXPECT_EQ(pair_contact_capacity(kGeomBox, kGeomHField), kHFieldMaxContacts);
  EXPECT_EQ(pair_contact_capacity(kGeomPlane, kGeomHField), 0);
  EXPECT_EQ(pair_contact_capacity(kGeomHField, kGeomHField), 0);
  EXPECT_EQ(pair_contact_capacity(kGeomHField, kGeomMesh), kHFieldMaxContacts);
  // hfield_convex.xml: the field and a plane, six bodies (sphere, sphere, capsule, box, cylinder,
  // ellipsoid); plane-hfield none, hfield-body 50 each, plane-body 1 1 2 8 4 1, body pairs by type
  const Model model = load_mjcf(data_path("hfield_convex.xml"));
  HostModel<double> host(model);
  const int body_pairs = 1 + 1 + 1 + 1 + 1 /* sphere 1 */ + 1 + 1 + 1 + 1 /* sphere 2 */ +
                         2 /* capsule-box: mjc_CapsuleBox */ + 2 + 1 /* capsule: cylinder (multicontact), ellipsoid */ +
                         4 + 1 /* box: cylinder (multicontact), ellipsoid */ + 1 /* cylinder-ellipsoid */;
  EXPECT_EQ(host.view().ncon_max, 6 * kHFieldMaxContacts + (1 + 1 + 2 + 8 + 4 + 1) + body_pairs);
}

// A sphere resting on a flat field at known depth: one contact per prism under it, all at the
// exact depth and normal (MuJoCo's point core), and a free box, cylinder and ellipsoid dropped on
// the bumpy field come to rest on it (no tunnelling, small overlap, at rest).
TEST(HField, SphereOnFlatCellsIsExact) {
  // A 3 x 3 field raised only at its (-x, +y) corner (the text's first row is +y): the cell
  // x in [0, 1], y in [-1, 0] is flat at z = 0. The sphere's center is over that cell's diagonal, so
  // both of its prisms touch it: two contacts, 1 cm deep, straight up.
  const std::string xml =
      "<mujoco><option gravity=\"0 0 0\"/><asset><hfield name=\"t\" nrow=\"3\" ncol=\"3\" size=\"1 1 0.5 0.1\""
      " elevation=\"1 0 0 0 0 0 0 0 0\"/></asset><worldbody><geom type=\"hfield\" hfield=\"t\"/>"
      "<body pos=\"0.5 -0.5 0.09\"><freejoint/><geom size=\"0.1\"/></body></worldbody></mujoco>";
  Sim<double> s(parse_mjcf(xml, "flat"));
  kinematics(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  ASSERT_EQ(static_cast<int>(s.d.ncon[0]), 2);
  for (int c = 0; c < 2; ++c) {
    const double* con = s.d.contact + kContactStride * c;
    EXPECT_NEAR(con[kConDepth], 0.01, 1e-15);
    EXPECT_NEAR(con[kConNormal + 2], 1, 1e-15);
    EXPECT_NEAR(con[kConPos + 0], 0.5, 1e-15);
    EXPECT_NEAR(con[kConPos + 1], -0.5, 1e-15);
    EXPECT_NEAR(con[kConPos + 2], -0.005, 1e-15);
  }
}

// The box, cylinder and ellipsoid of hfield_convex.xml land on the bumpy field (contacts from the
// collider; no tunnelling: impacts as deep as MuJoCo 3's), then roll off it onto the plane below,
// as in MuJoCo 3.
TEST(HField, ConvexGeomsLandOnTheField) {
  Sim<double> s(load_mjcf(data_path("hfield_convex.xml")));
  const int nbody = s.m().nbody;
  std::vector<int> touched(static_cast<size_t>(nbody), 0);
  double deepest = 0;
  for (int k = 0; k < 2500; ++k) {
    physics_step(s.m(), s.d, static_cast<const double*>(nullptr), 1, nullptr);
    for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
      const double* con = s.d.contact + kContactStride * c;
      if (static_cast<int>(con[kConGeom1]) != 0 || con[kConDepth] <= 0) continue;  // geom 0: the field
      touched[static_cast<size_t>(s.m().geom_bodyid[static_cast<int>(con[kConGeom2])])] = 1;
      deepest = std::max(deepest, con[kConDepth]);
    }
  }
  for (int i = 0; i < s.nv(); ++i) ASSERT_TRUE(std::isfinite(s.d.qvel[i]));
  for (int b = 1; b < nbody; ++b) EXPECT_TRUE(touched[static_cast<size_t>(b)]) << "body " << b;
  // impacts from up to 0.9 m: MuJoCo 3.17's deepest is 0.0311 m (the ellipsoid), ours the same
  EXPECT_LT(deepest, 0.035);
  std::printf("hfield_convex: deepest field overlap %.3g m\n", deepest);
}

// A mesh meets the field as its convex hull (as MuJoCo 3's mjc_ConvexHField; the pair was dropped
// before): a mesh with a box's 8 corners, tilted into the bumps of hfield_inline's field, gives the
// contacts of the same box as a box geom (the same prisms, the same support points).
TEST(HField, MeshTouchesTheFieldAsItsHull) {
  auto contacts = [](const std::string& geom) {
    const std::string xml =
        "<mujoco><asset><hfield name=\"b\" nrow=\"5\" ncol=\"6\" size=\"1 0.8 0.3 0.1\" elevation=\"0 1 2 2 1 0 "
        "1 2 3 3 2 1 0 1 4 2 1 0 2 2 1 0 0 1 0 0 1 1 2 3\"/><mesh name=\"m\" vertex=\"-.1 -.06 -.04 .1 -.06 -.04 "
        "-.1 .06 -.04 .1 .06 -.04 -.1 -.06 .04 .1 -.06 .04 -.1 .06 .04 .1 .06 .04\"/></asset><worldbody>"
        "<geom type=\"hfield\" hfield=\"b\" pos=\"0.1 0 0\" euler=\"0 0 10\"/><body pos=\"-0.25 0.1 0.09\" "
        "euler=\"17 -23 31\"><freejoint/>" +
        geom + "</body></worldbody></mujoco>";
    Sim<double> s(parse_mjcf(xml, "mesh_on_field"));
    kinematics(s.m(), s.d);
    detect_contacts(s.m(), s.d);
    std::vector<std::vector<double>> out;
    for (int c = 0; c < static_cast<int>(s.d.ncon[0]); ++c) {
      const double* con = s.d.contact + kContactStride * c;
      if (con[kConDepth] > 0) out.emplace_back(con, con + 7);
    }
    return out;
  };
  const auto box = contacts("<geom type=\"box\" size=\".1 .06 .04\"/>");
  const auto mesh = contacts("<geom type=\"mesh\" mesh=\"m\"/>");
  ASSERT_GE(box.size(), 2u);  // several prisms under the box
  ASSERT_EQ(mesh.size(), box.size());
  // the mesh's corners are floats (MuJoCo's mesh_vert): 0.1 is off by 1.5e-9 (measured: 1.3e-9 at most)
  for (size_t c = 0; c < box.size(); ++c)
    for (int k = 0; k < 7; ++k) EXPECT_NEAR(mesh[c][static_cast<size_t>(k)], box[c][static_cast<size_t>(k)], 1e-8) << c;
}

// A box resting flat on flat cells at a known depth (MuJoCo's nativeccd: the prism's top against
// the box's bottom face): one contact per prism under it, each at the exact depth, straight up,
// its point within both faces.
TEST(HField, BoxOnFlatCellsHasExactDepth) {
  const std::string xml =
      "<mujoco><option gravity=\"0 0 0\"/><asset><hfield name=\"t\" nrow=\"3\" ncol=\"3\" size=\"1 1 0.5 0.1\""
      " elevation=\"1 0 0 0 0 0 0 0 0\"/></asset><worldbody><geom type=\"hfield\" hfield=\"t\"/>"
      "<body pos=\"0.5 -0.5 0.03\"><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.05\"/></body></worldbody></mujoco>";
  Sim<double> s(parse_mjcf(xml, "flat_box"));
  kinematics(s.m(), s.d);
  detect_contacts(s.m(), s.d);
  ASSERT_EQ(static_cast<int>(s.d.ncon[0]), 2);  // the cell's two prisms
  for (int c = 0; c < 2; ++c) {
    const double* con = s.d.contact + kContactStride * c;
    EXPECT_NEAR(con[kConDepth], 0.02, 1e-14) << c;
    EXPECT_NEAR(con[kConNormal + 2], 1, 1e-14) << c;
    EXPECT_NEAR(con[kConPos + 2], -0.01, 1e-14) << c;  // midway between the faces
    EXPECT_LE(std::abs(con[kConPos + 0] - 0.5), 0.2 + 1e-12) << c;
    EXPECT_LE(std::abs(con[kConPos + 1] + 0.5), 0.15 + 1e-12) << c;
  }
}

// MJCF option ccd_iterations and ccd_tolerance (MuJoCo's nativeccd budget) are read, and refused
// out of range (the polytope holds mjccd::kMaxIterations).
TEST(HField, CcdOptionsAreReadAndChecked) {
  const Model m = parse_mjcf("<mujoco><option ccd_iterations=\"20\" ccd_tolerance=\"1e-7\"/><worldbody/></mujoco>", "ccd");
  EXPECT_EQ(m.ccd_iterations, 20);
  EXPECT_EQ(m.ccd_tolerance, 1e-7);
  const Model d = parse_mjcf("<mujoco><worldbody/></mujoco>", "ccd_default");
  EXPECT_EQ(d.ccd_iterations, 35);  // MuJoCo's defaults
  EXPECT_EQ(d.ccd_tolerance, 1e-6);
  for (const char* bad : {"ccd_iterations=\"0\"", "ccd_iterations=\"65\"", "ccd_tolerance=\"-1\""}) {
    const std::string e = error_of(std::string("<mujoco><option ") + bad + "/><worldbody/></mujoco>");
    EXPECT_NE(e.find("ccd_"), std::string::npos) << bad << ": " << e;
  }
}

// The float build runs the same collider: the contacts of hfield_nativeccd.xml (box, ellipsoid,
// cylinder, a sphere deeper than its radius, a mesh) in float follow double's to float's precision
// (measured 4.6e-5 at most), in the same order.
TEST(HField, FloatContactsFollowDouble) {
  const Model model = load_mjcf(data_path("hfield_nativeccd.xml"));
  Sim<double> sd(model);
  Sim<float> sf(model);
  kinematics(sd.m(), sd.d);
  detect_contacts(sd.m(), sd.d);
  kinematics(sf.m(), sf.d);
  detect_contacts(sf.m(), sf.d);
  const int n = static_cast<int>(sd.d.ncon[0]);
  ASSERT_GE(n, 10);
  ASSERT_EQ(static_cast<int>(sf.d.ncon[0]), n);
  double worst = 0;
  for (int c = 0; c < n; ++c)
    for (int k = 0; k < 7; ++k) {  // pos, normal, depth
      const double a = sd.d.contact[kContactStride * c + k], b = sf.d.contact[kContactStride * c + k];
      worst = std::max(worst, std::abs(a - b));
    }
  EXPECT_LT(worst, 1e-4);
  std::printf("hfield_nativeccd: float contacts within %.2g of double's\n", worst);
}

}  // namespace
}  // namespace rlt
