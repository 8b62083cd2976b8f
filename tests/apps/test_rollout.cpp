// `rltrain rollout` and the robot models of envs/assets/ (DESIGN.md D3, D8, D9): the CSV names its
// columns after the joints and has one row per control step plus the start; a malformed model or
// an unknown keyframe stops with exit code 2 and one line naming the file (and line) or the key;
// every asset survives 10^4 control steps of random actions with a finite state, bounded kinetic
// energy and no body through the floor; every asset loads in MuJoCo with the same sizes and masses.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "apps/rollout.h"
#include "sim/mjcf.h"
#include "tests/apps/cli_util.h"

#ifdef RLTRAIN_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace rlt::cli_test {
namespace {

using Args = std::vector<std::string>;

std::string asset(const std::string& name) { return std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/" + name; }

// The robot models shipped in envs/assets/ (the test below also checks no other file is there
// untested).
const Args kAssets = {"ant.xml",     "halfcheetah.xml", "hopper.xml",   "humanoid.xml",
                      "reacher.xml", "walker2d.xml",    "quadruped.xml"};

// Bad input: exit 2, nothing on stdout, one line on stderr starting "rltrain: error: " with every needle.
void expect_bad_input(const Args& args, const CliResult& r, const Args& needles) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected exactly one line on stderr";
  EXPECT_EQ(r.err.rfind("rltrain: error: ", 0), 0u);
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "stderr lacks \"" << n << "\"";
}

TEST(RolloutAssets, DirectoryHoldsExactlyTheTestedModels) {
  std::set<std::string> found;
  for (const auto& e : fs::directory_iterator(std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets"))
    if (e.path().extension() == ".xml") found.insert(e.path().filename().string());
  EXPECT_EQ(found, std::set<std::string>(kAssets.begin(), kAssets.end()));
}

TEST(RolloutCli, CsvNamesJointsAndHasOneRowPerControlStepPlusTheStart) {
  TempDir dir;
  const Args args = {"rollout", "--model", asset("ant.xml"), "--steps", "25",    "--ctrl",        "random",
                     "--seed",  "3",       "--substeps",     "5",       "--out", dir / "traj.csv"};
  const CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const auto lines = lines_of(read_file(dir / "traj.csv"));
  ASSERT_EQ(lines.size(), 1u + 26u) << "header + steps + 1 rows";
  const auto header = split(lines[0], ',');
  // time, 7 free-joint qpos, 8 hinges, 6 free-joint qvel, 8 hinge velocities, 8 ctrl, ncon.
  ASSERT_EQ(header.size(), 1u + 15u + 14u + 8u + 1u);
  const Args expect_start = {"time",    "root_x",  "root_y",  "root_z",         "root_qw",
                             "root_qx", "root_qy", "root_qz", "hip_front_left", "ankle_front_left"};
  for (size_t i = 0; i < expect_start.size(); ++i) EXPECT_EQ(header[i], expect_start[i]) << "column " << i;
  const Args expect_vel = {"root_vx", "root_vy", "root_vz", "root_wx", "root_wy", "root_wz", "hip_front_left_v"};
  for (size_t i = 0; i < expect_vel.size(); ++i) EXPECT_EQ(header[16 + i], expect_vel[i]) << "column " << 16 + i;
  EXPECT_EQ(header[29], "ankle_front_right_v");
  EXPECT_EQ(header[30].rfind("ctrl_", 0), 0u) << header[30];
  EXPECT_EQ(header.back(), "ncon");
  for (size_t l = 1; l < lines.size(); ++l) {
    const auto cells = split(lines[l], ',');
    ASSERT_EQ(cells.size(), header.size()) << "row " << l;
    for (const auto& c : cells) EXPECT_TRUE(std::isfinite(std::strtod(c.c_str(), nullptr))) << "row " << l << ": " << c;
    // time advances by substeps x timestep = 5 x 0.01 s per control step from 0.
    EXPECT_NEAR(std::strtod(cells[0].c_str(), nullptr), 0.05 * static_cast<double>(l - 1), 1e-9) << "row " << l;
  }
  // The start row is qpos0 at rest: the torso at its body pos (0, 0, 0.75), identity orientation.
  const auto first = split(lines[1], ',');
  EXPECT_EQ(std::strtod(first[3].c_str(), nullptr), 0.75);
  EXPECT_EQ(std::strtod(first[4].c_str(), nullptr), 1.0);

  // The same command without --out writes the same bytes to stdout (deterministic controls).
  Args to_stdout(args.begin(), args.end() - 2);
  const CliResult s = run_cli(to_stdout, dir.path());
  ASSERT_EQ(s.exit_code, 0) << describe(to_stdout, s);
  EXPECT_EQ(s.out, read_file(dir / "traj.csv"));
  // Another seed draws other controls, so the trajectory differs.
  Args other = to_stdout;
  other[8] = "4";
  const CliResult o = run_cli(other, dir.path());
  ASSERT_EQ(o.exit_code, 0) << describe(other, o);
  EXPECT_NE(o.out, s.out);
}

TEST(RolloutCli, KeyframeSetsTheStartStateAndItsTime) {
  TempDir dir;
  const Args args = {"rollout", "--model", asset("hopper.xml"), "--steps", "2", "--key", "stand"};
  const CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u);
  const auto header = split(lines[0], ',');
  const Args expect = {"time",   "rootx",      "rootz",    "rooty",     "thigh",   "leg",
                       "foot",   "rootx_v",    "rootz_v",  "rooty_v",   "thigh_v", "leg_v",
                       "foot_v", "ctrl_thigh", "ctrl_leg", "ctrl_foot", "ncon"};
  EXPECT_EQ(header, expect);
  const auto first = split(lines[1], ',');
  EXPECT_EQ(std::strtod(first[2].c_str(), nullptr), -0.04);  // the keyframe's rootz
  // Default substeps 1 at the model's 0.005 s.
  EXPECT_NEAR(std::strtod(split(lines[3], ',')[0].c_str(), nullptr), 0.01, 1e-12);
}

// `rltrain inspect`: the compiled model and one forward pass as JSON (tools/mujoco_peer.py compares
// them with MuJoCo's). The forward pass does not move the state, and a keyframe sets it.
TEST(InspectCli, PrintsTheCompiledModelAndOneForwardPass) {
  TempDir dir;
  Args args = {"inspect", "--model", asset("ant.xml")};
  CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const nlohmann::json q0 = nlohmann::json::parse(r.out);
  EXPECT_EQ(q0["sizes"]["nq"], 15);
  EXPECT_EQ(q0["sizes"]["nv"], 14);
  EXPECT_EQ(q0["options"]["integrator"], "euler");
  const int nbody = q0["sizes"]["nbody"];
  EXPECT_EQ(q0["model"]["body_mass"].size(), static_cast<size_t>(nbody));
  EXPECT_EQ(q0["model"]["body_name"][1], "torso");
  EXPECT_EQ(q0["forward"]["qacc"].size(), 14u);
  // qpos0 at rest, in the air: gravity alone, no contact force on the free joint's z.
  EXPECT_EQ(q0["forward"]["qpos"][2], 0.75);
  EXPECT_NEAR(q0["forward"]["qacc_smooth"][2].get<double>(), -9.81, 1e-9);

  args = {"inspect", "--model", asset("ant.xml"), "--key", "stand", "--out", dir / "ant.json"};
  r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  std::ifstream f(dir / "ant.json");
  const nlohmann::json stand = nlohmann::json::parse(f);
  EXPECT_EQ(stand["forward"]["key"], "stand");
  EXPECT_NE(stand["forward"]["qpos"], q0["forward"]["qpos"]);
  EXPECT_EQ(stand["forward"]["qvel"].size(), 14u);

  // A box pressed 1 mm into the floor: contact rows, and a constraint force that pushes it up.
  write_file(dir / "box.xml",
             "<mujoco><worldbody><geom type=\"plane\" size=\"1 1 1\"/>\n"
             "<body pos=\"0 0 0.099\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\" mass=\"2\"/></body>"
             "</worldbody></mujoco>\n");
  args = {"inspect", "--model", dir / "box.xml"};
  r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const nlohmann::json box = nlohmann::json::parse(r.out);
  EXPECT_GT(box["forward"]["nefc"].get<int>(), 0);
  EXPECT_GT(box["forward"]["qfrc_constraint"][2].get<double>(), 2 * 9.81);
  EXPECT_GT(box["forward"]["qacc"][2].get<double>(), 0.0);

  // Bad input: one line, exit 2, and the JSON already written is kept.
  args = {"inspect", "--model", asset("ant.xml"), "--key", "sit", "--out", dir / "ant.json"};
  expect_bad_input(args, run_cli(args, dir.path()), {"--key", "'sit'"});
  std::ifstream again(dir / "ant.json");
  EXPECT_EQ(nlohmann::json::parse(again), stand);
}

// `rltrain inspect --fields`: only the named arrays of "model" (a peer that compares a few fields
// need not read a robot's 100 MB of mesh arrays); the rest of the JSON as without it.
TEST(InspectCli, FieldsKeepsOnlyTheNamedModelArrays) {
  TempDir dir;
  Args args = {"inspect", "--model", asset("ant.xml"), "--fields", "body_mass,geom_pos,dof_invweight0"};
  CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const nlohmann::json some = nlohmann::json::parse(r.out);
  std::set<std::string> keys;
  for (const auto& [k, v] : some["model"].items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"body_mass", "geom_pos", "dof_invweight0"}));
  args = {"inspect", "--model", asset("ant.xml")};
  r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const nlohmann::json all = nlohmann::json::parse(r.out);
  EXPECT_GT(all["model"].size(), 50u);
  for (const auto& k : keys) EXPECT_EQ(some["model"][k], all["model"][k]) << k;
  EXPECT_EQ(some["forward"], all["forward"]);
  EXPECT_EQ(some["sizes"], all["sizes"]);
  args = {"inspect", "--model", asset("ant.xml"), "--fields", "body_mass,body_mas"};
  expect_bad_input(args, run_cli(args, dir.path()), {"--fields", "'body_mas'"});
}

// `rltrain rollout` with several starts and control modes: one compile, one CSV per run named by
// --out's {key} and {ctrl}, each byte for byte the CSV of that run alone; with --inspect also
// `rltrain inspect`'s JSON at each start ({key}), equal to inspect's own. qpos0 names the model's
// qpos0 at rest (the default start).
TEST(RolloutCli, SeveralStartsAndModesFromOneCompileEqualTheRunsAlone) {
  TempDir dir;
  const Args args = {"rollout", "--model", asset("ant.xml"), "--steps", "20", "--seed", "5", "--key", "qpos0",
                     "--key", "stand", "--ctrl", "zero,random", "--out", dir / "run_{key}_{ctrl}.csv",
                     "--inspect", dir / "at_{key}.json", "--fields", "body_mass,geom_quat"};
  const CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  for (const std::string key : {"qpos0", "stand"}) {
    for (const std::string ctrl : {"zero", "random"}) {
      Args alone = {"rollout", "--model", asset("ant.xml"), "--steps", "20", "--seed", "5", "--ctrl", ctrl};
      if (key != "qpos0") alone.insert(alone.end(), {"--key", key});
      const CliResult a = run_cli(alone, dir.path());
      ASSERT_EQ(a.exit_code, 0) << describe(alone, a);
      EXPECT_EQ(read_file(dir / ("run_" + key + "_" + ctrl + ".csv")), a.out) << key << " " << ctrl;
    }
    Args ins = {"inspect", "--model", asset("ant.xml"), "--fields", "body_mass,geom_quat"};
    if (key != "qpos0") ins.insert(ins.end(), {"--key", key});
    const CliResult i = run_cli(ins, dir.path());
    ASSERT_EQ(i.exit_code, 0) << describe(ins, i);
    std::ifstream f(dir / ("at_" + key + ".json"));
    nlohmann::json got = nlohmann::json::parse(f), want = nlohmann::json::parse(i.out);
    EXPECT_EQ(got["forward"]["key"], key);
    got["forward"].erase("key");
    want["forward"].erase("key");
    EXPECT_EQ(got, want) << key;
  }
  // The two starts differ (the keyframe is not qpos0), and so do the two modes.
  EXPECT_NE(read_file(dir / "run_qpos0_zero.csv"), read_file(dir / "run_stand_zero.csv"));
  EXPECT_NE(read_file(dir / "run_stand_zero.csv"), read_file(dir / "run_stand_random.csv"));
  // --key qpos0 alone is the default start.
  Args q0 = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--key", "qpos0"};
  Args plain = {"rollout", "--model", asset("ant.xml"), "--steps", "3"};
  EXPECT_EQ(run_cli(q0, dir.path()).out, run_cli(plain, dir.path()).out);

  // Bad input: one line, exit 2, and no file written when a start is unknown.
  TempDir bad;
  Args b = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--key", "qpos0", "--key", "stand"};
  expect_bad_input(b, run_cli(b, bad.path()), {"--out", "{key}"});
  b = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--ctrl", "zero,random", "--out", bad / "r.csv"};
  expect_bad_input(b, run_cli(b, bad.path()), {"--out", "{ctrl}"});
  b = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--key", "stand", "--key", "sit", "--out",
       bad / "r_{key}.csv", "--inspect", bad / "i_{key}.json"};
  expect_bad_input(b, run_cli(b, bad.path()), {"--key", "'sit'", "stand", "qpos0"});
  EXPECT_TRUE(fs::is_empty(bad.path())) << "nothing is written before every start is checked";
  b = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--fields", "body_mass"};
  expect_bad_input(b, run_cli(b, bad.path()), {"--fields", "--inspect"});
  b = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--inspect", bad / "i.json", "--fields", "mass"};
  expect_bad_input(b, run_cli(b, bad.path()), {"--fields", "'mass'"});
  b = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--inspect", bad / "i.json", "--timestep", "0.001"};
  expect_bad_input(b, run_cli(b, bad.path()), {"--inspect", "--timestep"});
}

TEST(RolloutCli, BadInputStopsWithExitCode2AndOneLine) {
  TempDir dir;
  // Line 4 holds an element outside the subset.
  write_file(dir / "bad.xml",
             "<mujoco>\n  <worldbody>\n    <body name=\"b\">\n      <geom type=\"sdf\" size=\"0.1 0.2\"/>\n"
             "    </body>\n  </worldbody>\n</mujoco>\n");
  Args args = {"rollout", "--model", dir / "bad.xml", "--steps", "3"};
  expect_bad_input(args, run_cli(args, dir.path()), {"bad.xml:4:", "sdf"});
  args = {"rollout", "--model", dir / "missing.xml", "--steps", "3"};
  expect_bad_input(args, run_cli(args, dir.path()), {"missing.xml"});
  args = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--key", "sit"};
  expect_bad_input(args, run_cli(args, dir.path()), {"--key", "'sit'", "ant.xml", "stand"});
  args = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--ctrl", "sine"};
  expect_bad_input(args, run_cli(args, dir.path()), {"--ctrl"});
  args = {"rollout", "--model", asset("ant.xml"), "--steps", "3", "--substeps", "0"};
  expect_bad_input(args, run_cli(args, dir.path()), {"--substeps"});
  args = {"bench", "--model", dir / "bad.xml", "--num-envs", "1"};
  expect_bad_input(args, run_cli(args, dir.path()), {"bad.xml:4:"});
  args = {"bench", "--model", asset("ant.xml"), "--num-envs", "1", "--control-dt", "0.033"};
  expect_bad_input(args, run_cli(args, dir.path()), {"--control-dt", "whole number"});
}

// --mocap FILE: row t of the script is held during control step t (its last row after it ends), the
// columns it leaves out keep the start's values (a keyframe's here), and the CSV writes the poses
// held back as mocap_<body>_* columns; the free box welded to the mocap body follows it.
TEST(RolloutCli, MocapScriptMovesTheMocapBodiesAndIsWrittenBack) {
  TempDir dir;
  write_file(dir / "m.xml",
             "<mujoco><option timestep='0.01'/><worldbody>\n<body name='t' mocap='true' pos='0 0 1'>"
             "<geom size='.05' contype='0' conaffinity='0'/></body>\n"
             "<body name='b' pos='0 0 1'><freejoint/><geom size='.05'/></body></worldbody>\n"
             "<equality><weld body1='b' body2='t'/></equality>\n"
             "<keyframe><key name='k' qpos='0 0 1 1 0 0 0' mpos='0 0.5 1'/></keyframe></mujoco>\n");
  write_file(dir / "path.csv", "mocap_t_x,mocap_t_qw\n0.1,1\n0.2,2\n");
  const Args args = {"rollout", "--model", dir / "m.xml", "--steps", "4", "--key", "k", "--mocap", dir / "path.csv"};
  const CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u + 5u);
  const auto header = split(lines[0], ',');
  const Args mocap = {"mocap_t_x", "mocap_t_y", "mocap_t_z", "mocap_t_qw", "mocap_t_qx", "mocap_t_qy", "mocap_t_qz"};
  ASSERT_EQ(header.size(), 1u + 7u + 6u + 7u + 1u);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(header[14 + i], mocap[i]);
  const auto value = [&](size_t row, size_t col) { return std::strtod(split(lines[row], ',')[col].c_str(), nullptr); };
  // x and qw as scripted (row 1 = step 0 held row 0, rows 3 and 4 the last row), y from the keyframe
  const double x[5] = {0, 0.1, 0.2, 0.2, 0.2}, qw[5] = {1, 1, 2, 2, 2};
  for (size_t row = 0; row < 5; ++row) {
    EXPECT_EQ(value(row + 1, 14), x[row]) << "row " << row;
    EXPECT_EQ(value(row + 1, 15), 0.5) << "row " << row;
    EXPECT_EQ(value(row + 1, 17), qw[row]) << "row " << row;
  }
  EXPECT_GT(value(5, 1), 0.01) << "the welded box follows the target in x";
  EXPECT_GT(value(5, 2), 0.01) << "... and towards the keyframe's mpos in y";

  // Bad scripts stop with exit 2 and one line naming the file (and line).
  write_file(dir / "unknown.csv", "mocap_t_x,mocap_u_x\n0,0\n");
  Args bad = {"rollout", "--model", dir / "m.xml", "--steps", "1", "--mocap", dir / "unknown.csv"};
  expect_bad_input(bad, run_cli(bad, dir.path()), {"--mocap", "unknown.csv:1:", "'mocap_u_x'", "mocap_t_qz"});
  write_file(dir / "nan.csv", "mocap_t_x\n0\nabc\n");
  bad = {"rollout", "--model", dir / "m.xml", "--steps", "1", "--mocap", dir / "nan.csv"};
  expect_bad_input(bad, run_cli(bad, dir.path()), {"--mocap", "nan.csv:3:", "'abc'"});
  bad = {"rollout", "--model", asset("ant.xml"), "--steps", "1", "--mocap", dir / "path.csv"};
  expect_bad_input(bad, run_cli(bad, dir.path()), {"--mocap", "no mocap bodies"});
  bad = {"rollout", "--model", dir / "m.xml", "--steps", "1", "--mocap", dir / "missing.csv"};
  expect_bad_input(bad, run_cli(bad, dir.path()), {"--mocap", "missing.csv"});
}

TEST(RolloutCli, ModelBenchWritesJson) {
  TempDir dir;
  const Args args = {"bench",    "--model", asset("reacher.xml"), "--num-envs", "1,8",
                     "--device", "cpu",     "--threads",          "1",          "--steps",
                     "4",        "--json",  dir / "bench.json"};
  const CliResult r = run_cli(args, dir.path());
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const std::string json = read_file(dir / "bench.json");
  EXPECT_NE(json.find("\"physics_steps_per_second\""), std::string::npos);
  EXPECT_NE(json.find("\"control_steps_per_second_per_core\""), std::string::npos);
  EXPECT_NE(json.find("\"substeps\": 5"), std::string::npos) << json;  // 0.05 s / 0.01 s
}

// 10^4 control steps of 0.05 s (about 8 minutes of simulated time) with random controls: the state
// stays finite, the kinetic energy stays below that of the whole robot moving at 10 m/s with every
// joint's rotor (armature) spinning at 10 rad/s (1/2 M (10 m/s)^2 + 1/2 sum(armature) (10 rad/s)^2:
// random +-1 controls against joint limits, damping and the floor dissipate far more than they could
// ever build up; a blow-up or a fall through the floor exceeds it at once; the Ant, armature 1 on
// eight joints, peaks at 273 J of its 446 J), with rotors at 30 rad/s allowed in the first second
// (the Ant's straight legs unfold from qpos0 with 452 J),
// and no robot geom ends up more than 0.2 m below the floor (z = 0).
// Issue "Articulated rigid-body physics": the Ant standing with zero control holds its torso
// height. From the "stand" keyframe with its (zero) controls, 10 s of simulation: the torso stays
// within 2.5 cm of its start height (it sags ~1.7 mm/s as MuJoCo's soft contacts and limits give,
// as in MuJoCo), does not slide, and rests on its four feet.
TEST(RolloutAssets, AntStandingWithZeroControlHoldsItsTorsoHeight) {
  const Model model = load_mjcf(asset("ant.xml"));
  RolloutOptions opts;
  opts.key = "stand";
  opts.ctrl = "zero";
  opts.substeps = static_cast<int>(std::lround(0.05 / model.timestep));
  ModelRollout rollout(model, opts);
  const double z0 = rollout.data().qpos[2], x0 = rollout.data().qpos[0], y0 = rollout.data().qpos[1];
  for (int t = 0; t < 200; ++t) {  // 10 s of 0.05 s control steps
    rollout.step();
    ASSERT_TRUE(rollout.finite());
    // MuJoCo's soft contacts and limits (the ant's law, sim/constraints.h) give a little under a
    // steady load: the feet creep apart and the torso sinks ~1.7 mm/s, as it does in MuJoCo
    // (tools/compare_mujoco's rest probe: 0.6169 m after 3 s in both).
    ASSERT_NEAR(rollout.data().qpos[2], z0, 0.025) << "torso height after " << (t + 1) * 0.05 << " s";
  }
  EXPECT_NEAR(rollout.data().qpos[0], x0, 0.01) << "the standing ant slid";
  EXPECT_NEAR(rollout.data().qpos[1], y0, 0.01) << "the standing ant slid";
  EXPECT_EQ(rollout.num_contacts(), 4) << "expected to rest on four feet";
  EXPECT_LT(rollout.kinetic_energy(), 1e-3) << "expected at rest";
}

// ModelRollout::step(ctrl) (what tools/compare_mujoco drives our side with) steps with the given
// controls: fed the random controls that --ctrl random draws, it reproduces that rollout bit for
// bit, and other controls give another trajectory.
TEST(RolloutAssets, SteppingWithGivenControlsMatchesTheRandomMode) {
  const Model model = load_mjcf(asset("ant.xml"));
  RolloutOptions random_opts;
  random_opts.key = "stand";
  random_opts.ctrl = "random";
  random_opts.seed = 5;
  random_opts.substeps = 5;
  RolloutOptions given_opts = random_opts;
  given_opts.ctrl = "zero";
  ModelRollout drawn(model, random_opts), given(model, given_opts), other(model, given_opts);
  const std::vector<double> range = ctrl_sample_range(model);
  std::vector<double> ctrl(static_cast<size_t>(model.nu)), flipped(ctrl.size());
  for (int t = 0; t < 40; ++t) {
    random_ctrl(range.data(), model.nu, random_opts.seed, 0u, static_cast<u32>(t), ctrl.data());
    for (size_t u = 0; u < ctrl.size(); ++u) flipped[u] = -ctrl[u];
    drawn.step();
    given.step(ctrl.data());
    other.step(flipped.data());
    ASSERT_EQ(given.ctrl(), ctrl);
  }
  for (int i = 0; i < model.nq; ++i) EXPECT_EQ(given.data().qpos[i], drawn.data().qpos[i]) << "qpos " << i;
  for (int i = 0; i < model.nv; ++i) EXPECT_EQ(given.data().qvel[i], drawn.data().qvel[i]) << "qvel " << i;
  EXPECT_GT(std::fabs(other.data().qpos[7] - given.data().qpos[7]), 1e-3)
      << "negated controls left the hip where it was";
}

TEST(RolloutAssets, TenThousandRandomControlStepsStayFiniteAndBounded) {
  for (const std::string& name : kAssets) {
    SCOPED_TRACE(name);
    const Model model = load_mjcf(asset(name));
    RolloutOptions opts;
    opts.ctrl = "random";
    opts.seed = 11;
    opts.substeps = static_cast<int>(std::lround(0.05 / model.timestep));
    ModelRollout rollout(model, opts);
    double total_mass = 0, total_armature = 0;
    for (double mass : model.body_mass) total_mass += mass;
    for (double a : model.dof_armature) total_armature += a;
    // The first second (20 control steps) lets a model unfold from qpos0 (the Ant's straight legs
    // start outside their ankle limits); from then on the rotors count at 10 rad/s.
    const double bound_start = 0.5 * total_mass * 10.0 * 10.0 + 0.5 * total_armature * 30.0 * 30.0;
    const double bound = 0.5 * total_mass * 10.0 * 10.0 + 0.5 * total_armature * 10.0 * 10.0;
    double max_ke = 0, min_z = 1e9;
    std::int64_t contact_steps = 0;
    for (int t = 0; t < 10000; ++t) {
      rollout.step();
      ASSERT_TRUE(rollout.finite()) << "non-finite state after control step " << t + 1;
      const double ke = rollout.kinetic_energy();  // also runs kinematics: geom_xpos is current
      if (t >= 20) max_ke = std::max(max_ke, ke);
      ASSERT_LT(ke, t < 20 ? bound_start : bound) << "kinetic energy " << ke << " J after control step " << t + 1;
      for (int g = 0; g < model.ngeom; ++g)
        if (model.geom_bodyid[static_cast<size_t>(g)] > 0) min_z = std::min(min_z, rollout.data().geom_xpos[3 * g + 2]);
      contact_steps += rollout.num_contacts() > 0 ? 1 : 0;
    }
    EXPECT_GT(min_z, -0.2) << "a robot geom centre went through the floor";
    std::printf(
        "  %-16s max kinetic energy after 1 s %10.3f J (bound %8.1f J), lowest geom centre %7.3f m, steps in contact "
        "%lld\n",
        name.c_str(), max_ke, bound, min_z, static_cast<long long>(contact_steps));
  }
}

#ifdef RLTRAIN_HAVE_MUJOCO
TEST(RolloutAssets, EveryAssetLoadsInMujocoWithTheSameSizesAndMasses) {
  for (const std::string& name : kAssets) {
    SCOPED_TRACE(name);
    const Model ours = load_mjcf(asset(name));
    char err[1000] = "";
    mjModel* m = mj_loadXML(asset(name).c_str(), nullptr, err, sizeof err);
    ASSERT_NE(m, nullptr) << "MuJoCo: " << err;
    EXPECT_EQ(m->nq, ours.nq);
    EXPECT_EQ(m->nv, ours.nv);
    EXPECT_EQ(m->nu, ours.nu);
    EXPECT_EQ(m->nbody, ours.nbody);
    EXPECT_EQ(m->njnt, ours.njnt);
    EXPECT_EQ(m->ngeom, ours.ngeom);
    EXPECT_EQ(m->nkey, ours.nkey);
    EXPECT_DOUBLE_EQ(m->opt.timestep, ours.timestep);
    for (int b = 0; b < m->nbody; ++b)
      EXPECT_NEAR(m->body_mass[b], ours.body_mass[static_cast<size_t>(b)], 1e-9 * (1 + m->body_mass[b]))
          << "body " << b;
    for (int j = 0; j < m->njnt; ++j) {
      EXPECT_EQ(m->jnt_limited[j], ours.jnt_limited[static_cast<size_t>(j)]) << "joint " << j;
      EXPECT_EQ(m->jnt_type[j], ours.jnt_type[static_cast<size_t>(j)]) << "joint " << j;
    }
    // The floor and the robot touch (the robot's geoms can collide with the floor's).
    bool robot_hits_floor = false;
    for (int g = 0; g < m->ngeom; ++g)
      if (m->geom_bodyid[g] == 0 && m->geom_type[g] == mjGEOM_PLANE)
        for (int h = 0; h < m->ngeom; ++h)
          if (m->geom_bodyid[h] > 0 &&
              ((m->geom_contype[g] & m->geom_conaffinity[h]) || (m->geom_contype[h] & m->geom_conaffinity[g])))
            robot_hits_floor = true;
    EXPECT_EQ(robot_hits_floor, name != "reacher.xml") << "only the planar reacher stays off the floor";
    mj_deleteModel(m);
  }
}
#else
TEST(RolloutAssets, EveryAssetLoadsInMujocoWithTheSameSizesAndMasses) {
  GTEST_SKIP() << "libmujoco-dev was not found at configure time (RLTRAIN_HAVE_MUJOCO off)";
}
#endif

}  // namespace
}  // namespace rlt::cli_test
