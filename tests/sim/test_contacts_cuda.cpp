// physics_step (sim/physics_step.h) on the CUDA executor against the CPU executor (STYLE.md 6):
// the contact scene (free sphere, capsule and box falling onto planes and a static box) in float,
// a batch of envs from perturbed states with per-env controls absent (nu = 0) and a limited,
// actuated arm with controls, stepped through PhysicsStepEnvs on both and compared after each
// control step; the Ant (envs/assets/ant.xml: capsule legs and a sphere torso landing on the floor,
// limits, motors) the same way; and PhysicsBatchT<CudaExecutor> (what `rltrain bench --model --device cuda`
// times) against the CPU batch of the bench. Needs a GPU (label gpu); skipped, with the reason,
// where none answers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "envs/physics_batch.h"
#include "kernels/cuda_executor.h"
#include "kernels/device_buffer.h"
#include "sim/cpu_executor.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/kernels/gpu_test_util.h"

namespace rlt {

// envs/physics_batch_cuda.cu (no header of its own: this test is its only host caller).
void physics_step_cuda(const CudaExecutor& exec, const ModelView<float>& m, float* data, const float* ctrl,
                       i64 num_envs, int substeps, int* num_contacts);

namespace {

std::string data_path(const std::string& name) { return std::string(RLT_TEST_DATA_DIR) + "/mjcf/" + name; }

// num_envs rows from qpos (perturbed per env), stepped `steps` control steps of `substeps` on both
// executors with the same controls; qpos and qvel compared after every control step.
// max_threads > 0 caps the executor's launches there (CudaExecutor::set_max_threads): each thread
// then steps several envs in turn in one constraint workspace slot (grid-stride).
void lockstep(const Model& model, const std::vector<double>& qpos, const std::vector<double>& qvel, int num_envs,
              int steps, int substeps, bool sensors = false, i64 max_threads = 0) {
  CudaExecutor exec;
  if (max_threads > 0) exec.set_max_threads(max_threads);
  const HostModel<float> host(model);
  const ModelView<float> m = host.view();
  DeviceBuffer<float> reals(static_cast<i64>(host.reals().size()));
  DeviceBuffer<int> ints(static_cast<i64>(host.ints().size()));
  exec.copy_from_host(reals.data(), host.reals().data(), reals.size());
  exec.copy_from_host(ints.data(), host.ints().data(), ints.size());
  ModelView<float> dm = m;
  dm.bind(reals.data(), ints.data());

  const DataLayout layout = data_layout(m);
  const size_t row = static_cast<size_t>(layout.row);
  std::vector<float> cpu(row * static_cast<size_t>(num_envs), 0.0f);
  std::vector<float> ctrl(static_cast<size_t>(num_envs * m.nu));
  for (int e = 0; e < num_envs; ++e) {
    const DataView<float> d = BatchRows<float>{layout, cpu.data(), {}}.env(e);
    reset_data(m, d);
    for (int i = 0; i < m.nq; ++i) d.qpos[i] = static_cast<float>(qpos[static_cast<size_t>(i)]);
    for (int i = 0; i < m.nv; ++i)
      d.qvel[i] = static_cast<float>(qvel[static_cast<size_t>(i)]) * (1.0f + 0.05f * static_cast<float>(e));
    for (int a = 0; a < m.nu; ++a)
      ctrl[static_cast<size_t>(e * m.nu + a)] = 0.3f * static_cast<float>((e + a) % 5) - 0.6f;
  }
  DeviceBuffer<float> gpu(static_cast<i64>(cpu.size()));
  DeviceBuffer<float> gpu_ctrl(static_cast<i64>(ctrl.size()));
  DeviceBuffer<int> gpu_ncon(num_envs);
  exec.copy_from_host(gpu.data(), cpu.data(), gpu.size());
  if (!ctrl.empty()) exec.copy_from_host(gpu_ctrl.data(), ctrl.data(), gpu_ctrl.size());
  std::vector<int> ncon_cpu(static_cast<size_t>(num_envs)), ncon_gpu(static_cast<size_t>(num_envs));
  CpuExecutor cpu_exec(2);
  std::vector<float> got(cpu.size());
  for (int k = 0; k < steps; ++k) {
    parallel_for(
        cpu_exec, num_envs,
        PhysicsStepEnvs<float>{m, layout, cpu.data(), ctrl.empty() ? nullptr : ctrl.data(), substeps, ncon_cpu.data()});
    physics_step_cuda(exec, dm, gpu.data(), ctrl.empty() ? nullptr : gpu_ctrl.data(), num_envs, substeps,
                      gpu_ncon.data());
    exec.copy_to_host(got.data(), gpu.data(), gpu.size());
    exec.copy_to_host(ncon_gpu.data(), gpu_ncon.data(), num_envs);
    for (int e = 0; e < num_envs; ++e) {
      const size_t at = row * static_cast<size_t>(e);
      // fp32 with nvcc's FMA contraction against the CPU's separate multiply-adds: the states part
      // by rounding, and contacts amplify it over a few steps; 1e-3 leaves room for that, not for a
      // wrong force or a missed contact (millimetres to centimetres within one control step).
      ASSERT_TRUE(gpu_test::all_close("qpos env " + std::to_string(e) + " step " + std::to_string(k),
                                      got.data() + at + layout.qpos, cpu.data() + at + layout.qpos,
                                      static_cast<size_t>(m.nq), 1e-3, 1e-3));
      ASSERT_TRUE(gpu_test::all_close("qvel env " + std::to_string(e) + " step " + std::to_string(k),
                                      got.data() + at + layout.qvel, cpu.data() + at + layout.qvel,
                                      static_cast<size_t>(m.nv), 1e-2, 1e-2));
      // (distances along rays from poses within the qpos tolerance above)
      if (sensors) {
        ASSERT_TRUE(gpu_test::all_close("sensordata env " + std::to_string(e) + " step " + std::to_string(k),
                                        got.data() + at + layout.sensordata, cpu.data() + at + layout.sensordata,
                                        static_cast<size_t>(m.nsensordata), 1e-3, 1e-3));
      }
    }
  }
  int total_cpu = 0, total_gpu = 0;
  for (int e = 0; e < num_envs; ++e)
    total_cpu += ncon_cpu[static_cast<size_t>(e)], total_gpu += ncon_gpu[static_cast<size_t>(e)];
  EXPECT_NEAR(total_gpu, total_cpu, 1 + num_envs / 10);
}

TEST(PhysicsCuda, ContactSceneMatchesCpu) {
  RLT_REQUIRE_GPU();
  const Model model = load_mjcf(data_path("contact_scene.xml"));
  const int key = model.key_id("dropped");
  ASSERT_GE(key, 0);
  const std::vector<double> qpos(model.key_qpos.begin() + key * model.nq,
                                 model.key_qpos.begin() + (key + 1) * model.nq);
  const std::vector<double> qvel(model.key_qvel.begin() + key * model.nv,
                                 model.key_qvel.begin() + (key + 1) * model.nv);
  lockstep(model, qpos, qvel, 64, 20, 5);
}

TEST(PhysicsCuda, ActuatedLimitedArmMatchesCpu) {
  RLT_REQUIRE_GPU();
  const std::string xml =
      "<mujoco><option timestep=\"0.002\"/><worldbody>"
      "<geom type=\"plane\" size=\"5 5 0.1\"/>"
      "<body pos=\"0 0 0.5\"><joint name=\"a\" type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-60 60\" "
      "damping=\"0.1\"/>"
      "  <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.04\"/>"
      "  <body pos=\"0.3 0 0\"><joint name=\"b\" type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-90 10\"/>"
      "    <geom type=\"box\" size=\"0.15 0.04 0.04\" pos=\"0.15 0 0\"/></body></body>"
      "</worldbody><actuator><motor joint=\"a\" gear=\"20\" ctrllimited=\"true\" ctrlrange=\"-1 1\"/>"
      "<position joint=\"b\" kp=\"30\"/></actuator></mujoco>";
  const Model model = parse_mjcf(xml, "arm");
  lockstep(model, model.qpos0, std::vector<double>(static_cast<size_t>(model.nv), 0.5), 32, 20, 5);
}

// MuJoCo's noslip post-pass (sim/noslip.h) on boxes resting and sliding on a plane.
TEST(PhysicsCuda, NoslipMatchesCpu) {
  RLT_REQUIRE_GPU();
  const Model model = load_mjcf(data_path("misc/noslip_pyramidal.xml"));
  ASSERT_GT(model.noslip_iterations, 0);
  lockstep(model, model.qpos0, std::vector<double>(static_cast<size_t>(model.nv), 0.0), 32, 20, 5);
}

// Rangefinders (sim/ray.h) on every geom type and two height fields, from a panning scanner: the
// sensor values as well as the state.
TEST(PhysicsCuda, RangefinderMatchesCpu) {
  RLT_REQUIRE_GPU();
  const Model model = load_mjcf(data_path("sensors_rangefinder.xml"));
  ASSERT_GT(model.nsensordata, 0);
  lockstep(model, model.qpos0, std::vector<double>(static_cast<size_t>(model.nv), 0.0), 16, 20, 5, true);
}

// The Ant from its reference pose: it drops onto the floor (sphere and capsule contacts with the
// plane, joint limits, eight motors with per-env controls).
TEST(PhysicsCuda, AntWithContactsMatchesCpu) {
  RLT_REQUIRE_GPU();
  const Model model = load_mjcf(std::string(RLT_TEST_DATA_DIR) + "/../../envs/assets/ant.xml");
  ASSERT_GT(HostModel<float>(model).view().ncon_max, 0);
  lockstep(model, model.qpos0, std::vector<double>(static_cast<size_t>(model.nv), 0.2), 64, 30, 5);
}

// More envs than threads: one block of 256 threads steps 2048 Ants (8 each, one after the other in
// the thread's workspace slot, sim/dynamics.h BatchRows), as a device with fewer resident threads
// than envs does; each env must still follow the CPU.
TEST(PhysicsCuda, GridStrideWorkspaceMatchesCpu) {
  RLT_REQUIRE_GPU();
  const Model model = load_mjcf(std::string(RLT_TEST_DATA_DIR) + "/../../envs/assets/ant.xml");
  {
    CudaExecutor probe;
    probe.set_max_threads(300);
    EXPECT_EQ(probe.max_threads(), 256);  // whole blocks
    EXPECT_EQ(probe.workspace_slots(2048), 256);
    EXPECT_EQ(probe.workspace_slots(100), 100);
  }
  lockstep(model, model.qpos0, std::vector<double>(static_cast<size_t>(model.nv), 0.2), 2048, 10, 5, false, 256);
}

// The CUDA PhysicsBatch (random controls drawn on the device, PhysicsStepEnvs) against the same batch on
// the CPU executor with sim/actuators.h random_ctrl: the bench's two paths step the same physics.
TEST(PhysicsCuda, BenchBatchMatchesCpu) {
  RLT_REQUIRE_GPU();
  const Model model = load_mjcf(std::string(RLT_TEST_DATA_DIR) + "/../../envs/assets/ant.xml");
  const HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  const DataLayout layout = data_layout(m);
  const std::vector<double> range_d = ctrl_sample_range(model);
  const std::vector<float> range(range_d.begin(), range_d.end());
  const int num_envs = 600, substeps = 5;
  CudaExecutor cuda;
  cuda.set_max_threads(256);  // a grid-stride batch: workspace slots for 256 of its 600 envs
  const auto gpu_batch = make_physics_batch(model, num_envs, substeps, 7, cuda);
  PhysicsBatch& gpu = *gpu_batch;
  std::vector<float> cpu(static_cast<size_t>(num_envs * layout.row), 0.0f), ctrl(static_cast<size_t>(num_envs * m.nu));
  std::vector<int> ncon_cpu(num_envs);
  for (int e = 0; e < num_envs; ++e)
    reset_data(m, BatchRows<float>{layout, cpu.data(), {}}.env(e));
  std::vector<float> got;
  std::vector<int> ncon_gpu;
  for (u32 k = 0; k < 10; ++k) {
    for (int e = 0; e < num_envs; ++e)
      random_ctrl(range.data(), m.nu, 7, static_cast<u32>(e), k, ctrl.data() + e * m.nu);
    CpuExecutor exec(2);
    parallel_for(exec, num_envs, PhysicsStepEnvs<float>{m, layout, cpu.data(), ctrl.data(), substeps, ncon_cpu.data()});
    gpu.control_step(CtrlMode::kRandom, k);
    gpu.download(&got, &ncon_gpu);
    for (int e = 0; e < num_envs; ++e) {
      const size_t at = static_cast<size_t>(e * layout.row);
      ASSERT_TRUE(gpu_test::all_close("bench qpos env " + std::to_string(e) + " step " + std::to_string(k),
                                      got.data() + at + layout.qpos, cpu.data() + at + layout.qpos,
                                      static_cast<size_t>(m.nq), 1e-3, 1e-3));
    }
  }
}

}  // namespace
}  // namespace rlt
