#include "viewer/viewer.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "rl/checkpoint.h"
#include "rl/config.h"
#include "viewer/camera.h"
#include "viewer/layout.h"
#include "viewer/renderer.h"
#include "viewer/sim_source.h"

namespace rlt {

const char* viewer_no_display_hint() {
  return "no display to open a window on. Render offscreen instead: rltrain view ... --headless --frames N --out DIR "
         "(on a machine without an X server, under a virtual one: xvfb-run -a rltrain view ... --headless ...)";
}

namespace {

using namespace view;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// GLFW's last error, for messages.
std::string g_glfw_error;
void on_glfw_error(int code, const char* what) { g_glfw_error = std::to_string(code) + ": " + (what ? what : ""); }

// Mesh and height-field geoms are drawn from their triangles (Scene::mesh_of), not by kind.
constexpr int kKindTriangles = kNumKinds;

int kind_of(int geom_type) {
  switch (geom_type) {
    case 1:  // height field
    case 7:  // mesh
      return kKindTriangles;
    case 2:
      return kKindSphere;
    case 3:
      return kKindCapsule;
    case 4:
      return kKindEllipsoid;
    case 5:
      return kKindCylinder;
    case 6:
      return kKindBox;
    default:
      return -1;  // plane (the ground is drawn anyway) and unsupported types
  }
}

// The batch's geoms laid out on the grid, turned into per-kind instance arrays each frame.
struct Scene {
  std::vector<DrawGeom> geoms;
  std::vector<int> kinds;
  EnvGrid grid;
  Vec3 env_centre;       // centre of env 0's initial bounding box, in its own frame
  float env_radius = 1;  // half its diagonal
  std::vector<float> poses;
  std::vector<float> inst[kNumKinds][kNumLods];  // instances per geom kind and level of detail
  // Triangle meshes (mesh geoms, height fields): the distinct DrawMeshes, each geom's index into them
  // (-1: none), their bounding radii, and the instances of each.
  std::vector<std::shared_ptr<const DrawMesh>> meshes;
  std::vector<int> mesh_of;
  std::vector<float> mesh_radius;
  std::vector<std::vector<float>> mesh_inst;
  int generation = 0;  // bumped by init(): the renderer re-uploads the meshes
  std::int64_t visible_envs = 0;

  // A height field in a static body: the terrain, the same in every env (drawn once, not framed).
  bool terrain(size_t g) const { return geoms[g].type == kGeomHField && !geoms[g].moves; }

  void init(ViewSim& sim) {
    geoms = sim.geoms();
    if (geoms.empty())
      throw ConfigError("env '" + sim.title() + "' has nothing to draw (it provides no draw_geoms/draw_poses)");
    kinds.clear();
    meshes.clear(), mesh_of.clear(), mesh_radius.clear();
    for (const auto& g : geoms) {
      // MuJoCo's viewer shows geom groups 0-2 by default (3+: collision proxies of visual meshes)
      int kind = g.group >= 0 && g.group <= 2 ? kind_of(g.type) : -1;
      int mesh = -1;
      if (kind == kKindTriangles && g.mesh && !g.mesh->face.empty()) {
        const auto it = std::find(meshes.begin(), meshes.end(), g.mesh);
        mesh = static_cast<int>(it - meshes.begin());
        if (it == meshes.end()) {
          meshes.push_back(g.mesh);
          float r2 = 0;
          for (size_t k = 0; k + 2 < g.mesh->vert.size(); k += 3) {
            const float* v = g.mesh->vert.data() + k;
            r2 = std::max(r2, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
          }
          mesh_radius.push_back(std::sqrt(r2));
        }
      } else if (kind == kKindTriangles) {
        kind = -1;
      }
      kinds.push_back(kind);
      mesh_of.push_back(mesh);
    }
    mesh_inst.assign(meshes.size(), {});
    ++generation;
    poses.resize(geoms.size() * 12);
    sim.poses(0, 1, poses.data());
    Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
    for (size_t g = 0; g < geoms.size(); ++g) {
      if (kinds[g] < 0 || terrain(g)) continue;  // not what the camera frames
      const float* p = poses.data() + 12 * g;
      const float* R = p + 3;  // row-major: R[3 i + j] = world axis i of local axis j
      const float* s = geoms[g].size;
      float e[3];
      for (int i = 0; i < 3; ++i) {  // the geom's world-axis half extent
        const float a0 = std::fabs(R[3 * i]), a1 = std::fabs(R[3 * i + 1]), a2 = std::fabs(R[3 * i + 2]);
        e[i] = kinds[g] == kKindTriangles ? mesh_radius[static_cast<size_t>(mesh_of[g])]
               : kinds[g] == kKindBox || kinds[g] == kKindEllipsoid ? a0 * s[0] + a1 * s[1] + a2 * s[2]
               : kinds[g] == kKindCylinder                          ? (a0 + a1) * s[0] + a2 * s[1]
               : kinds[g] == kKindCapsule                           ? s[0] + a2 * s[1]
                                                                    : s[0];
      }
      lo = {std::min(lo.x, p[0] - e[0]), std::min(lo.y, p[1] - e[1]), std::min(lo.z, p[2] - e[2])};
      hi = {std::max(hi.x, p[0] + e[0]), std::max(hi.y, p[1] + e[1]), std::max(hi.z, p[2] + e[2])};
    }
    if (lo.x > hi.x) lo = hi = Vec3{0, 0, 0};
    env_centre = (lo + hi) * 0.5f;
    env_radius = std::max(0.25f, 0.5f * length(hi - lo));
    const float ex = hi.x - lo.x, ey = hi.y - lo.y;
    const float margin = std::max(0.6f, 0.35f * std::max(ex, ey));
    float sx = ex + margin, sy = ey + margin;
    if (ey < 0.3f * ex) sy = std::max(sy, 0.5f * sx);  // planar envs: rows far enough apart to see each
    grid = EnvGrid::make(sim.num_envs(), sx, sy);
  }

  // The frame's poses as a begin/end pair (ViewSim::request_poses / wait_poses): request() picks the
  // visible envs (all when cull is false) and starts their copy; build() waits for it and turns the
  // poses into instances, env `highlight` brightened. Between the two the frame loop does its other
  // work (the panel, input, PNG writing), which overlaps a device's copy.
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // the requested (first, count) envs
  Vec3 eye{0, 0, 0};                                          // the eye they were picked for
  bool requested = false;

  void request(ViewSim& sim, const Mat4& view_proj, Vec3 eye_, bool cull) {
    const std::int64_t n = sim.num_envs();
    ranges = cull ? visible_env_ranges(grid, view_proj, env_centre, env_radius)
                  : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, n}};
    eye = eye_;
    sim.request_poses(ranges);
    requested = true;
  }

  // An env's level of detail comes from its distance to the eye in env radii (far envs are a few
  // pixels tall: coarse spheres and capsules cost a software rasterizer much less).
  void build(ViewSim& sim, std::int64_t highlight) {
    for (auto& kind : inst)
      for (auto& v : kind) v.clear();
    for (auto& v : mesh_inst) v.clear();
    const size_t ng = geoms.size();
    visible_envs = 0;
    if (!requested) return;
    requested = false;
    const float* all = sim.wait_poses();
    for (const auto& [first, count] : ranges) {
      const float* range_poses = all + static_cast<size_t>(visible_envs) * ng * 12;
      visible_envs += count;
      for (std::int64_t k = 0; k < count; ++k) {
        const Vec3 o = grid.origin(first + k);
        const bool lit = first + k == highlight;
        const float radii = length(o + env_centre - eye) / env_radius;
        const int lod = radii > 40.0f ? 2 : radii > 12.0f ? 1 : 0;
        for (size_t g = 0; g < ng; ++g) {
          const int kind = kinds[g];
          if (kind < 0) continue;
          // a static height field (every env has the same terrain; under each they would overlap):
          // under the highlighted env only, env 0 when none is; one in a moving body: in every env
          if (terrain(g) && first + k != std::max<std::int64_t>(highlight, 0)) continue;
          const float* p = range_poses + (static_cast<size_t>(k) * ng + g) * 12;
          const DrawGeom& d = geoms[g];
          const bool tri = kind == kKindTriangles;
          auto& v = tri ? mesh_inst[static_cast<size_t>(mesh_of[g])] : inst[kind][kind == kKindBox ? 0 : lod];
          v.insert(v.end(), {p[0] + o.x, p[1] + o.y, p[2] + o.z, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]});
          if (tri) v.insert(v.end(), {1.0f, 1.0f, 1.0f});  // the vertices are in metres already
          else v.insert(v.end(), {d.size[0], d.size[1], d.size[2]});
          if (lit) v.insert(v.end(), {0.5f + 0.5f * d.rgba[0], 0.5f + 0.5f * d.rgba[1], 0.5f + 0.5f * d.rgba[2], 1.0f});
          else v.insert(v.end(), {d.rgba[0], d.rgba[1], d.rgba[2], d.rgba[3]});
        }
      }
    }
  }

  // Where the camera looks when following env `env`: the mean position of its geoms.
  Vec3 focus(ViewSim& sim, std::int64_t env) {
    const size_t ng = geoms.size();
    std::vector<float> p(ng * 12);
    sim.poses(env, 1, p.data());
    Vec3 c{0, 0, 0};
    int m = 0;
    for (size_t g = 0; g < ng; ++g)
      if (kinds[g] >= 0 && !terrain(g)) c = c + Vec3{p[12 * g], p[12 * g + 1], p[12 * g + 2]}, ++m;
    return grid.origin(env) + (m ? c * (1.0f / static_cast<float>(m)) : env_centre);
  }
};

template <class T>
struct Ring {
  std::vector<T> v;
  size_t cap;
  explicit Ring(size_t c) : cap(c) {}
  void push(T x) {
    if (v.size() == cap) v.erase(v.begin());
    v.push_back(x);
  }
};

// One viewer session: the sim, its scene, the camera and what the panel controls.
struct Session {
  const ViewOptions& opts;
  std::unique_ptr<ViewSim> sim;
  EnvSim* env_sim = nullptr;  // the same object when it is an EnvSim (policy reloads)
  Scene scene;
  int mesh_generation = -1;  // the scene generation whose meshes the renderer holds
  OrbitCamera camera;
  ControlMode mode = ControlMode::kRandom;
  bool deterministic = false;
  bool paused = false;
  bool follow = false;
  bool shadows = true;
  double speed = 1.0, speed_acc = 0.0;
  std::int64_t selected = 0;
  std::vector<float> manual;
  Ring<float> rewards{600}, returns{200};
  float running_return = 0, last_return = NAN;
  EnvInfo info;
  std::int64_t env_steps = 0;  // steps of the batch (x num_envs for env steps)
  double steps_per_s = 0, frame_ms = 0, sim_ms = 0, render_ms = 0;
  // --returns: the first finished episode of every env.
  std::vector<float> first_return;
  std::vector<char> has_return;
  std::int64_t num_first = 0;
  std::vector<std::pair<i64, float>> finished_scratch;
  // train --view
  fs::file_time_type ckpt_time{};
  int policy_loads = 0;
  std::string watch_status;
  const std::atomic<bool>* training_done = nullptr;  // train --view: set by the trainer thread

  explicit Session(const ViewOptions& o) : opts(o) {}

  void frame_camera(float aspect) {
    // Fit the grid: its width across the image, its depth (foreshortened by the pitch) and one env's
    // height up it; the near rows are closer than the target, hence the + hd.
    const float hw = scene.grid.half_width(), hd = scene.grid.half_depth();
    camera.target = scene.env_centre;
    camera.yaw = opts.yaw;
    camera.pitch = opts.pitch;
    const float tan_y = std::tan(0.5f * camera.fovy), tan_x = tan_y * aspect;
    const float d =
        std::max({hw / tan_x, (hd * std::sin(camera.pitch) + scene.env_radius) / tan_y, scene.env_radius / tan_y});
    camera.distance = std::max(1.0f, 1.1f * d + 0.5f * hd * std::cos(camera.pitch)) / std::max(0.05f, opts.zoom);
  }

  void step_once() {
    sim->step(mode, deterministic, manual);
    ++env_steps;
    if (!opts.returns_path.empty()) {
      sim->finished(finished_scratch);
      for (const auto& [i, r] : finished_scratch)
        if (!has_return[static_cast<size_t>(i)])
          has_return[static_cast<size_t>(i)] = 1, first_return[static_cast<size_t>(i)] = r, ++num_first;
    }
    if (!opts.headless) {  // the panel's numbers: one env's few floats
      info = sim->inspect(selected);
      rewards.push(info.reward);
      running_return += info.reward;
      if (info.done) {
        last_return = info.finished_return;
        returns.push(info.finished_return);
        running_return = 0;
      }
    }
  }

  void advance() {
    speed_acc += speed;
    const auto t0 = Clock::now();
    int k = 0;
    for (; speed_acc >= 1.0 && k < 1000; speed_acc -= 1.0, ++k) step_once();
    const double dt = seconds_since(t0);
    sim_ms = 1e3 * dt;
    if (k > 0 && dt > 0) steps_per_s = 0.9 * steps_per_s + 0.1 * (static_cast<double>(k * sim->num_envs()) / dt);
  }

  // Starts the copy of the next frame's poses, right after the step: the camera follows its env
  // first (a synchronous read of that env's poses, so before the request it would replace), then the
  // visible envs are requested. Returns the frame's view-projection; Scene::build waits.
  Mat4 request_frame(float aspect) {
    if (follow) camera.target = scene.focus(*sim, selected);
    const Mat4 vp = camera.view_proj(aspect);
    scene.request(*sim, vp, camera.eye(), true);
    return vp;
  }

  void select(std::int64_t env) {
    selected = std::clamp<std::int64_t>(env, 0, sim->num_envs() - 1);
    running_return = 0;
    rewards.v.clear();
    returns.v.clear();
    last_return = NAN;
    info = sim->inspect(selected);
  }

  // train --view: reload the run's latest checkpoint when the trainer has rewritten it.
  void poll_checkpoint() {
    if (opts.watch_run_dir.empty() || !env_sim || !env_sim->can_load_policy()) return;
    const fs::path p = fs::path(opts.watch_run_dir) / "checkpoints" / "latest.safetensors";
    std::error_code ec;
    const auto t = fs::last_write_time(p, ec);
    if (ec || t == ckpt_time) return;
    try {
      const Checkpoint ckpt = read_checkpoint(p.string());
      env_sim->load_policy(ckpt, p.string());
      ckpt_time = t;
      if (policy_loads++ == 0 && opts.control.empty()) mode = ControlMode::kPolicy;
      watch_status = "policy reloaded " + std::to_string(policy_loads) + " times";
    } catch (const std::exception& e) {
      watch_status = std::string("checkpoint not readable yet: ") + e.what();  // mid-write elsewhere: retry
    }
  }
};

ControlMode parse_control(const std::string& s, bool has_policy) {
  if (s.empty()) return has_policy ? ControlMode::kPolicy : ControlMode::kRandom;
  if (s == "policy") {
    if (!has_policy) throw ConfigError("--control policy: needs --checkpoint");
    return ControlMode::kPolicy;
  }
  if (s == "random") return ControlMode::kRandom;
  if (s == "zero") return ControlMode::kZero;
  throw ConfigError("--control: expected policy, random or zero, got \"" + s + "\"");
}

void write_frame_info(const std::string& path, Session& s, const Mat4& vp, int w, int h, int draw_calls) {
  nlohmann::json j;
  j["draw_calls"] = draw_calls;
  j["width"] = w;
  j["height"] = h;
  j["view_proj"] = std::vector<float>(vp.m, vp.m + 16);
  j["sky"] = {0.72, 0.80, 0.90};
  j["num_envs"] = s.sim->num_envs();
  j["spacing"] = {s.scene.grid.spacing_x, s.scene.grid.spacing_y};
  j["geoms"] = nlohmann::json::array();
  for (size_t i = 0; i < s.scene.geoms.size(); ++i) {
    const DrawGeom& g = s.scene.geoms[i];
    j["geoms"].push_back({{"type", g.type},
                          {"size", {g.size[0], g.size[1], g.size[2]}},
                          {"rgba", {g.rgba[0], g.rgba[1], g.rgba[2], g.rgba[3]}},
                          {"group", g.group},
                          {"drawn", s.scene.kinds[i] >= 0},
                          {"triangles", g.mesh ? g.mesh->face.size() / 3 : 0}});
  }
  j["envs"] = nlohmann::json::array();
  const std::int64_t n = std::min<std::int64_t>(s.sim->num_envs(), 256);
  for (std::int64_t i = 0; i < n; ++i) {
    const Vec3 o = s.scene.grid.origin(i);
    j["envs"].push_back({{"origin", {o.x, o.y, o.z}}, {"obs", s.sim->inspect(i).obs}});
  }
  std::ofstream(path) << j.dump() << "\n";
}

bool have_program(const char* name) {
  const std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// A GLFW window with an OpenGL 3.3 core context (hidden when headless). Throws with the no-display
// hint when GLFW cannot start.
// No X or Wayland display to open a window (or an offscreen context) on: one clear error.
void require_display() {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland))
    throw ConfigError(std::string("rltrain view: ") + viewer_no_display_hint());
}

GLFWwindow* open_window(const ViewOptions& opts, const std::string& title) {
  glfwSetErrorCallback(on_glfw_error);
  require_display();
  if (!glfwInit())
    throw ConfigError("rltrain view: GLFW could not start (" + g_glfw_error + "): " + viewer_no_display_hint());
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, opts.headless ? GLFW_FALSE : GLFW_TRUE);
  glfwWindowHint(GLFW_SAMPLES, opts.headless ? 0 : 4);
  GLFWwindow* win = glfwCreateWindow(opts.headless ? 64 : opts.width, opts.headless ? 64 : opts.height, title.c_str(),
                                     nullptr, nullptr);
  if (!win) {
    glfwTerminate();
    throw ConfigError("rltrain view: no OpenGL 3.3 core context (" + g_glfw_error + "); " + viewer_no_display_hint());
  }
  glfwMakeContextCurrent(win);
  // Multisampling costs a software rasterizer (Mesa llvmpipe, e.g. under xvfb-run) about 4x the
  // frame time: there, the window is made again without it (the grid lines are anti-aliased anyway).
  const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  if (!opts.headless && renderer && (std::strstr(renderer, "llvmpipe") || std::strstr(renderer, "softpipe"))) {
    glfwDestroyWindow(win);
    glfwWindowHint(GLFW_SAMPLES, 0);
    win = glfwCreateWindow(opts.width, opts.height, title.c_str(), nullptr, nullptr);
    if (!win) {
      glfwTerminate();
      throw ConfigError("rltrain view: no OpenGL 3.3 core context (" + g_glfw_error + "); " + viewer_no_display_hint());
    }
    glfwMakeContextCurrent(win);
  }
  glfwSwapInterval(opts.headless ? 0 : 1);
  return win;
}

void print_returns(Session& s) {
  if (s.opts.returns_path.empty()) return;
  const std::int64_t n = s.sim->num_envs();
  double sum = 0, sum2 = 0;
  nlohmann::json r = nlohmann::json::array();
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = s.first_return[static_cast<size_t>(i)];
    const bool finished = s.has_return[static_cast<size_t>(i)];
    r.push_back(finished ? nlohmann::json(v) : nlohmann::json(nullptr));
    if (!finished) continue;  // the statistics are over the envs that finished an episode
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  const double k = static_cast<double>(s.num_first);
  const double mean = k > 0 ? sum / k : std::nan("");
  const double sd = k > 0 ? std::sqrt(std::max(0.0, sum2 / k - mean * mean)) : std::nan("");
  const auto stat = [&](double x) { return k > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
  std::ofstream(s.opts.returns_path) << nlohmann::json{{"returns", r},
                                                       {"finished", s.num_first},
                                                       {"mean_return", stat(mean)},
                                                       {"std_return", stat(sd)}}
                                            .dump()
                                     << "\n";
  std::printf("%s: %lld of %lld envs finished an episode: mean return %.3f, std %.3f\n", s.sim->title().c_str(),
              static_cast<long long>(s.num_first), static_cast<long long>(n), mean, sd);
}

void panel(Session& s, GLFWwindow* win, const Renderer& r) {
  ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(390, 0), ImGuiCond_FirstUseEver);
  ImGui::Begin("rltrain view");
  ImGui::Text("%s  |  %lld envs on %s  |  %lld visible", s.sim->title().c_str(),
              static_cast<long long>(s.sim->num_envs()), s.sim->device().c_str(),
              static_cast<long long>(s.scene.visible_envs));
  ImGui::Text("frame %.1f ms (%.0f fps)  sim %.1f ms  render %.1f ms", s.frame_ms,
              s.frame_ms > 0 ? 1e3 / s.frame_ms : 0.0, s.sim_ms, s.render_ms);
  ImGui::Text("%.3g env steps/s  |  %d draw calls", s.steps_per_s, r.last_draw_calls());
  if (!s.watch_status.empty()) ImGui::TextWrapped("training: %s", s.watch_status.c_str());
  ImGui::Separator();
  ImGui::Checkbox("pause [space]", &s.paused);
  ImGui::SameLine();
  if (ImGui::Button("step [n]")) s.step_once();
  float speed = static_cast<float>(s.speed);
  if (ImGui::SliderFloat("steps/frame", &speed, 0.05f, 64.0f, "%.2f", ImGuiSliderFlags_Logarithmic)) s.speed = speed;
  if (ImGui::Button("reset all")) s.sim->reset_all(), s.select(s.selected);
  ImGui::SameLine();
  if (ImGui::Button("reset selected")) s.sim->reset_one(s.selected), s.select(s.selected);
  ImGui::Separator();
  int mode = static_cast<int>(s.mode);
  if (s.sim->has_policy()) {
    ImGui::RadioButton("policy", &mode, 0);
    ImGui::SameLine();
  }
  ImGui::RadioButton("random", &mode, 1);
  ImGui::SameLine();
  ImGui::RadioButton("manual", &mode, 2);
  ImGui::SameLine();
  ImGui::RadioButton("zero", &mode, 3);
  s.mode = static_cast<ControlMode>(mode);
  if (s.sim->has_policy()) ImGui::Checkbox("deterministic (mode of the policy)", &s.deterministic);
  const Space& act = s.sim->action_space();
  if (s.mode == ControlMode::kManual &&
      ImGui::CollapsingHeader("actuators (every env)", ImGuiTreeNodeFlags_DefaultOpen)) {
    for (int k = 0; k < act.dim; ++k) {
      char label[32];
      std::snprintf(label, sizeof label, "a[%d]", k);
      if (act.discrete) {
        int v = static_cast<int>(s.manual[static_cast<size_t>(k)]);
        ImGui::SliderInt(label, &v, 0, act.num_actions - 1);
        s.manual[static_cast<size_t>(k)] = static_cast<float>(v);
      } else {
        const float lo = std::isfinite(act.low[static_cast<size_t>(k)]) ? act.low[static_cast<size_t>(k)] : -1.0f;
        const float hi = std::isfinite(act.high[static_cast<size_t>(k)]) ? act.high[static_cast<size_t>(k)] : 1.0f;
        ImGui::SliderFloat(label, &s.manual[static_cast<size_t>(k)], lo, hi);
      }
    }
  }
  ImGui::Separator();
  int sel = static_cast<int>(s.selected);
  if (ImGui::InputInt("env (click one)", &sel)) s.select(sel);
  ImGui::Checkbox("camera follows it [f]", &s.follow);
  ImGui::SameLine();
  ImGui::Checkbox("shadows", &s.shadows);
  if (ImGui::CollapsingHeader("selected env", ImGuiTreeNodeFlags_DefaultOpen)) {
    char last[32] = "-";
    if (std::isfinite(s.last_return)) std::snprintf(last, sizeof last, "%.4g", s.last_return);
    ImGui::Text("reward %.4g  episode return %.4g  last episode %s", s.info.reward, s.running_return, last);
    std::string line;
    char buf[32];
    for (size_t k = 0; k < s.info.obs.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%s%.3g", k % 6 ? "  " : (k ? "\n" : ""), s.info.obs[k]);
      line += buf;
    }
    ImGui::TextWrapped("obs (%zu):\n%s", s.info.obs.size(), line.c_str());
    if (s.info.tracking.size() == kTrackingFloats) {
      const float* x = s.info.tracking.data();
      ImGui::TextColored(ImVec4(0.35f, 0.55f, 1.0f, 1.0f), "command   vx %+.2f  vy %+.2f m/s  yaw %+.2f rad/s", x[0], x[1], x[2]);
      ImGui::TextColored(ImVec4(0.35f, 0.85f, 0.4f, 1.0f), "tracked   vx %+.2f  vy %+.2f m/s  yaw %+.2f rad/s", x[3], x[4], x[5]);
    }
    line.clear();
    for (size_t k = 0; k < s.info.action.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%s%.3g", k ? "  " : "", s.info.action[k]);
      line += buf;
    }
    ImGui::TextWrapped("action: %s", line.c_str());
    if (!s.rewards.v.empty())
      ImGui::PlotLines("reward", s.rewards.v.data(), static_cast<int>(s.rewards.v.size()), 0, nullptr, FLT_MAX, FLT_MAX,
                       ImVec2(0, 60));
    if (!s.returns.v.empty())
      ImGui::PlotLines("episode\nreturns", s.returns.v.data(), static_cast<int>(s.returns.v.size()), 0, nullptr,
                       FLT_MAX, FLT_MAX, ImVec2(0, 60));
  }
  ImGui::TextDisabled("drag: orbit  right/middle drag: pan  wheel: zoom");
  ImGui::End();
  (void)win;
}

// Interactive loop: window, panel, input. Returns when the window closes (or after opts.frames).
// Mouse and keyboard of one frame (not when the panel wants them): orbit, pan, zoom, click to select
// an env; space pauses, n steps, f follows.
struct WindowInput {
  double last_x = 0, last_y = 0, press_x = 0, press_y = 0;
  bool was_down[3] = {false, false, false};
  bool key_was[3] = {false, false, false};

  void handle(Session& s, GLFWwindow* win, int ww, int wh, float aspect) {
    ImGuiIO& io = ImGui::GetIO();
    double mx = 0, my = 0;
    glfwGetCursorPos(win, &mx, &my);
    if (!io.WantCaptureMouse) {
      for (int b = 0; b < 3; ++b) {
        const bool down = glfwGetMouseButton(win, b) == GLFW_PRESS;
        if (down && !was_down[b]) press_x = mx, press_y = my;
        if (down && was_down[b]) {
          if (b == GLFW_MOUSE_BUTTON_LEFT)
            s.camera.orbit(static_cast<float>(mx - last_x), static_cast<float>(my - last_y));
          else s.camera.pan(static_cast<float>(mx - last_x), static_cast<float>(my - last_y), static_cast<float>(wh));
        }
        if (!down && was_down[b] && b == GLFW_MOUSE_BUTTON_LEFT && std::abs(mx - press_x) + std::abs(my - press_y) < 4)
          click(s, mx, my, ww, wh, aspect);
        was_down[b] = down;
      }
      if (io.MouseWheel != 0) s.camera.zoom(io.MouseWheel);
    } else {
      for (bool& d : was_down) d = false;
    }
    last_x = mx, last_y = my;
    if (io.WantCaptureKeyboard) return;
    const int keys[3] = {GLFW_KEY_SPACE, GLFW_KEY_N, GLFW_KEY_F};
    for (int k = 0; k < 3; ++k) {
      const bool down = glfwGetKey(win, keys[k]) == GLFW_PRESS;
      if (down && !key_was[k]) {
        if (k == 0) s.paused = !s.paused;
        if (k == 1) s.step_once();
        if (k == 2) s.follow = !s.follow;
      }
      key_was[k] = down;
    }
  }

  // A click: the env whose cell is under the cursor (a ray onto the ground plane).
  static void click(Session& s, double mx, double my, int ww, int wh, float aspect) {
    const Vec3 eye = s.camera.eye();
    const Vec3 f = normalize(s.camera.target - eye);
    const Vec3 right = normalize(cross(f, Vec3{0, 0, 1}));
    const Vec3 up = cross(right, f);
    const float t = std::tan(0.5f * s.camera.fovy);
    const float nx = static_cast<float>(2.0 * mx / ww - 1.0), ny = static_cast<float>(1.0 - 2.0 * my / wh);
    const Vec3 dir = normalize(f + right * (nx * t * aspect) + up * (ny * t));
    if (dir.z >= -1e-4f) return;
    const Vec3 hit = eye + dir * (-eye.z / dir.z);
    const Vec3 local = hit - s.scene.env_centre;
    const std::int64_t env = s.scene.grid.env_at(local.x, local.y);
    if (env >= 0) s.select(env);
  }
};

// Joystick tasks: over the highlighted env, the commanded planar velocity (blue) and the tracked one
// (green) as arrows above its geoms' centre, 0.5 m per m/s, turned by the base's heading.
void add_tracking_arrows(Session& s, std::int64_t highlight) {
  if (highlight < 0 || s.info.tracking.size() != kTrackingFloats) return;
  const float* x = s.info.tracking.data();
  const Vec3 top = s.scene.focus(*s.sim, highlight) + Vec3{0.0f, 0.0f, 0.6f * s.scene.env_radius};
  auto& v = s.scene.inst[kKindBox][0];
  for (int k = 0; k < 2; ++k) {
    const float vx = x[3 * k], vy = x[3 * k + 1];
    const float len = std::max(0.04f, 0.5f * std::hypot(vx, vy));
    const float a = x[6] + std::atan2(vy, vx), c = std::cos(a), sn = std::sin(a);
    const float rgb[2][3] = {{0.2f, 0.4f, 1.0f}, {0.2f, 0.8f, 0.3f}};
    v.insert(v.end(), {top.x + 0.5f * len * c, top.y + 0.5f * len * sn, top.z + 0.03f * static_cast<float>(k), c, -sn,
                       0.0f, sn, c, 0.0f, 0.0f, 0.0f, 1.0f, 0.5f * len, 0.01f, 0.01f, rgb[k][0], rgb[k][1], rgb[k][2],
                       1.0f});
  }
}

// The scene of one frame into framebuffer fbo (w x h): instances from the poses requested for it
// (the highlighted env drawn apart; -1 none), then the shadow and main passes.
void render_scene(Session& s, Renderer& renderer, const Mat4& vp, std::int64_t highlight, unsigned fbo, int w, int h) {
  s.scene.build(*s.sim, highlight);
  add_tracking_arrows(s, highlight);
  if (s.mesh_generation != s.scene.generation) {  // the scene's meshes, uploaded once
    renderer.clear_meshes();
    for (const auto& m : s.scene.meshes) renderer.add_mesh(m->vert, m->face);
    s.mesh_generation = s.scene.generation;
  }
  for (size_t m = 0; m < s.scene.mesh_inst.size(); ++m)
    renderer.set_mesh_instances(static_cast<int>(m), s.scene.mesh_inst[m].data(),
                                static_cast<std::int64_t>(s.scene.mesh_inst[m].size() / kInstanceFloats));
  for (int k = 0; k < kNumKinds; ++k)
    for (int lod = 0; lod < kNumLods; ++lod)
      renderer.set_instances(static_cast<GeomKind>(k), lod, s.scene.inst[k][lod].data(),
                             static_cast<std::int64_t>(s.scene.inst[k][lod].size() / kInstanceFloats));
  RenderSettings rs;
  rs.view_proj = vp;
  rs.eye = s.camera.eye();
  rs.shadows = s.shadows;
  rs.shadow_centre = s.camera.target;
  rs.shadow_radius = std::clamp(1.2f * s.camera.distance, 3.0f, 300.0f);
  rs.ground_centre = Vec3{s.camera.target.x, s.camera.target.y, 0};
  rs.ground_half = std::max(50.0f, 20.0f * s.camera.distance);
  renderer.render(rs, fbo, w, h);
}

// The window and its panel as seen, as out_dir/frame_NNNNNN.png (screenshots for docs).
void write_window_png(const std::string& out_dir, std::int64_t frame, int fw, int fh) {
  std::vector<std::uint8_t> rgb;
  read_framebuffer_rgb(0, fw, fh, rgb);
  char name[64];
  std::snprintf(name, sizeof name, "frame_%06lld.png", static_cast<long long>(frame));
  const std::string path = (fs::path(out_dir) / name).string();
  if (!stbi_write_png(path.c_str(), fw, fh, 3, rgb.data(), fw * 3)) throw std::runtime_error(path + ": cannot write");
}

void window_loop(Session& s, GLFWwindow* win, Renderer& renderer) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(win, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  WindowInput input;
  auto frame_t = Clock::now();
  auto second_t = frame_t;  // timing starts after the first frame (shader compilation)
  double sum_sim = 0, sum_render = 0;
  std::int64_t frame = 0;
  while (!glfwWindowShouldClose(win) && (s.opts.frames <= 0 || frame < s.opts.frames)) {
    glfwPollEvents();
    s.poll_checkpoint();
    int fw = 0, fh = 0, ww = 0, wh = 0;
    glfwGetFramebufferSize(win, &fw, &fh);
    glfwGetWindowSize(win, &ww, &wh);
    if (fw == 0 || fh == 0) {  // minimized: sleep until something happens
      glfwWaitEvents();
      continue;
    }
    const float aspect = static_cast<float>(fw) / static_cast<float>(fh);
    input.handle(s, win, ww, wh, aspect);
    if (!s.paused) s.advance();
    // The frame's poses are requested right after the step and waited for only in build(), after the
    // panel is built: with --device cuda the copy into pinned memory overlaps the UI work.
    const Mat4 vp = s.request_frame(aspect);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    panel(s, win, renderer);
    ImGui::Render();
    const auto r0 = Clock::now();
    render_scene(s, renderer, vp, s.selected, 0, fw, fh);
    s.render_ms = 1e3 * seconds_since(r0);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (!s.opts.out_dir.empty()) write_window_png(s.opts.out_dir, frame, fw, fh);
    glfwSwapBuffers(win);
    const auto now = Clock::now();
    s.frame_ms = 0.9 * s.frame_ms + 0.1 * 1e3 * std::chrono::duration<double>(now - frame_t).count();
    frame_t = now;
    if (frame == 0) second_t = now;
    else sum_sim += s.sim_ms, sum_render += s.render_ms;
    ++frame;
  }
  if (frame > 1) {
    const double per =
        1e3 * std::chrono::duration<double>(Clock::now() - second_t).count() / static_cast<double>(frame - 1);
    std::fprintf(stderr,
                 "rltrain view: %lld frames, %lld envs (%lld drawn last): %.1f ms/frame (%.1f fps): sim %.1f ms, "
                 "render %.1f ms%s\n",
                 static_cast<long long>(frame), static_cast<long long>(s.sim->num_envs()),
                 static_cast<long long>(s.scene.visible_envs), per, 1e3 / per, sum_sim / static_cast<double>(frame - 1),
                 sum_render / static_cast<double>(frame - 1), s.opts.out_dir.empty() ? "" : " (PNG writing included)");
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
}

// Headless: opts.frames frames into an offscreen framebuffer, as PNGs and/or an MP4.
void headless_loop(Session& s, Renderer& renderer) {
  const ViewOptions& o = s.opts;
  const int w = o.width, h = o.height;
  OffscreenTarget target(w, h);
  std::FILE* video = nullptr;
  if (!o.video_path.empty()) {
    // The path single-quoted for the shell popen runs (a ' inside becomes '\'').
    std::string path = "'";
    for (char c : o.video_path) path += c == '\'' ? std::string("'\\''") : std::string(1, c);
    path += "'";
    const std::string cmd = "ffmpeg -loglevel error -y -f rawvideo -pix_fmt rgb24 -s " + std::to_string(w) + "x" +
                            std::to_string(h) + " -r 30 -i - -pix_fmt yuv420p -vcodec libx264 " + path;
    video = popen(cmd.c_str(), "w");
    if (!video) throw std::runtime_error("--video: could not start ffmpeg");
  }
  const float aspect = static_cast<float>(w) / static_cast<float>(h);
  std::vector<std::uint8_t> rgb;
  stbi_write_png_compression_level = 2;  // frames, not archives: about 3x faster than stb's default 8, ~20% larger
  double render_s = 0, total_s = 0, first_s = 0;
  auto t_all = Clock::now();
  // Each frame's poses are requested right after the step that makes them (the first frame's here)
  // and waited for in build(), just before drawing.
  Mat4 vp = s.request_frame(aspect);
  for (std::int64_t f = 0; f < o.frames; ++f) {
    if (s.training_done && f + 1 == o.frames)  // the last frame shows the final policy
      while (!*s.training_done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s.poll_checkpoint();
    const auto r0 = Clock::now();
    render_scene(s, renderer, vp, -1, target.fbo(), w, h);
    target.read_rgb(rgb);
    render_s += seconds_since(r0);
    if (!o.out_dir.empty()) {
      char name[64];
      std::snprintf(name, sizeof name, "frame_%06lld", static_cast<long long>(f));
      const std::string base = (fs::path(o.out_dir) / name).string();
      if (!stbi_write_png((base + ".png").c_str(), w, h, 3, rgb.data(), w * 3))
        throw std::runtime_error(base + ".png: cannot write");
      if (o.frame_info) write_frame_info(base + ".json", s, vp, w, h, renderer.last_draw_calls());
    }
    if (video && std::fwrite(rgb.data(), 1, rgb.size(), video) != rgb.size())
      throw std::runtime_error("--video: ffmpeg stopped reading");
    if (f + 1 < o.frames) {
      s.advance();
      vp = s.request_frame(aspect);
    }
    if (f == 0) {  // the first frame pays for shader compilation: timed apart
      first_s = seconds_since(t_all);
      t_all = Clock::now();
      render_s = 0;
    }
  }
  total_s = seconds_since(t_all);
  const std::int64_t timed = std::max<std::int64_t>(1, o.frames - 1);
  if (video && pclose(video) != 0) throw std::runtime_error("--video: ffmpeg failed writing " + o.video_path);
  if (!o.watch_run_dir.empty()) std::fprintf(stderr, "rltrain train --view: policy loaded %d times\n", s.policy_loads);
  std::fprintf(stderr,
               "rltrain view: %lld frames of %dx%d, %lld envs (%lld drawn), %lld env steps: first frame %.0f ms, then "
               "%.1f frames/s (render+readback %.1f ms/frame)\n",
               static_cast<long long>(o.frames), w, h, static_cast<long long>(s.sim->num_envs()),
               static_cast<long long>(s.scene.visible_envs), static_cast<long long>(s.env_steps * s.sim->num_envs()),
               1e3 * first_s, o.frames > 1 ? static_cast<double>(timed) / std::max(1e-9, total_s) : 0.0,
               o.frames > 1 ? 1e3 * render_s / static_cast<double>(timed) : 0.0);
}

void check_options(const ViewOptions& o) {
  if (o.headless && o.frames < 1) throw ConfigError("--headless: needs --frames N (N >= 1)");
  if (o.headless && o.out_dir.empty() && o.video_path.empty() && o.returns_path.empty())
    throw ConfigError("--headless: needs --out DIR, --video FILE or --returns FILE");
  if (!o.video_path.empty() && !o.headless) throw ConfigError("--video: only with --headless");
  if (!o.video_path.empty() && !have_program("ffmpeg"))
    throw ConfigError(
        "--video: ffmpeg is not installed (apt-get install ffmpeg); --out DIR writes PNG frames without it");
  if (o.width < 16 || o.height < 16 || o.width > 8192 || o.height > 8192)
    throw ConfigError("--width/--height: expected 16..8192 pixels, got " + std::to_string(o.width) + "x" +
                      std::to_string(o.height));
  if (!(o.speed >= 0) || o.speed > 1000) throw ConfigError("--speed: expected 0..1000 env steps per frame");
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec) throw ConfigError("--out " + o.out_dir + ": cannot create (" + ec.message() + ")");
  }
}

int run_session(Session& s) {
  const ViewOptions& o = s.opts;
  s.scene.init(*s.sim);
  s.mode = parse_control(o.control, s.sim->has_policy() || !o.watch_run_dir.empty());
  if (s.mode == ControlMode::kPolicy && !s.sim->has_policy())
    s.mode = ControlMode::kRandom;  // until the first checkpoint
  s.deterministic = o.deterministic;
  s.speed = o.speed;
  s.shadows = o.shadows;
  s.manual.assign(static_cast<size_t>(std::max(1, s.sim->action_space().dim)), 0.0f);
  s.first_return.assign(static_cast<size_t>(s.sim->num_envs()), 0.0f);
  s.has_return.assign(static_cast<size_t>(s.sim->num_envs()), 0);
  if (o.follow >= 0) {
    if (o.follow >= s.sim->num_envs())
      throw ConfigError("--follow: env " + std::to_string(o.follow) + " of " + std::to_string(s.sim->num_envs()));
    s.selected = o.follow;
    s.follow = true;
  }
  GLFWwindow* win = open_window(o, "rltrain view: " + s.sim->title());
  int code = 0;
  try {
    Renderer renderer;
    int fw = o.width, fh = o.height;
    if (!o.headless) glfwGetFramebufferSize(win, &fw, &fh);
    s.frame_camera(static_cast<float>(fw) / static_cast<float>(std::max(1, fh)));
    if (s.follow) {
      s.camera.target = s.scene.focus(*s.sim, s.selected);
      s.camera.distance = std::max(1.5f, 3.0f * s.scene.env_radius) / std::max(0.05f, o.zoom);
    }
    if (!o.headless) s.select(s.selected);
    if (o.headless) headless_loop(s, renderer);
    else window_loop(s, win, renderer);
    print_returns(s);
  } catch (...) {
    glfwDestroyWindow(win);
    glfwTerminate();
    throw;
  }
  glfwDestroyWindow(win);
  glfwTerminate();
  return code;
}

}  // namespace

void check_view_options(const ViewOptions& opts) { check_options(opts); }

void require_view_display() { require_display(); }

int run_viewer(std::unique_ptr<view::ViewSim> sim, const ViewOptions& opts, const ViewWatch& watch) {
  check_options(opts);
  Session s(opts);
  s.env_sim = dynamic_cast<EnvSim*>(sim.get());
  s.sim = std::move(sim);
  s.training_done = watch.training_done;
  if (!watch.status.empty()) s.watch_status = watch.status;
  return run_session(s);
}

}  // namespace rlt
