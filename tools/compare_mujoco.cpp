// compare_mujoco: how closely rltrain's physics follows MuJoCo's on one MJCF robot (free-floating or
// planar, as the locomotion assets),
// measured on what locomotion depends on. Both simulators load the same file, start from the same
// state (a keyframe, or qpos0) and get the same open-loop controls, held for the same control
// interval: MuJoCo 2.2.2 (libmujoco-dev) with its Euler or RK4 integrator, rltrain in double with
// physics_step (sim/physics_step.h), both at the model's timestep or --timestep. Contacts make
// trajectories chaotic, so the tool compares outcomes, not states:
// "The root" is body 1 (the torso of every asset), followed by its world position.
//   rest    zero controls for 3 s: the root's final height (how deep contacts let it sink)
//   gaits   --gaits open-loop sinusoidal gaits of --seconds each (every actuator swings over its
//           whole ctrlrange at one frequency in 0.5..3 Hz with its own phase; drawn from --seed):
//           per gait the root's planar displacement and mean height in each simulator; over the
//           gaits the mean |displacement|, the mean height, the path length against MuJoCo's, and
//           the mean |d - d_MuJoCo| / mean |d_MuJoCo| (d: planar displacement). That last figure
//           is also given for MuJoCo against itself started with its last joint 1e-6 off: the
//           floor that chaos sets on any per-gait comparison.
//   random  the random controls of bench_mujoco (sim/actuators.h random_ctrl, redrawn every
//           control step) for --seconds, once per gait seed: the root's mean height and planar speed
// Contacts and limits follow MuJoCo's soft constraints on both sides (sim/constraints.h, the only
// law). --expect-within E exits 1 when the gaits' relative error exceeds E (tests/CMakeLists.txt
// uses it on a model without contacts and limits, where the two agree to rounding, and on the
// shipped ant and halfcheetah). Where MuJoCo's state blows up (it resets itself and warns), that run is counted and
// left out of the averages. Built only where libmujoco-dev is found.
//
//   compare_mujoco MODEL.xml [--key NAME] [--control-dt 0.05] [--timestep S] [--mj-integrator euler|rk4]
//                  [--gaits 16] [--seconds 5] [--seed 1] [--expect-within E]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "apps/rollout.h"
#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/philox.h"

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kNudge = 1e-6;  // the chaos-floor run starts with the last qpos entry this far off

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "compare_mujoco: %s\n", msg.c_str());
  std::exit(2);
}

// MuJoCo's warnings (a blown-up state, which it resets) are counted here instead of going to
// MUJOCO_LOG.TXT in the working directory.
int g_mujoco_warnings = 0;
void count_warning(const char*) { ++g_mujoco_warnings; }

// The open-loop control of one run at control step t (nu values).
struct Controls {
  enum Kind { kZero, kSine, kRandom } kind = kZero;
  std::vector<double> range;  // nu x 2 (ctrl_sample_range)
  double hz = 1;              // kSine
  std::vector<double> phase;  // kSine: rad per actuator
  std::uint64_t seed = 0;     // kRandom
  double control_dt = 0.05;

  void at(int nu, long t, double* ctrl) const {
    if (kind == kRandom) {
      rlt::random_ctrl(range.data(), nu, seed, 0u, static_cast<rlt::u32>(t), ctrl);
      return;
    }
    for (int u = 0; u < nu; ++u) {
      const double lo = range[2 * u], hi = range[2 * u + 1];
      ctrl[u] =
          kind == kZero ? 0.0 : 0.5 * (lo + hi) + 0.5 * (hi - lo) * std::sin(2 * kPi * hz * t * control_dt + phase[u]);
    }
  }
};

// What a run records of the root body's world position (x, y, z).
struct Track {
  double x0 = 0, y0 = 0, sum_z = 0, path = 0, x = 0, y = 0, z = 0;
  long n = 0;
  bool ok = true;  // finite throughout (rltrain), or not reset after a blow-up (MuJoCo)
  void start(const double* q) { x0 = x = q[0], y0 = y = q[1], z = q[2]; }
  void add(const double* q) {
    ok = ok && std::isfinite(q[0]) && std::isfinite(q[1]) && std::isfinite(q[2]);
    sum_z += q[2];
    path += std::hypot(q[0] - x, q[1] - y);
    x = q[0], y = q[1], z = q[2];
    ++n;
  }
  double dx() const { return x - x0; }
  double dy() const { return y - y0; }
  double mean_z() const { return n ? sum_z / static_cast<double>(n) : z; }
};

class MujocoSim {
 public:
  MujocoSim(const std::string& path, const std::string& key, double timestep, bool rk4) {
    char err[1000] = "";
    m_m = mj_loadXML(path.c_str(), nullptr, err, sizeof err);
    if (!m_m) fail("MuJoCo cannot load " + path + ": " + err);
    m_m->opt.integrator = rk4 ? mjINT_RK4 : mjINT_EULER;
    if (timestep > 0) m_m->opt.timestep = timestep;
    m_d = mj_makeData(m_m);
    m_key = key.empty() ? -1 : mj_name2id(m_m, mjOBJ_KEY, key.c_str());
    if (!key.empty() && m_key < 0) fail("MuJoCo finds no keyframe '" + key + "' in " + path);
  }
  ~MujocoSim() {
    mj_deleteData(m_d);
    mj_deleteModel(m_m);
  }
  MujocoSim(const MujocoSim&) = delete;
  MujocoSim& operator=(const MujocoSim&) = delete;

  Track run(const Controls& c, long steps, int substeps, double nudge) {
    if (m_key >= 0) mj_resetDataKeyframe(m_m, m_d, m_key);
    else mj_resetData(m_m, m_d);
    m_d->qpos[m_m->nq - 1] += nudge;
    const int warnings = g_mujoco_warnings;
    Track tr;
    mj_kinematics(m_m, m_d);
    tr.start(m_d->xpos + 3);
    for (long t = 0; t < steps; ++t) {
      c.at(m_m->nu, t, m_d->ctrl);
      for (int s = 0; s < substeps; ++s) mj_step(m_m, m_d);
      mj_kinematics(m_m, m_d);  // xpos of the state reached (mj_step leaves the previous one's)
      tr.add(m_d->xpos + 3);
    }
    tr.ok = tr.ok && g_mujoco_warnings == warnings;
    return tr;
  }

 private:
  mjModel* m_m = nullptr;
  mjData* m_d = nullptr;
  int m_key = -1;
};

class RltrainSim {
 public:
  RltrainSim(const rlt::Model& model, const std::string& path, const std::string& key, int substeps) : m_model(model) {
    m_opts.model_path = path;
    m_opts.key = key;
    m_opts.substeps = substeps;
  }

  Track run(const Controls& c, long steps) {
    rlt::ModelRollout r(m_model, m_opts);  // the keyframe (or qpos0 at rest), as `rltrain rollout`
    const rlt::DataView<double>& d = r.data();
    std::vector<double> ctrl(static_cast<size_t>(m_model.nu), 0.0);
    const rlt::ModelView<double>& m = r.model_view();
    rlt::kinematics(m, d);
    Track tr;
    tr.start(d.xpos + 3);
    for (long t = 0; t < steps; ++t) {
      c.at(m_model.nu, t, ctrl.data());
      r.step(ctrl.data());
      rlt::kinematics(m, d);
      tr.add(d.xpos + 3);
    }
    return tr;
  }

 private:
  rlt::RolloutOptions m_opts;
  rlt::Model m_model;
};

void usage() {
  std::fprintf(
      stderr,
      "usage: compare_mujoco MODEL.xml [--key NAME] [--control-dt 0.05] [--timestep S] [--mj-integrator euler|rk4]\n"
      "                      [--gaits 16] [--seconds 5] [--seed 1] [--expect-within E]\n");
  std::exit(2);
}

// A running sum over the runs both simulators finished: its mean and the mean's standard error.
struct Stat {
  double n = 0, sum = 0, sum2 = 0;
  void add(double v) { n += 1, sum += v, sum2 += v * v; }
  double mean() const { return n > 0 ? sum / n : std::nan(""); }
  double se() const { return n > 1 ? std::sqrt(std::fmax(0.0, (sum2 - sum * sum / n) / (n - 1)) / n) : std::nan(""); }
  std::string text() const {  // "mean +- standard error"
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f +- %.3f", mean(), se());
    return buf;
  }
};

// One quantity in both simulators.
struct Pair {
  Stat mj, rl;
  void add(double a, double b) { mj.add(a), rl.add(b); }
};

}  // namespace

int main(int argc, char** argv) {
  std::string path, key, integrator = "euler";
  double control_dt = 0.05, seconds = 5.0, timestep = 0, expect_within = -1;
  long gaits = 16;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto text = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    auto number = [&](bool positive) -> double {
      const std::string s = text();
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || (positive && v == 0))
        fail(a + ": expected a " + (positive ? "positive" : "non-negative") + " number, got '" + s + "'");
      return v;
    };
    if (a == "--key") key = text();
    else if (a == "--control-dt") control_dt = number(true);
    else if (a == "--timestep") timestep = number(true);
    else if (a == "--mj-integrator") integrator = text();
    else if (a == "--gaits") gaits = std::lround(number(false));
    else if (a == "--seconds") seconds = number(true);
    else if (a == "--seed") seed = static_cast<std::uint64_t>(number(false));
    else if (a == "--expect-within") expect_within = number(false);
    else if (!a.empty() && a[0] == '-') usage();
    else if (path.empty()) path = a;
    else usage();
  }
  if (path.empty()) usage();
  if (integrator != "euler" && integrator != "rk4")
    fail("--mj-integrator: expected euler or rk4, got '" + integrator + "'");

  rlt::Model model;
  try {
    model = rlt::load_mjcf(path);
  } catch (const rlt::MjcfError& e) {
    fail(e.what());
  }
  if (model.nbody < 2 || model.nq < 1) fail(path + ": expected a robot (a body with joints) to follow");
  if (timestep > 0) model.timestep = timestep;
  int substeps = 0;
  try {
    substeps = rlt::control_substeps(control_dt, model.timestep);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  const long steps = std::lround(seconds / control_dt);
  if (steps < 1) fail("--seconds: shorter than one control step");

  mju_user_warning = count_warning;
  MujocoSim mj(path, key, model.timestep, integrator == "rk4");
  RltrainSim rl(model, path, key, substeps);
  Controls zero;
  zero.range = rlt::ctrl_sample_range(model);
  zero.control_dt = control_dt;
  bool finite = true;
  int mujoco_resets = 0;

  std::printf(
      "compare_mujoco %s%s%s: MuJoCo %s (%s) against rltrain (double), timestep %g s, controls held %g s\n"
      "contacts and limits: MuJoCo's soft constraints on both sides\n",
      path.c_str(), key.empty() ? "" : ", keyframe ", key.c_str(), mj_versionString(), integrator.c_str(),
      model.timestep, control_dt);
  const long rest_steps = std::max(1L, std::lround(3.0 / control_dt));
  const Track rest_mj = mj.run(zero, rest_steps, substeps, 0), rest_rl = rl.run(zero, rest_steps);
  finite = finite && rest_rl.ok;
  mujoco_resets += rest_mj.ok ? 0 : 1;

  Pair rnd_z, rnd_v;
  for (long g = 0; g < std::max(1L, gaits); ++g) {
    Controls random = zero;
    random.kind = Controls::kRandom;
    random.seed = seed + static_cast<std::uint64_t>(g);
    const Track a = mj.run(random, steps, substeps, 0), b = rl.run(random, steps);
    finite = finite && b.ok;
    mujoco_resets += a.ok ? 0 : 1;
    if (a.ok && b.ok) rnd_z.add(a.mean_z(), b.mean_z()), rnd_v.add(a.path / seconds, b.path / seconds);
  }
  std::printf("\n%-34s %18s %18s\n", "probe", "MuJoCo", "rltrain");
  std::printf("%-34s %18.4f %18.4f\n", "rest 3 s: root height (m)", rest_mj.z, rest_rl.z);
  char label[96];
  std::snprintf(label, sizeof label, "random %gs x %ld: root height (m)", seconds, std::max(1L, gaits));
  std::printf("%-34s %18s %18s\n", label, rnd_z.mj.text().c_str(), rnd_z.rl.text().c_str());
  std::snprintf(label, sizeof label, "random %gs x %ld: speed (m/s)", seconds, std::max(1L, gaits));
  std::printf("%-34s %18s %18s\n", label, rnd_v.mj.text().c_str(), rnd_v.rl.text().c_str());

  if (gaits > 0)
    std::printf("\n%-5s %6s %11s %11s %11s %11s %9s %9s\n", "gait", "Hz", "dx MuJoCo", "dx rltrain", "dy MuJoCo",
                "dy rltrain", "z MuJoCo", "z rltrain");
  rlt::Philox rng(seed, rlt::RngStream::kBench, 1u, 0u);
  Pair disp, height;
  Stat path_ratio, err, floor_err;  // rltrain's path / MuJoCo's; |d - d_MuJoCo| for rltrain and the nudged MuJoCo
  for (long g = 0; g < gaits; ++g) {
    Controls sine = zero;
    sine.kind = Controls::kSine;
    rlt::U32x4 bits = rng.next4();
    sine.hz = 0.5 + 2.5 * rlt::u32_to_unit_float(bits.v[0]);
    for (int u = 0; u < model.nu; ++u) {
      if (u % 3 == 0 && u > 0) bits = rng.next4();
      sine.phase.push_back(2 * kPi * rlt::u32_to_unit_float(bits.v[1 + u % 3]));
    }
    const Track a = mj.run(sine, steps, substeps, 0), b = rl.run(sine, steps),
                a2 = mj.run(sine, steps, substeps, kNudge);
    finite = finite && b.ok;
    mujoco_resets += (a.ok ? 0 : 1) + (a2.ok ? 0 : 1);
    std::printf("%-5ld %6.2f %11.3f %11.3f %11.3f %11.3f %9.3f %9.3f%s\n", g, sine.hz, a.dx(), b.dx(), a.dy(), b.dy(),
                a.mean_z(), b.mean_z(), a.ok && a2.ok ? "" : "  (MuJoCo reset: left out)");
    if (!(a.ok && a2.ok && b.ok)) continue;
    const double da = std::hypot(a.dx(), a.dy());
    disp.add(da, std::hypot(b.dx(), b.dy()));
    height.add(a.mean_z(), b.mean_z());
    path_ratio.add(a.path > 0 ? b.path / a.path : 0.0);
    err.add(std::hypot(b.dx() - a.dx(), b.dy() - a.dy()));
    floor_err.add(std::hypot(a2.dx() - a.dx(), a2.dy() - a.dy()));
  }
  const double rel_err = err.sum / std::fmax(disp.mj.sum, 1e-12);
  if (gaits > 0) {
    std::printf("\n%-34s %18s %18s\n", "over the gaits (+- standard error)", "MuJoCo", "rltrain");
    std::printf("%-34s %18s %18s\n", "mean |displacement| (m)", disp.mj.text().c_str(), disp.rl.text().c_str());
    std::printf("%-34s %18s %18s\n", "mean root height (m)", height.mj.text().c_str(), height.rl.text().c_str());
    std::printf("%-34s %18.3f %18.3f\n", "path length / MuJoCo's", 1.0, path_ratio.mean());
    std::printf("%-34s %18.3f %18.3f\n", "|d - d_MuJoCo| / mean |d_MuJoCo|",
                floor_err.sum / std::fmax(disp.mj.sum, 1e-12), rel_err);
    std::printf(
        "(MuJoCo column of the last row: MuJoCo against itself, its last joint started %g off: the floor chaos sets)\n",
        kNudge);
  }
  if (mujoco_resets > 0)
    std::printf("MuJoCo blew up and reset itself in %d runs (left out of the averages)\n", mujoco_resets);
  if (!finite) {
    std::printf("rltrain's state became non-finite in some run\n");
    return 1;
  }
  if (expect_within >= 0 && err.n == 0) {
    std::printf("compare_mujoco: --expect-within needs at least one gait that both simulators finished\n");
    return 1;
  }
  if (expect_within >= 0 && !(rel_err <= expect_within)) {
    std::printf("compare_mujoco: relative displacement error %.3g is above --expect-within %g\n", rel_err,
                expect_within);
    return 1;
  }
  return 0;
}
