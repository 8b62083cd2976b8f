// The viewer (viewer/, `rltrain view`): the envs' draw hooks and the grid layout in process, then the
// binary rendering known scenes headless under xvfb-run (Mesa llvmpipe) and the PNGs checked where
// the state says the bodies are; policy playback against `rltrain eval`; bad input.
// The rendering tests skip, with the reason, where neither xvfb-run nor a display is available.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include "apps/view.h"  // make_env_sim: the composition `rltrain view` uses
#include "envs/all_envs.h"
#include "sim/vec_env_impl.h"
#include "tests/temp_dir.h"
#include "viewer/camera.h"
#include "viewer/layout.h"
#include "viewer/math3d.h"
#include "viewer/sim_source.h"

#ifndef RLTRAIN_BIN
#error "RLTRAIN_BIN must be defined by the build"
#endif
#ifndef RLTRAIN_SOURCE_DIR
#error "RLTRAIN_SOURCE_DIR must be defined by the build"
#endif

namespace rlt {
namespace {

namespace fs = std::filesystem;
using view::Mat4;
using view::Vec3;

// ---- draw hooks and layout (no display needed) ---------------------------------------------------

template <class Env>
void check_draw_hook(const char* name) {
  SCOPED_TRACE(name);
  CpuExecutor exec(1);
  VecEnvT<Env, CpuExecutor> env(exec, 5);
  env.reset(3);
  const auto geoms = env.draw_geoms();
  ASSERT_FALSE(geoms.empty());
  for (const auto& g : geoms) EXPECT_TRUE(g.type == 2 || g.type == 3 || g.type == 6) << g.type;
  const size_t per_env = geoms.size() * 12;
  std::vector<float> all(5 * per_env), part(2 * per_env);
  env.draw_poses(0, 5, all.data());
  env.draw_poses(2, 2, part.data());
  for (size_t k = 0; k < part.size(); ++k)
    EXPECT_EQ(part[k], all[2 * per_env + k]) << "envs [2, 4) are envs 2 and 3 of the batch";
  for (size_t g = 0; g < 5 * geoms.size(); ++g) {  // rotations are orthonormal, right-handed
    const float* R = all.data() + 12 * g + 3;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        float d = 0;
        for (int k = 0; k < 3; ++k) d += R[3 * k + i] * R[3 * k + j];
        EXPECT_NEAR(d, i == j ? 1.0f : 0.0f, 1e-5f);
      }
    const float det =
        R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
    EXPECT_NEAR(det, 1.0f, 1e-5f);
  }
  EXPECT_THROW(env.draw_poses(4, 2, part.data()), std::out_of_range);
}

TEST(ViewerDraw, ClassicEnvsDescribeTheirGeoms) {
  check_draw_hook<CartPole>("cartpole");
  check_draw_hook<Pendulum>("pendulum");
  check_draw_hook<Acrobot>("acrobot");
  check_draw_hook<MountainCarContinuous>("mountaincar_continuous");
}

// The begin/end pair behind draw_poses (sim/vec_env.h): request several ranges, wait, and get
// each range's poses one after the other, as draw_poses gives them; a second request before the
// wait replaces the first; no request, no poses.
TEST(ViewerDraw, RequestWaitMatchesDrawPoses) {
  CpuExecutor exec(1);
  VecEnvT<Acrobot, CpuExecutor> env(exec, 9);
  env.reset(5);
  EXPECT_EQ(env.wait_draw_poses(), nullptr);
  const size_t per_env = env.draw_geoms().size() * 12;
  std::vector<float> all(9 * per_env);
  env.draw_poses(0, 9, all.data());
  env.request_draw_poses(0, 9);  // replaced by the next request, never waited for
  env.request_draw_poses(std::vector<VecEnv::DrawRange>{{1, 2}, {6, 3}, {4, 0}});
  const float* got = env.wait_draw_poses();
  ASSERT_NE(got, nullptr);
  for (size_t k = 0; k < 2 * per_env; ++k) EXPECT_EQ(got[k], all[1 * per_env + k]) << "envs 1, 2";
  for (size_t k = 0; k < 3 * per_env; ++k) EXPECT_EQ(got[2 * per_env + k], all[6 * per_env + k]) << "envs 6, 7, 8";
  EXPECT_EQ(env.wait_draw_poses(), got) << "waiting again returns the same array";
  // A step between request and wait does not change what the request captured (CPU: gathered at
  // the request; CUDA: stream order, tests/viewer/test_viewer_cuda.cpp).
  env.request_draw_poses(3, 1);
  std::vector<float> before(env.wait_draw_poses(), env.wait_draw_poses() + per_env);
  for (size_t k = 0; k < per_env; ++k) EXPECT_EQ(before[k], all[3 * per_env + k]);
  std::vector<float> actions(9, 2.0f);  // torque +1
  env.request_draw_poses(3, 1);
  env.step(actions.data());
  const float* captured = env.wait_draw_poses();
  for (size_t k = 0; k < per_env; ++k) EXPECT_EQ(captured[k], before[k]);
  env.request_draw_poses(3, 1);
  EXPECT_NE(std::vector<float>(env.wait_draw_poses(), env.wait_draw_poses() + per_env), before)
      << "the step moved env 3";
  EXPECT_THROW(env.request_draw_poses(std::vector<VecEnv::DrawRange>{{0, 1}, {8, 2}}), std::out_of_range);
}

TEST(ViewerDraw, CartPolePosesFollowTheState) {
  CpuExecutor exec(1);
  VecEnvT<CartPole, CpuExecutor> env(exec, 1);
  env.reset(1);
  env.states()[0] = CartPole::State{1.25f, 0.0f, 0.3f, 0.0f};
  std::vector<float> p(env.draw_geoms().size() * 12);
  env.draw_poses(0, 1, p.data());
  EXPECT_FLOAT_EQ(p[12 + 0], 1.25f);  // cart x
  const float L = CartPole::Params{}.half_length;
  EXPECT_NEAR(p[24 + 0], 1.25f + L * std::sin(0.3f), 1e-6f);  // pole centre
  EXPECT_NEAR(p[24 + 2], CartPole::kDrawPivotZ + L * std::cos(0.3f), 1e-6f);
  EXPECT_NEAR(p[24 + 3 + 2], std::sin(0.3f), 1e-6f);  // its local z axis, column 2: (sin, 0, cos)
  EXPECT_NEAR(p[24 + 3 + 8], std::cos(0.3f), 1e-6f);
}

TEST(ViewerLayout, GridCellsAndVisibility) {
  const view::EnvGrid g = view::EnvGrid::make(10, 2.0f, 1.0f);
  for (std::int64_t i = 0; i < 10; ++i) {
    const Vec3 o = g.origin(i);
    EXPECT_EQ(g.env_at(o.x + 0.3f, o.y - 0.2f), i);
  }
  EXPECT_EQ(g.env_at(1e4f, 0.0f), -1);
  view::OrbitCamera cam;
  cam.target = {0, 0, 0};
  cam.distance = 60;
  auto all = view::visible_env_ranges(g, cam.view_proj(16.0f / 9.0f), {0, 0, 0}, 0.5f);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].first, 0);
  EXPECT_EQ(all[0].second, 10);
  cam.target = {500, 0, 0};  // looking far away from the grid: nothing is copied
  cam.distance = 5;
  EXPECT_TRUE(view::visible_env_ranges(g, cam.view_proj(1.0f), {0, 0, 0}, 0.5f).empty());
}

// The panel's "reset selected": one env starts a fresh episode; the other envs must not move.
TEST(ViewerSim, ResetOneEnvLeavesTheOthers) {
  Config cfg;  // cartpole
  cfg.env.num_envs = 6;
  auto sim_ptr = make_env_sim(cfg, "cpu", 1, 9);
  view::EnvSim& sim = *sim_ptr;
  for (int t = 0; t < 30; ++t) sim.step(view::ControlMode::kRandom, false, {});
  std::vector<std::vector<float>> before;
  for (i64 i = 0; i < 6; ++i) before.push_back(sim.inspect(i).obs);
  sim.reset_one(3);
  for (i64 i = 0; i < 6; ++i) {
    const auto obs = sim.inspect(i).obs;
    if (i != 3) {
      EXPECT_EQ(obs, before[static_cast<size_t>(i)]) << "env " << i;
    } else {
      EXPECT_NE(obs, before[3]);
      for (float v : obs) EXPECT_LE(std::fabs(v), CartPole::Params{}.reset_noise) << "a fresh CartPole episode";
    }
  }
  sim.step(view::ControlMode::kZero, false, {});  // and it keeps stepping
  EXPECT_EQ(sim.inspect(3).obs.size(), 4u);
}

// What the frame loop uses: EnvSim's request_poses / wait_poses give the ranges' poses as poses() does.
TEST(ViewerSim, RequestedPosesMatchPoses) {
  Config cfg;  // cartpole
  cfg.env.num_envs = 7;
  auto sim_ptr = make_env_sim(cfg, "cpu", 1, 4);
  view::EnvSim& sim = *sim_ptr;
  for (int t = 0; t < 5; ++t) sim.step(view::ControlMode::kRandom, false, {});
  const size_t per_env = sim.geoms().size() * 12;
  std::vector<float> all(7 * per_env);
  sim.poses(0, 7, all.data());
  sim.request_poses({{5, 2}, {0, 2}});
  const float* got = sim.wait_poses();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::vector<float>(got, got + 2 * per_env), std::vector<float>(all.begin() + 5 * per_env, all.end()));
  EXPECT_EQ(std::vector<float>(got + 2 * per_env, got + 4 * per_env),
            std::vector<float>(all.begin(), all.begin() + 2 * per_env));
}

// ---- the binary, headless ------------------------------------------------------------------------

struct CliRun {
  int code = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool have(const char* program) {
  return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0;
}

// How to reach a display: "xvfb-run" (preferred: the same llvmpipe everywhere), "display", or "".
std::string display_route() {
  if (have("xvfb-run")) return "xvfb-run";
  const char* d = std::getenv("DISPLAY");
  return d && *d ? "display" : "";
}

#define REQUIRE_DISPLAY()                                                      \
  if (display_route().empty())                                                 \
  GTEST_SKIP() << "no X display and no xvfb-run (apt-get install xvfb xauth; " \
                  "tools/setup.sh --test installs them)"

// Runs rltrain with args in dir: how = "xvfb" under xvfb-run (or the display), "nodisplay" without
// any display, "plain" as is (commands that open no window).
CliRun rltrain(const std::vector<std::string>& args, const std::string& dir, const std::string& how = "xvfb") {
  std::string cmd = "cd " + quote(dir) + " && ";
  if (how == "nodisplay") cmd += "env -u DISPLAY -u WAYLAND_DISPLAY ";
  else if (how == "xvfb" && display_route() == "xvfb-run") cmd += "xvfb-run -a -s '-screen 0 640x480x24' ";
  cmd += quote(RLTRAIN_BIN);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(dir + "/.out") + " 2>" + quote(dir + "/.err");
  CliRun r;
  for (int attempt = 0; attempt < 3; ++attempt) {  // xvfb-run -a can race another test for a display number
    const int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    r.out = slurp(dir + "/.out");
    r.err = slurp(dir + "/.err");
    if (r.err.find("Xvfb failed to start") == std::string::npos) break;
  }
  return r;
}

std::string describe(const CliRun& r) {
  return "exit " + std::to_string(r.code) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  explicit Image(const std::string& path) {
    int n = 0;
    unsigned char* data = stbi_load(path.c_str(), &w, &h, &n, 3);
    if (!data) throw std::runtime_error(path + ": not a readable PNG");
    rgb.assign(data, data + static_cast<size_t>(w) * h * 3);
    stbi_image_free(data);
  }
  const unsigned char* at(int x, int y) const { return rgb.data() + (static_cast<size_t>(y) * w + x) * 3; }
};

Mat4 view_proj_of(const nlohmann::json& j) {
  Mat4 m;
  for (int k = 0; k < 16; ++k) m.m[k] = j["view_proj"][k].get<float>();
  return m;
}

// Whether any pixel within `radius` of (x, y) satisfies pred (thin bodies rasterize a pixel or so off).
template <class Pred>
bool near_pixel(const Image& img, float x, float y, int radius, Pred pred) {
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      const int px = static_cast<int>(std::floor(x)) + dx, py = static_cast<int>(std::floor(y)) + dy;
      if (px < 0 || py < 0 || px >= img.w || py >= img.h) continue;
      const unsigned char* c = img.at(px, py);
      if (pred(c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f)) return true;
    }
  return false;
}

std::string rgb_at(const Image& img, float x, float y) {
  const unsigned char* c =
      img.at(std::clamp(static_cast<int>(x), 0, img.w - 1), std::clamp(static_cast<int>(y), 0, img.h - 1));
  return "(" + std::to_string(c[0]) + ", " + std::to_string(c[1]) + ", " + std::to_string(c[2]) + ") at (" +
         std::to_string(static_cast<int>(x)) + ", " + std::to_string(static_cast<int>(y)) + ")";
}

// Lighting scales a body's colour; the hue stays. CartPole's cart is blue, its pole orange, the
// Ant tan; sky and ground (grey) are none of these.
bool is_cart(float r, float g, float b) { return b > r + 0.15f && b > g + 0.05f; }
bool is_pole(float r, float g, float b) { return r > b + 0.25f && r > g + 0.05f; }
bool is_ant(float r, float g, float b) { return r > b + 0.1f && g > b + 0.04f && r > g; }

void expect_sky_corners(const Image& img, const nlohmann::json& info) {
  const int sky[3] = {static_cast<int>(std::lround(info["sky"][0].get<float>() * 255)),
                      static_cast<int>(std::lround(info["sky"][1].get<float>() * 255)),
                      static_cast<int>(std::lround(info["sky"][2].get<float>() * 255))};
  for (int x : {2, img.w - 3}) {
    const unsigned char* c = img.at(x, 2);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(c[k], sky[k], 2) << "background (sky) expected " << rgb_at(img, static_cast<float>(x), 2);
  }
}

TEST(ViewerHeadless, CartPoleBodiesWhereTheStateSays) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const CliRun r = rltrain({"view", "--config", std::string(RLTRAIN_SOURCE_DIR) + "/configs/cartpole.toml",
                            "--num-envs", "6", "--seed", "5", "--headless", "--frames", "2", "--speed", "7", "--out",
                            dir / "f", "--frame-info", "--width", "480", "--height", "270"},
                           dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  for (const char* frame : {"frame_000000", "frame_000001"}) {  // the reset state, then 7 steps later
    SCOPED_TRACE(frame);
    const Image img(dir / (std::string("f/") + frame + ".png"));
    const auto info = nlohmann::json::parse(slurp(dir / (std::string("f/") + frame + ".json")));
    ASSERT_EQ(img.w, 480);
    ASSERT_EQ(img.h, 270);
    expect_sky_corners(img, info);
    const Mat4 vp = view_proj_of(info);
    const float L = CartPole::Params{}.half_length;
    ASSERT_EQ(info["envs"].size(), 6u);
    for (size_t i = 0; i < 6; ++i) {
      SCOPED_TRACE("env " + std::to_string(i));
      const auto& e = info["envs"][i];
      const Vec3 o{e["origin"][0].get<float>(), e["origin"][1].get<float>(), e["origin"][2].get<float>()};
      const float x = e["obs"][0].get<float>(), theta = e["obs"][2].get<float>();
      float px = 0, py = 0;
      ASSERT_TRUE(view::project_to_pixel(vp, o + Vec3{x, 0, CartPole::kDrawCartZ}, img.w, img.h, px, py));
      EXPECT_TRUE(near_pixel(img, px, py, 1, is_cart)) << "cart expected, got " << rgb_at(img, px, py);
      // The pole's middle, from the angle: a thin capsule, so a pixel or two of slack.
      ASSERT_TRUE(view::project_to_pixel(
          vp, o + Vec3{x + L * std::sin(theta), 0, CartPole::kDrawPivotZ + L * std::cos(theta)}, img.w, img.h, px, py));
      EXPECT_TRUE(near_pixel(img, px, py, 2, is_pole)) << "pole expected, got " << rgb_at(img, px, py);
      // Nothing 1.5 m above the pole's tip: sky or ground, no body colour.
      ASSERT_TRUE(
          view::project_to_pixel(vp, o + Vec3{x, 0, CartPole::kDrawPivotZ + 2 * L + 1.5f}, img.w, img.h, px, py));
      EXPECT_FALSE(near_pixel(img, px, py, 1, [](float r, float g, float b) {
        return is_cart(r, g, b) || is_pole(r, g, b);
      })) << rgb_at(img, px, py);
    }
  }
}

// --video pipes the frames to ffmpeg: an MP4 with one frame per rendered frame, whatever characters
// the path holds (a quote and a space: the path reaches ffmpeg through a shell).
TEST(ViewerHeadless, VideoHasEveryFrame) {
  REQUIRE_DISPLAY();
  if (!have("ffmpeg") || !have("ffprobe"))
    GTEST_SKIP() << "ffmpeg/ffprobe not installed (tools/setup.sh --test installs them)";
  test::TempDir dir("rltrain_viewer");
  const std::string video = dir / "it's a clip.mp4";
  const CliRun r =
      rltrain({"view", "--config", std::string(RLTRAIN_SOURCE_DIR) + "/configs/cartpole.toml", "--num-envs", "4",
               "--headless", "--frames", "12", "--video", video, "--width", "320", "--height", "180"},
              dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  ASSERT_TRUE(fs::exists(video)) << describe(r);
  const std::string probe =
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,width,height "
      "-of csv=p=0 " +
      quote(video) + " > " + quote(dir / "probe.txt");
  ASSERT_EQ(std::system(probe.c_str()), 0);
  EXPECT_EQ(slurp(dir / "probe.txt"), "320,180,12\n");
}

TEST(ViewerHeadless, AntModelBodiesWhereTheStateSays) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const CliRun r = rltrain({"view", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml", "--num-envs",
                            "4", "--control", "random", "--headless", "--frames", "2", "--speed", "10", "--out",
                            dir / "f", "--frame-info", "--width", "480", "--height", "270"},
                           dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  for (const char* frame : {"frame_000000", "frame_000001"}) {  // at rest, then 10 random-control steps later
    SCOPED_TRACE(frame);
    const Image img(dir / (std::string("f/") + frame + ".png"));
    const auto info = nlohmann::json::parse(slurp(dir / (std::string("f/") + frame + ".json")));
    expect_sky_corners(img, info);
    const Mat4 vp = view_proj_of(info);
    for (size_t i = 0; i < 4; ++i) {
      SCOPED_TRACE("env " + std::to_string(i));
      const auto& e = info["envs"][i];
      const Vec3 o{e["origin"][0].get<float>(), e["origin"][1].get<float>(), e["origin"][2].get<float>()};
      // obs = qpos (free joint: torso x, y, z first) then qvel.
      const Vec3 torso = o + Vec3{e["obs"][0].get<float>(), e["obs"][1].get<float>(), e["obs"][2].get<float>()};
      float px = 0, py = 0;
      ASSERT_TRUE(view::project_to_pixel(vp, torso, img.w, img.h, px, py));
      EXPECT_TRUE(near_pixel(img, px, py, 0, is_ant)) << "torso expected, got " << rgb_at(img, px, py);
      // 1.2 m above the torso: nothing (sky, or ground behind), no Ant colour.
      ASSERT_TRUE(view::project_to_pixel(vp, torso + Vec3{0, 0, 1.2f}, img.w, img.h, px, py));
      EXPECT_FALSE(near_pixel(img, px, py, 1, is_ant)) << rgb_at(img, px, py);
    }
  }
}

// The interactive path (window, Dear ImGui panel, input polling) for a few frames under xvfb-run;
// --out saves the window as seen: the panel's dark background sits in the top-left corner.
TEST(ViewerWindow, WindowWithPanelRuns) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const CliRun r =
      rltrain({"view", "--config", std::string(RLTRAIN_SOURCE_DIR) + "/configs/pendulum.toml", "--num-envs", "4",
               "--frames", "3", "--out", dir / "w", "--width", "640", "--height", "360"},
              dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.err.find("ms/frame"), std::string::npos) << r.err;
  const Image img(dir / "w/frame_000002.png");
  ASSERT_EQ(img.w, 640);
  ASSERT_EQ(img.h, 360);
  int dark = 0, total = 0;
  for (int y = 20; y < 200; ++y)
    for (int x = 20; x < 300; ++x, ++total) {
      const unsigned char* c = img.at(x, y);
      dark += std::max({c[0], c[1], c[2]}) < 90;
    }
  EXPECT_GT(dark, total / 2) << "the panel (dark, with text) expected in the top-left corner";
  expect_sky_corners(img, nlohmann::json{{"sky", {0.72, 0.80, 0.90}}});  // the panel starts 10 px in
}

// The Ant env (envs/ant.h, configs/ant.toml): its observation starts with the torso height, and a
// reset puts the torso within 0.1 m of the env's origin in x and y (the torso is a 0.25 m sphere).
TEST(ViewerHeadless, AntEnvTorsoWhereTheStateSays) {
  REQUIRE_DISPLAY();
  const std::string config = std::string(RLTRAIN_SOURCE_DIR) + "/configs/ant.toml";
  if (!fs::exists(config)) GTEST_SKIP() << config << " is not there (the Ant env is not in this tree)";
  test::TempDir dir("rltrain_viewer");
  const CliRun r = rltrain({"view", "--config", config, "--num-envs", "4", "--control", "zero", "--headless",
                            "--frames", "1", "--out", dir / "f", "--frame-info", "--width", "480", "--height", "270"},
                           dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  const Image img(dir / "f/frame_000000.png");
  const auto info = nlohmann::json::parse(slurp(dir / "f/frame_000000.json"));
  expect_sky_corners(img, info);
  const Mat4 vp = view_proj_of(info);
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("env " + std::to_string(i));
    const auto& e = info["envs"][i];
    const Vec3 torso{e["origin"][0].get<float>(), e["origin"][1].get<float>(), e["obs"][0].get<float>()};
    float px = 0, py = 0;
    ASSERT_TRUE(view::project_to_pixel(vp, torso, img.w, img.h, px, py));
    EXPECT_TRUE(near_pixel(img, px, py, 0, is_ant)) << "torso expected, got " << rgb_at(img, px, py);
    ASSERT_TRUE(view::project_to_pixel(vp, torso + Vec3{0, 0, 1.2f}, img.w, img.h, px, py));
    EXPECT_FALSE(near_pixel(img, px, py, 1, is_ant)) << rgb_at(img, px, py);
  }
}

// Playground's scenes: the Menagerie meshes and the height field are drawn from their triangles
// (one instanced draw call per distinct mesh and pass), the collision proxies (group 3) are not
// (MuJoCo's viewer default).
TEST(ViewerHeadless, PlaygroundMeshesAndHeightFieldAreDrawn) {
  REQUIRE_DISPLAY();
  for (const std::string task : {"g1_joystick", "go1_joystick_rough"}) {
    SCOPED_TRACE(task);
    const std::string config = std::string(RLTRAIN_SOURCE_DIR) + "/configs/" + task + ".toml";
    test::TempDir dir("rltrain_viewer");
    const CliRun r = rltrain({"view", "--config", config, "--num-envs", "2", "--control", "zero", "--headless",
                              "--frames", "1", "--out", dir / "f", "--frame-info", "--width", "320", "--height", "240"},
                             dir.path());
    ASSERT_EQ(r.code, 0) << describe(r);
    const auto info = nlohmann::json::parse(slurp(dir / "f/frame_000000.json"));
    int meshes = 0, hidden = 0, hfields = 0;
    size_t triangles = 0;
    for (const auto& g : info["geoms"]) {
      const int type = g["type"].get<int>(), group = g["group"].get<int>();
      const bool drawn = g["drawn"].get<bool>();
      EXPECT_EQ(drawn, group <= 2 && type != 0) << g.dump();  // planes: the ground is drawn anyway
      if (type == 7 && drawn) ++meshes, triangles += g["triangles"].get<size_t>();
      if (type == 1 && drawn) {
        ++hfields;
        // 256 x 256 samples: the top, the four walls (two triangles per edge step), the bottom
        EXPECT_EQ(g["triangles"].get<size_t>(), 2u * 255u * 255u + 2u * 4u * 255u + 2u);
      }
      hidden += !drawn && group == 3;
    }
    EXPECT_GT(meshes, 10);
    EXPECT_GT(triangles, 10000u);
    EXPECT_GT(hidden, 0);  // the feet boxes / spheres and capsules of the collision model
    EXPECT_EQ(hfields, task == "go1_joystick_rough" ? 1 : 0);
    // one draw call per distinct mesh (and terrain) in each of the two passes, and the ground: Go1 has 5
    // distinct meshes (trunk, hip, thigh, mirrored thigh, calf), G1 35
    EXPECT_GE(info["draw_calls"].get<int>(), task == "g1_joystick" ? 2 * 35 + 1 : 2 * 6 + 1);
  }
}

// Height fields in moving bodies (tests/data/mjcf/hfield_moving.xml: a hinged tray, green, and a
// free raft, blue, each carrying one) are drawn in every env at their body's pose, with their top,
// walls and bottom; their pixels are where the state puts them.
TEST(ViewerHeadless, MovingHeightFieldsAreDrawnInEveryEnv) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const CliRun r = rltrain({"view", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/tests/data/mjcf/hfield_moving.xml",
                            "--num-envs", "2", "--control", "zero", "--headless", "--frames", "1", "--out", dir / "f",
                            "--frame-info", "--width", "480", "--height", "270"},
                           dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  const Image img(dir / "f/frame_000000.png");
  const auto info = nlohmann::json::parse(slurp(dir / "f/frame_000000.json"));
  expect_sky_corners(img, info);
  int hfields = 0;
  for (const auto& g : info["geoms"]) {
    if (g["type"].get<int>() != 1) continue;
    ++hfields;
    EXPECT_TRUE(g["drawn"].get<bool>());
    // 5 x 6 and 3 x 3 samples: top 2 (nrow - 1) (ncol - 1), walls 4 (nrow - 1 + ncol - 1), bottom 2
    const size_t t = g["triangles"].get<size_t>();
    EXPECT_TRUE(t == 40u + 36u + 2u || t == 8u + 16u + 2u) << t;
  }
  EXPECT_EQ(hfields, 2);
  auto is_tray = [](float r, float g, float b) { return g > r + 0.2f && g > b + 0.2f; };
  auto is_raft = [](float r, float g, float b) { return b > r + 0.2f && b > g + 0.2f; };
  const Mat4 vp = view_proj_of(info);
  ASSERT_EQ(info["envs"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {  // qpos0: the tray's hinges at 0, the raft at its body's pose
    SCOPED_TRACE("env " + std::to_string(i));
    const auto& e = info["envs"][i];
    const Vec3 o{e["origin"][0].get<float>(), e["origin"][1].get<float>(), e["origin"][2].get<float>()};
    float px = 0, py = 0;
    // the tray's middle (its geom at (0.05, -0.03, 0.32), its surface 0 .. 0.15 above)
    ASSERT_TRUE(view::project_to_pixel(vp, o + Vec3{0.05f, -0.03f, 0.4f}, img.w, img.h, px, py));
    EXPECT_TRUE(near_pixel(img, px, py, 2, is_tray)) << "tray expected, got " << rgb_at(img, px, py);
    // the raft (obs = qpos, qvel: qpos[16..18] is its free joint's position; its surface 0 .. 0.08 above)
    const Vec3 raft{e["obs"][16].get<float>(), e["obs"][17].get<float>(), e["obs"][18].get<float>()};
    ASSERT_TRUE(view::project_to_pixel(vp, o + raft + Vec3{0, 0, 0.05f}, img.w, img.h, px, py));
    EXPECT_TRUE(near_pixel(img, px, py, 2, is_raft)) << "raft expected, got " << rgb_at(img, px, py);
    ASSERT_TRUE(view::project_to_pixel(vp, o + raft + Vec3{0, 0, 1.0f}, img.w, img.h, px, py));
    EXPECT_FALSE(near_pixel(img, px, py, 1, is_raft)) << "nothing 1 m above the raft: " << rgb_at(img, px, py);
  }
}

// Ellipsoids are drawn stretched per axis (a tall one's red pixels are much taller than wide), and
// cylinders with flat ends (the axis point just past the end facing away from the camera shows no
// cylinder; a capsule would cover it).
TEST(ViewerHeadless, EllipsoidsAndCylindersKeepTheirShape) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const CliRun r = rltrain({"view", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/tests/data/mjcf/viewer_shapes.xml",
                            "--num-envs", "1", "--control", "zero", "--headless", "--frames", "1", "--out", dir / "f",
                            "--frame-info", "--width", "480", "--height", "360"},
                           dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  const Image img(dir / "f/frame_000000.png");
  const auto info = nlohmann::json::parse(slurp(dir / "f/frame_000000.json"));
  for (const auto& g : info["geoms"]) {
    if (g["type"].get<int>() == 4 || g["type"].get<int>() == 5) {
      EXPECT_TRUE(g["drawn"].get<bool>());
    }
  }
  auto is_red = [](float r, float g, float b) { return r > g + 0.25f && r > b + 0.25f; };
  auto is_blue = [](float r, float g, float b) { return b > r + 0.25f && b > g + 0.15f; };
  const Mat4 vp = view_proj_of(info);
  const auto& e = info["envs"][0];
  const Vec3 o{e["origin"][0].get<float>(), e["origin"][1].get<float>(), e["origin"][2].get<float>()};
  float px = 0, py = 0;
  // The ellipsoid: its top and its centre are red; its red pixels span a box at least twice as tall as wide.
  for (float z : {0.6f, 0.95f}) {
    ASSERT_TRUE(view::project_to_pixel(vp, o + Vec3{0, 0, z}, img.w, img.h, px, py));
    EXPECT_TRUE(near_pixel(img, px, py, 1, is_red)) << "ellipsoid expected, got " << rgb_at(img, px, py);
  }
  int x0 = img.w, x1 = -1, y0 = img.h, y1 = -1;
  for (int y = 0; y < img.h; ++y)
    for (int x = 0; x < img.w; ++x) {
      const unsigned char* c = img.at(x, y);
      if (!is_red(c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f)) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  ASSERT_GE(x1, x0) << "no red pixel";
  EXPECT_GE(y1 - y0 + 1, 2 * (x1 - x0 + 1)) << "red box " << x1 - x0 + 1 << " x " << y1 - y0 + 1 << " px";
  // The cylinder: its middle is blue; of the two axis points 0.03 past its ends, the one whose ray
  // leads away from the body (the end facing away from the camera) is not.
  ASSERT_TRUE(view::project_to_pixel(vp, o + Vec3{0.9f, 0, 0.3f}, img.w, img.h, px, py));
  EXPECT_TRUE(near_pixel(img, px, py, 1, is_blue)) << "cylinder expected, got " << rgb_at(img, px, py);
  int uncovered = 0;
  for (float x : {0.57f, 1.23f}) {
    ASSERT_TRUE(view::project_to_pixel(vp, o + Vec3{x, 0, 0.3f}, img.w, img.h, px, py));
    const unsigned char* c = img.at(std::clamp(static_cast<int>(px), 0, img.w - 1), std::clamp(static_cast<int>(py), 0, img.h - 1));
    if (!is_blue(c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f)) ++uncovered;
  }
  EXPECT_GE(uncovered, 1) << "both points past the cylinder's ends are covered: drawn with round caps?";
}

// "<env>: N episodes (...): mean return X, std Y" (eval) and "<env>: N of N envs ...: mean return X, std Y" (view).
std::string mean_std(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("mean return (-?[0-9.]+), std ([0-9.]+)")))
    return "(none in: " + text + ")";
  return m[1].str() + " / " + m[2].str();
}

TEST(ViewerHeadless, PolicyPlaybackReturnsMatchEval) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const std::string config = std::string(RLTRAIN_SOURCE_DIR) + "/configs/cartpole.toml";
  const CliRun t = rltrain(
      {"train", "--config", config, "--set", "train.total_env_steps=16384", "--run-dir", dir / "run", "--quiet"},
      dir.path(), "plain");
  ASSERT_EQ(t.code, 0) << describe(t);
  for (const bool deterministic : {true, false}) {
    SCOPED_TRACE(deterministic ? "deterministic" : "sampled");
    std::vector<std::string> eval = {"eval", "--checkpoint", dir / "run", "--episodes", "8", "--seed",
                                     "7",    "--device",     "cpu"};
    std::vector<std::string> view = {
        "view",       "--checkpoint",      dir / "run", "--num-envs", "8",  "--seed",  "7",  "--device", "cpu",
        "--headless", "--frames",          "12",        "--speed",    "50", "--width", "96", "--height", "64",
        "--returns",  dir / "returns.json"};
    if (deterministic) eval.push_back("--deterministic"), view.push_back("--deterministic");
    const CliRun e = rltrain(eval, dir.path(), "plain");
    ASSERT_EQ(e.code, 0) << describe(e);
    const CliRun v = rltrain(view, dir.path());
    ASSERT_EQ(v.code, 0) << describe(v);
    EXPECT_EQ(mean_std(v.out), mean_std(e.out)) << "view: " << v.out << "eval: " << e.out;
    const auto ret = nlohmann::json::parse(slurp(dir / "returns.json"));
    EXPECT_EQ(ret["finished"].get<int>(), 8) << "every env finished its first episode within 550 steps";
  }
}

TEST(ViewerHeadless, TrainViewReloadsTheLearnersCheckpoints) {
  REQUIRE_DISPLAY();
  test::TempDir dir("rltrain_viewer");
  const CliRun r = rltrain({"train", "--config", std::string(RLTRAIN_SOURCE_DIR) + "/configs/cartpole.toml", "--set",
                            "train.total_env_steps=8192", "--run-dir", dir / "run", "--quiet", "--view", "--view-every",
                            "4", "--view-envs", "4", "--view-out", dir / "frames", "--view-frames", "3"},
                           dir.path());
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(fs::exists(dir / "frames/frame_000002.png"));
  EXPECT_TRUE(fs::exists(dir / "run/checkpoints/latest.safetensors"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("policy loaded ([0-9]+) times"))) << describe(r);
  EXPECT_GE(std::stoi(m[1].str()), 1) << "the last frame waits for the end of training and plays its final checkpoint";
}

TEST(ViewerBadInput, ClearMessagesAndExitCodes) {
  test::TempDir dir("rltrain_viewer");
  const std::string config = std::string(RLTRAIN_SOURCE_DIR) + "/configs/cartpole.toml";
  // No display: one message pointing at --headless and xvfb-run.
  CliRun r = rltrain({"view", "--config", config}, dir.path(), "nodisplay");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("--headless"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("xvfb-run"), std::string::npos) << r.err;
  // Missing checkpoint.
  r = rltrain({"view", "--config", config, "--checkpoint", dir / "nope.safetensors", "--headless", "--frames", "1",
               "--out", dir / "f"},
              dir.path(), "nodisplay");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("no such checkpoint"), std::string::npos) << r.err;
  // A checkpoint for another env.
  const CliRun t =
      rltrain({"train", "--config", config, "--set", "train.total_env_steps=1024", "--run-dir", dir / "run", "--quiet"},
              dir.path(), "plain");
  ASSERT_EQ(t.code, 0) << describe(t);
  r = rltrain({"view", "--config", std::string(RLTRAIN_SOURCE_DIR) + "/configs/pendulum.toml", "--checkpoint",
               dir / "run", "--headless", "--frames", "1", "--out", dir / "f"},
              dir.path(), "nodisplay");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("checkpoint is for env 'cartpole'"), std::string::npos) << r.err;
  // train --view refuses before it trains: no display, and a run dir that holds a run (its old
  // checkpoint would be played), each leaving the existing run as it was.
  const std::string before = slurp(dir / "run/metrics.csv");
  r = rltrain(
      {"train", "--config", config, "--set", "train.total_env_steps=100000000", "--run-dir", dir / "fresh", "--view"},
      dir.path(), "nodisplay");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("xvfb-run"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "fresh/metrics.csv")) << "trained before checking the display";
  r = rltrain(
      {"train", "--config", config, "--run-dir", dir / "run", "--view", "--view-out", dir / "vf", "--view-frames", "1"},
      dir.path());
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("already holds a run"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir / "run/metrics.csv"), before);
  // Headless without frames.
  r = rltrain({"view", "--config", config, "--headless"}, dir.path(), "nodisplay");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("--frames"), std::string::npos) << r.err;
  // --control-dt must be a whole number of the model's physics steps (as for bench --model).
  r = rltrain({"view", "--model", std::string(RLTRAIN_SOURCE_DIR) + "/envs/assets/ant.xml", "--control-dt", "0.033",
               "--headless", "--frames", "1", "--out", dir / "f"},
              dir.path(), "nodisplay");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("--control-dt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("whole number"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rlt
