#include "apps/export.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "apps/evaluate.h"  // resolve_checkpoint_path, make_checkpoint_policy
#include "apps/runtime.h"
#include "rl/checkpoint.h"
#include "rl/files.h"

#if defined(RLTRAIN_HAVE_ONNX)
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#endif

namespace rlt {

namespace {

// The spec of the checkpoint's policy, restored on one CPU env as eval would restore it:
// CheckpointError when the checkpoint does not fit its env and policy.
PolicySpec checked_policy_spec(const Checkpoint& ckpt) {
  Config cfg = ckpt.config;
  cfg.env.num_envs = 1;
  const Runtime rt("cpu", 1);
  const auto env = rt.make_env(cfg);
  return make_checkpoint_policy(rt, cfg, ckpt, *env)->spec();
}

// The checkpoint (resolved: a run directory's latest) and --out, checked as bad input before
// anything is read or written: --out's directory exists; --out is not a directory, not the
// checkpoint being read, and not a training checkpoint (its optimizer and env state would be lost).
// A failed write after these checks is the machine's refusal (IoError, exit 5).
std::string checked_paths(const ExportOptions& opts) {
  namespace fs = std::filesystem;
  if (opts.out.empty()) throw ConfigError("--out: a file name is required");
  const std::string path = resolve_checkpoint_path(opts.checkpoint);
  const fs::path out(opts.out);
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw ConfigError("--out " + opts.out + ": no directory " + dir.string());
  const fs::file_status st = fs::status(out, ec);
  if (fs::is_directory(st)) throw ConfigError("--out " + opts.out + ": is a directory (name a file)");
  if (fs::equivalent(out, path, ec))
    throw ConfigError("--out " + opts.out + ": is the checkpoint being exported (write to another file)");
  if (fs::is_regular_file(st)) {
    TensorFile existing;
    try {
      existing = read_safetensors(opts.out);
    } catch (const std::runtime_error&) {
      return path;  // not a safetensors file: replaced as any output file is
    }
    const auto format = existing.metadata.find("format");
    const auto contents = existing.metadata.find("contents");
    if (format != existing.metadata.end() && format->second == kCheckpointFormat &&
        (contents == existing.metadata.end() || contents->second != kPolicyContents))
      throw ConfigError("--out " + opts.out +
                        ": is a training checkpoint (its optimizer and env state would be lost; write to another file)");
  }
  return path;
}

}  // namespace

#if defined(RLTRAIN_HAVE_ONNX)

namespace {

constexpr int kOpset = 13;  // Gemm, Clip with min/max inputs, ArgMax, Cast, Tanh, Elu, Relu

void add_initializer(onnx::GraphProto& g, const std::string& name, const std::vector<std::int64_t>& dims,
                     const float* values) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values), static_cast<size_t>(n) * sizeof(float)));
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::string& output) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(output);
  for (const auto& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

void set_attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_attr(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void add_io(onnx::ValueInfoProto* v, const std::string& name, int width) {
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("N");
  t->mutable_shape()->add_dim()->set_dim_value(width);
}

void add_meta(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* p = m.add_metadata_props();
  p->set_key(key);
  p->set_value(value);
}

// The deterministic actor of `spec` with these parameters (the whole actor-critic buffer) and
// normalizer, as an ONNX model.
onnx::ModelProto build_model(const PolicySpec& spec, const ObsNormalization& norm, const std::vector<float>& params,
                             const std::vector<float>& obs_mean, const std::vector<float>& obs_var) {
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("rltrain");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("rltrain_deterministic_actor");
  add_io(g.add_input(), "obs", spec.obs_dim);
  add_io(g.add_output(), "action", spec.act_dim);

  std::string x = "obs";
  if (norm.enabled) {
    // Policy's NormalizeObs: clamp((x - mean) * (1 / sqrt(var + 1e-8)), -clip, clip), the scale
    // computed here in float exactly as it does.
    std::vector<float> scale(obs_var.size());
    for (size_t k = 0; k < scale.size(); ++k) scale[k] = 1.0f / std::sqrt(obs_var[k] + 1e-8f);
    const std::int64_t d = spec.obs_dim;
    const float lo = -norm.clip, hi = norm.clip;
    add_initializer(g, "obs_mean", {d}, obs_mean.data());
    add_initializer(g, "obs_scale", {d}, scale.data());
    add_initializer(g, "obs_clip_min", {}, &lo);
    add_initializer(g, "obs_clip_max", {}, &hi);
    add_node(g, "Sub", {"obs", "obs_mean"}, "obs_centered");
    add_node(g, "Mul", {"obs_centered", "obs_scale"}, "obs_scaled");
    add_node(g, "Clip", {"obs_scaled", "obs_clip_min", "obs_clip_max"}, "obs_normalized");
    x = "obs_normalized";
  }

  const ActorCriticLayout layout(spec);
  const MlpShape& s = layout.actor;
  for (int l = 0; l < s.num_layers(); ++l) {
    const std::string p = "actor." + std::to_string(l);
    add_initializer(g, p + ".weight", {s.layer_in(l), s.layer_out(l)}, params.data() + s.weight_offset(l));
    add_initializer(g, p + ".bias", {s.layer_out(l)}, params.data() + s.bias_offset(l));
    const bool last = l + 1 == s.num_layers();
    const std::string z = last ? (spec.discrete       ? std::string("logits")
                                  : spec.squashed() ? std::string("mean")
                                                    : std::string("action"))
                               : p + ".linear";
    add_node(g, "Gemm", {x, p + ".weight", p + ".bias"}, z);
    x = z;
    if (last) break;
    const std::string h = p + ".out";
    switch (s.act) {
      case Activation::kTanh:
        add_node(g, "Tanh", {x}, h);
        break;
      case Activation::kElu:
        set_attr(add_node(g, "Elu", {x}, h), "alpha", 1.0f);
        break;
      default:
        add_node(g, "Relu", {x}, h);
        break;
    }
    x = h;
  }
  if (spec.squashed()) {  // Policy's SampleAction: center + scale * tanh(mean)
    const std::int64_t a = spec.act_dim;
    add_initializer(g, "action_center", {a}, spec.squash_center.data());
    add_initializer(g, "action_scale", {a}, spec.squash_scale.data());
    add_node(g, "Tanh", {"mean"}, "mean_squashed");
    add_node(g, "Mul", {"mean_squashed", "action_scale"}, "action_scaled");
    add_node(g, "Add", {"action_scaled", "action_center"}, "action");
  }
  if (spec.discrete) {
    onnx::NodeProto* am = add_node(g, "ArgMax", {"logits"}, "action_index");
    set_attr(am, "axis", std::int64_t{1});
    set_attr(am, "keepdims", std::int64_t{1});
    set_attr(am, "select_last_index", std::int64_t{0});  // the first maximum, as Policy's argmax
    set_attr(add_node(g, "Cast", {"action_index"}, "action"), "to", std::int64_t{onnx::TensorProto::FLOAT});
  }
  return model;
}

}  // namespace

bool onnx_export_available() { return true; }

ExportResult export_onnx(const ExportOptions& opts) {
  const std::string path = checked_paths(opts);
  const Checkpoint ckpt = read_checkpoint(path);
  const Config& cfg = ckpt.config;
  const PolicySpec spec = checked_policy_spec(ckpt);
  const std::vector<float> params = ckpt.file.values<float>("learner/params");
  const std::vector<float> obs_mean = ckpt.file.values<float>("learner/obs_mean");
  const std::vector<float> obs_var = ckpt.file.values<float>("learner/obs_var");

  onnx::ModelProto model = build_model(spec, obs_normalization(cfg), params, obs_mean, obs_var);
  model.set_doc_string("rltrain " + cfg.env.name + " policy: the deterministic actor of " + path +
                       " (observation normalizer folded in)");
  add_meta(model, "env", cfg.env.name);
  add_meta(model, "obs_dim", std::to_string(spec.obs_dim));
  add_meta(model, "act_dim", std::to_string(spec.act_dim));
  add_meta(model, "action", spec.discrete   ? "discrete index (argmax)"
                           : spec.squashed() ? "continuous: center + scale * tanh(mean), in the action box"
                                             : "continuous mean");
  add_meta(model, "checkpoint", path);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("rltrain export: the ONNX model fails onnx's checker: ") + e.what());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw std::runtime_error("rltrain export: cannot serialize the ONNX model");
  write_text_atomic(opts.out, bytes);  // IoError: the machine refused (checked_paths took the bad paths)
  return ExportResult{cfg.env.name, spec.obs_dim, spec.act_dim, spec.discrete, path};
}

#else  // built without libonnx-dev

bool onnx_export_available() { return false; }

ExportResult export_onnx(const ExportOptions&) {
  throw ConfigError(
      "rltrain export: this rltrain was built without ONNX export (install libonnx-dev and protobuf, e.g. with "
      "tools/setup.sh, and reconfigure)");
}

#endif

ExportResult export_policy(const ExportOptions& opts) {
  const std::string path = checked_paths(opts);
  const Checkpoint ckpt = read_checkpoint(path);
  const PolicySpec spec = checked_policy_spec(ckpt);
  save_policy_file(ckpt, opts.out);
  return ExportResult{ckpt.config.env.name, spec.obs_dim, spec.act_dim, spec.discrete, path};
}

ExportResult export_checkpoint(const ExportOptions& opts) {
  if (opts.format == "onnx") return export_onnx(opts);
  if (opts.format == "policy") return export_policy(opts);
  throw ConfigError("--format: expected onnx or policy, got \"" + opts.format + "\"");
}

}  // namespace rlt
