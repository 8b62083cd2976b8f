// MJCF structure features (issue 16): <include>, <compiler> mass options and autolimits, default
// class pos/orientation/fromto, <frame>, <replicate>. Expected values are MuJoCo 3.17's compiled model
// (python: mujoco.MjModel.from_xml_path on the same files, tests/data/mjcf/include_*/ and
// tests/data/mjcf/structure/); the trajectories are compared with MuJoCo 3 by tools/mujoco_peer.py
// (ctest mujoco_peer_include_basic_main, mujoco_peer_structure_frames_defaults,
// mujoco_peer_structure_mass_bounds, mujoco_peer_structure_replicate).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/mjcf.h"

namespace rlt {
namespace {

std::string data(const std::string& name) { return std::string(RLT_MJCF_DATA_DIR) + "/" + name; }

std::string error_of_file(const std::string& path) {
  try {
    load_mjcf(path);
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

void expect_near(const std::vector<double>& ours, const std::vector<double>& mujoco, double tol, const char* what) {
  ASSERT_EQ(ours.size(), mujoco.size()) << what;
  for (size_t i = 0; i < ours.size(); ++i) EXPECT_NEAR(ours[i], mujoco[i], tol) << what << "[" << i << "]";
}

TEST(MjcfInclude, NestedIncludesCompileAsMuJoCo3) {
  const Model m = load_mjcf(data("include_basic/main.xml"));
  EXPECT_EQ(m.nbody, 3);
  EXPECT_EQ(m.ngeom, 3);
  EXPECT_EQ(m.nq, 8);
  EXPECT_EQ(m.nsite, 1);
  EXPECT_DOUBLE_EQ(m.timestep, 0.005);  // from common/settings.xml
  expect_near(m.body_pos, {0, 0, 0, 0, 0, 0.6, 0.2, 0, 0}, 1e-15, "body_pos");
  expect_near(m.body_mass, {0.0, 1.8325957145940466, 1.439896632895322}, 1e-12, "body_mass");
  expect_near(m.body_inertia,
              {0, 0, 0, 0.03462296903643752, 0.03462296903643752, 0.00222529479629277, 0.01719694728605663,
               0.01719694728605663, 0.00173442094416937},
              1e-14, "body_inertia");
  expect_near(m.geom_quat, {1, 0, 0, 0, 0.7071067811865476, 0, -0.7071067811865475, 0, 1, 0, 0, 0}, 1e-15, "geom_quat");
  expect_near(m.site_pos, {0, 0, -0.3}, 1e-15, "site_pos");  // the class's pos (included default)
  // autolimits (MuJoCo 3's default true): range without limited is a limit, in degrees here
  ASSERT_EQ(m.jnt_limited.size(), 2u);
  EXPECT_EQ(m.jnt_limited[1], 1);
  expect_near(m.jnt_range, {0, 0, -0.5235987755982988, 1.0471975511965976}, 1e-15, "jnt_range");
  EXPECT_EQ(m.actuator_ctrllimited[0], 1);
}

TEST(MjcfInclude, MissingFileNamesTheChain) {
  const std::string msg = error_of_file(data("include_errors/missing.xml"));
  EXPECT_NE(
      msg.find("include_errors/nested_missing.xml:3: include: cannot open the included file \"no_such_file.xml\""),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(included from " + data("include_errors/missing.xml") + ":2)"), std::string::npos) << msg;
}

TEST(MjcfInclude, LoopIsRefused) {
  const std::string msg = error_of_file(data("include_errors/loop.xml"));
  EXPECT_NE(msg.find("include_errors/loop_a.xml:2: include: file \"loop.xml\" is already included"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(included from " + data("include_errors/loop.xml") + ":2)"), std::string::npos) << msg;
}

TEST(MjcfInclude, ErrorsInsideAnIncludedFileNameItsLine) {
  const std::string msg = error_of_file(data("include_errors/bad_inside.xml"));
  EXPECT_NE(msg.find("include_errors/bad_body.xml:3: geom: unsupported attribute \"bogus\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("(included from " + data("include_errors/bad_inside.xml") + ":3)"), std::string::npos) << msg;
}

TEST(MjcfFrame, FramesAndDefaultPlacementsAsMuJoCo3) {
  const Model m = load_mjcf(data("structure/frames_defaults.xml"));
  ASSERT_EQ(m.nbody, 4);
  ASSERT_EQ(m.ngeom, 6);
  ASSERT_EQ(m.njnt, 4);
  const double tol = 1e-12;
  expect_near(m.body_pos,
              {0, 0, 0, 0, 0, 1, 0.1, 0, 0, -1.665334536937735e-17, -0.03535533905932737, 0.10606601717798213}, tol,
              "body_pos");
  expect_near(m.body_quat,
              {1, 0, 0, 0, 1, 0, 0, 0, 0.9689124217106447, 0, 0, 0.24740395925452294, 0.6532814824381883,
               -0.2705980500730985, 0.27059805007309845, 0.6532814824381882},
              tol, "body_quat");
  expect_near(m.body_mass, {0.0, 1.7157284678805058, 1.2581757076337972, 1.2581757076337972}, tol, "body_mass");
  expect_near(m.body_ipos,
              {0, 0, 0, 0, 0, 0, 0.0014055565512478153, 0.0006104075888131302, -0.12483125029240416, 0.0,
               0.0009156113832196952, -0.12118495256991793},
              tol, "body_ipos");
  expect_near(
      m.body_inertia,
      {0, 0, 0, 0.004392264877774095, 0.004392264877774095, 0.004392264877774095, 0.010038954078222998,
       0.00994122039693159, 0.0010484422327406047, 0.010552770089728073, 0.010527406007282185, 0.0009888554282255061},
      1e-12, "body_inertia");
  expect_near(
      m.geom_pos,
      {0, 0, 0, 0, 0, 0, 0, 0, -0.125, 0.04605304970014426, 0.02, -0.11947091711543253, 0, 0, -0.125, 0, 0.03, 0}, tol,
      "geom_pos");
  expect_near(m.geom_quat,
              {1,
               0,
               0,
               0,
               1,
               0,
               0,
               0,
               1,
               0,
               0,
               0,
               0.9426829395579938,
               0.14751884686615638,
               0.29926813794808815,
               0.005064276321774221,
               1,
               0,
               0,
               0,
               0.9833474432563558,
               0.1435721750273919,
               0.10602051106179562,
               0.034270798550482096},
              tol, "geom_quat");
  expect_near(m.geom_size, {3, 3, 0.1, 0.08, 0, 0, 0.04, 0.125, 0, 0.03, 0.02, 0.01, 0.04, 0.125, 0, 0.03, 0.02, 0.01},
              tol, "geom_size");
  expect_near(m.jnt_pos, {0, 0, 0, 0, 0, 0, 0, 0.02, -0.1, 0, 0, 0}, tol, "jnt_pos");
  expect_near(m.jnt_axis, {0, 0, 1, 1, 0, 0, 0.38941834230865047, 0, 0.9210609940028851, 1, 0, 0}, tol, "jnt_axis");
  EXPECT_EQ(m.jnt_limited, (std::vector<int>{0, 1, 0, 1}));
  expect_near(m.site_pos, {0, 0, -0.25}, tol, "site_pos");
  expect_near(m.site_quat, {0.9887710779360422, 0, 0, 0.14943813247359922}, tol, "site_quat");
}

TEST(MjcfCompiler, MassBoundsAndTotalMassAsMuJoCo3) {
  const Model m = load_mjcf(data("structure/mass_bounds.xml"));
  expect_near(m.body_mass, {0.0, 13.846078118111198, 0.0028845996079398324, 0.15103728228086294}, 1e-12, "body_mass");
  expect_near(m.body_inertia,
              {0, 0, 0, 0.5999967184514853, 0.46153593727037323, 0.23076796863518667, 0.00028845996079398324,
               0.00028845996079398324, 0.00028845996079398324, 0.00028845996079398324, 0.00028845996079398324,
               0.00028845996079398324},
              1e-12, "body_inertia");
}

TEST(MjcfCompiler, AssetDirectoriesResolveAgainstTheMainFile) {
  const Model m = parse_mjcf("<mujoco><compiler meshdir='assets' assetdir='common/'/><worldbody/></mujoco>",
                             "robots/go1/scene.xml");
  EXPECT_EQ(m.meshdir, "robots/go1/assets/");
  EXPECT_EQ(m.texturedir, "robots/go1/common/");  // assetdir stands in for texturedir
  const Model abs = parse_mjcf("<mujoco><compiler meshdir='/data/meshes'/><worldbody/></mujoco>", "scene.xml");
  EXPECT_EQ(abs.meshdir, "/data/meshes/");
  EXPECT_EQ(abs.texturedir, "");  // the working directory, where scene.xml is
}

TEST(MjcfDefaults, PosAndFromtoAcrossClassAndElementRefusedAsMuJoCo3) {
  // MuJoCo 3.17: "both pos and fromto defined in geom" when one comes from the class
  const char* cls_fromto =
      "<mujoco><default><default class='c'><geom type='capsule' size='.05' fromto='0 0 0 0 .3 0'/></default>"
      "</default><worldbody><body><joint/>\n<geom class='c' pos='1 1 1'/></body></worldbody></mujoco>";
  const char* cls_pos =
      "<mujoco><default><default class='c'><geom type='capsule' size='.05' pos='.1 .2 .3'/></default>"
      "</default><worldbody><body><joint/>\n<geom class='c' fromto='0 0 0 0 .3 0'/></body></worldbody></mujoco>";
  for (const char* xml : {cls_fromto, cls_pos}) {
    try {
      parse_mjcf(xml, "t.xml");
      ADD_FAILURE() << "compiled " << xml;
    } catch (const MjcfError& e) {
      EXPECT_NE(std::string(e.what()).find("t.xml:2: geom: both \"pos\" and \"fromto\" given"), std::string::npos)
          << e.what();
    }
  }
}

TEST(MjcfDefaults, ClassOrientationGivesWayToFromto) {
  // a class orientation gives way to the element's fromto, as MuJoCo 3
  const Model m = parse_mjcf(
      "<mujoco><default><default class='c'><geom type='capsule' size='.05' euler='10 20 30'/></default></default>"
      "<worldbody><body><joint/><geom class='c' fromto='0 0 0 0 .3 0'/><site type='capsule' size='.02' "
      "fromto='0 0 0 .1 .2 .3'/></body></worldbody></mujoco>",
      "t.xml");
  expect_near(m.geom_pos, {0, 0.15, 0}, 1e-15, "geom_pos");
  // (the two equal values {h, h, 0, 0} are miscompiled by GCC 12.2 at -O3 -march=native: all four
  // become h; hence h and its neighbour)
  expect_near(m.geom_quat, {0.7071067811865476, 0.7071067811865475, 0, 0}, 1e-15, "geom_quat");
  expect_near(m.site_pos, {0.05, 0.1, 0.15}, 1e-15, "site_pos");
  expect_near(m.site_quat, {0.31481445, 0.84894846, -0.42447423, 0}, 1e-8, "site_quat");
}

TEST(MjcfCompiler, AutolimitsFalseStillAsksForLimited) {
  try {
    parse_mjcf(
        "<mujoco><compiler autolimits='false'/><worldbody><body>\n<joint name='j' range='-1 1'/><geom size='1'/>"
        "</body></worldbody></mujoco>",
        "t.xml");
    ADD_FAILURE() << "compiled";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("t.xml:2: joint j: has \"range\" but not \"limited\""), std::string::npos)
        << e.what();
  }
}

// ---- <replicate> (sim/mjcf_replicate.cpp) ----

// tests/data/mjcf/structure/replicate.xml; expected: MuJoCo 3.17's compiled model of the same file.
TEST(MjcfReplicate, NamesOrderAndPlacementsAsMuJoCo3) {
  const Model m = load_mjcf(data("structure/replicate.xml"));
  using Names = std::vector<std::string>;
  EXPECT_EQ(m.body_name, (Names{"world", "arm-0", "hand-0", "arm-1", "hand-1", "arm-2", "hand-2", "ball00", "ball10",
                                "ball01", "ball11"}));
  EXPECT_EQ(m.body_parentid, (std::vector<int>{0, 0, 1, 0, 3, 0, 5, 0, 0, 0, 0}));
  EXPECT_EQ(m.geom_name, (Names{"before", "post-0", "post-1", "post-2", "after", "link-0", "", "", "palm-0", "link-1",
                                "", "", "palm-1", "link-2", "", "", "palm-2", "ball00", "ball10", "ball01", "ball11"}));
  EXPECT_EQ(m.geom_bodyid, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(m.site_name, (Names{"mark#00", "mark#01", "mark#02", "mark#03", "mark#04", "mark#05", "mark#06", "mark#07",
                                "mark#08", "mark#09", "tip_0-0", "tip_1-0", "tip_0-1", "tip_1-1", "tip_0-2",
                                "tip_1-2"}));
  EXPECT_EQ(m.jnt_name, (Names{"hinge-0", "wrist-0", "hinge-1", "wrist-1", "hinge-2", "wrist-2", "free00", "free10",
                               "free01", "free11"}));
  ASSERT_EQ(m.actuator_trnid.size(), 1u);
  EXPECT_EQ(m.actuator_trnid[0], 2);  // joint="hinge-1"
  const double tol = 1e-12;
  expect_near(m.body_pos,
              {0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.25, 0.0, 0.0, 0.5933893490474225, 0.011014609657371395,
               0.9810602621904071, 0.25, 0.0, 0.0, 1.0599431903781453, 0.40183567930530373, 0.8559573073315513, 0.25,
               0.0, 0.0, 0.1, -1.0, 0.5, 0.30000000000000004, -1.0, 0.5, 0.07071067811865475, -1.2292893218813452,
               0.5000000000000001, 0.21213203435596426, -1.0878679656440358, 0.5000000000000001},
              tol, "body_pos");
  expect_near(m.body_quat,
              {1.0, 0.0, 0.0, 0.0, 0.984807753012208, 0.0, 0.17364817766693033, 0.0, 1.0, 0.0, 0.0, 0.0,
               0.9311407333243972, -0.02495077739843504, 0.2610086235181688, 0.2534341963912302, 1.0, 0.0, 0.0, 0.0,
               0.8107009354796019, -0.09488023940563169, 0.33864888078016914, 0.4680584033314295, 1.0, 0.0, 0.0, 0.0,
               0.7071067811865476, 0.7071067811865475, 0.0, 0.0, 0.7071067811865476, 0.7071067811865475, 0.0, 0.0,
               0.6532814824381883, 0.6532814824381882, 0.2705980500730985, 0.27059805007309845, 0.6532814824381883,
               0.6532814824381882, 0.2705980500730985, 0.27059805007309845},
              tol, "body_quat");
  // the world's geoms: the replicated posts (offset turned by the accumulated euler) between "before"
  // and "after"; then the inner replicate's boxes, turned 45 degrees about x in its second copy
  expect_near(std::vector<double>(m.geom_pos.begin(), m.geom_pos.begin() + 24),
              {0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.2545028370749901, 0.26108914008404704, 0.02574949535322939,
               0.49419552938732714, 0.3601129933471394, -0.0205064977168117, 0.0, 0.0, -0.2, 0.125, 0.0, 0.0, 0.25,
               0.02, 0.0, 0.35, 0.014142135623730949, 0.014142135623730952},
              tol, "geom_pos");
  expect_near(std::vector<double>(m.geom_quat.begin(), m.geom_quat.begin() + 32),
              {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.9623182851526231, 0.019436667336159463, 0.09535242455050641,
               0.2539166185111136, 0.8571903276509838, -0.01216130659412469, 0.19272730326230897, 0.4774233251326969,
               1.0, 0.0, 0.0, 0.0, 0.7071067811865476, 0.0, -0.7071067811865475, 0.0, 1.0, 0.0, 0.0, 0.0,
               0.9238795325112867, 0.3826834323650898, 0.0, 0.0},
              tol, "geom_quat");
  expect_near(std::vector<double>(m.site_pos.begin() + 27, m.site_pos.begin() + 36),
              {1.0, 1.45, 0.0, 0.25, 0.0, 0.0, 0.35, 0.0, 0.0}, tol, "site_pos");
  expect_near(std::vector<double>(m.site_quat.begin() + 40, m.site_quat.begin() + 48),
              {1.0, 0.0, 0.0, 0.0, 0.9238795325112867, 0.3826834323650898, 0.0, 0.0}, tol, "site_quat");
  EXPECT_NEAR(m.geom_size[3 * 17], 0.03, 0);  // childclass="small" on the replicate
}

std::string replicate_error(const std::string& body) {
  try {
    parse_mjcf("<mujoco>\n<worldbody>\n" + body + "\n</worldbody>\n</mujoco>", "t.xml");
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

TEST(MjcfReplicate, MalformedUsesAreRefusedWithTheLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"<replicate>\n<geom size='.1'/></replicate>", "t.xml:3: replicate: attribute \"count\" is required"},
      {"<replicate count='1.5'><geom size='.1'/></replicate>", "t.xml:3: replicate: attribute \"count\""},
      {"<replicate count='-1'><geom size='.1'/></replicate>", "t.xml:3: replicate: attribute \"count\" must be non-negative"},
      {"<replicate count='2' offset='1 0'><geom size='.1'/></replicate>", "t.xml:3: replicate: attribute \"offset\": expected 3"},
      {"<replicate count='2' pos='1 0 0'><geom size='.1'/></replicate>", "t.xml:3: replicate: unsupported attribute \"pos\""},
      {"<replicate count='2' childclass='nope'><geom size='.1'/></replicate>", "unknown default class \"nope\""},
      {"<body><replicate count='2'>\n<joint/></replicate><geom size='.1'/></body>",
       "t.xml:4: joint: a joint cannot be a direct child of <replicate>"},
      {"<body><replicate count='2'><frame>\n<joint/></frame></replicate><geom size='.1'/></body>",
       "t.xml:4: joint: a joint cannot be a direct child of <replicate>"},  // (MuJoCo: the same)
      {"<body><replicate count='2'>\n<inertial mass='1' diaginertia='1 1 1'/></replicate><geom size='.1'/></body>",
       "t.xml:4: inertial: an <inertial> as a direct child of <replicate> is not supported"},
      {"<replicate count='2'>\n<composite/></replicate>", "t.xml:4: composite: unsupported element in <replicate>"},
      // a copy's name meets a name written elsewhere: the error names the copy and its source line
      {"<geom name='g-1' size='.1'/>\n<replicate count='2' sep='-'>\n<geom name='g' size='.1'/></replicate>",
       "t.xml:5: geom g-1: duplicate geom name \"g-1\" (first at line 3)"},
      // nested counts multiply: refused before the elements are made
      {"<replicate count='1000'>\n<replicate count='1000'><geom size='.1'/></replicate></replicate>",
       "t.xml:3: replicate: the replicates would make more than 100000 elements in all (count 1000 x 2001)"},
      // an error inside a copy names the line the user wrote
      {"<replicate count='2'>\n<body>\n<geom type='sphere' size='-1'/></body></replicate>", "t.xml:5: geom"},
  };
  for (const auto& [body, want] : cases) {
    const std::string msg = replicate_error(body);
    EXPECT_NE(msg.find(want), std::string::npos) << body << "\n  got: " << msg << "\n  want: " << want;
  }
  // outside the body tree a replicate is an unknown element
  try {
    parse_mjcf("<mujoco>\n<actuator>\n<replicate count='2'/></actuator></mujoco>", "t.xml");
    ADD_FAILURE() << "compiled";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("t.xml:3: replicate: unsupported element in <actuator>"), std::string::npos)
        << e.what();
  }
  // count 0 makes no copies, as MuJoCo
  const Model m = parse_mjcf("<mujoco><worldbody><replicate count='0'><body><joint/><geom size='.1'/></body>"
                             "</replicate></worldbody></mujoco>",
                             "t.xml");
  EXPECT_EQ(m.nbody, 1);
}

}  // namespace
}  // namespace rlt
