// TOML config loading, overrides, validation and printing (rl/config.h).
//
// Every field is described once in fields() below: section, key, doc line, the rule it must meet
// and where it lives in Config. Parsing, `--set` overrides, validate() and to_toml() all walk that
// one table, so a new field is added in config.h and in fields(), nowhere else.
#include "rl/config.h"

#include <toml++/toml.h>

#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string_view>
#include <variant>

namespace rlt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxHiddenWidth = 4096;
const char* const kSections[] = {"env", "policy", "ppo", "train"};

// What a field must hold. Numeric bounds apply to ints and doubles (doubles must also be finite);
// `choices` to strings; `lo`/`hi` to each element of an int list.
struct Rule {
  const char* expect;  // "a positive integer": completes "expected ..." in messages
  double lo = -kInf;
  double hi = kInf;
  bool lo_open = false;  // lo itself is excluded
  std::vector<const char*> choices = {};
  bool non_empty = false;  // strings: "" is rejected
  bool allow_inf = false;  // doubles: inf and -inf are values (NaN never is)
};

Rule positive_int() { return {"a positive integer", 1}; }
Rule non_negative_int() { return {"a non-negative integer", 0}; }
Rule positive_number() { return {"a positive number", 0, kInf, true}; }
Rule non_negative_number() { return {"a non-negative number", 0}; }
Rule unit_interval() { return {"a number in [0, 1]", 0, 1}; }
Rule any_number() { return {"a finite number"}; }
Rule boolean() { return {"a boolean (true or false)"}; }
Rule any_uint64() { return {"a non-negative integer"}; }
// (A log std: e^20 is 5e8, and float holds every bound in the range.)
Rule log_std_bound() { return {"a number in [-20, 20], or -inf / inf (no bound)", -20, 20, false, {}, false, true}; }

using FieldRef = std::variant<int*, std::int64_t*, std::uint64_t*, double*, bool*, std::string*, std::vector<int>*>;

struct Field {
  const char* section;
  const char* key;
  const char* doc;
  Rule rule;
  FieldRef (*ref)(Config&);
};

// clang-format off (it would split the macro's braced initializer)
#define RLT_FIELD(sec, name, rule, doc)                                        \
  Field {                                                                      \
#sec, #name, doc, rule, [](Config & c) -> FieldRef { return &c.sec.name; } \
  }
// clang-format on

// The docs repeat config.h's (they are written into to_toml()'s output).
const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      RLT_FIELD(env, name, (Rule{"a non-empty string (a registered env name)", -kInf, kInf, false, {}, true}),
                "registered env name (`rltrain envs` lists them)"),
      RLT_FIELD(env, num_envs, positive_int(), "envs stepped in parallel"),

      RLT_FIELD(policy, hidden,
                (Rule{"an array of integers in [1, 4096] (empty = linear policy)", 1, double(kMaxHiddenWidth)}),
                "hidden layer widths, actor and critic alike"),
      RLT_FIELD(policy, activation, (Rule{"one of tanh, elu, relu", -kInf, kInf, false, {"tanh", "elu", "relu"}}),
                "tanh | elu | relu"),
      RLT_FIELD(policy, init_log_std, any_number(), "initial log std of the Gaussian head (continuous actions)"),
      RLT_FIELD(policy, squash, (Rule{"one of none, tanh", -kInf, kInf, false, {"none", "tanh"}}),
                "none (the Gaussian's sample, clamped by the env) | tanh (tanh-squashed into the action box, as brax)"),
      RLT_FIELD(policy, min_log_std, log_std_bound(),
                "lower bound of the Gaussian's log std (continuous actions; -inf = none): clamped into "
                "[min_log_std, max_log_std] after every optimizer step and before each rollout"),
      RLT_FIELD(policy, max_log_std, log_std_bound(),
                "upper bound of the Gaussian's log std (inf = none): keeps an entropy bonus from growing the "
                "noise without limit"),

      RLT_FIELD(ppo, num_steps, positive_int(), "rollout length per env per iteration"),
      RLT_FIELD(ppo, num_epochs, positive_int(), "passes over each rollout"),
      RLT_FIELD(ppo, num_minibatches, positive_int(), "minibatches per epoch (must divide num_steps*num_envs)"),
      RLT_FIELD(ppo, learning_rate, positive_number(), "Adam step size (initial, for schedules)"),
      RLT_FIELD(
          ppo, lr_schedule,
          (Rule{"one of constant, linear, adaptive_kl", -kInf, kInf, false, {"constant", "linear", "adaptive_kl"}}),
          "constant | linear (to 0 at the end) | adaptive_kl"),
      RLT_FIELD(ppo, desired_kl, positive_number(), "adaptive_kl target: lr /= 1.5 above 2x, *= 1.5 below x/2"),
      RLT_FIELD(ppo, gamma, unit_interval(), "discount"),
      RLT_FIELD(ppo, gae_lambda, unit_interval(), "GAE lambda"),
      RLT_FIELD(ppo, clip_coef, positive_number(), "surrogate clip range"),
      RLT_FIELD(ppo, clip_value_loss, boolean(), "clip the value loss around the old value"),
      RLT_FIELD(ppo, vf_coef, non_negative_number(), "value loss weight"),
      RLT_FIELD(ppo, ent_coef, non_negative_number(), "entropy bonus weight"),
      RLT_FIELD(ppo, bounds_loss_coef, non_negative_number(),
                "weight of the penalty on a Gaussian policy's means beyond 1.1 half-widths of the action box, "
                "squared (rl_games' bounds loss; 0 = off): brings back means the env's clamp hides from the policy "
                "gradient"),
      RLT_FIELD(ppo, max_grad_norm, non_negative_number(), "global gradient-norm clip (0 disables)"),
      RLT_FIELD(ppo, normalize_advantages, boolean(), "per-minibatch advantage normalization"),
      RLT_FIELD(ppo, normalize_obs, boolean(), "running mean/std observation normalization"),
      RLT_FIELD(ppo, normalize_reward, boolean(), "scale rewards by the std of the discounted return"),
      RLT_FIELD(ppo, clip_obs, positive_number(), "clip normalized observations to +-clip_obs"),
      RLT_FIELD(ppo, adam_eps, positive_number(), "Adam epsilon"),
      RLT_FIELD(ppo, target_kl, non_negative_number(), "stop an update's epochs early above this KL (0 = off)"),
      RLT_FIELD(ppo, gemm_precision,
                (Rule{"one of fp32, tf32, bf16, fp16", -kInf, kInf, false, {"fp32", "tf32", "bf16", "fp16"}}),
                "fp32 | tf32 | bf16 | fp16: what the policy's GEMMs round their inputs to (sums stay fp32)"),
      RLT_FIELD(ppo, tf32, boolean(), "older spelling of gemm_precision = \"tf32\" (true) or not (false)"),

      RLT_FIELD(train, total_env_steps, positive_int(), "stop after this many env steps"),
      RLT_FIELD(train, seed, any_uint64(), "everything random derives from it (above 2^63-1: write it as a string)"),
      RLT_FIELD(train, device, (Rule{"one of auto, cpu, cuda", -kInf, kInf, false, {"auto", "cpu", "cuda"}}),
                "auto | cpu | cuda"),
      RLT_FIELD(train, env_device,
                (Rule{"one of auto, cpu, cuda, or \"\" (train.device)", -kInf, kInf, false, {"", "auto", "cpu", "cuda"}}),
                "where the envs step: auto | cpu | cuda (\"\" = train.device); apart from the learner's, their "
                "outputs reach it through pinned host staging"),
      RLT_FIELD(train, learner_device,
                (Rule{"one of auto, cpu, cuda, or \"\" (train.device)", -kInf, kInf, false, {"", "auto", "cpu", "cuda"}}),
                "where the learner runs: auto | cpu | cuda (\"\" = train.device)"),
      RLT_FIELD(train, threads, Rule({"an integer in [0, 1024]", 0, 1024}), "CPU threads (0 = one per core; at most 1024)"),
      RLT_FIELD(train, checkpoint_every, non_negative_int(), "iterations between checkpoints (0 = final only)"),
      RLT_FIELD(train, checkpoint_minutes, non_negative_number(),
                "also refresh checkpoints/latest.safetensors this often, in minutes of wall time (0 = off)"),
      RLT_FIELD(train, max_skipped_updates, non_negative_int(),
                "minibatch updates in a row with a non-finite loss or gradient (each skipped) that stop the run as "
                "diverged, keeping the last checkpoint (0 = never stop)"),
      RLT_FIELD(train, target_return, any_number(), "stop once the mean return reaches it (if stop_at_target)"),
      RLT_FIELD(train, stop_at_target, boolean(), "enable the early stop above"),
      RLT_FIELD(train, eval_episodes, positive_int(), "finished episodes the reported mean return averages"),
      RLT_FIELD(train, stats_readback,
                (Rule{"one of auto, sync, lagged", -kInf, kInf, false, {"auto", "sync", "lagged"}}),
                "when an iteration's statistics are read: lagged (after the next iteration is queued, so the host "
                "never waits on the device inside the loop; a checkpoint, the end or a stop reads them at once), "
                "sync, or auto (lagged on CUDA, sync on the CPU)"),
      RLT_FIELD(train, init_from, (Rule{"a string (a checkpoint file or run directory, or \"\")", -kInf, kInf, false, {}, false}),
                "start from this checkpoint's policy (file or run directory): weights and observation normalizer; "
                "envs, optimizer and counters start fresh (\"\" = a random policy)"),
      RLT_FIELD(train, memory_check, boolean(),
                "check before allocating that the run fits in free memory (RAM or GPU) with a margin; false skips "
                "it (so does the environment variable RLTRAIN_MEMORY_CHECK=0)"),
  };
  return table;
}
#undef RLT_FIELD

const Field* find_field(std::string_view section, std::string_view key) {
  for (const Field& f : fields())
    if (section == f.section && key == f.key) return &f;
  return nullptr;
}

bool is_section(std::string_view s) {
  return std::find(std::begin(kSections), std::end(kSections), s) != std::end(kSections);
}

// ---- text helpers -----------------------------------------------------------------------------

// Shortest decimal text that reads back as exactly x, tidied for TOML: 0.0003, 1e-5, 2.0.
std::string format_double(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  int precision = 1;
  for (; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  // %g switches to an exponent once it exceeds the precision (10 -> "1e+01"): write numbers
  // below 1e16 out in full instead.
  std::snprintf(buf, sizeof buf, "%.*e", precision - 1, x);
  int exponent10 = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent10 >= precision && exponent10 < 16) precision = exponent10 + 1;
  std::snprintf(buf, sizeof buf, "%.*g", precision, x);
  std::string s = buf;
  // Exponent: drop '+' and leading zeros ("1e-05" -> "1e-5", "1e+20" -> "1e20").
  std::size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mantissa = s.substr(0, e);
    std::string exponent = s.substr(e + 1);
    bool negative = !exponent.empty() && exponent[0] == '-';
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.erase(0, 1);
    exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
    return mantissa + "e" + (negative ? "-" : "") + exponent;
  }
  if (s.find('.') == std::string::npos) s += ".0";  // keep it a TOML float
  return s;
}

// A TOML basic string (also fine as a one-line quoted string in messages).
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// A key as written in TOML: bare when it can be, quoted otherwise.
std::string key_text(std::string_view k) {
  bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return bare ? std::string(k) : quote(k);
}

std::string shorten(std::string s, std::size_t max_len = 60) {
  if (s.size() > max_len) s = s.substr(0, max_len - 3) + "...";
  return s;
}

// "integer 5", "string \"abc\"", "array [1, 2]": the "got ..." part of a message.
std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::integer:
      return "integer " + std::to_string(*node.value<std::int64_t>());
    case toml::node_type::floating_point:
      return "float " + format_double(*node.value<double>());
    case toml::node_type::boolean:
      return std::string("boolean ") + (*node.value<bool>() ? "true" : "false");
    case toml::node_type::string:
      return "string " + shorten(quote(node.as_string()->get()));
    case toml::node_type::array: {
      std::string s = "array [";
      const toml::array& arr = *node.as_array();
      for (std::size_t i = 0; i < arr.size(); ++i) {
        if (i) s += ", ";
        const toml::node& el = arr[i];
        if (el.is_integer()) s += std::to_string(*el.value<std::int64_t>());
        else if (el.is_floating_point()) s += format_double(*el.value<double>());
        else if (el.is_string()) s += quote(el.as_string()->get());
        else s += el.is_boolean() ? (*el.value<bool>() ? "true" : "false") : el.is_array() ? "[...]" : "{...}";
      }
      return shorten(s + "]");
    }
    case toml::node_type::table:
      return "table";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    default:
      return "nothing";
  }
}

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw ConfigError(where + ": " + what); }

[[noreturn]] void fail_expected(const std::string& where, const Rule& rule, const std::string& got) {
  fail(where, std::string("expected ") + rule.expect + ", got " + got);
}

std::string source_name(const Config& cfg) { return cfg.source.empty() ? std::string("<config>") : cfg.source; }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string unknown_key_text(std::string_view section, std::string_view key) {
  std::string best;
  std::size_t best_distance = 3;  // suggest only close misspellings
  std::string known;
  for (const Field& f : fields()) {
    if (section != f.section) continue;
    known += known.empty() ? "" : ", ";
    known += f.key;
    std::size_t d = edit_distance(key, f.key);
    if (d < best_distance) best_distance = d, best = f.key;
  }
  if (!best.empty()) return "unknown key (did you mean " + std::string(section) + "." + best + "?)";
  return "unknown key (keys of [" + std::string(section) + "]: " + known + ")";
}

std::string unknown_section_text() { return "unknown section (sections: env, policy, ppo, train)"; }

// ---- checking and assigning one field ----------------------------------------------------------

// The "got ..." text when a well-typed value breaks its rule; empty when it is fine.
std::string rule_violation(const Rule& rule, const FieldRef& ref) {
  auto out_of_range = [&](double x) { return !(rule.lo_open ? x > rule.lo : x >= rule.lo) || !(x <= rule.hi); };
  if (auto p = std::get_if<int*>(&ref)) {
    if (out_of_range(**p)) return std::to_string(**p);
  } else if (auto p = std::get_if<std::int64_t*>(&ref)) {
    if (out_of_range(double(**p))) return std::to_string(**p);
  } else if (std::get_if<std::uint64_t*>(&ref)) {
    // every uint64 is a valid seed
  } else if (auto p = std::get_if<double*>(&ref)) {
    const double x = **p;
    if (std::isnan(x) || (std::isinf(x) ? !rule.allow_inf : out_of_range(x))) return format_double(x);
  } else if (std::get_if<bool*>(&ref)) {
  } else if (auto p = std::get_if<std::string*>(&ref)) {
    const std::string& s = **p;
    if (rule.non_empty && s.empty()) return "\"\"";
    if (!rule.choices.empty() &&
        std::none_of(rule.choices.begin(), rule.choices.end(), [&](const char* c) { return s == c; }))
      return shorten(quote(s));
  } else if (auto p = std::get_if<std::vector<int>*>(&ref)) {
    const std::vector<int>& v = **p;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (out_of_range(v[i])) {
        std::string s = "[";
        for (std::size_t j = 0; j < v.size(); ++j) s += (j ? ", " : "") + std::to_string(v[j]);
        return shorten(s + "]") + " (element " + std::to_string(i) + " is " + std::to_string(v[i]) + ")";
      }
    }
  }
  return {};
}

// An integer node as int64, or a type error.
std::int64_t get_integer(const toml::node& node, const Rule& rule, const std::string& where) {
  if (!node.is_integer()) {
    std::string got = describe(node);
    if (node.is_floating_point()) {
      double x = *node.value<double>();
      if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 9.2e18)
        got += " (write it as an integer: " + std::to_string(static_cast<std::int64_t>(x)) + ")";
    }
    fail_expected(where, rule, got);
  }
  return *node.value<std::int64_t>();
}

int get_int32(const toml::node& node, const Rule& rule, const std::string& where) {
  std::int64_t v = get_integer(node, rule, where);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail_expected(where, rule, describe(node) + " (does not fit in 32 bits)");
  return static_cast<int>(v);
}

// Converts `node` to the field's type, checks its rule, and only then stores it in `cfg`:
// a failed assignment leaves cfg untouched.
void assign(Config& cfg, const Field& field, const toml::node& node, const std::string& where) {
  const Rule& rule = field.rule;
  FieldRef target = field.ref(cfg);
  auto check_and_store = [&](auto value) {
    using T = decltype(value);
    FieldRef candidate = &value;
    std::string bad = rule_violation(rule, candidate);
    if (!bad.empty()) fail_expected(where, rule, bad);
    *std::get<T*>(target) = std::move(value);
  };
  if (std::holds_alternative<int*>(target)) {
    check_and_store(get_int32(node, rule, where));
  } else if (std::holds_alternative<std::int64_t*>(target)) {
    check_and_store(get_integer(node, rule, where));
  } else if (std::holds_alternative<std::uint64_t*>(target)) {
    // int64 covers 0..2^63-1; larger seeds are written as decimal strings (TOML has no uint64).
    if (node.is_integer()) {
      std::int64_t v = *node.value<std::int64_t>();
      if (v < 0) fail_expected(where, rule, describe(node));
      check_and_store(static_cast<std::uint64_t>(v));
    } else if (node.is_string()) {
      const std::string& s = node.as_string()->get();
      errno = 0;
      char* end = nullptr;
      unsigned long long v = std::strtoull(s.c_str(), &end, 10);
      bool digits_only = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits_only || errno == ERANGE || *end != '\0') fail_expected(where, rule, describe(node));
      check_and_store(static_cast<std::uint64_t>(v));
    } else {
      fail_expected(where, rule, describe(node));
    }
  } else if (std::holds_alternative<double*>(target)) {
    if (node.is_integer()) check_and_store(static_cast<double>(*node.value<std::int64_t>()));
    else if (node.is_floating_point()) check_and_store(*node.value<double>());
    else fail_expected(where, rule, describe(node));
  } else if (std::holds_alternative<bool*>(target)) {
    if (!node.is_boolean()) fail_expected(where, rule, describe(node));
    check_and_store(*node.value<bool>());
  } else if (std::holds_alternative<std::string*>(target)) {
    if (!node.is_string()) fail_expected(where, rule, describe(node));
    check_and_store(node.as_string()->get());
  } else if (std::holds_alternative<std::vector<int>*>(target)) {
    const toml::array* arr = node.as_array();
    if (!arr) fail_expected(where, rule, describe(node));
    std::vector<int> widths;
    for (const toml::node& el : *arr) {
      if (!el.is_integer()) fail_expected(where, rule, describe(node));
      std::int64_t w = *el.value<std::int64_t>();
      if (w < 1 || w > kMaxHiddenWidth) fail_expected(where, rule, describe(node));
      widths.push_back(static_cast<int>(w));
    }
    check_and_store(std::move(widths));
  }
}

// An [env] key that is not a field: an env parameter, number or boolean.
void assign_env_param(Config& cfg, const std::string& key, const toml::node& node, const std::string& where) {
  static const Rule rule{"a number or boolean (env parameter)"};
  double v;
  if (node.is_integer()) v = static_cast<double>(*node.value<std::int64_t>());
  else if (node.is_floating_point()) v = *node.value<double>();
  else if (node.is_boolean()) v = *node.value<bool>() ? 1.0 : 0.0;
  else fail_expected(where, rule, describe(node));
  if (!std::isfinite(v)) fail_expected(where, rule, describe(node));
  cfg.env.params[key] = v;
}

// Sets section.key from `node`; `where` prefixes every message.
void set_key(Config& cfg, const std::string& section, const std::string& key, const toml::node& node,
             const std::string& where) {
  if (const Field* f = find_field(section, key)) {
    assign(cfg, *f, node, where);
  } else if (section == "env") {
    assign_env_param(cfg, key, node, where);
  } else {
    fail(where, unknown_key_text(section, key));
  }
}

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  std::size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

// ---- printing ----------------------------------------------------------------------------------

std::string value_text(const FieldRef& ref) {
  if (auto p = std::get_if<int*>(&ref)) return std::to_string(**p);
  if (auto p = std::get_if<std::int64_t*>(&ref)) return std::to_string(**p);
  if (auto p = std::get_if<std::uint64_t*>(&ref)) {
    std::uint64_t v = **p;
    if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::to_string(v);
    return quote(std::to_string(v));
  }
  if (auto p = std::get_if<double*>(&ref)) return format_double(**p);
  if (auto p = std::get_if<bool*>(&ref)) return **p ? "true" : "false";
  if (auto p = std::get_if<std::string*>(&ref)) return quote(**p);
  const std::vector<int>& v = *std::get<std::vector<int>*>(ref);
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Env params: integral values print as integers (max_episode_steps = 500), others as floats.
std::string param_text(double x) {
  if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 1e15 && !(x == 0 && std::signbit(x))) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
  }
  return format_double(x);
}

// ---- ppo.gemm_precision and its older spelling ppo.tf32 -------------------------------------------

// ppo.tf32 = true says what gemm_precision = "tf32" says; any other precision contradicts it.
std::string tf32_conflict(const PpoConfig& p) {
  return std::string(p.tf32 ? "true" : "false") + " contradicts ppo.gemm_precision = " + quote(p.gemm_precision) +
         " (ppo.tf32 = true is the older spelling of ppo.gemm_precision = \"tf32\"; set ppo.gemm_precision alone)";
}

// After a file is read: one key given sets the other; both given must agree.
void resolve_gemm_precision(Config& cfg, bool has_precision, bool has_tf32, const std::string& file) {
  PpoConfig& p = cfg.ppo;
  if (has_precision && has_tf32 && p.tf32 != (p.gemm_precision == "tf32")) fail(file + ": ppo.tf32", tf32_conflict(p));
  if (has_tf32 && !has_precision && p.tf32) p.gemm_precision = "tf32";
  p.tf32 = p.gemm_precision == "tf32";
}

}  // namespace

// ---- public API --------------------------------------------------------------------------------

Config parse_config(const std::string& toml_text, const std::string& source_name_in) {
  Config cfg;
  cfg.source = source_name_in;
  const std::string file = source_name(cfg);
  toml::table root;
  try {
    root = toml::parse(std::string_view(toml_text), std::string_view(file));
  } catch (const toml::parse_error& e) {
    std::string desc(e.description());
    std::replace(desc.begin(), desc.end(), '\n', ' ');
    throw ConfigError(file + ":" + std::to_string(e.source().begin.line) + ":" +
                      std::to_string(e.source().begin.column) + ": " + desc);
  }
  bool has_precision = false, has_tf32 = false;
  for (auto&& [section_key, section_node] : root) {
    std::string section(section_key.str());
    if (!is_section(section)) {
      if (section_node.is_table()) fail(file + ": " + key_text(section), unknown_section_text());
      fail(file + ": " + key_text(section),
           "unknown top-level key (keys belong in a section: [env], [policy], [ppo] or [train])");
    }
    const toml::table* table = section_node.as_table();
    if (!table) fail(file + ": " + section, "expected a table [" + section + "], got " + describe(section_node));
    for (auto&& [key, node] : *table) {
      std::string k(key.str());
      set_key(cfg, section, k, node, file + ": " + section + "." + key_text(k));
      has_precision |= section == "ppo" && k == "gemm_precision";
      has_tf32 |= section == "ppo" && k == "tf32";
    }
  }
  resolve_gemm_precision(cfg, has_precision, has_tf32, file);
  validate(cfg);
  return cfg;
}

Config load_config(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ConfigError(path + ": cannot open (" + std::strerror(EISDIR) + ")");
  // Only a regular file of sane size: a FIFO or device would block or never end.
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw ConfigError(path + ": not a regular file (a config is a TOML file)");
  constexpr off_t kMaxConfigBytes = 16 << 20;
  if (::stat(path.c_str(), &st) == 0 && st.st_size > kMaxConfigBytes)
    throw ConfigError(path + ": " + std::to_string(st.st_size) + " bytes; a config is at most 16 MiB");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ConfigError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  bool read_failed = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (read_failed) throw ConfigError(path + ": cannot read (" + std::strerror(err) + ")");
  return parse_config(text, path);
}

void apply_override(Config& cfg, const std::string& assignment) {
  std::string shown = quote(assignment);  // control characters escaped: messages stay one line
  const std::string where = "--set " + shown.substr(1, shown.size() - 2);
  const std::string form = "expected section.key=value (e.g. ppo.num_steps=256)";
  std::size_t eq = assignment.find('=');
  if (eq == std::string::npos) fail(where, form + ", got no '='");
  std::string lhs = trim(std::string_view(assignment).substr(0, eq));
  std::string value = trim(std::string_view(assignment).substr(eq + 1));
  std::size_t dot = lhs.find('.');
  if (dot == std::string::npos) fail(where, form + ", got no section in \"" + lhs + "\"");
  std::string section = trim(std::string_view(lhs).substr(0, dot));
  std::string key = trim(std::string_view(lhs).substr(dot + 1));
  if (section.empty()) fail(where, form + ", got an empty section");
  if (key.empty()) fail(where, form + ", got an empty key");
  if (key.find('.') != std::string::npos) fail(where, form + ", got a nested key \"" + key + "\"");
  if (value.empty()) fail(where, form + ", got an empty value");
  if (!is_section(section)) fail(where, unknown_section_text());
  if (!find_field(section, key) && section != "env") fail(where, unknown_key_text(section, key));

  // The value in TOML syntax; anything that is not one value (a bare word: cpu) is a string.
  toml::table parsed;
  bool is_toml_value = false;
  try {
    const std::string doc = "v = " + value + "\n";
    parsed = toml::parse(std::string_view(doc), std::string_view("--set"));
    is_toml_value = parsed.size() == 1 && parsed.contains("v");
  } catch (const toml::parse_error&) {}
  // Set on a copy: a refused override leaves cfg as it was.
  Config next = cfg;
  if (is_toml_value) set_key(next, section, key, *parsed.get("v"), where);
  else set_key(next, section, key, toml::value<std::string>(value), where);
  // ppo.gemm_precision and its older spelling ppo.tf32 stay equal: the one overridden sets the other.
  if (section == "ppo" && key == "gemm_precision") next.ppo.tf32 = next.ppo.gemm_precision == "tf32";
  if (section == "ppo" && key == "tf32") {
    if (next.ppo.tf32 && next.ppo.gemm_precision != "fp32" && next.ppo.gemm_precision != "tf32")
      fail(where, tf32_conflict(next.ppo));
    if (next.ppo.tf32) next.ppo.gemm_precision = "tf32";
    else if (next.ppo.gemm_precision == "tf32") next.ppo.gemm_precision = "fp32";
  }
  cfg = std::move(next);
}

void validate(const Config& cfg_in) {
  Config cfg = cfg_in;  // fields() hands out mutable references; nothing here writes through them
  const std::string file = source_name(cfg);
  for (const Field& f : fields()) {
    std::string bad = rule_violation(f.rule, f.ref(cfg));
    if (!bad.empty()) fail_expected(file + ": " + f.section + "." + f.key, f.rule, bad);
  }
  if (cfg.ppo.tf32 && cfg.ppo.gemm_precision != "tf32") fail(file + ": ppo.tf32", tf32_conflict(cfg.ppo));
  if (cfg.policy.min_log_std == kInf) fail(file + ": policy.min_log_std", "expected a number or -inf, got inf");
  if (cfg.policy.max_log_std == -kInf) fail(file + ": policy.max_log_std", "expected a number or inf, got -inf");
  if (!(cfg.policy.min_log_std <= cfg.policy.max_log_std))
    fail(file + ": policy.max_log_std", "expected at least policy.min_log_std = " +
                                             format_double(cfg.policy.min_log_std) + ", got " +
                                             format_double(cfg.policy.max_log_std));
  for (const auto& [key, value] : cfg.env.params) {
    if (!std::isfinite(value))
      fail(file + ": env." + key_text(key),
           "expected a number or boolean (env parameter), got " + format_double(value));
  }
  const std::int64_t steps = cfg.ppo.num_steps;
  if (cfg.env.num_envs > std::numeric_limits<std::int64_t>::max() / steps)
    fail(file + ": env.num_envs", "expected env.num_envs * ppo.num_steps to fit in 64 bits, got " +
                                      std::to_string(cfg.env.num_envs) + " * " + std::to_string(steps));
  const std::int64_t batch = cfg.env.num_envs * steps;
  if (batch % cfg.ppo.num_minibatches != 0)
    fail(file + ": ppo.num_minibatches",
         "expected a divisor of env.num_envs * ppo.num_steps = " + std::to_string(cfg.env.num_envs) + " * " +
             std::to_string(steps) + " = " + std::to_string(batch) + ", got " +
             std::to_string(cfg.ppo.num_minibatches));
}

std::string to_toml(const Config& cfg_in) {
  Config cfg = cfg_in;
  std::ostringstream out;
  out << "# rltrain config, resolved";
  if (!cfg.source.empty()) out << " from " << cfg.source;
  out << ". Override any key with --set section.key=value.\n";
  // Comments line up within a section unless a value is very long.
  constexpr std::size_t kMaxColumn = 40;
  for (const char* section : kSections) {
    std::vector<std::pair<std::string, std::string>> lines;  // "key = value", "# doc"
    for (const Field& f : fields())
      if (std::string_view(section) == f.section)
        lines.emplace_back(std::string(f.key) + " = " + value_text(f.ref(cfg)), f.doc);
    std::size_t column = 0;
    for (const auto& line : lines)
      if (line.first.size() <= kMaxColumn) column = std::max(column, line.first.size());
    out << "\n[" << section << "]\n";
    for (const auto& [text, doc] : lines)
      out << text << std::string(column > text.size() ? column - text.size() : 0, ' ') << "  # " << doc << "\n";
    if (std::string_view(section) == "env" && !cfg.env.params.empty()) {
      out << "# env parameters (checked against the env's parameter list when it is made)\n";
      for (const auto& [key, value] : cfg.env.params) out << key_text(key) << " = " << param_text(value) << "\n";
    }
  }
  return out.str();
}

}  // namespace rlt
