// bench_mujoco: control steps/s per core of one MJCF model in MuJoCo and in rltrain, both
// single-threaded, with the same random controls (sim/actuators.h random_ctrl) held for the same
// control interval. Both run at the model's option/timestep (MuJoCo with its Euler; --mj-timestep
// gives MuJoCo another), with control_dt / timestep substeps (rltrain: physics_step), rltrain in
// float (as the envs) and in double. Built only where libmujoco-dev is found (RLTRAIN_HAVE_MUJOCO).
//
//   bench_mujoco MODEL.xml [--control-dt 0.05] [--mj-timestep S] [--seconds 2] [--seed 7]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "apps/rollout.h"
#include "sim/dynamics.h"
#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int whole_steps(double control_dt, double timestep, const char* who) {
  const double ratio = control_dt / timestep;
  const long k = std::lround(ratio);
  if (k < 1 || std::fabs(ratio - static_cast<double>(k)) > 1e-6 * ratio) {
    std::fprintf(stderr, "bench_mujoco: control dt %g s is not a whole number of %s's %g s steps\n", control_dt, who,
                 timestep);
    std::exit(2);
  }
  return static_cast<int>(k);
}

struct Result {
  double control_per_s = 0;
  double mean_ncon = 0;
  long long steps = 0;
  bool finite = true;
};

Result bench_mujoco(const std::string& path, double timestep, double control_dt, double seconds, std::uint64_t seed) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof err);
  if (!m) {
    std::fprintf(stderr, "bench_mujoco: MuJoCo cannot load %s: %s\n", path.c_str(), err);
    std::exit(2);
  }
  m->opt.timestep = timestep;
  m->opt.integrator = mjINT_EULER;
  mjData* d = mj_makeData(m);
  const int substeps = whole_steps(control_dt, timestep, "MuJoCo");
  std::vector<double> range(2 * static_cast<size_t>(m->nu));
  for (int u = 0; u < m->nu; ++u) {
    const bool limited = m->actuator_ctrllimited[u] != 0;
    range[2 * u] = limited ? m->actuator_ctrlrange[2 * u] : -1.0;
    range[2 * u + 1] = limited ? m->actuator_ctrlrange[2 * u + 1] : 1.0;
  }
  Result r;
  long long ncon = 0;
  const auto t0 = Clock::now();
  for (;;) {
    rlt::random_ctrl(range.data(), m->nu, seed, 0u, static_cast<rlt::u32>(r.steps), d->ctrl);
    for (int s = 0; s < substeps; ++s) mj_step(m, d);
    ncon += d->ncon;
    ++r.steps;
    if ((r.steps & 15) == 0 && seconds_since(t0) >= seconds) break;
  }
  r.control_per_s = static_cast<double>(r.steps) / seconds_since(t0);
  r.mean_ncon = static_cast<double>(ncon) / static_cast<double>(r.steps);
  for (int i = 0; i < m->nq; ++i) r.finite = r.finite && std::isfinite(d->qpos[i]);
  mj_deleteData(d);
  mj_deleteModel(m);
  return r;
}

template <class T>
Result bench_rltrain(const rlt::Model& model, double control_dt, double seconds, std::uint64_t seed) {
  const rlt::HostModel<T> host(model);
  const rlt::ModelView<T>& mv = host.view();
  std::vector<T> row(static_cast<size_t>(rlt::data_size(mv)), T(0));
  const rlt::DataView<T> d = rlt::data_view(mv, row.data());
  rlt::reset_data(mv, d);
  const int substeps = whole_steps(control_dt, model.timestep, "rltrain");
  const std::vector<double> range_d = rlt::ctrl_sample_range(model);
  const std::vector<T> range(range_d.begin(), range_d.end());
  std::vector<T> ctrl(static_cast<size_t>(model.nu) + 1, T(0));
  Result r;
  long long ncon = 0;
  int num_contacts = 0;
  const auto t0 = Clock::now();
  for (;;) {
    rlt::random_ctrl(range.data(), model.nu, seed, 0u, static_cast<rlt::u32>(r.steps), ctrl.data());
    rlt::physics_step(mv, d, ctrl.data(), substeps, &num_contacts);
    ncon += num_contacts;
    ++r.steps;
    if ((r.steps & 15) == 0 && seconds_since(t0) >= seconds) break;
  }
  r.control_per_s = static_cast<double>(r.steps) / seconds_since(t0);
  r.mean_ncon = static_cast<double>(ncon) / static_cast<double>(r.steps);
  for (int i = 0; i < model.nq; ++i) r.finite = r.finite && std::isfinite(static_cast<double>(d.qpos[i]));
  return r;
}

void usage() {
  std::fprintf(stderr,
               "usage: bench_mujoco MODEL.xml [--control-dt 0.05] [--mj-timestep S] [--seconds 2] [--seed 7]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  double control_dt = 0.05, mj_timestep = 0, seconds = 2.0;  // mj_timestep 0: the model's
  std::uint64_t seed = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> double {
      if (i + 1 >= argc) usage();
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(v > 0)) usage();
      return v;
    };
    if (a == "--control-dt") control_dt = value();
    else if (a == "--mj-timestep") mj_timestep = value();
    else if (a == "--seconds") seconds = value();
    else if (a == "--seed") seed = static_cast<std::uint64_t>(value());
    else if (!a.empty() && a[0] == '-') usage();
    else if (path.empty()) path = a;
    else usage();
  }
  if (path.empty()) usage();

  rlt::Model model;
  try {
    model = rlt::load_mjcf(path);
  } catch (const rlt::MjcfError& e) {
    std::fprintf(stderr, "bench_mujoco: %s\n", e.what());
    return 2;
  }
  std::printf("bench_mujoco %s: nq %d, nv %d, nu %d; random controls held for %g s control steps; one thread each\n",
              path.c_str(), model.nq, model.nv, model.nu, control_dt);
  if (mj_timestep == 0) mj_timestep = model.timestep;
  const Result mj = bench_mujoco(path, mj_timestep, control_dt, seconds, seed);
  const Result rf = bench_rltrain<float>(model, control_dt, seconds, seed);
  const Result rd = bench_rltrain<double>(model, control_dt, seconds, seed);
  std::printf("%-40s %16s %10s %8s\n", "", "control steps/s", "mean ncon", "finite");
  char label[128];
  std::snprintf(label, sizeof label, "MuJoCo %s (double, Euler, dt %g s)", mj_versionString(), mj_timestep);
  std::printf("%-40s %16.1f %10.2f %8s\n", label, mj.control_per_s, mj.mean_ncon, mj.finite ? "yes" : "NO");
  std::snprintf(label, sizeof label, "rltrain float (dt %g s)", model.timestep);
  std::printf("%-40s %16.1f %10.2f %8s\n", label, rf.control_per_s, rf.mean_ncon, rf.finite ? "yes" : "NO");
  std::snprintf(label, sizeof label, "rltrain double (dt %g s)", model.timestep);
  std::printf("%-40s %16.1f %10.2f %8s\n", label, rd.control_per_s, rd.mean_ncon, rd.finite ? "yes" : "NO");
  std::printf("ratio rltrain/MuJoCo per core: float %.2f, double %.2f\n", rf.control_per_s / mj.control_per_s,
              rd.control_per_s / mj.control_per_s);
  return 0;
}
