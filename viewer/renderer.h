// The OpenGL 3.3 core renderer: instanced geoms (one draw call per geom type, whatever the number
// of envs and bodies), a directional light with a shadow map (3x3 PCF) and hemispheric ambient, and
// a ground plane with a grid. Needs a current GL context (viewer.cpp makes one with GLFW).
#pragma once

#include <cstdint>
#include <vector>

#include "viewer/math3d.h"

namespace rlt::view {

// Instances are uploaded per geom kind, kInstanceFloats each: position (3), rotation rows (3 x 3,
// DrawGeom's row-major matrix), size (3, DrawGeom's meaning), rgba (4).
enum GeomKind : int { kKindSphere = 0, kKindCapsule = 1, kKindBox = 2, kKindEllipsoid = 3, kKindCylinder = 4, kNumKinds = 5 };
constexpr int kInstanceFloats = 19;
// Levels of detail of the round meshes (boxes have one): 0 near, 1 middle, 2 far. Instances are
// bucketed per (kind, level) by the caller; each non-empty bucket is one instanced draw call.
constexpr int kNumLods = 3;

struct RenderSettings {
  Mat4 view_proj;                       // camera
  Vec3 eye;                             // camera position (specular)
  Vec3 light_dir{0.45f, -0.35f, 1.0f};  // towards the light (normalized inside)
  Vec3 shadow_centre;                   // the shadow map covers a square of half-size shadow_radius around it
  float shadow_radius = 10.0f;
  float ground_half = 50.0f;  // the ground quad spans [-ground_half, ground_half]^2 around ground_centre
  Vec3 ground_centre;
  bool shadows = true;
  bool ground = true;
  float sky[3] = {0.72f, 0.80f, 0.90f};  // clear colour (flat: the tests look for it)
};

class Renderer {
 public:
  Renderer();  // compiles the shaders, builds the meshes and the shadow map; throws on GL errors
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Replaces the instances of kind at level of detail lod (count x kInstanceFloats floats).
  void set_instances(GeomKind kind, int lod, const float* data, std::int64_t count);
  // Triangle meshes (mesh geoms, height fields): vert 3 floats per vertex in the geom's frame, face 3
  // vertex ids per triangle; drawn flat-shaded from both sides. Returns the mesh's id for
  // set_mesh_instances (size 1 1 1: the vertices are already in metres). clear_meshes drops them all.
  int add_mesh(const std::vector<float>& vert, const std::vector<unsigned>& face);
  void set_mesh_instances(int mesh, const float* data, std::int64_t count);
  void clear_meshes();
  int num_meshes() const { return static_cast<int>(m_meshes.size()); }
  // Draws into framebuffer fbo (0: the window) of width x height pixels.
  void render(const RenderSettings& s, unsigned fbo, int width, int height);
  // Draw calls issued by the last render() (shadow and main passes, ground included).
  int last_draw_calls() const { return m_draw_calls; }

 private:
  struct Mesh {
    unsigned vao = 0, vbo = 0, ibo = 0;
    int num_indices = 0;
  };
  void build_mesh(Mesh& mesh, const std::vector<float>& verts, const std::vector<unsigned>& idx, unsigned instance_vbo);
  void draw_geoms(unsigned program);

  Mesh m_mesh[kNumKinds][kNumLods];  // mesh of a level, bound to that bucket's instances
  struct TriMesh {
    Mesh mesh;
    unsigned instances = 0;
    std::int64_t count = 0, capacity = 0;
  };
  std::vector<TriMesh> m_meshes;  // add_mesh's
  unsigned m_instances[kNumKinds][kNumLods] = {};
  std::int64_t m_count[kNumKinds][kNumLods] = {};
  std::int64_t m_capacity[kNumKinds][kNumLods] = {};
  unsigned m_ground_vao = 0, m_ground_vbo = 0;
  unsigned m_geom_program = 0, m_depth_program = 0, m_ground_program = 0;
  unsigned m_shadow_fbo = 0, m_shadow_tex = 0;
  int m_shadow_size = 2048;
  int m_draw_calls = 0;
};

// An offscreen framebuffer (RGBA8 colour + 24-bit depth) for headless frames.
class OffscreenTarget {
 public:
  OffscreenTarget(int width, int height);
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;
  unsigned fbo() const { return m_fbo; }
  // The image as RGB rows, top row first (width x height x 3).
  void read_rgb(std::vector<std::uint8_t>& out) const;

 private:
  int m_width, m_height;
  unsigned m_fbo = 0, m_color = 0, m_depth = 0;
};

// Reads fbo's (width x height) pixels as RGB rows, top row first.
void read_framebuffer_rgb(unsigned fbo, int width, int height, std::vector<std::uint8_t>& out);

}  // namespace rlt::view
