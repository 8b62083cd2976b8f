#include "viewer/layout.h"

#include <algorithm>
#include <cmath>

namespace rlt::view {

EnvGrid EnvGrid::make(std::int64_t num_envs, float spacing_x, float spacing_y) {
  EnvGrid g;
  g.num_envs = std::max<std::int64_t>(1, num_envs);
  // About 1.8 times wider than deep in metres (a landscape image of a grid seen at a slant), not
  // square in cells: long thin envs (CartPole's rail) get more rows than columns.
  const double ratio = std::max(0.1, static_cast<double>(spacing_y) / std::max(1e-3f, spacing_x));
  g.columns = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(g.num_envs) * ratio * 1.8))));
  g.columns = std::min(g.columns, g.num_envs);
  g.spacing_x = spacing_x;
  g.spacing_y = spacing_y;
  return g;
}

Vec3 EnvGrid::origin(std::int64_t env) const {
  const std::int64_t col = env % columns, row = env / columns;
  return {(static_cast<float>(col) - 0.5f * static_cast<float>(columns - 1)) * spacing_x,
          (static_cast<float>(row) - 0.5f * static_cast<float>(rows() - 1)) * spacing_y, 0.0f};
}

std::int64_t EnvGrid::env_at(float x, float y) const {
  const float fc = x / spacing_x + 0.5f * static_cast<float>(columns - 1);
  const float fr = y / spacing_y + 0.5f * static_cast<float>(rows() - 1);
  const std::int64_t col = static_cast<std::int64_t>(std::lround(fc)), row = static_cast<std::int64_t>(std::lround(fr));
  if (col < 0 || col >= columns || row < 0 || row >= rows()) return -1;
  const std::int64_t env = row * columns + col;
  return env < num_envs ? env : -1;
}

std::vector<std::pair<std::int64_t, std::int64_t>> visible_env_ranges(const EnvGrid& grid, const Mat4& vp, Vec3 centre,
                                                                      float radius, std::int64_t merge_gap) {
  // Frustum planes from the rows of view_proj (Gribb & Hartmann): a point is inside when
  // (row3 +- row_k) . p >= 0 for k = 0, 1, 2.
  float planes[6][4];
  for (int k = 0; k < 3; ++k)
    for (int s = 0; s < 2; ++s) {
      float* p = planes[2 * k + s];
      for (int c = 0; c < 4; ++c) p[c] = vp.at(3, c) + (s ? -1.0f : 1.0f) * vp.at(k, c);
      const float n = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
      for (int c = 0; c < 4; ++c) p[c] /= n > 0 ? n : 1.0f;
    }
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (std::int64_t i = 0; i < grid.num_envs; ++i) {
    const Vec3 c = grid.origin(i) + centre;
    bool inside = true;
    for (const auto& p : planes)
      if (p[0] * c.x + p[1] * c.y + p[2] * c.z + p[3] < -radius) {
        inside = false;
        break;
      }
    if (!inside) continue;
    if (!ranges.empty() && i - (ranges.back().first + ranges.back().second) <= merge_gap)
      ranges.back().second = i + 1 - ranges.back().first;
    else ranges.push_back({i, 1});
  }
  return ranges;
}

}  // namespace rlt::view
