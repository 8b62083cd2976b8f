// The CPU instantiation of PhysicsBatchT (its CUDA twin: envs/physics_batch_cuda.cu).
#include "envs/physics_batch.h"

#include <algorithm>
#include <atomic>

#include "sim/cpu_executor.h"
#include "sim/physics_lanes.h"
#include "sim/slot_step.h"

namespace rlt {

template <>
std::unique_ptr<PhysicsBatch> make_physics_batch<CpuExecutor>(const Model& model, i64 num_envs, int substeps,
                                                              std::uint64_t ctrl_seed, const CpuExecutor& exec) {
  return std::make_unique<PhysicsBatchT<CpuExecutor>>(model, num_envs, substeps, ctrl_seed, exec);
}

#if defined(RLT_LANES)
struct PhysicsLanes {
  SlotLayout layout;
  long id;  // (a thread's workspace belongs to one PhysicsLanes: ids are never reused)
};

std::shared_ptr<PhysicsLanes> make_physics_lanes(const ModelView<float>& m, std::string* why) {
  static std::atomic<long> next_id{0};
  auto lanes = std::make_shared<PhysicsLanes>();
  if (!lanes->layout.build(m, why) || !slot_step_supported(m, why)) return nullptr;
  lanes->id = ++next_id;
  return lanes;
}

void physics_lanes_step(const PhysicsLanes& lanes, const CpuExecutor& exec, const ModelView<float>& m,
                        const DataLayout& layout, float* data, const float* ctrl, int substeps, int* ncon,
                        i64 num_envs) {
  const ModelView<LaneFloat> lm = lane_model_view(m);
  const i64 groups = (num_envs + kLanes - 1) / kLanes;
  parallel_for(
      exec, groups,
      [&](i64 g) {
        // each thread's workspace, made again for another batch
        thread_local std::unique_ptr<SlotLanesWork> work;
        thread_local long owner = 0;
        if (!work || owner != lanes.id) work = std::make_unique<SlotLanesWork>(m, lanes.layout), owner = lanes.id;
        const i64 first = g * kLanes, count = std::min<i64>(kLanes, num_envs - first);
        float* rows[kLanes];
        const float* c[kLanes];
        int* n[kLanes];
        for (int l = 0; l < count; ++l) {
          const i64 e = first + l;
          rows[l] = data + e * layout.row, c[l] = ctrl ? ctrl + e * m.nu : nullptr, n[l] = ncon + e;
        }
        if (count == kLanes) {
          slot_physics_step_lanes(m, lm, rows, c, substeps, n, lanes.layout, *work);
          return;
        }
        for (int l = 0; l < count; ++l)  // (the batch's last envs, fewer than kLanes: alone, the same bits)
          slot_physics_step(m, data_view(layout, rows[l], work->workspace.data()), c[l], substeps, n[l], lanes.layout,
                            work->alone);
      },
      Items::kCostly);
}
#else
struct PhysicsLanes {};
std::shared_ptr<PhysicsLanes> make_physics_lanes(const ModelView<float>&, std::string* why) {
  *why = "this build has no SIMD lanes (GCC or Clang vector types)";
  return nullptr;
}
void physics_lanes_step(const PhysicsLanes&, const CpuExecutor&, const ModelView<float>&, const DataLayout&, float*,
                        const float*, int, int*, i64) {}
#endif

}  // namespace rlt
