// `rltrain export`: a checkpoint's deterministic actor as an ONNX model (issue 20), for running a
// trained policy outside rltrain (onnxruntime on a robot, in a browser, in Python).
//
// The graph computes exactly what Policy::act(obs, rows, deterministic = true) does (rl/policy.h):
// the observation normalizer folded in as constants ((obs - mean) * 1/sqrt(var + 1e-8), clipped to
// +-ppo.clip_obs; absent when ppo.normalize_obs is off), the actor MLP (Gemm + Tanh/Elu/Relu per
// hidden layer), and the head: continuous, the Gaussian's mean (not clipped to the action space,
// as Policy::act; envs clip); discrete, the argmax of the logits (first on ties) as a float index.
//   input  obs     float32 [N, obs_dim]
//   output action  float32 [N, act_dim]   (act_dim 1 for a discrete env)
// Built with Debian's libonnx-dev (the onnx protobuf API and its model checker); without it
// `rltrain export` says how to get it. The model's metadata_props name the env, the dimensions and
// the checkpoint.
//
// `--format policy` writes the checkpoint's policy file instead (rl/checkpoint.h save_policy_file):
// safetensors, the weights and normalizers without the optimizer and env state (1% of a 1024-env
// Go1 checkpoint); every command that takes a checkpoint takes it, --resume excepted. Needs no
// ONNX.
#pragma once

#include <string>

namespace rlt {

struct ExportOptions {
  std::string checkpoint;  // a .safetensors file, or a run directory (its latest checkpoint)
  std::string out;         // the file to write
  std::string format = "onnx";  // "onnx" | "policy"
};

struct ExportResult {
  std::string env;
  int obs_dim = 0, act_dim = 0;
  bool discrete = false;
  std::string checkpoint;  // the file read
};

// Whether this rltrain was built with ONNX export.
bool onnx_export_available();

// Both write opts.out atomically (a temporary file in its directory, renamed; nothing is left on
// failure) after checking it as input: CheckpointError for a bad checkpoint; ConfigError for an
// --out whose directory is missing, that is a directory, the checkpoint read, or a training
// checkpoint (never overwritten), and for ONNX export where it was not built; IoError when the
// write itself fails (the machine's refusal: exit 5).
ExportResult export_onnx(const ExportOptions& opts);
// The policy file of opts.checkpoint (rl/checkpoint.h save_policy_file), after restoring it as a
// Policy (the checks eval makes).
ExportResult export_policy(const ExportOptions& opts);

// export_onnx or export_policy as opts.format says; another format is a ConfigError naming --format.
ExportResult export_checkpoint(const ExportOptions& opts);

}  // namespace rlt
