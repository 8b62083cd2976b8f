#include "viewer/renderer.h"

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rlt::view {
namespace {

// Vertex shader shared by the main and the shadow pass: a unit mesh scaled per kind, rotated and
// placed per instance. Capsules: the unit sphere's halves are pushed apart by the half-length
// (a_cap = +-1), so radius and length scale independently without distorting the caps. Ellipsoids:
// the unit sphere scaled per axis by the semi-axes; cylinders: the unit cylinder (radius 1, half
// height 1) by radius, radius, half height; boxes by the half sizes.
const char* kGeomVs = R"(#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_nrm;
layout(location = 2) in float a_cap;
layout(location = 3) in vec3 i_pos;
layout(location = 4) in vec3 i_r0;
layout(location = 5) in vec3 i_r1;
layout(location = 6) in vec3 i_r2;
layout(location = 7) in vec3 i_size;
layout(location = 8) in vec4 i_color;
uniform mat4 u_view_proj;
uniform mat4 u_light_vp;
uniform int u_kind;
out vec3 v_world;
out vec3 v_nrm;
out vec4 v_color;
out vec4 v_light;
void main() {
  vec3 q;
  if (u_kind == 0) q = a_pos * i_size.x;
  else if (u_kind == 1) q = a_pos * i_size.x + vec3(0.0, 0.0, a_cap * i_size.y);
  else if (u_kind == 4) q = a_pos * vec3(i_size.x, i_size.x, i_size.y);
  else q = a_pos * i_size;
  // An ellipsoid's normals scale by the inverse of its semi-axes (the unit sphere's, stretched).
  vec3 n = u_kind == 3 ? a_nrm / i_size : a_nrm;
  vec3 w = i_pos + vec3(dot(i_r0, q), dot(i_r1, q), dot(i_r2, q));
  v_nrm = vec3(dot(i_r0, n), dot(i_r1, n), dot(i_r2, n));
  v_world = w;
  v_color = i_color;
  v_light = u_light_vp * vec4(w, 1.0);
  gl_Position = u_view_proj * vec4(w, 1.0);
}
)";

const char* kShadowFn = R"(
uniform sampler2DShadow u_shadow;
uniform int u_use_shadow;
float lit(vec4 lp) {
  if (u_use_shadow == 0) return 1.0;
  vec3 p = lp.xyz / lp.w * 0.5 + 0.5;
  if (p.x < 0.0 || p.x > 1.0 || p.y < 0.0 || p.y > 1.0 || p.z > 1.0) return 1.0;
  vec2 texel = 1.0 / vec2(textureSize(u_shadow, 0));
  float s = 0.0;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y) s += texture(u_shadow, vec3(p.xy + vec2(x, y) * texel, p.z - 0.0015));
  return s / 9.0;
}
)";

const std::string kGeomFs = std::string(R"(#version 330 core
in vec3 v_world;
in vec3 v_nrm;
in vec4 v_color;
in vec4 v_light;
uniform vec3 u_light_dir;
uniform vec3 u_eye;
out vec4 frag;
)") + kShadowFn + R"(
void main() {
  vec3 n = normalize(v_nrm);
  if (!gl_FrontFacing) n = -n;  // meshes are drawn from both sides
  vec3 l = normalize(u_light_dir);
  float sh = lit(v_light);
  float diff = max(dot(n, l), 0.0) * sh;
  float hemi = 0.5 + 0.5 * n.z;
  vec3 ambient = mix(vec3(0.30, 0.28, 0.26), vec3(0.48, 0.52, 0.58), hemi);
  vec3 h = normalize(l + normalize(u_eye - v_world));
  float spec = pow(max(dot(n, h), 0.0), 48.0) * 0.2 * sh;
  frag = vec4(v_color.rgb * (ambient + 0.7 * diff) + vec3(spec), 1.0);
}
)";

const char* kDepthFs = R"(#version 330 core
void main() {}
)";

const char* kGroundVs = R"(#version 330 core
layout(location = 0) in vec2 a_xy;
uniform mat4 u_view_proj;
uniform mat4 u_light_vp;
uniform vec3 u_centre;
uniform float u_half;
out vec3 v_world;
out vec4 v_light;
void main() {
  vec3 w = vec3(u_centre.xy + a_xy * u_half, 0.0);
  v_world = w;
  v_light = u_light_vp * vec4(w, 1.0);
  gl_Position = u_view_proj * vec4(w, 1.0);
}
)";

// 1 m grid lines (anti-aliased with the screen-space derivative), 5 m lines stronger; fades out far away.
const std::string kGroundFs = std::string(R"(#version 330 core
in vec3 v_world;
in vec4 v_light;
uniform vec3 u_light_dir;
uniform vec3 u_eye;
uniform vec3 u_sky;
out vec4 frag;
)") + kShadowFn + R"(
float grid_line(vec2 p, float cell) {
  vec2 g = abs(fract(p / cell - 0.5) - 0.5) / (fwidth(p / cell) + 1e-6);
  return 1.0 - min(min(g.x, g.y), 1.0);
}
void main() {
  vec3 base = vec3(0.56, 0.58, 0.55);
  float line = max(0.35 * grid_line(v_world.xy, 1.0), 0.6 * grid_line(v_world.xy, 5.0));
  vec3 c = mix(base, vec3(0.38, 0.40, 0.38), line);
  float sh = lit(v_light);
  float diff = max(normalize(u_light_dir).z, 0.0);
  c *= 0.55 + 0.5 * diff * sh;
  float d = length(v_world - u_eye);
  float fog = clamp((d - 60.0) / 400.0, 0.0, 1.0);
  frag = vec4(mix(c, u_sky, fog), 1.0);
}
)";

unsigned compile(GLenum type, const char* src) {
  const GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &src, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[4096];
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    throw std::runtime_error(std::string("viewer: shader compile error: ") + log);
  }
  return s;
}

unsigned link(const char* vs, const char* fs) {
  const GLuint v = compile(GL_VERTEX_SHADER, vs), f = compile(GL_FRAGMENT_SHADER, fs);
  const GLuint p = glCreateProgram();
  glAttachShader(p, v);
  glAttachShader(p, f);
  glLinkProgram(p);
  glDeleteShader(v);
  glDeleteShader(f);
  GLint ok = 0;
  glGetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[4096];
    glGetProgramInfoLog(p, sizeof log, nullptr, log);
    glDeleteProgram(p);
    throw std::runtime_error(std::string("viewer: shader link error: ") + log);
  }
  return p;
}

// A unit sphere (cap 0) or capsule halves (cap +1 upper, -1 lower, the equator ring doubled so the
// cylinder between them is a band of quads): vertex = position (3), normal (3), cap (1).
void uv_mesh(bool capsule, int stacks, int slices, std::vector<float>& v, std::vector<unsigned>& idx) {
  struct Ring {
    float phi, cap;
  };
  std::vector<Ring> rings;
  const float pi = 3.14159265358979f;
  for (int i = 0; i <= stacks; ++i) {
    const float phi = pi * static_cast<float>(i) / stacks;
    if (!capsule) rings.push_back({phi, 0.0f});
    else if (2 * i < stacks) rings.push_back({phi, 1.0f});
    else if (2 * i == stacks) rings.push_back({phi, 1.0f}), rings.push_back({phi, -1.0f});
    else rings.push_back({phi, -1.0f});
  }
  for (const Ring& r : rings)
    for (int j = 0; j <= slices; ++j) {
      const float th = 2.0f * pi * static_cast<float>(j) / slices;
      const float x = std::sin(r.phi) * std::cos(th), y = std::sin(r.phi) * std::sin(th), z = std::cos(r.phi);
      v.insert(v.end(), {x, y, z, x, y, z, r.cap});
    }
  const unsigned w = slices + 1;
  for (unsigned i = 0; i + 1 < rings.size(); ++i)
    for (unsigned j = 0; j < static_cast<unsigned>(slices); ++j) {
      const unsigned a = i * w + j, b = a + w;
      idx.insert(idx.end(), {a, b, a + 1, a + 1, b, b + 1});
    }
}

void box_mesh(std::vector<float>& v, std::vector<unsigned>& idx) {
  for (int axis = 0; axis < 3; ++axis)
    for (int sign = -1; sign <= 1; sign += 2) {
      const unsigned base = static_cast<unsigned>(v.size() / 7);
      const int u = (axis + 1) % 3, w = (axis + 2) % 3;
      const float corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
      for (const auto& c : corners) {
        float p[3], n[3] = {0, 0, 0};
        p[axis] = static_cast<float>(sign), p[u] = c[0], p[w] = c[1];
        n[axis] = static_cast<float>(sign);
        v.insert(v.end(), {p[0], p[1], p[2], n[0], n[1], n[2], 0.0f});
      }
      if (sign > 0) idx.insert(idx.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
      else idx.insert(idx.end(), {base, base + 2, base + 1, base, base + 3, base + 2});
    }
}

// The unit cylinder (radius 1, z from -1 to 1): the side as a band of quads with radial normals,
// then the two caps as fans; counter-clockwise seen from outside.
void cylinder_mesh(int slices, std::vector<float>& v, std::vector<unsigned>& idx) {
  const float pi = 3.14159265358979f;
  for (int j = 0; j <= slices; ++j) {  // side: (bottom, top) per slice edge
    const float th = 2.0f * pi * static_cast<float>(j) / slices, c = std::cos(th), s = std::sin(th);
    v.insert(v.end(), {c, s, -1.0f, c, s, 0.0f, 0.0f, c, s, 1.0f, c, s, 0.0f, 0.0f});
  }
  for (unsigned j = 0; j < static_cast<unsigned>(slices); ++j) {
    const unsigned b0 = 2 * j, t0 = b0 + 1, b1 = b0 + 2, t1 = b0 + 3;
    idx.insert(idx.end(), {b0, b1, t1, b0, t1, t0});
  }
  for (int sign = 1; sign >= -1; sign -= 2) {  // caps: centre, then the rim
    const float z = static_cast<float>(sign);
    const unsigned centre = static_cast<unsigned>(v.size() / 7);
    v.insert(v.end(), {0.0f, 0.0f, z, 0.0f, 0.0f, z, 0.0f});
    for (int j = 0; j <= slices; ++j) {
      const float th = 2.0f * pi * static_cast<float>(j) / slices;
      v.insert(v.end(), {std::cos(th), std::sin(th), z, 0.0f, 0.0f, z, 0.0f});
    }
    for (unsigned j = 0; j < static_cast<unsigned>(slices); ++j) {
      const unsigned a = centre + 1 + j;
      if (sign > 0) idx.insert(idx.end(), {centre, a, a + 1});
      else idx.insert(idx.end(), {centre, a + 1, a});
    }
  }
}

void set_mat4(unsigned program, const char* name, const Mat4& m) {
  glUniformMatrix4fv(glGetUniformLocation(program, name), 1, GL_FALSE, m.m);
}
void set_vec3(unsigned program, const char* name, Vec3 v) {
  glUniform3f(glGetUniformLocation(program, name), v.x, v.y, v.z);
}

}  // namespace

Renderer::Renderer() {
  m_geom_program = link(kGeomVs, kGeomFs.c_str());
  m_depth_program = link(kGeomVs, kDepthFs);
  m_ground_program = link(kGroundVs, kGroundFs.c_str());
  glGenBuffers(kNumKinds * kNumLods, &m_instances[0][0]);
  const int stacks[kNumLods] = {10, 6, 4}, slices[kNumLods] = {16, 10, 6};
  for (int k = 0; k < kNumKinds; ++k)
    for (int lod = 0; lod < kNumLods; ++lod) {
      std::vector<float> v;
      std::vector<unsigned> idx;
      if (k == kKindBox) box_mesh(v, idx);
      else if (k == kKindCylinder) cylinder_mesh(slices[lod], v, idx);
      else uv_mesh(k == kKindCapsule, stacks[lod], slices[lod], v, idx);
      build_mesh(m_mesh[k][lod], v, idx, m_instances[k][lod]);
    }
  const float quad[8] = {-1, -1, 1, -1, 1, 1, -1, 1};
  glGenVertexArrays(1, &m_ground_vao);
  glGenBuffers(1, &m_ground_vbo);
  glBindVertexArray(m_ground_vao);
  glBindBuffer(GL_ARRAY_BUFFER, m_ground_vbo);
  glBufferData(GL_ARRAY_BUFFER, sizeof quad, quad, GL_STATIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindVertexArray(0);

  glGenTextures(1, &m_shadow_tex);
  glBindTexture(GL_TEXTURE_2D, m_shadow_tex);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT24, m_shadow_size, m_shadow_size, 0, GL_DEPTH_COMPONENT, GL_FLOAT,
               nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_MODE, GL_COMPARE_REF_TO_TEXTURE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_FUNC, GL_LEQUAL);
  glGenFramebuffers(1, &m_shadow_fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, m_shadow_fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, m_shadow_tex, 0);
  glDrawBuffer(GL_NONE);
  glReadBuffer(GL_NONE);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    throw std::runtime_error("viewer: the shadow-map framebuffer is incomplete");
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (const GLenum e = glGetError(); e != GL_NO_ERROR)
    throw std::runtime_error("viewer: OpenGL error " + std::to_string(e) + " while creating the renderer");
}

int Renderer::add_mesh(const std::vector<float>& vert, const std::vector<unsigned>& face) {
  // flat shading: each triangle's corners with its normal (7 floats: position, normal, cap 0)
  std::vector<float> v;
  std::vector<unsigned> idx;
  v.reserve(face.size() * 7);
  const size_t nv = vert.size() / 3;
  for (size_t t = 0; t + 2 < face.size(); t += 3) {
    if (face[t] >= nv || face[t + 1] >= nv || face[t + 2] >= nv) continue;
    const Vec3 p[3] = {{vert[3 * face[t]], vert[3 * face[t] + 1], vert[3 * face[t] + 2]},
                       {vert[3 * face[t + 1]], vert[3 * face[t + 1] + 1], vert[3 * face[t + 1] + 2]},
                       {vert[3 * face[t + 2]], vert[3 * face[t + 2] + 1], vert[3 * face[t + 2] + 2]}};
    const Vec3 n = cross(p[1] - p[0], p[2] - p[0]);
    const float len = length(n);
    if (!(len > 0.0f)) continue;  // degenerate
    const Vec3 u = n * (1.0f / len);
    for (const Vec3& q : p) {
      idx.push_back(static_cast<unsigned>(v.size() / 7));
      v.insert(v.end(), {q.x, q.y, q.z, u.x, u.y, u.z, 0.0f});
    }
  }
  TriMesh tm;
  glGenBuffers(1, &tm.instances);
  build_mesh(tm.mesh, v, idx, tm.instances);
  m_meshes.push_back(tm);
  return static_cast<int>(m_meshes.size()) - 1;
}

void Renderer::set_mesh_instances(int mesh, const float* data, std::int64_t count) {
  TriMesh& tm = m_meshes.at(static_cast<size_t>(mesh));
  glBindBuffer(GL_ARRAY_BUFFER, tm.instances);
  const GLsizeiptr bytes = static_cast<GLsizeiptr>(count * kInstanceFloats * sizeof(float));
  if (count > tm.capacity) {
    glBufferData(GL_ARRAY_BUFFER, bytes, data, GL_STREAM_DRAW);
    tm.capacity = count;
  } else if (count > 0) {
    glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, data);
  }
  tm.count = count;
}

void Renderer::clear_meshes() {
  for (TriMesh& tm : m_meshes) {
    glDeleteVertexArrays(1, &tm.mesh.vao);
    glDeleteBuffers(1, &tm.mesh.vbo);
    glDeleteBuffers(1, &tm.mesh.ibo);
    glDeleteBuffers(1, &tm.instances);
  }
  m_meshes.clear();
}

Renderer::~Renderer() {
  clear_meshes();
  for (auto& lods : m_mesh)
    for (auto& m : lods) {
      glDeleteVertexArrays(1, &m.vao);
      glDeleteBuffers(1, &m.vbo);
      glDeleteBuffers(1, &m.ibo);
    }
  glDeleteBuffers(kNumKinds * kNumLods, &m_instances[0][0]);
  glDeleteVertexArrays(1, &m_ground_vao);
  glDeleteBuffers(1, &m_ground_vbo);
  glDeleteFramebuffers(1, &m_shadow_fbo);
  glDeleteTextures(1, &m_shadow_tex);
  glDeleteProgram(m_geom_program);
  glDeleteProgram(m_depth_program);
  glDeleteProgram(m_ground_program);
}

void Renderer::build_mesh(Mesh& mesh, const std::vector<float>& verts, const std::vector<unsigned>& idx,
                          unsigned instance_vbo) {
  glGenVertexArrays(1, &mesh.vao);
  glGenBuffers(1, &mesh.vbo);
  glGenBuffers(1, &mesh.ibo);
  glBindVertexArray(mesh.vao);
  glBindBuffer(GL_ARRAY_BUFFER, mesh.vbo);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(verts.size() * sizeof(float)), verts.data(), GL_STATIC_DRAW);
  const GLsizei vs = 7 * sizeof(float);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, vs, reinterpret_cast<void*>(0));
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, vs, reinterpret_cast<void*>(3 * sizeof(float)));
  glEnableVertexAttribArray(2);
  glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, vs, reinterpret_cast<void*>(6 * sizeof(float)));
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, mesh.ibo);
  glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(idx.size() * sizeof(unsigned)), idx.data(),
               GL_STATIC_DRAW);
  mesh.num_indices = static_cast<int>(idx.size());
  glBindBuffer(GL_ARRAY_BUFFER, instance_vbo);
  const GLsizei is = kInstanceFloats * sizeof(float);
  const int sizes[6] = {3, 3, 3, 3, 3, 4};
  int offset = 0;
  for (int a = 0; a < 6; ++a) {
    glEnableVertexAttribArray(static_cast<GLuint>(3 + a));
    glVertexAttribPointer(static_cast<GLuint>(3 + a), sizes[a], GL_FLOAT, GL_FALSE, is,
                          reinterpret_cast<void*>(static_cast<uintptr_t>(offset) * sizeof(float)));
    glVertexAttribDivisor(static_cast<GLuint>(3 + a), 1);
    offset += sizes[a];
  }
  glBindVertexArray(0);
}

void Renderer::set_instances(GeomKind kind, int lod, const float* data, std::int64_t count) {
  glBindBuffer(GL_ARRAY_BUFFER, m_instances[kind][lod]);
  const GLsizeiptr bytes = static_cast<GLsizeiptr>(count * kInstanceFloats * sizeof(float));
  if (count > m_capacity[kind][lod]) {
    glBufferData(GL_ARRAY_BUFFER, bytes, data, GL_STREAM_DRAW);
    m_capacity[kind][lod] = count;
  } else if (count > 0) {
    glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, data);
  }
  m_count[kind][lod] = count;
}

void Renderer::draw_geoms(unsigned program) {
  const GLint kind_loc = glGetUniformLocation(program, "u_kind");
  for (int k = 0; k < kNumKinds; ++k)
    for (int lod = 0; lod < kNumLods; ++lod) {
      if (m_count[k][lod] == 0) continue;
      glUniform1i(kind_loc, k);
      const Mesh& mesh = m_mesh[k][lod];
      glBindVertexArray(mesh.vao);
      glDrawElementsInstanced(GL_TRIANGLES, mesh.num_indices, GL_UNSIGNED_INT, nullptr,
                              static_cast<GLsizei>(m_count[k][lod]));
      ++m_draw_calls;
    }
  glDisable(GL_CULL_FACE);  // meshes: a file's winding is not always outward
  glUniform1i(kind_loc, kKindBox);  // scaled by size (1 1 1), rotated, placed
  for (const TriMesh& tm : m_meshes) {
    if (tm.count == 0 || tm.mesh.num_indices == 0) continue;
    glBindVertexArray(tm.mesh.vao);
    glDrawElementsInstanced(GL_TRIANGLES, tm.mesh.num_indices, GL_UNSIGNED_INT, nullptr, static_cast<GLsizei>(tm.count));
    ++m_draw_calls;
  }
  glEnable(GL_CULL_FACE);
  glBindVertexArray(0);
}

void Renderer::render(const RenderSettings& s, unsigned fbo, int width, int height) {
  m_draw_calls = 0;
  const Vec3 l = normalize(s.light_dir);
  const float r = s.shadow_radius;
  const Mat4 light_vp =
      ortho(-r, r, -r, r, 0.05f, 6.0f * r) * look_at(s.shadow_centre + l * (3.0f * r), s.shadow_centre, Vec3{0, 0, 1});
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glEnable(GL_CULL_FACE);
  glCullFace(GL_BACK);
  glFrontFace(GL_CCW);
  if (s.shadows) {
    glBindFramebuffer(GL_FRAMEBUFFER, m_shadow_fbo);
    glViewport(0, 0, m_shadow_size, m_shadow_size);
    glClear(GL_DEPTH_BUFFER_BIT);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(2.0f, 4.0f);
    glUseProgram(m_depth_program);
    set_mat4(m_depth_program, "u_view_proj", light_vp);
    set_mat4(m_depth_program, "u_light_vp", light_vp);
    draw_geoms(m_depth_program);
    glDisable(GL_POLYGON_OFFSET_FILL);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glViewport(0, 0, width, height);
  glClearColor(s.sky[0], s.sky[1], s.sky[2], 1.0f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, m_shadow_tex);
  for (const unsigned p : {m_geom_program, m_ground_program}) {
    glUseProgram(p);
    set_mat4(p, "u_view_proj", s.view_proj);
    set_mat4(p, "u_light_vp", light_vp);
    set_vec3(p, "u_light_dir", l);
    set_vec3(p, "u_eye", s.eye);
    glUniform1i(glGetUniformLocation(p, "u_shadow"), 0);
    glUniform1i(glGetUniformLocation(p, "u_use_shadow"), s.shadows ? 1 : 0);
  }
  glUseProgram(m_geom_program);
  draw_geoms(m_geom_program);
  if (s.ground) {
    glDisable(GL_CULL_FACE);
    glUseProgram(m_ground_program);
    set_vec3(m_ground_program, "u_centre", s.ground_centre);
    set_vec3(m_ground_program, "u_sky", Vec3{s.sky[0], s.sky[1], s.sky[2]});
    glUniform1f(glGetUniformLocation(m_ground_program, "u_half"), s.ground_half);
    glBindVertexArray(m_ground_vao);
    glDrawArrays(GL_TRIANGLE_FAN, 0, 4);
    ++m_draw_calls;
    glBindVertexArray(0);
  }
  glUseProgram(0);
  glDisable(GL_CULL_FACE);
}

OffscreenTarget::OffscreenTarget(int width, int height) : m_width(width), m_height(height) {
  glGenFramebuffers(1, &m_fbo);
  glGenRenderbuffers(1, &m_color);
  glGenRenderbuffers(1, &m_depth);
  glBindRenderbuffer(GL_RENDERBUFFER, m_color);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindRenderbuffer(GL_RENDERBUFFER, m_depth);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, m_color);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, m_depth);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE)
    throw std::runtime_error("viewer: offscreen framebuffer incomplete (status " + std::to_string(status) + ")");
}

OffscreenTarget::~OffscreenTarget() {
  glDeleteFramebuffers(1, &m_fbo);
  glDeleteRenderbuffers(1, &m_color);
  glDeleteRenderbuffers(1, &m_depth);
}

void OffscreenTarget::read_rgb(std::vector<std::uint8_t>& out) const {
  read_framebuffer_rgb(m_fbo, m_width, m_height, out);
}

void read_framebuffer_rgb(unsigned fbo, int width, int height, std::vector<std::uint8_t>& out) {
  const size_t row = static_cast<size_t>(width) * 3;
  std::vector<std::uint8_t> flipped(row * static_cast<size_t>(height));
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, flipped.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  out.resize(flipped.size());
  for (int y = 0; y < height; ++y)  // OpenGL's rows start at the bottom
    std::memcpy(out.data() + row * static_cast<size_t>(y), flipped.data() + row * static_cast<size_t>(height - 1 - y),
                row);
}

}  // namespace rlt::view
