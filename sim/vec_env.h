// VecEnv: N copies of one environment stepped together (DESIGN.md D5).
//
// All arrays are in the executor's memory (host for the CPU, device for CUDA), one row per env:
//   obs          (num_envs x obs_dim)  observation after the step (after auto-reset when done)
//   final_obs    (num_envs x obs_dim)  observation that ended the episode; valid where done
//   reward       (num_envs)            reward of the step
//   terminated   (num_envs)            1 where the episode reached a terminal state
//   truncated    (num_envs)            1 where it hit the time limit (bootstrap from final_obs)
//   ep_return    (num_envs)            undiscounted return of the episode that just ended
//   ep_length    (num_envs)            its length in steps
// Auto-reset happens inside step: a done env starts its next episode in the same call.
// The one implementation is VecEnvT<Env, Exec> (sim/vec_env_impl.h), made by name by the env
// registry (envs/registry.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/cpu_executor.h"
#include "sim/model.h"
#include "sim/spaces.h"

namespace rlt {

// One shape the viewer (viewer/) draws for every env; sim/ knows nothing of rendering, it only says
// what the env is made of. Poses come from VecEnv::request_draw_poses / wait_draw_poses.
// A triangle mesh in its geom's frame: vert (3 per vertex), face (3 vertex ids per triangle,
// counter-clockwise seen from outside where the source says so).
struct DrawMesh {
  std::vector<float> vert;
  std::vector<unsigned> face;
};

struct DrawGeom {
  DrawGeom() = default;
  DrawGeom(int type_, const float (&size_)[3], const float (&rgba_)[4]) : type(type_) {
    std::copy(size_, size_ + 3, size);
    std::copy(rgba_, rgba_ + 4, rgba);
  }
  int type = 0;               // GeomType (sim/model.h): 0 plane, 1 hfield, 2 sphere, 3 capsule, 5 cylinder,
                              // 6 box, 7 mesh
  float size[3] = {0, 0, 0};  // MuJoCo's meaning: plane half-extents, sphere radius, capsule
                              // (radius, half-length along local z), box half-extents
  float rgba[4] = {0.8f, 0.6f, 0.4f, 1.0f};
  int group = 0;                         // MuJoCo's geom group (the viewer shows 0-2, as MuJoCo's by default)
  bool moves = false;                    // its body has a joint up to the world (a static one: the terrain)
  std::shared_ptr<const DrawMesh> mesh;  // mesh geoms: the full mesh; hfield geoms: the terrain surface
};

namespace detail {
inline std::shared_ptr<const DrawMesh> model_mesh(const Model& m, int id) {
  auto out = std::make_shared<DrawMesh>();
  const size_t v0 = static_cast<size_t>(m.mesh_vertadr[static_cast<size_t>(id)]);
  const size_t nv = static_cast<size_t>(m.mesh_vertnum[static_cast<size_t>(id)]);
  for (size_t k = 0; k < 3 * nv; ++k) out->vert.push_back(static_cast<float>(m.mesh_vert[3 * v0 + k]));
  if (m.mesh_faceadr.size() > static_cast<size_t>(id)) {
    const size_t f0 = static_cast<size_t>(m.mesh_faceadr[static_cast<size_t>(id)]);
    const size_t nf = static_cast<size_t>(m.mesh_facenum[static_cast<size_t>(id)]);
    for (size_t k = 0; k < 3 * nf; ++k) out->face.push_back(static_cast<unsigned>(m.mesh_face[3 * f0 + k]));
  }
  return out;
}
// The height field as MuJoCo draws it: its top surface (one vertex per sample, two triangles per
// cell; row 0 at y = -radius_y), the four walls down to the base (two triangles per edge step) and
// the bottom at z = -base_z (MuJoCo's size: radius_x, radius_y, elevation_z, base_z).
inline std::shared_ptr<const DrawMesh> model_hfield(const Model& m, int id) {
  auto out = std::make_shared<DrawMesh>();
  const size_t h = static_cast<size_t>(id);
  const int nr = m.hfield_nrow[h], nc = m.hfield_ncol[h];
  const double rx = m.hfield_size[4 * h], ry = m.hfield_size[4 * h + 1], top = m.hfield_size[4 * h + 2];
  const float base = static_cast<float>(-m.hfield_size[4 * h + 3]);
  const size_t adr = static_cast<size_t>(m.hfield_adr[h]);
  auto x_of = [&](int c) { return static_cast<float>(-rx + 2 * rx * c / std::max(nc - 1, 1)); };
  auto y_of = [&](int r) { return static_cast<float>(-ry + 2 * ry * r / std::max(nr - 1, 1)); };
  for (int r = 0; r < nr; ++r)
    for (int c = 0; c < nc; ++c)
      out->vert.insert(out->vert.end(),
                       {x_of(c), y_of(r), static_cast<float>(top * m.hfield_data[adr + static_cast<size_t>(r * nc + c)])});
  for (int r = 0; r + 1 < nr; ++r)
    for (int c = 0; c + 1 < nc; ++c) {
      const unsigned a = static_cast<unsigned>(r * nc + c), b = a + 1, d = a + static_cast<unsigned>(nc), e = d + 1;
      out->face.insert(out->face.end(), {a, b, e, a, e, d});
    }
  // the boundary samples counter-clockwise seen from +z (row 0, last column, last row, column 0),
  // each with a vertex under it on the base; the walls face out
  std::vector<unsigned> ring;
  for (int c = 0; c + 1 < nc; ++c) ring.push_back(static_cast<unsigned>(c));
  for (int r = 0; r + 1 < nr; ++r) ring.push_back(static_cast<unsigned>(r * nc + nc - 1));
  for (int c = nc - 1; c > 0; --c) ring.push_back(static_cast<unsigned>((nr - 1) * nc + c));
  for (int r = nr - 1; r > 0; --r) ring.push_back(static_cast<unsigned>(r * nc));
  const unsigned b0 = static_cast<unsigned>(out->vert.size() / 3), n = static_cast<unsigned>(ring.size());
  for (unsigned t : ring) out->vert.insert(out->vert.end(), {out->vert[3 * t], out->vert[3 * t + 1], base});
  for (unsigned i = 0; i < n; ++i) {
    const unsigned j = (i + 1) % n;
    out->face.insert(out->face.end(), {ring[i], b0 + i, b0 + j, ring[i], b0 + j, ring[j]});
  }
  // the bottom, facing -z: the base vertices under the four corners
  const unsigned c0 = b0, c1 = b0 + static_cast<unsigned>(nc - 1), c2 = c1 + static_cast<unsigned>(nr - 1),
                 c3 = c2 + static_cast<unsigned>(nc - 1);
  out->face.insert(out->face.end(), {c0, c2, c1, c0, c3, c2});
  return out;
}

// Whether geom g's body moves (a joint on it or on an ancestor).
inline bool model_geom_moves(const Model& m, int g) {
  for (int b = m.geom_bodyid[static_cast<size_t>(g)]; b > 0; b = m.body_parentid[static_cast<size_t>(b)])
    if (m.body_dofnum[static_cast<size_t>(b)] > 0) return true;
  return false;
}
}  // namespace detail

// The geoms of a compiled model as the viewer draws them (robot envs, PhysicsBatch). Geoms of one
// mesh or height field share its DrawMesh.
inline std::vector<DrawGeom> model_draw_geoms(const Model& m) {
  std::vector<DrawGeom> out(static_cast<size_t>(m.ngeom));
  std::vector<std::shared_ptr<const DrawMesh>> meshes(static_cast<size_t>(m.nmesh)), hfields(static_cast<size_t>(m.nhfield));
  for (size_t g = 0; g < out.size(); ++g) {
    out[g].type = m.geom_type[g];
    for (size_t k = 0; k < 3; ++k) out[g].size[k] = static_cast<float>(m.geom_size[3 * g + k]);
    if (m.geom_rgba.size() == 4 * out.size())
      for (size_t k = 0; k < 4; ++k) out[g].rgba[k] = m.geom_rgba[4 * g + k];
    if (m.geom_group.size() == out.size()) out[g].group = m.geom_group[g];
    out[g].moves = detail::model_geom_moves(m, static_cast<int>(g));
    const int id = m.geom_dataid.size() == out.size() ? m.geom_dataid[g] : -1;
    if (id < 0) continue;
    if (out[g].type == kGeomMesh && id < m.nmesh) {
      auto& mesh = meshes[static_cast<size_t>(id)];
      if (!mesh) mesh = detail::model_mesh(m, id);
      out[g].mesh = mesh;
    } else if (out[g].type == kGeomHField && id < m.nhfield) {
      auto& hf = hfields[static_cast<size_t>(id)];
      if (!hf) hf = detail::model_hfield(m, id);
      out[g].mesh = hf;
    }
  }
  return out;
}

// VecEnv::tracking()'s values per env.
constexpr int kTrackingFloats = 7;

// One named array of a VecEnv's state, as bytes, for checkpoints.
struct StateBlob {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

// request_draw_poses's ranges (first, count) over a batch of num_envs: the number of envs they
// cover; std::out_of_range for one outside [0, num_envs).
inline i64 draw_range_total(const std::vector<std::pair<i64, i64>>& ranges, i64 num_envs) {
  i64 total = 0;
  for (const auto& [first, count] : ranges) {
    if (first < 0 || count < 0 || first + count > num_envs)
      throw std::out_of_range("draw_poses: envs [" + std::to_string(first) + ", " + std::to_string(first + count) +
                              ") outside [0, " + std::to_string(num_envs) + ")");
    total += count;
  }
  return total;
}

// Bytes a batch of envs allocates in executor memory: `fixed` once (the model's blocks, the
// action bounds), `per_env` for each env (its state, physics and randomization rows, outputs) and,
// on a device only, `device_per_slot` for each of its constraint workspace slots: one per env up to
// the device's resident threads `device_slots` (sim/dynamics.h, BatchRows; the CPU keeps one per
// thread, not counted). Computed from the same dimensions the batch allocates with, whatever the
// executor that made it (apps/memory_budget.h sums it with the learner's to check a run against
// free memory before anything is allocated; it sets device_slots from the device).
struct EnvMemory {
  i64 fixed = 0;
  i64 per_env = 0;
  i64 device_per_slot = 0;
  i64 device_slots = -1;  // CudaExecutor::max_threads of the device; < 0: unknown, one slot per env
  i64 slots(i64 num_envs) const { return device_slots < 0 ? num_envs : std::min(num_envs, device_slots); }
  i64 bytes(i64 num_envs, bool device) const {
    return fixed + per_env * num_envs + (device ? device_per_slot * slots(num_envs) : 0);
  }
  // Bytes per env at num_envs, the fixed part left out (what `rltrain bench` prints).
  i64 per_env_at(i64 num_envs, bool device) const {
    return num_envs > 0 ? (bytes(num_envs, device) - fixed + num_envs - 1) / num_envs : 0;
  }
};

// The values an [env] parameter accepts: a task's Params::visit names each parameter with
// v(name, field, doc) or, for one with a physical range (a mass, a length, a time step, a noise
// scale), v(name, field, doc, range); set_param refuses a value outside it with `expect`.
struct ParamRange {
  double lo, hi;
  bool lo_open;        // lo itself is excluded
  const char* expect;  // completes "expected ..."
  bool contains(double v) const { return (lo_open ? v > lo : v >= lo) && v <= hi; }
};
inline constexpr ParamRange kAnyValue{-1e300, 1e300, false, "a finite number"};
inline constexpr ParamRange kPositive{0.0, 1e300, true, "a finite positive number"};
inline constexpr ParamRange kNonNegative{0.0, 1e300, false, "a finite non-negative number"};
inline constexpr ParamRange kUnitInterval{0.0, 1.0, false, "a number in [0, 1]"};

class VecEnv {
 public:
  virtual ~VecEnv() = default;

  virtual const EnvSpec& spec() const = 0;
  virtual i64 num_envs() const = 0;
  virtual Device device() const = 0;
  // What a batch of this env allocates (the same for any num_envs and either executor; a device adds
  // EnvMemory::device_per_slot per workspace slot).
  virtual EnvMemory memory() const = 0;

  // Sets a parameter of the env by name (before reset). Returns false for an unknown name.
  virtual bool set_param(const std::string& name, double value) = 0;
  // (name, current value, doc) of every parameter, for `rltrain envs` and config errors.
  struct ParamInfo {
    std::string name;
    double value;
    std::string doc;
  };
  virtual std::vector<ParamInfo> params() const = 0;

  // Starts every env's first episode; all randomness derives from seed (DESIGN.md D4).
  virtual void reset(std::uint64_t seed) = 0;
  // This batch's envs are envs [first, first + num_envs()) of a larger set spread over several
  // processes (rl/distributed.h): their random streams are keyed by that global index, so N
  // processes of E envs draw what one process of N x E envs draws. Set before reset(); 0 by default.
  // An env type that cannot be offset throws std::logic_error for first != 0.
  virtual void set_first_env(i64 first) {
    if (first != 0) throw std::logic_error("env '" + spec().name + "' cannot be offset to env " + std::to_string(first));
  }
  // actions: (num_envs x action.dim) floats in executor memory; discrete actions hold the index.
  virtual void step(const float* actions) = 0;
  // Ends env `env`'s current episode without counting it as finished (no reward, flags or episode
  // totals are written) and starts its next one, keyed (seed, env, episode + 1) like an auto-reset:
  // the same initial state the auto-reset of that episode would give. obs() is updated for that
  // env; the others are untouched. Throws std::out_of_range for env outside [0, num_envs()).
  virtual void reset_one(i64 env) = 0;
  // Uniform random actions from the declared action space (executor memory, num_envs x
  // action.dim, valid until the next call), keyed by (seed, step): Gymnasium's action_space.sample().
  virtual const float* sample_actions(std::uint64_t seed, std::uint32_t step) = 0;

  virtual const float* obs() const = 0;
  virtual const float* final_obs() const = 0;
  virtual const float* reward() const = 0;
  virtual const std::uint8_t* terminated() const = 0;
  virtual const std::uint8_t* truncated() const = 0;
  virtual const float* ep_return() const = 0;
  virtual const std::int32_t* ep_length() const = 0;
  // Locomotion tasks: the mean forward speed (m/s) of the episode that just ended (valid where
  // done): its forward displacement over its duration, i.e. the mean of the x velocity the reward
  // pays for. nullptr for envs without a forward direction.
  virtual const float* ep_forward_speed() const { return nullptr; }
  // Command-tracking tasks (the joysticks): per env, the step's command and what the robot did,
  // (c_vx, c_vy, c_yaw, v_x, v_y, w_z) in the base frame and the base's heading (rad, world; the
  // viewer's arrows) (num_envs x kTrackingFloats, executor memory; valid for the
  // step just taken, also where it ended the episode). nullptr for other envs.
  virtual const float* tracking() const { return nullptr; }
  // Asymmetric actor-critic (spec().critic_obs_dim > 0): the critic's privileged observation
  // (num_envs x critic_obs_dim) after the step, and the one that ended the episode (valid where
  // done), in executor memory. nullptr when the env has none.
  virtual const float* critic_obs() const { return nullptr; }
  virtual const float* final_critic_obs() const { return nullptr; }

  // Drawing (viewer/): the geoms of one env (the same for every env of the batch), and their world
  // poses for envs [first, first + count): count x geoms.size() x 12 floats, each geom's position (3)
  // then its rotation matrix (9, row-major, columns = local axes), as MuJoCo's geom_xpos / geom_xmat.
  // An env with nothing to draw returns no geoms.
  virtual std::vector<DrawGeom> draw_geoms() const { return {}; }

  // Poses as a begin/end pair, so a frame loop overlaps the copy with its other work:
  //   request_draw_poses(ranges)  gathers the poses of the envs of every [first, first + count) range,
  //                               one range after the other. CUDA: a kernel into device scratch and an
  //                               asynchronous copy into the env's own pinned host buffer on the
  //                               executor's stream; returns at once. CPU: gathers into a host buffer.
  //                               Throws std::out_of_range for a range outside [0, num_envs()).
  //   wait_draw_poses()           waits on that copy only (its event, not the device) and returns the
  //                               host array (sum of counts x geoms x 12 floats); valid until the next
  //                               request. A second request before the wait replaces the first;
  //                               nullptr when nothing was requested or the env draws nothing.
  // Steps queued between the two do not change what the request captured (stream order).
  using DrawRange = std::pair<i64, i64>;  // (first, count)
  virtual void request_draw_poses(const std::vector<DrawRange>& ranges) const { (void)ranges; }
  void request_draw_poses(i64 first, i64 count) const { request_draw_poses(std::vector<DrawRange>{{first, count}}); }
  virtual const float* wait_draw_poses() const { return nullptr; }

  // Synchronous convenience on the pair: host_out gets count x geoms.size() x 12 floats. (Replaces
  // a pending request.)
  void draw_poses(i64 first, i64 count, float* host_out) const {
    request_draw_poses(first, count);
    const float* p = wait_draw_poses();
    const i64 n = count * static_cast<i64>(draw_geoms().size()) * 12;
    if (p && n > 0) std::memcpy(host_out, p, sizeof(float) * static_cast<size_t>(n));
  }

  // Number of env steps whose state went non-finite and were reset (D9), since reset().
  virtual i64 num_nonfinite_resets() const = 0;
  // The same per env (num_envs counts in executor memory, valid while the env lives), for a learner
  // that sums them on the executor with its statistics (rl/ppo_impl.h); nullptr where the env
  // keeps none (the learner then reports num_nonfinite_resets() read on the host).
  virtual const std::uint32_t* nonfinite_counts() const { return nullptr; }

  // Checkpoint support: the full mutable state, device-agnostic bytes.
  virtual std::vector<StateBlob> save_state() const = 0;
  // Throws std::runtime_error naming the blob when a size does not match.
  virtual void load_state(const std::vector<StateBlob>& blobs) = 0;
};

}  // namespace rlt
