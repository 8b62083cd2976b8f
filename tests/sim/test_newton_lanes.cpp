// sim/newton_lanes.h and sim/slot_rows.h: constraint rows built in slots, and MuJoCo's Newton solve
// on them. In SIMD lanes each lane
// computes the bits that the one-env (float) instance computes for its env on the same slots; both
// land where sim/constraints.h's newton_solve lands, up to float rounding; models whose rows do not
// fit slots are refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sim/actuators.h"
#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/newton_lanes.h"
#include "sim/physics_lanes.h"
#include "sim/physics_step.h"
#include "sim/slot_rows.h"
#include "sim/slot_step.h"

#if defined(RLT_LANES)
namespace rlt {
namespace {

std::string asset(const std::string& rel) { return std::string(RLT_SOURCE_DIR) + "/envs/assets/" + rel; }

// kLanes envs of a model: qpos0 with noise, `substeps` substeps under random controls (the robots
// land and stand or fall on the floor), then one forward pass each: newton_solve's answer
// (qacc_solver, qfrc_constraint) and the rows in each block's workspace.
struct Envs {
  Model model;
  HostModel<float> host;
  std::vector<std::vector<float>> blocks;
  int nr[kLanes] = {};

  Envs(Model mdl, int substeps, std::uint32_t seed) : model(std::move(mdl)), host(model) {
    const ModelView<float>& m = host.view();
    const int n = data_size(m);
    std::vector<float> range(2 * static_cast<size_t>(m.nu) + 2), ctrl(static_cast<size_t>(m.nu) + 1, 0.0f);
    for (int u = 0; u < m.nu; ++u) {
      const bool limited = model.actuator_ctrllimited[static_cast<size_t>(u)] != 0;
      range[2 * static_cast<size_t>(u)] =
          limited ? static_cast<float>(model.actuator_ctrlrange[2 * static_cast<size_t>(u)]) : -1.0f;
      range[2 * static_cast<size_t>(u) + 1] =
          limited ? static_cast<float>(model.actuator_ctrlrange[2 * static_cast<size_t>(u) + 1]) : 1.0f;
    }
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
    const float hd = velocity_implicit(m.integrator) ? 0.0f
                     : m.implicit_damping            ? static_cast<float>(m.timestep)
                                                     : 0.0f;
    for (int l = 0; l < kLanes; ++l) {
      blocks.emplace_back(static_cast<size_t>(n), 0.0f);
      const DataView<float> d = data_view(m, blocks.back().data());
      reset_data(m, d);
      for (int i = 0; i < m.nq; ++i) d.qpos[i] += noise(rng);
      for (int s = 0; s < substeps; ++s) {
        random_ctrl(range.data(), m.nu, seed, static_cast<u32>(l), static_cast<u32>(s / 5), ctrl.data());
        physics_step(m, d, ctrl.data(), 1, nullptr);
      }
      physics_forward(m, d, ctrl.data(), hd, true);
      nr[l] = static_cast<int>(d.nefc[0]);
    }
  }
  DataView<float> env(int l) { return data_view(host.view(), blocks[static_cast<size_t>(l)].data()); }
};

// The eight envs' rows in slots and their blocks in lanes: the lanes' solve, and each lane's float
// solve on its own block with the same slots.
struct Solved {
  SlotRowsHost slots;
  std::vector<LaneFloat> lanes_block;
  std::vector<std::vector<float>> alone;  // per lane: its block after the float solve
  std::vector<std::vector<float>> alone_force;
  SlotNewtonStats stats{};
};

Solved solve_both(Envs& e) {
  const ModelView<float>& m = e.host.view();
  const ModelView<LaneFloat> lm = lane_model_view(m);
  const int n = data_size(m);
  Solved out;
  std::vector<DataView<float>> views;
  std::vector<const float*> rows;
  for (int l = 0; l < kLanes; ++l) views.push_back(e.env(l)), rows.push_back(e.blocks[static_cast<size_t>(l)].data());
  std::string why;
  EXPECT_TRUE(slot_rows_from_envs(m, views.data(), e.nr, &out.slots, &why)) << why;
  out.lanes_block.assign(static_cast<size_t>(n), LaneFloat(0.0f));
  gather_lanes(out.lanes_block.data(), rows.data(), n);
  const SlotRows<LaneFloat> lrows = out.slots.view();
  std::vector<LaneFloat> scratch(static_cast<size_t>(slot_newton_scratch(m.nv, lrows.n)));
  slot_newton_solve(lm, data_view(lm, out.lanes_block.data()), lrows, scratch.data(), &out.stats);
  for (int l = 0; l < kLanes; ++l) {
    std::vector<float> block = e.blocks[static_cast<size_t>(l)];
    const SlotRows<float> frows = out.slots.lane_view(l);
    std::vector<float> fscratch(static_cast<size_t>(slot_newton_scratch(m.nv, frows.n)));
    slot_newton_solve(m, data_view(m, block.data()), frows, fscratch.data());
    out.alone.push_back(block);
    out.alone_force.push_back(out.slots.lforce);
  }
  return out;
}

// Two free spheres stacked on a plane: the contact between them is a row on two chains.
const char* const kStackedSpheres = R"(<mujoco><option iterations="2" ls_iterations="5"/><worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .1"><freejoint/><geom type="sphere" size=".1"/></body>
    <body pos="0 0 .29"><freejoint/><geom type="sphere" size=".1"/></body>
    </worldbody></mujoco>)";

constexpr double kAgainstNewtonSolve = 1e-4;
// A control step's contact forces, cfrc_ext and sensors against physics_step's, relative to the
// largest of each (measured worst in the test's output).
constexpr double kStepAgainstPhysicsStep = 1e-3;

struct Scene {
  const char* file;  // under envs/assets, or (xml) the model's text
  int substeps;
  bool xml = false;
};
const Scene kScenes[] = {{"go1/scene_mjx_feetonly_flat_terrain.xml", 150},
                         {"go1/scene_mjx_feetonly_rough_terrain.xml", 150},
                         {"g1/scene_mjx_feetonly_flat_terrain.xml", 120},
                         {kStackedSpheres, 30, true}};
// Each scene compiled once for the whole binary (the G1's meshes take seconds under the sanitizers).
Model load(const Scene& sc) {
  static std::map<std::string, Model> compiled;
  auto it = compiled.find(sc.file);
  if (it == compiled.end())
    it = compiled.emplace(sc.file, sc.xml ? parse_mjcf(sc.file, "stacked_spheres.xml") : load_mjcf(asset(sc.file)))
             .first;
  return it->second;
}
const char* name(const Scene& sc) { return sc.xml ? "stacked spheres" : sc.file; }
int two_chain_slots(const SlotRowsHost& s) {
  int k = 0;
  for (int b : s.deep_b) k += b >= 0;
  return k;
}

TEST(SlotNewton, EachLaneIsItsEnvSolvedAlone) {
  for (const Scene& sc : kScenes) {
    int cross = 0;
    for (std::uint32_t seed : {1u, 2u}) {
      Envs e(load(sc), sc.substeps, seed);
      const ModelView<float>& m = e.host.view();
      Solved s = solve_both(e);
      cross += two_chain_slots(s.slots);
      const DataView<LaneFloat> ld = data_view(lane_model_view(m), s.lanes_block.data());
      int rows_in_some_lane = 0;
      for (int l = 0; l < kLanes; ++l) rows_in_some_lane += e.nr[l];
      ASSERT_GT(rows_in_some_lane, 0) << name(sc) << ": no constraint rows to solve";
      for (int l = 0; l < kLanes; ++l) {
        const DataView<float> d = data_view(m, s.alone[static_cast<size_t>(l)].data());
        for (int i = 0; i < m.nv; ++i) {
          const float a = ld.qacc[i].lane(l), b = d.qacc[i], fa = ld.qfrc_constraint[i].lane(l),
                      fb = d.qfrc_constraint[i];
          ASSERT_EQ(0, std::memcmp(&a, &b, sizeof a))
              << name(sc) << " seed " << seed << " lane " << l << " qacc[" << i << "]";
          ASSERT_EQ(0, std::memcmp(&fa, &fb, sizeof fa))
              << name(sc) << " lane " << l << " qfrc_constraint[" << i << "]";
        }
        for (size_t k = 0; k < s.slots.force.size(); ++k) {
          const float fa = s.slots.force[k].lane(l), fb = s.alone_force[static_cast<size_t>(l)][k];
          ASSERT_EQ(0, std::memcmp(&fa, &fb, sizeof fa)) << name(sc) << " lane " << l << " slot " << k;
        }
      }
    }
    // (the G1's hands meet its thighs under random controls: Woodbury's path runs)
    if (sc.xml || std::string(sc.file).rfind("g1/", 0) == 0) {
      EXPECT_GT(cross, 0) << name(sc) << ": no slot on two chains";
    }
  }
}

// Against newton_solve (the forward pass's answer, qacc_solver) on the same rows: the same iterations
// budget and line search, H factored afresh instead of updated, sums in another order, so float
// rounding apart, and where a budget of one or three iterations stops the search there. The bound,
// on the largest component: |a - a_ref|_inf <= kAgainstNewtonSolve (1 + |a_ref|_inf) (measured worst
// in the tests' output).
TEST(SlotNewton, LandsWhereNewtonSolveLands) {
  for (const Scene& sc : kScenes) {
    Envs e(load(sc), sc.substeps, 3u);
    const ModelView<float>& m = e.host.view();
    ASSERT_TRUE(m.newton_warmstart) << name(sc) << ": the scenes solve under MuJoCo's budget";
    Solved s = solve_both(e);
    const DataView<LaneFloat> ld = data_view(lane_model_view(m), s.lanes_block.data());
    double worst = 0;
    for (int l = 0; l < kLanes; ++l) {
      const DataView<float> ref = e.env(l);
      EXPECT_GE(s.stats.iterations[l], e.nr[l] > 0 ? 1 : 0) << name(sc) << " lane " << l;
      double err = 0, scale = 1;
      for (int i = 0; i < m.nv; ++i) {
        err = std::max(err, std::fabs(static_cast<double>(ld.qacc[i].lane(l)) - ref.qacc_solver[i]));
        scale = std::max(scale, 1.0 + std::fabs(static_cast<double>(ref.qacc_solver[i])));
      }
      EXPECT_LE(err / scale, kAgainstNewtonSolve) << name(sc) << " lane " << l;
      worst = std::max(worst, err / scale);
    }
    std::printf("  %s: worst |a - a_newton_solve|_inf / (1 + |a|_inf) %.2e over %d lanes, %d slots on two chains\n",
                name(sc), worst, kLanes, two_chain_slots(s.slots));
  }
}

// Rows that do not fit slots are refused with the reason: a tendon limit over three limbs' joints (J on
// three branches), an elliptic cone's contact.
TEST(SlotNewton, RowsThatDoNotFitAreRefusedWithTheReason) {
  const char* three = R"(<mujoco><option iterations="2" ls_iterations="5"/><worldbody>
    <body><joint name="a" type="hinge"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".05"/></body>
    <body><joint name="b" type="hinge"/><geom type="capsule" fromto="0 0 0 0 .3 0" size=".05"/></body>
    <body><joint name="c" type="hinge"/><geom type="capsule" fromto="0 0 0 0 -.3 0" size=".05"/></body>
    </worldbody><tendon><fixed limited="true" range="0.5 1"><joint joint="a" coef="1"/><joint joint="b" coef="1"/>
    <joint joint="c" coef="1"/></fixed></tendon></mujoco>)";
  std::string elliptic = kStackedSpheres;
  elliptic.replace(elliptic.find("<option "), 8, "<option cone=\"elliptic\" ");
  const std::pair<std::string, std::string> cases[] = {{three, "three branches"}, {elliptic, "elliptic"}};
  for (const auto& c : cases) {
    Envs e(parse_mjcf(c.first, "refused.xml"), 5, 1u);
    const ModelView<float>& m = e.host.view();
    std::vector<DataView<float>> views;
    for (int l = 0; l < kLanes; ++l) views.push_back(e.env(l));
    ASSERT_GT(e.nr[0], 0) << c.second << ": no rows";
    SlotRowsHost slots;
    std::string why;
    EXPECT_FALSE(slot_rows_from_envs(m, views.data(), e.nr, &slots, &why)) << c.second;
    EXPECT_NE(why.find(c.second), std::string::npos) << why;
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// LaneLineSearch (one lane, its points from slot_line_point) against mujoco_line_search on the same
// rows: the same steps and gains, bit for bit, over random problems whose searches stop at every
// exit (the first point, the one-sided steps, the bracket's candidates, its midpoint at rounding,
// the budget) and budgets of 2 to 9 points.
TEST(SlotNewton, LineSearchIsMujocosStepForStep) {
  using namespace constraint_detail;
  using namespace slot_newton_detail;
  const Model model = load(kScenes[0]);
  const HostModel<float> host(model);
  ModelView<float> m = host.view();
  ASSERT_NE(m.cone, kConeElliptic);
  std::vector<float> block(static_cast<size_t>(data_size(m)), 0.0f);
  const DataView<float> d = data_view(m, block.data());
  const int nr = std::min(12, m.nefc_max);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<int> kind(static_cast<size_t>(nr)), deep(static_cast<size_t>(nr), -1), top(static_cast<size_t>(nr), 0);
  std::vector<float> R(static_cast<size_t>(nr)), fl(static_cast<size_t>(nr)), D(static_cast<size_t>(nr)),
      jar(static_cast<size_t>(nr)), jv(static_cast<size_t>(nr)), state(static_cast<size_t>(nr));
  int exits[8] = {};
  for (int trial = 0; trial < 3000; ++trial) {
    m.newton_ls_iterations = 2 + trial % 8;
    for (int r = 0; r < nr; ++r) {
      float* e = d.efc + r * kEfcStride;
      float* w = d.efc_newton + r * kNewtonStride;
      const int k = static_cast<int>(3.0f * (0.5f + 0.5f * u(rng))) % 3;
      kind[static_cast<size_t>(r)] = k == 2 ? kScalarFriction : k == 1 ? kScalarEquality : kScalarInequality;
      e[kEfcR] = R[static_cast<size_t>(r)] = std::pow(10.0f, 2.0f * u(rng) - 1.0f);
      e[kEfcOwner] = -1.0f;
      w[kNewtonD] = D[static_cast<size_t>(r)] = 1.0f / e[kEfcR];
      w[kNewtonKind] = float(kind[static_cast<size_t>(r)]);
      w[kNewtonFl] = fl[static_cast<size_t>(r)] =
          kind[static_cast<size_t>(r)] == kScalarFriction ? 0.5f + u(rng) : 0.0f;
      w[kNewtonJar] = jar[static_cast<size_t>(r)] = 3.0f * u(rng);
      w[kNewtonJv] = jv[static_cast<size_t>(r)] = 2.0f * u(rng);
      float f, h;
      w[kNewtonState] = float(scalar_row_force(w, e[kEfcR], w[kNewtonJar], &f, &h));
      state[static_cast<size_t>(r)] = w[kNewtonState];
    }
    const float dMa = -std::fabs(4.0f * u(rng)) - 1e-3f, dMd = std::fabs(3.0f * u(rng)) + 1e-2f;
    const float gtol = trial % 3 == 0 ? 1e-9f : std::pow(10.0f, -4.0f + 3.0f * u(rng));
    float gain = 0.0f;
    const float alpha = mujoco_line_search(m, d, nr, dMa, dMd, gtol, &gain);
    SlotRows<float> rows;
    rows.n = nr, rows.kind = kind.data(), rows.R = R.data(), rows.fl = fl.data(), rows.deep = deep.data();
    rows.top = top.data();
    LaneLineSearch ls;
    ls.start(m.newton_ls_iterations, gtol);
    int points = 0;
    while (!ls.done() && points < 64) {
      LanePoints<float> p;
      p.alpha = ls.want;
      slot_line_point(m, rows, D.data(), jar.data(), jv.data(), state.data(), dMa, dMd, &p);
      ls.feed({p.alpha, p.cost, p.slope, p.curv, p.noise});
      ++points;
    }
    ASSERT_TRUE(ls.done()) << "trial " << trial;
    ASSERT_TRUE(same_bits(ls.alpha, alpha)) << "trial " << trial << ": " << ls.alpha << " against " << alpha;
    ASSERT_TRUE(same_bits(ls.gain, gain)) << "trial " << trial << ": gain " << ls.gain << " against " << gain;
    ++exits[std::min(points, 7)];
  }
  // the searches ended after 2 to 7+ points: every exit taken
  for (int k = 2; k < 7; ++k) EXPECT_GT(exits[k], 0) << "no search ended after " << k << " points";
}

// The rows built in slots: in every lane, the slots it has are constraint_rows' rows for its env in
// their order, bit for bit, in lanes and alone (F = float, its own rows only); and the solve on
// them gives each env the same acceleration in lanes as alone.
TEST(SlotRowsTest, EachLaneHoldsItsEnvsRowsInOrder) {
  for (const Scene& sc : kScenes) {
    double worst = 0;
    for (std::uint32_t seed : {1u, 4u}) {
      Envs e(load(sc), sc.substeps, seed);
      const ModelView<float>& m = e.host.view();
      const ModelView<LaneFloat> lm = lane_model_view(m);
      SlotLayout lay;
      std::string why;
      ASSERT_TRUE(lay.build(m, &why)) << name(sc) << ": " << why;
      std::vector<DataView<float>> views;
      for (int l = 0; l < kLanes; ++l) views.push_back(e.env(l));
      ContactSlotsHost cand;
      ASSERT_TRUE(contact_slots_from_envs(m, lay, views.data(), &cand, &why)) << why;
      const int nd = data_size(m);
      std::vector<LaneFloat> block(static_cast<size_t>(nd));
      std::vector<const float*> rows;
      for (int l = 0; l < kLanes; ++l) rows.push_back(e.blocks[static_cast<size_t>(l)].data());
      gather_lanes(block.data(), rows.data(), nd);
      const DataView<LaneFloat> ld = data_view(lm, block.data());
      SlotRowsBuffer<LaneFloat> lb(lay);
      const float h = static_cast<float>(m.timestep);
      const int n = build_slot_rows(m, lm, ld, lay, cand.view(lay), h, lb.out());
      std::vector<LaneFloat> scratch(static_cast<size_t>(slot_newton_scratch(m.nv, n)));
      slot_newton_solve(lm, ld, lb.rows(n), scratch.data());
      for (int l = 0; l < kLanes; ++l) {
        const DataView<float> d = e.env(l);
        // lanes: the slots lane l has, against the env's rows
        int r = 0;
        for (int s = 0; s < n; ++s) {
          if (lb.real[static_cast<size_t>(s)].lane(l) == 0.0f) continue;
          ASSERT_LT(r, e.nr[l]) << name(sc) << " lane " << l << ": more slots than rows";
          for (int i = 0; i < m.nv; ++i)
            ASSERT_TRUE(same_bits(lb.J[static_cast<size_t>(s * m.nv + i)].lane(l), d.efc_J[r * m.nv + i]))
                << name(sc) << " seed " << seed << " lane " << l << " row " << r << " J[" << i << "]";
          ASSERT_TRUE(same_bits(lb.aref[static_cast<size_t>(s)].lane(l), d.efc[r * kEfcStride + kEfcAref]))
              << name(sc) << " lane " << l << " row " << r << " aref";
          ASSERT_TRUE(same_bits(lb.R[static_cast<size_t>(s)].lane(l), d.efc[r * kEfcStride + kEfcR]))
              << name(sc) << " lane " << l << " row " << r << " R";
          ++r;
        }
        ASSERT_EQ(r, e.nr[l]) << name(sc) << " lane " << l;
        // alone: its own rows only, the same bits, and the same answer as in its lanes
        std::vector<float> own = e.blocks[static_cast<size_t>(l)];
        const DataView<float> od = data_view(m, own.data());
        SlotRowsBuffer<float> fb(lay);
        const int nf = build_slot_rows(m, m, od, lay, cand.lane_view(lay, l), h, fb.out());
        ASSERT_EQ(nf, e.nr[l]) << name(sc) << " lane " << l;
        for (int k = 0; k < nf * m.nv; ++k) ASSERT_TRUE(same_bits(fb.J[static_cast<size_t>(k)], d.efc_J[k]));
        std::vector<float> fscratch(static_cast<size_t>(slot_newton_scratch(m.nv, nf)));
        slot_newton_solve(m, od, fb.rows(nf), fscratch.data());
        // (==: the padding can flip the sign of a zero, never a value)
        double err = 0, scale = 1;
        for (int i = 0; i < m.nv; ++i) {
          ASSERT_EQ(ld.qacc[i].lane(l), od.qacc[i])
              << name(sc) << " seed " << seed << " lane " << l << " qacc[" << i << "]";
          err = std::max(err, std::fabs(static_cast<double>(od.qacc[i]) - d.qacc_solver[i]));
          scale = std::max(scale, 1.0 + std::fabs(static_cast<double>(d.qacc_solver[i])));
        }
        EXPECT_LE(err / scale, kAgainstNewtonSolve) << name(sc) << " seed " << seed << " lane " << l;
        worst = std::max(worst, err / scale);
      }
    }
    std::printf("  %s: worst |a - a_newton_solve|_inf / (1 + |a|_inf) %.2e\n", name(sc), worst);
  }
}

// What SlotLayout does not cover yet is refused with the reason.
TEST(SlotRowsTest, LayoutRefusesWhatItDoesNotCoverWithTheReason) {
  std::string spheres = kStackedSpheres;
  auto sub = [](std::string x, const std::string& from, const std::string& to) {
    x.replace(x.find(from), from.size(), to);
    return x;
  };
  auto with = [&](const std::string& from, const std::string& to) { return sub(spheres, from, to); };
  const std::pair<std::string, std::string> cases[] = {
      {with("<option ", "<option cone=\"elliptic\" "), "an elliptic cone"},
      {with("<option iterations=\"2\" ls_iterations=\"5\"/>", ""), "no iterations budget"},
      {with("type=\"plane\"", "type=\"plane\" condim=\"6\""), "condim 4 or 6"},
      {with("<option ", "<option noslip_iterations=\"3\" "), "noslip"},
      {sub(with("</worldbody>", "</worldbody><tendon><fixed><joint joint=\"j\" coef=\"1\"/></fixed></tendon>"),
           "<body pos=\"0 0 .29\"><freejoint/>", "<body pos=\"0 0 .29\"><joint name=\"j\" type=\"slide\"/>"),
       "tendons"},
      {sub(with("</worldbody>", "</worldbody><equality><connect body1=\"b\" anchor=\"0 0 0\"/></equality>"),
           "<body pos=\"0 0 .29\">", "<body name=\"b\" pos=\"0 0 .29\">"),
       "equality constraints"}};
  for (const auto& c : cases) {
    const Model model = parse_mjcf(c.first, "refused.xml");
    const HostModel<float> host(model);
    SlotLayout lay;
    std::string why;
    EXPECT_FALSE(lay.build(host.view(), &why)) << c.second;
    EXPECT_NE(why.find(c.second), std::string::npos) << "refused for: " << why;
  }
  SlotLayout lay;
  std::string why;
  const Model model = parse_mjcf(spheres, "spheres.xml");
  EXPECT_TRUE(lay.build(HostModel<float>(model).view(), &why)) << why;
}

// The inner substep in slots (sim/slot_step.h): in lanes every env gets the bits of the float
// instance on its env alone, substep after substep; against physics_substep (newton_solve) one
// substep from the same state lands within float rounding.
TEST(SlotStep, LanesStepEachEnvAsItsFloatStepDoes) {
  const Scene robots[] = {kScenes[0], kScenes[1], kScenes[2]};
  for (const Scene& sc : robots) {
    Envs e(load(sc), sc.substeps, 5u);
    const ModelView<float>& m = e.host.view();
    const ModelView<LaneFloat> lm = lane_model_view(m);
    SlotLayout lay;
    std::string why;
    ASSERT_TRUE(lay.build(m, &why)) << name(sc) << ": " << why;
    ASSERT_TRUE(slot_step_supported(m, &why)) << name(sc) << ": " << why;
    const int nd = data_size(m);
    std::vector<LaneFloat> block(static_cast<size_t>(nd));
    std::vector<const float*> rows;
    for (int l = 0; l < kLanes; ++l) rows.push_back(e.blocks[static_cast<size_t>(l)].data());
    gather_lanes(block.data(), rows.data(), nd);
    std::vector<std::vector<float>> alone = e.blocks, reference = e.blocks;
    // per lane controls in the actuators' ranges
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<LaneFloat> ctrl(static_cast<size_t>(m.nu) + 1, LaneFloat(0.0f));
    for (int a = 0; a < m.nu; ++a)
      for (int l = 0; l < kLanes; ++l) {
        const float lo = m.actuator_ctrllimited[a] ? static_cast<float>(m.actuator_ctrlrange[2 * a]) : -1.0f;
        const float hi = m.actuator_ctrllimited[a] ? static_cast<float>(m.actuator_ctrlrange[2 * a + 1]) : 1.0f;
        ctrl[static_cast<size_t>(a)].set_lane(l, lo + (hi - lo) * u(rng));
      }
    SlotStepWork<LaneFloat> lw(m, lay);
    const DataView<LaneFloat> ld = data_view(lm, block.data());
    double worst = 0;
    for (int step = 0; step < 10; ++step) {
      slot_substep(m, lm, ld, ctrl.data(), lay, lw);
      for (int l = 0; l < kLanes; ++l) {
        std::vector<float> c(static_cast<size_t>(m.nu) + 1, 0.0f);
        for (int a = 0; a < m.nu; ++a) c[static_cast<size_t>(a)] = ctrl[static_cast<size_t>(a)].lane(l);
        const DataView<float> d = data_view(m, alone[static_cast<size_t>(l)].data());
        SlotStepWork<float> fw(m, lay);
        slot_substep(m, m, d, c.data(), lay, fw);
        for (int i = 0; i < m.nq; ++i)
          ASSERT_EQ(ld.qpos[i].lane(l), d.qpos[i])
              << name(sc) << " substep " << step << " lane " << l << " qpos[" << i << "]";
        for (int i = 0; i < m.nv; ++i) {
          ASSERT_EQ(ld.qvel[i].lane(l), d.qvel[i])
              << name(sc) << " substep " << step << " lane " << l << " qvel[" << i << "]";
          ASSERT_EQ(ld.qacc[i].lane(l), d.qacc[i])
              << name(sc) << " substep " << step << " lane " << l << " qacc[" << i << "]";
        }
        if (step > 0) continue;
        // the first substep against physics_substep from the same state
        const DataView<float> r = data_view(m, reference[static_cast<size_t>(l)].data());
        physics_substep(m, r, c.data(), false, false);
        double err = 0, scale = 1;
        for (int i = 0; i < m.nv; ++i) {
          err = std::max(err, std::fabs(static_cast<double>(d.qacc[i]) - r.qacc[i]));
          scale = std::max(scale, 1.0 + std::fabs(static_cast<double>(r.qacc[i])));
        }
        EXPECT_LE(err / scale, kAgainstNewtonSolve) << name(sc) << " lane " << l;
        worst = std::max(worst, err / scale);
      }
    }
    std::printf("  %s: one substep against physics_substep: worst |a - a_ref|_inf / (1 + |a_ref|_inf) %.2e\n", name(sc),
                worst);
  }
}

// A control step in lanes (slot_physics_step_lanes: the inner substeps in lanes, the last per env)
// gives each env slot_physics_step's bits: the state, the sensors, cfrc_ext, the contact list and
// the count of pushing contacts; against physics_step (newton_solve) one control step lands within
// float rounding grown over its substeps.
TEST(SlotStep, ControlStepInLanesIsEachEnvsSlotPhysicsStep) {
  const Scene robots[] = {kScenes[0], kScenes[1], kScenes[2]};
  for (const Scene& sc : robots) {
    Envs e(load(sc), sc.substeps, 6u);
    const ModelView<float>& m = e.host.view();
    const ModelView<LaneFloat> lm = lane_model_view(m);
    SlotLayout lay;
    std::string why;
    ASSERT_TRUE(lay.build(m, &why) && slot_step_supported(m, &why)) << name(sc) << ": " << why;
    const int substeps = 5;
    std::vector<std::vector<float>> lanes = e.blocks, alone = e.blocks, reference = e.blocks;
    std::mt19937 rng(13);
    std::uniform_real_distribution<float> u(-0.3f, 0.3f);
    std::vector<std::vector<float>> ctrl(kLanes, std::vector<float>(static_cast<size_t>(m.nu) + 1, 0.0f));
    for (auto& c : ctrl)
      for (int a = 0; a < m.nu; ++a) c[static_cast<size_t>(a)] = u(rng);
    SlotLanesWork lw(m, lay);
    SlotStepWork<float> fw(m, lay);
    double worst = 0, worst_read = 0;
    for (int step = 0; step < 3; ++step) {
      float* rows[kLanes];
      const float* cptr[kLanes];
      int ncon_lanes[kLanes], ncon_alone[kLanes];
      int* nptr[kLanes];
      for (int l = 0; l < kLanes; ++l)
        rows[l] = lanes[static_cast<size_t>(l)].data(), cptr[l] = ctrl[static_cast<size_t>(l)].data(),
        nptr[l] = &ncon_lanes[l];
      slot_physics_step_lanes(m, lm, rows, cptr, substeps, nptr, lay, lw);
      for (int l = 0; l < kLanes; ++l) {
        const DataView<float> a = data_view(m, alone[static_cast<size_t>(l)].data());
        slot_physics_step(m, a, cptr[l], substeps, &ncon_alone[l], lay, fw);
        const DataView<float> b = data_view(data_layout(m), rows[l], lw.workspace.data());
        const std::string where =
            std::string(name(sc)) + " step " + std::to_string(step) + " lane " + std::to_string(l);
        ASSERT_EQ(ncon_lanes[l], ncon_alone[l]) << where;
        ASSERT_EQ(b.ncon[0], a.ncon[0]) << where;
        for (int i = 0; i < m.nq; ++i) ASSERT_EQ(b.qpos[i], a.qpos[i]) << where << " qpos[" << i << "]";
        for (int i = 0; i < (m.newton_warmstart ? m.nv : 0); ++i)
          ASSERT_EQ(b.qacc_warmstart[i], a.qacc_warmstart[i]) << where << " qacc_warmstart[" << i << "]";
        for (int i = 0; i < m.nv; ++i) {
          ASSERT_EQ(b.qvel[i], a.qvel[i]) << where << " qvel[" << i << "]";
          ASSERT_EQ(b.qacc[i], a.qacc[i]) << where << " qacc[" << i << "]";
        }
        for (int i = 0; i < m.nsensordata; ++i)
          ASSERT_EQ(b.sensordata[i], a.sensordata[i]) << where << " sensordata[" << i << "]";
        for (int i = 0; i < 6 * m.nbody; ++i)
          ASSERT_EQ(b.cfrc_ext[i], a.cfrc_ext[i]) << where << " cfrc_ext[" << i << "]";
        for (int i = 0; i < kContactStride * static_cast<int>(a.ncon[0]); ++i)
          ASSERT_EQ(b.contact[i], a.contact[i]) << where << " contact[" << i << "]";
        if (step > 0) continue;
        const DataView<float> r = data_view(m, reference[static_cast<size_t>(l)].data());
        physics_step(m, r, cptr[l], substeps, static_cast<int*>(nullptr));
        double err = 0, scale = 1;
        for (int i = 0; i < m.nv; ++i) {
          err = std::max(err, std::fabs(static_cast<double>(a.qvel[i]) - r.qvel[i]));
          scale = std::max(scale, 1.0 + std::fabs(static_cast<double>(r.qvel[i])));
        }
        EXPECT_LE(err / scale, kAgainstNewtonSolve) << where << ": qvel against physics_step";
        worst = std::max(worst, err / scale);
        // what the task reads after the step: the contact list with its forces, cfrc_ext, the sensors
        ASSERT_EQ(a.ncon[0], r.ncon[0]) << where;
        auto rel = [](const float* x, const float* y, int n, int stride, int at) {
          double e = 0, big = 1;
          for (int i = 0; i < n; ++i) {
            e = std::max(e, std::fabs(static_cast<double>(x[i * stride + at]) - y[i * stride + at]));
            big = std::max(big, 1.0 + std::fabs(static_cast<double>(y[i * stride + at])));
          }
          return e / big;
        };
        for (int i = 0; i < static_cast<int>(a.ncon[0]); ++i) {
          const float* ca = a.contact + kContactStride * i;
          const float* cr = r.contact + kContactStride * i;
          ASSERT_EQ(ca[kConGeom1], cr[kConGeom1]) << where << " contact " << i;
          ASSERT_EQ(ca[kConGeom2], cr[kConGeom2]) << where << " contact " << i;
          EXPECT_EQ(ca[kConMu], cr[kConMu]) << where << " contact " << i;
        }
        const int nc = static_cast<int>(a.ncon[0]);
        const double force = std::max(rel(a.contact, r.contact, nc, kContactStride, kConForce),
                                      std::max(rel(a.contact, r.contact, nc, kContactStride, kConFriction),
                                               rel(a.contact, r.contact, nc, kContactStride, kConFriction + 1)));
        const double wrench = rel(a.cfrc_ext, r.cfrc_ext, 6 * m.nbody, 1, 0);
        const double sensors = rel(a.sensordata, r.sensordata, m.nsensordata, 1, 0);
        EXPECT_LE(force, kStepAgainstPhysicsStep) << where << ": contact forces against physics_step";
        EXPECT_LE(wrench, kStepAgainstPhysicsStep) << where << ": cfrc_ext against physics_step";
        EXPECT_LE(sensors, kStepAgainstPhysicsStep) << where << ": sensordata against physics_step";
        worst_read = std::max(worst_read, std::max(force, std::max(wrench, sensors)));
      }
    }
    std::printf(
        "  %s: one control step (%d substeps) against physics_step: worst |v - v_ref|_inf / (1 + |v_ref|_inf) %.2e; "
        "contact forces, cfrc_ext, sensordata %.2e\n",
        name(sc), substeps, worst, worst_read);
  }
}

}  // namespace
}  // namespace rlt
#endif
