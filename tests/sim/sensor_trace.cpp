// sensor_trace MODEL STEPS [ctrl... | @FILE]: the model from its reference configuration (qpos0, at
// rest), ctrl held (or, with @FILE, step s's ctrl the s-th row of nu numbers of FILE), stepped STEPS
// physics steps in double (physics_step, one substep each); prints one JSON
// object: the sensor names, dims and addresses, and per step the state (qpos, qvel) and sensordata.
// tests/sim/sensor_peer.py runs MuJoCo 3 beside it and compares.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: sensor_trace MODEL STEPS [ctrl...]\n");
    return 2;
  }
  rlt::Model model;
  try {
    model = rlt::load_mjcf(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  rlt::HostModel<double> host(model);
  const rlt::ModelView<double>& m = host.view();
  std::vector<double> row(static_cast<size_t>(rlt::data_size(m)), 0.0);
  const rlt::DataView<double> d = rlt::data_view(m, row.data());
  rlt::reset_data(m, d);
  std::vector<double> ctrl(static_cast<size_t>(m.nu), 0.0);
  const int steps = std::atoi(argv[2]);
  std::vector<double> ctrl_rows;  // steps x nu, from @FILE
  if (argc > 3 && argv[3][0] == '@') {
    std::ifstream f(argv[3] + 1);
    double x;
    while (f >> x) ctrl_rows.push_back(x);
    if (ctrl_rows.size() < static_cast<size_t>(steps) * static_cast<size_t>(m.nu)) {
      std::fprintf(stderr, "%s: fewer than STEPS x nu numbers\n", argv[3] + 1);
      return 2;
    }
  } else {
    for (int i = 0; i < m.nu && 3 + i < argc; ++i) ctrl[static_cast<size_t>(i)] = std::atof(argv[3 + i]);
  }
  auto list = [](const double* x, int n) {
    std::printf("[");
    for (int i = 0; i < n; ++i) std::printf("%s%.17g", i ? "," : "", x[i]);
    std::printf("]");
  };
  std::printf("{\"names\":[");
  for (int i = 0; i < model.nsensor; ++i)
    std::printf("%s\"%s\"", i ? "," : "", model.sensor_name[static_cast<size_t>(i)].c_str());
  std::printf("],\"adr\":[");
  for (int i = 0; i < model.nsensor; ++i) std::printf("%s%d", i ? "," : "", model.sensor_adr[static_cast<size_t>(i)]);
  std::printf("],\"dim\":[");
  for (int i = 0; i < model.nsensor; ++i) std::printf("%s%d", i ? "," : "", model.sensor_dim[static_cast<size_t>(i)]);
  std::printf("],\"steps\":[");
  for (int s = 0; s < steps; ++s) {
    if (!ctrl_rows.empty())
      for (int i = 0; i < m.nu; ++i) ctrl[static_cast<size_t>(i)] = ctrl_rows[static_cast<size_t>(s * m.nu + i)];
    rlt::physics_step(m, d, m.nu ? ctrl.data() : static_cast<const double*>(nullptr), 1, static_cast<int*>(nullptr));
    std::printf("%s{\"qpos\":", s ? "," : "");
    list(d.qpos, m.nq);
    std::printf(",\"qvel\":");
    list(d.qvel, m.nv);
    std::printf(",\"sensordata\":");
    list(d.sensordata, m.nsensordata);
    std::printf("}");
  }
  std::printf("]}\n");
  return 0;
}
