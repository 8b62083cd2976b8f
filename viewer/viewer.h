// The viewer behind `rltrain view` and `rltrain train --view`: a GLFW window with OpenGL 3.3 and a
// Dear ImGui panel over a running batch of envs (a ViewSim: viewer/sim_source.h), or headless PNG
// frames / an MP4 from an offscreen framebuffer. It receives a ready sim; apps/view.cpp builds it.
// Built only with RLTRAIN_VIEWER (GLFW, Dear ImGui, OpenGL found).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <atomic>
#include <memory>

#include "viewer/sim_source.h"

namespace rlt {

struct ViewOptions {
  std::string config_path;             // --config: the env (and its parameters) to view
  std::vector<std::string> overrides;  // --set section.key=value
  std::string checkpoint;              // --checkpoint: a policy to play (file or run directory)
  std::string model_path;              // --model: any MJCF model, stepped by the physics directly
  std::int64_t num_envs = 0;           // --num-envs (0: 64, or the config's when smaller)
  std::string device = "auto";         // --device auto | cpu | cuda
  int threads = 0;                     // CPU threads (0: one per core)
  std::uint64_t seed = 12345;          // --seed: env resets (the same default as `rltrain eval`)
  std::string control = "";        // --control policy | random | zero (default: policy with a checkpoint, else random)
  bool deterministic = false;      // --deterministic: the policy's mode instead of samples
  double speed = 1.0;              // --speed: env steps per rendered frame (fractions accumulate)
  double control_dt = 0.05;        // --control-dt: with --model, seconds per control step
  bool headless = false;           // --headless: offscreen frames, no window, no panel
  std::int64_t frames = 0;         // --frames: frames to render (headless: required; window: 0 = until closed)
  std::string out_dir;             // --out: write frame_NNNNNN.png here
  std::string video_path;          // --video: an MP4 through ffmpeg (headless)
  bool frame_info = false;         // --frame-info: frame_NNNNNN.json beside each PNG (camera, env origins, obs)
  std::string returns_path;        // --returns: JSON of the first finished episode's return of every env
  int width = 1280, height = 720;  // --width/--height: window or image size in pixels
  bool shadows = true;             // --no-shadows turns the shadow map off
  std::int64_t follow = -1;        // --follow ENV: the camera follows this env
  float yaw = -1.5707963f, pitch = 0.35f;  // --yaw / --pitch: initial camera angles (rad)
  float zoom = 1.0f;                       // --zoom: >1 closer than the automatic framing
  // train --view: the run directory whose latest checkpoint is reloaded when it changes.
  std::string watch_run_dir;
};

// train --view: what the viewer watches besides its sim (the run directory is opts.watch_run_dir).
struct ViewWatch {
  const std::atomic<bool>* training_done = nullptr;  // set by the trainer thread when it ends
  std::string status;                                // the panel's first status line
};

// Runs the viewer over a ready sim (apps/view.cpp composes it: env, policy, device); returns the
// process exit code. Throws ConfigError for bad options (before any window opens).
int run_viewer(std::unique_ptr<view::ViewSim> sim, const ViewOptions& opts, const ViewWatch& watch = {});

// The option checks run_viewer starts with (--headless needs --frames, ...), for callers that must
// refuse bad options before other work starts; and the no-display refusal (ConfigError).
void check_view_options(const ViewOptions& opts);
void require_view_display();

// The advice printed when no window can be opened (no display): --headless, xvfb-run.
const char* viewer_no_display_hint();

}  // namespace rlt
