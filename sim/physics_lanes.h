// The robots' physics in SIMD lanes (docs/ARCHITECTURE.md "Physics in lanes"; a whole substep:
// sim/slot_step.h): the templates of sim/dynamics.h instantiated with T = LaneFloat
// (sim/lanes.h) step kLanes envs of one model at once, every lane computing the bits that T = float
// computes for its env (tests/sim/test_physics_lanes.cpp, tools/bench_physics_lanes.cpp).
//
// The data of kLanes envs is laid out field-major: DataView<LaneFloat> over one block of
// data_size(m) LaneFloats, scalar k of the float layout holding that scalar of every lane
// (qpos[i][lane], what a GPU warp reads coalesced). The model is shared: ModelView<LaneFloat>'s
// reals are float (ModelReal), the same arrays as the float view's. gather_lanes and scatter_lanes
// (sim/lanes.h) move kLanes one-env blocks into a lanes block and back.
#pragma once

#include <cstring>
#include <type_traits>

#include "sim/dynamics.h"
#include "sim/lanes.h"
#include "sim/model_view.h"

#if defined(RLT_LANES)
namespace rlt {

// The float view as the lanes' view: the same sizes, options and arrays (ModelReal<LaneFloat> is
// float, so the two structs have the same members in the same order).
inline ModelView<LaneFloat> lane_model_view(const ModelView<float>& m) {
  static_assert(
      sizeof(ModelView<LaneFloat>) == sizeof(ModelView<float>) && std::is_trivially_copyable<ModelView<float>>::value,
      "ModelView<LaneFloat> is ModelView<float> with another T");
  ModelView<LaneFloat> lm;
  std::memcpy(static_cast<void*>(&lm), &m, sizeof lm);
  return lm;
}

}  // namespace rlt
#endif
