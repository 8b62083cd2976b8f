// Where each env of a batch is drawn: envs sit on a grid in the ground plane (row-major, centred on
// the origin), each env's own coordinates offset by its cell's origin. Plain C++ (tests use it).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "viewer/math3d.h"

namespace rlt::view {

struct EnvGrid {
  std::int64_t num_envs = 1;
  std::int64_t columns = 1;
  float spacing_x = 2.0f, spacing_y = 2.0f;  // m between neighbouring cells

  // A near-square grid of num_envs cells of (spacing_x x spacing_y).
  static EnvGrid make(std::int64_t num_envs, float spacing_x, float spacing_y);
  std::int64_t rows() const { return (num_envs + columns - 1) / columns; }
  Vec3 origin(std::int64_t env) const;
  // Half the grid's extent in x and y (m), cells included.
  float half_width() const { return 0.5f * spacing_x * static_cast<float>(columns); }
  float half_depth() const { return 0.5f * spacing_y * static_cast<float>(rows()); }
  // The env whose cell holds ground point (x, y), or -1.
  std::int64_t env_at(float x, float y) const;
};

// Envs whose cell (a sphere of radius `radius` around origin + centre) intersects the view frustum
// of view_proj, as sorted [first, first + count) ranges; ranges closer than `merge_gap` envs are
// merged (fewer, larger copies).
std::vector<std::pair<std::int64_t, std::int64_t>> visible_env_ranges(const EnvGrid& grid, const Mat4& view_proj,
                                                                      Vec3 centre, float radius,
                                                                      std::int64_t merge_gap = 4);

}  // namespace rlt::view
