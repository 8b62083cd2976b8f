// rltrain._core: the Python extension module (nanobind), a thin layer over apps/ (DESIGN.md D11).
// The pure-Python package (python/rltrain/) builds the Gymnasium vector env, train() and
// load_policy() on these three things:
//   VecEnv   a VecEnv (sim/vec_env.h) made by the Runtime (apps/runtime.h) from a Config, so bad
//            arguments fail with the CLI's messages; its batch buffers as zero-copy views (numpy on
//            the CPU, DLPack-capable ndarrays on CUDA) that keep the env alive
//   Policy   a checkpoint's Policy (rl/policy.h) through make_checkpoint_policy (apps/evaluate.h)
//   train    apps/trainer.h's train() with the GIL released
//   Physics  N copies of any MJCF model (apps/model_batch.h): its compiled sizes and names, and its
//            state and derived fields as strided numpy views of the batch's rows (rltrain.Physics,
//            python/rltrain/physics.py, checks what is assigned to them)
// and select_rows / ObjectArrayPool, np.where(mask, values, 0) in one pass, for Gymnasium's per-step
// info (vector.py): the one user of NumPy's C API here (object arrays, which nanobind's ndarray
// does not handle).
// Errors: ConfigError, CheckpointError, MjcfError (ValueError) and IoError (OSError) carry the C++
// message unchanged; std::invalid_argument is ValueError, std::out_of_range IndexError.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

// NumPy's C API (import_array in the module's init), for object arrays; built against NumPy 2's
// headers, the module runs on NumPy >= 1.22 (pyproject.toml's dependency).
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#include "apps/evaluate.h"
#include "apps/model_batch.h"
#include "apps/runtime.h"
#include "apps/trainer.h"
#include "envs/registry.h"
#include "rl/checkpoint.h"
#include "rl/config.h"
#include "rl/files.h"
#include "sim/mjcf.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using rlt::i64;

// A zero-copy view of `shape` elements at `data` in executor memory, kept alive by `owner`: a numpy
// array on the CPU, a DLPack-capable nanobind ndarray on CUDA. Writable, because DLPack consumers
// (torch.from_dlpack) refuse read-only buffers; nothing reads these buffers back into the env.
template <class T>
nb::object view(const T* data, std::initializer_list<size_t> shape, nb::handle owner, rlt::Device device) {
  T* p = const_cast<T*>(data);
  if (device == rlt::Device::kCpu) return nb::cast(nb::ndarray<nb::numpy, T>(p, shape, owner));
  return nb::cast(nb::ndarray<T>(p, shape, owner, {}, nb::dtype<T>(), nb::device::cuda::value, 0));
}

// Flags are 0/1 bytes: viewed as bool, as Gymnasium's terminations and truncations are.
nb::object flag_view(const std::uint8_t* data, i64 n, nb::handle owner, rlt::Device device) {
  return view(reinterpret_cast<const bool*>(data), {static_cast<size_t>(n)}, owner, device);
}

int dlpack_device(rlt::Device d) { return d == rlt::Device::kCuda ? nb::device::cuda::value : nb::device::cpu::value; }

// An array handed in (numpy, or any DLPack producer: torch on the CPU or CUDA) must sit on the
// executor's device, hold `rows` rows of `cols` floats, and be C-contiguous (nanobind converts
// numpy dtypes and layouts; DLPack producers must match).
using FloatIn = nb::ndarray<const float, nb::c_contig>;
void check_input(const FloatIn& a, const char* what, i64 rows, i64 cols, rlt::Device device) {
  if (a.device_type() != dlpack_device(device))
    throw std::invalid_argument(std::string(what) + ": expected an array on the " + rlt::device_name(device) +
                                " device (the env's), got one on another device");
  std::string shape;
  for (size_t k = 0; k < a.ndim(); ++k) shape += (k ? ", " : "") + std::to_string(a.shape(k));
  const bool ok = a.ndim() >= 1 && a.ndim() <= 2 && static_cast<i64>(a.shape(0)) == rows &&
                  static_cast<i64>(a.size()) == rows * cols;
  if (!ok)
    throw std::invalid_argument(std::string(what) + ": expected shape (" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "), got (" + shape + ")");
}

// Number of envs that finished this step (terminated or truncated): flags are 0/1 bytes.
i64 count_done(const std::uint8_t* terminated, const std::uint8_t* truncated, i64 n) {
  i64 count = 0;
  for (i64 i = 0; i < n; ++i) count += terminated[i] | truncated[i];
  return count;
}

template <class T>
void select_typed(const npy_bool* mask, const void* src, void* dst, npy_intp n) {
  const T* s = static_cast<const T*>(src);
  T* d = static_cast<T*>(dst);
  for (npy_intp i = 0; i < n; ++i) d[i] = mask[i] ? s[i] : T(0);
}

// The arguments of select_rows: a C-contiguous 1-D bool mask of n entries and a C-contiguous array
// of n rows whose dtype is plain data or object.
struct SelectArgs {
  const npy_bool* mask;
  PyArrayObject* values;
  npy_intp n;
};

SelectArgs select_args(nb::handle mask_obj, nb::handle values_obj) {
  if (!PyArray_Check(mask_obj.ptr()) || !PyArray_Check(values_obj.ptr()))
    throw nb::type_error("select_rows: expected two numpy arrays");
  auto* mask = reinterpret_cast<PyArrayObject*>(mask_obj.ptr());
  auto* values = reinterpret_cast<PyArrayObject*>(values_obj.ptr());
  if (PyArray_TYPE(mask) != NPY_BOOL || PyArray_NDIM(mask) != 1 || !PyArray_IS_C_CONTIGUOUS(mask))
    throw std::invalid_argument("select_rows: mask: expected a C-contiguous 1-D bool array");
  const npy_intp n = PyArray_DIM(mask, 0);
  if (PyArray_NDIM(values) < 1 || PyArray_DIM(values, 0) != n || !PyArray_IS_C_CONTIGUOUS(values))
    throw std::invalid_argument("select_rows: values: expected a C-contiguous array of " + std::to_string(n) +
                                " rows (the mask's length)");
  if (PyDataType_REFCHK(PyArray_DESCR(values)) && PyArray_TYPE(values) != NPY_OBJECT)
    throw std::invalid_argument("select_rows: values: structured dtypes holding objects are not supported");
  if (PyArray_TYPE(values) == NPY_OBJECT && PyArray_NDIM(values) != 1)
    throw std::invalid_argument("select_rows: values: object arrays must be 1-D");
  return {static_cast<const npy_bool*>(PyArray_DATA(mask)), values, n};
}

// select_objects' work space: which slots change (a byte each), their indices.
struct SelectScratch {
  std::vector<std::uint8_t> differs;
  std::vector<npy_intp> changed;
};

// A new C-contiguous array of values' dtype and shape, zeroed (NULL slots in an object array).
nb::object new_like(PyArrayObject* values) {
  PyArray_Descr* descr = PyArray_DESCR(values);
  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  PyObject* out = PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(values), PyArray_DIMS(values), nullptr,
                                       nullptr, 0, nullptr);
  if (!out) throw nb::python_error();
  if (PyDataType_REFCHK(descr)) std::memset(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)), 0,
                                             static_cast<size_t>(PyArray_NBYTES(reinterpret_cast<PyArrayObject*>(out))));
  return nb::steal(out);
}

// The object-array case of select_into (1-D arrays): only the slots that change are written, so
// rewriting an array handed out before costs its changed slots (CartPole at 4096 envs: ~500 of
// 4096 a step, each the reference count of a row far apart in memory). Which slots change is found
// in a vectorized pass without a branch on the (random) mask; a branch per slot cost more than the
// changes themselves. None's count is settled once at the end: counted down and up in between the
// rows' counts, it cost as much as they did.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "select_objects reads 8 flag bytes as one word");
void select_objects(const npy_bool* mask, PyObject* const* src, PyObject** dst, npy_intp n,
                    std::vector<std::uint8_t>& differs, std::vector<npy_intp>& changed) {
  differs.resize(static_cast<size_t>(n + 8));  // padded to whole 8-byte words, the pad 0
  changed.resize(static_cast<size_t>(n));
  std::uint8_t* d = differs.data();
  const auto none = reinterpret_cast<std::uintptr_t>(Py_None);
  for (npy_intp i = 0; i < n; ++i) {  // vectorized
    const auto s = reinterpret_cast<std::uintptr_t>(src[i]);
    const std::uintptr_t item = (mask[i] != 0) & (s != 0) ? s : none;
    d[i] = item != reinterpret_cast<std::uintptr_t>(dst[i]);
  }
  std::memset(d + n, 0, 8);
  npy_intp* idx = changed.data();
  npy_intp num_changed = 0;
  for (npy_intp w = 0; w < n; w += 8) {  // 8 slots a word; most words have no change or one
    std::uint64_t bits;
    std::memcpy(&bits, d + w, 8);
    for (; bits; bits &= bits - 1) idx[num_changed++] = w + __builtin_ctzll(bits) / 8;
  }
  Py_ssize_t none_refs = 0;  // references to None added (removed: negative)
  for (npy_intp k = 0; k < num_changed; ++k) {
    const npy_intp i = idx[k];
    PyObject* item = mask[i] && src[i] ? src[i] : Py_None;
    PyObject* old = dst[i];
    dst[i] = item;
    if (item == Py_None) ++none_refs;
    else Py_INCREF(item);
    if (old == Py_None) --none_refs;
    else Py_XDECREF(old);  // after the write: whatever a deallocation runs sees a consistent array
  }
  for (; none_refs > 0; --none_refs) Py_INCREF(Py_None);
  for (; none_refs < 0; ++none_refs) Py_DECREF(Py_None);
}

// out = np.where(mask.reshape(n, 1, ...), values, zero), zero being None in an object array; out
// has values' dtype and shape, C-contiguous (its slots NULL or items if objects). Plain data: the
// bits of each row as they are (NaN payloads, -0.0).
void select_into(const SelectArgs& a, PyArrayObject* out, SelectScratch& scratch) {
  if (PyArray_TYPE(a.values) == NPY_OBJECT) {
    select_objects(a.mask, static_cast<PyObject* const*>(PyArray_DATA(a.values)),
                   static_cast<PyObject**>(PyArray_DATA(out)), a.n, scratch.differs, scratch.changed);
    return;
  }
  const npy_intp row_bytes = a.n ? PyArray_NBYTES(a.values) / a.n : 0;
  const void* src = PyArray_DATA(a.values);
  void* dst = PyArray_DATA(out);
  switch (row_bytes) {
    case 1: select_typed<std::uint8_t>(a.mask, src, dst, a.n); break;
    case 2: select_typed<std::uint16_t>(a.mask, src, dst, a.n); break;
    case 4: select_typed<std::uint32_t>(a.mask, src, dst, a.n); break;
    case 8: select_typed<std::uint64_t>(a.mask, src, dst, a.n); break;
    default:
      for (npy_intp i = 0; i < a.n; ++i) {
        char* d = static_cast<char*>(dst) + i * row_bytes;
        if (a.mask[i]) std::memcpy(d, static_cast<const char*>(src) + i * row_bytes, static_cast<size_t>(row_bytes));
        else std::memset(d, 0, static_cast<size_t>(row_bytes));
      }
  }
}

// select_rows(mask, values): a fresh array, np.where(mask, values, 0 or None) in one pass, where
// numpy's where and fancy assignment on object arrays go element by element through generic loops
// (~25 ns an element: vector.py's step info took ~18 us for CartPole's 4096 envs).
nb::object select_rows(nb::handle mask, nb::handle values) {
  const SelectArgs a = select_args(mask, values);
  nb::object out = new_like(a.values);
  SelectScratch scratch;
  select_into(a, reinterpret_cast<PyArrayObject*>(out.ptr()), scratch);
  return out;
}

// Object arrays from select_rows that look fresh to whoever receives them (Gymnasium's
// info["final_obs"], one a step): a new array unless one handed out before is now held by this
// pool alone (reference count 1, no weak reference), which is then rewritten in place. Making and
// freeing a 4096-slot object array each step cost ~9 us on CPython 3.11 (numpy frees it slot by
// slot, None's count and the rows' interleaved); rewriting one costs the slots that change. Two
// arrays, because the caller's `obs, ..., info = env.step(a)` still holds the previous step's while
// the next step runs.
class ObjectArrayPool {
 public:
  nb::object select_rows(nb::handle mask, nb::handle values) {
    const SelectArgs a = select_args(mask, values);
    if (PyArray_TYPE(a.values) != NPY_OBJECT)
      throw std::invalid_argument("ObjectArrayPool.select_rows: values: expected an object array");
    // Ours for this call: a call made meanwhile (by a destructor a released reference runs) gets its own.
    SelectScratch scratch = std::move(m_scratch);
    nb::object out;
    for (const nb::object& held : m_arrays)
      if (held.is_valid() && unshared(held, a.values)) {
        out = held;
        break;
      }
    if (!out.is_valid()) {
      out = new_like(a.values);
      m_arrays[m_next] = out;  // the array it replaces lives on with whoever holds it
      m_next = (m_next + 1) % kNumArrays;
    }
    select_into(a, reinterpret_cast<PyArrayObject*>(out.ptr()), scratch);
    m_scratch = std::move(scratch);
    return out;
  }

 private:
  static constexpr int kNumArrays = 2;

  // Held by this pool only, with values' shape.
  static bool unshared(const nb::object& held, PyArrayObject* values) {
    auto* arr = reinterpret_cast<PyArrayObject*>(held.ptr());
    if (Py_REFCNT(held.ptr()) != 1 || reinterpret_cast<PyArrayObject_fields*>(arr)->weakreflist) return false;
    if (PyArray_NDIM(arr) != PyArray_NDIM(values)) return false;
    for (int k = 0; k < PyArray_NDIM(arr); ++k)
      if (PyArray_DIM(arr, k) != PyArray_DIM(values, k)) return false;
    return true;
  }

  nb::object m_arrays[kNumArrays];
  int m_next = 0;
  SelectScratch m_scratch;
};

class PyVecEnv {
 public:
  // The env as `rltrain train` makes it from a config whose [env] and [train] hold these values
  // (source "make_vec" in messages).
  PyVecEnv(const std::string& name, i64 num_envs, const std::string& device, int num_threads,
           const std::map<std::string, double>& params) {
    rlt::Config cfg;
    cfg.source = "make_vec";
    cfg.env.name = name;
    cfg.env.num_envs = num_envs;
    cfg.env.params = params;
    cfg.train.device = device;
    cfg.train.threads = num_threads;
    rlt::validate(cfg);
    m_rt = std::make_unique<rlt::Runtime>(device, num_threads, cfg.source);
    m_env = m_rt->make_env(cfg);
  }

  rlt::VecEnv& env() const {
    if (m_closed) throw std::runtime_error("the env is closed");
    return *m_env;
  }
  const rlt::Runtime& runtime() const { return *m_rt; }
  // Refuses further use; the buffers live on until the last view of them is gone (the views own
  // this object), so a view read after close() never reads freed memory.
  void close() { m_closed = true; }
  bool closed() const { return m_closed; }

 private:
  std::unique_ptr<rlt::Runtime> m_rt;
  std::unique_ptr<rlt::VecEnv> m_env;  // destroyed before the Runtime that owns its executor
  bool m_closed = false;
};

class PyPolicy {
 public:
  PyPolicy(const std::string& checkpoint, const std::string& device, int num_threads)
      : m_path(rlt::resolve_checkpoint_path(checkpoint)), m_ckpt(rlt::read_checkpoint(m_path)) {
    m_rt = std::make_unique<rlt::Runtime>(device, num_threads, "load_policy");
    rlt::Config cfg = m_ckpt.config;
    cfg.env.num_envs = 1;
    m_spec = m_rt->make_env(cfg)->spec();
    grow(1);
  }

  const rlt::EnvSpec& spec() const { return m_spec; }
  const std::string& path() const { return m_path; }
  const rlt::Config& config() const { return m_ckpt.config; }
  rlt::Device device() const { return m_rt->device(); }

  // Policy::act on rows observations; the result (executor memory) is valid until the next call.
  const float* act(const float* obs, i64 rows, bool deterministic, std::uint32_t step) {
    if (rows > m_policy->max_rows()) grow(rows);
    return m_policy->act(obs, rows, deterministic, step);
  }

 private:
  // Sampled actions are keyed by row, so a larger batch gets a policy sized for it rather than chunks.
  void grow(i64 rows) { m_policy = rlt::make_checkpoint_policy(*m_rt, m_ckpt.config, m_ckpt, m_spec, rows); }

  std::string m_path;
  rlt::Checkpoint m_ckpt;
  std::unique_ptr<rlt::Runtime> m_rt;
  rlt::EnvSpec m_spec;
  std::unique_ptr<rlt::Policy> m_policy;
};


// N copies of an MJCF model (apps/model_batch.h), compiled from a file or from text.
class PyPhysics {
 public:
  PyPhysics(const std::string& source, bool is_text, const std::string& source_name, i64 num_envs, int num_threads,
            const std::string& precision) {
    rlt::Precision p;
    if (precision == "float" || precision == "float32") p = rlt::Precision::kFloat;
    else if (precision == "double" || precision == "float64") p = rlt::Precision::kDouble;
    else throw std::invalid_argument("precision: expected 'float' or 'double', got '" + precision + "'");
    if (num_envs < 1) throw std::invalid_argument("num_envs: expected at least 1, got " + std::to_string(num_envs));
    m_source = is_text ? source_name : source;
    rlt::Model model = is_text ? rlt::parse_mjcf(source, source_name) : rlt::load_mjcf(source);
    m_batch = rlt::make_model_batch(model, num_envs, num_threads, p);
  }
  rlt::ModelBatch& batch() const { return *m_batch; }
  const std::string& source() const { return m_source; }
  // step, forward and reset run with the GIL released: calls from two Python threads take turns
  // (the batch and its thread pool serve one call at a time).
  std::mutex& mutex() { return m_mutex; }

 private:
  std::mutex m_mutex;
  std::string m_source;
  std::unique_ptr<rlt::ModelBatch> m_batch;
};

// A view of one row field over the batch: shape (num_envs, *tail), each env's values `row`
// scalars after the previous env's (the rows' layout), read-only unless `writable`.
template <class T>
nb::object row_field(T* base, i64 num_envs, i64 row, const std::vector<size_t>& tail, nb::handle owner,
                     bool writable) {
  std::vector<size_t> shape{static_cast<size_t>(num_envs)};
  shape.insert(shape.end(), tail.begin(), tail.end());
  std::vector<int64_t> strides(shape.size());
  int64_t inner = 1;
  for (size_t k = shape.size(); k-- > 1;) strides[k] = inner, inner *= static_cast<int64_t>(shape[k]);
  strides[0] = row;
  if (writable) return nb::cast(nb::ndarray<nb::numpy, T>(base, shape.size(), shape.data(), owner, strides.data()));
  return nb::cast(nb::ndarray<nb::numpy, const T>(base, shape.size(), shape.data(), owner, strides.data()));
}

// Every field view of a Physics, by name (python/rltrain/physics.py documents them).
template <class T>
nb::dict physics_views(nb::handle self, rlt::ModelBatch& b) {
  const rlt::Model& m = b.model();
  const rlt::DataLayout& l = b.layout();
  const i64 n = b.num_envs(), row = l.row;
  T* rows = static_cast<T*>(b.rows());
  const auto sz = [](int k) { return static_cast<size_t>(k); };
  nb::dict v;
  const auto field = [&](const char* name, int offset, std::vector<size_t> tail, bool writable) {
    v[name] = row_field(rows + offset, n, row, tail, self, writable);
  };
  // state and inputs
  field("qpos", l.qpos, {sz(m.nq)}, true);
  field("qvel", l.qvel, {sz(m.nv)}, true);
  field("act_nu", l.act, {sz(m.nu)}, true);
  field("qfrc_applied", l.qfrc_user, {sz(m.nv)}, true);  // MuJoCo's qfrc_applied (model_batch.h)
  field("xfrc_applied", l.xfrc_applied, {sz(m.nbody), 6}, true);
  field("mocap_pos", l.mocap_pos, {sz(m.nmocap), 3}, true);
  field("mocap_quat", l.mocap_quat, {sz(m.nmocap), 4}, true);
  v["ctrl"] = row_field(static_cast<T*>(b.ctrl()), n, m.nu, {sz(m.nu)}, self, true);
  v["time"] = row_field(b.time(), n, 1, {}, self, true);
  // derived (step / forward / reset write them)
  field("qacc", l.qacc, {sz(m.nv)}, false);
  field("qfrc_bias", l.qfrc_bias, {sz(m.nv)}, false);
  field("qfrc_passive", l.qfrc_passive, {sz(m.nv)}, false);
  field("qfrc_actuator", l.qfrc_actuator, {sz(m.nv)}, false);
  field("qfrc_constraint", l.qfrc_constraint, {sz(m.nv)}, false);
  field("actuator_force", l.actuator_force, {sz(m.nu)}, false);
  field("xpos", l.xpos, {sz(m.nbody), 3}, false);
  field("xquat", l.xquat, {sz(m.nbody), 4}, false);
  field("xmat", l.xmat, {sz(m.nbody), 9}, false);
  field("xipos", l.xipos, {sz(m.nbody), 3}, false);
  field("ximat", l.ximat, {sz(m.nbody), 9}, false);
  field("xanchor", l.xanchor, {sz(m.njnt), 3}, false);
  field("xaxis", l.xaxis, {sz(m.njnt), 3}, false);
  field("geom_xpos", l.geom_xpos, {sz(m.ngeom), 3}, false);
  field("geom_xmat", l.geom_xmat, {sz(m.ngeom), 9}, false);
  field("site_xpos", l.site_xpos, {sz(m.nsite), 3}, false);
  field("site_xmat", l.site_xmat, {sz(m.nsite), 9}, false);
  field("sensordata", l.sensordata, {sz(m.nsensordata)}, false);
  field("ten_length", l.ten_length, {sz(m.ntendon)}, false);
  field("ten_velocity", l.ten_velocity, {sz(m.ntendon)}, false);
  v["ncon"] = row_field(b.ncon(), n, 1, {}, self, false);
  v["rows"] = row_field(rows, n, row, {static_cast<size_t>(row)}, self, true);  // whole rows (get_state)
  return v;
}

// The compiled model's sizes, names and the index arrays the Python layer needs.
nb::dict physics_model_info(const rlt::Model& m) {
  nb::dict d;
  for (const auto& [name, value] :
       std::vector<std::pair<const char*, int>>{{"nq", m.nq}, {"nv", m.nv}, {"nu", m.nu}, {"nbody", m.nbody},
                                               {"njnt", m.njnt}, {"ngeom", m.ngeom}, {"nsite", m.nsite},
                                               {"nkey", m.nkey}, {"nmocap", m.nmocap}, {"nsensor", m.nsensor},
                                               {"nsensordata", m.nsensordata}, {"ntendon", m.ntendon},
                                               {"neq", m.neq}, {"integrator", m.integrator}})
    d[name] = value;
  d["timestep"] = m.timestep;
  d["body_names"] = m.body_name;
  d["joint_names"] = m.jnt_name;
  d["geom_names"] = m.geom_name;
  d["site_names"] = m.site_name;
  d["actuator_names"] = m.actuator_name;
  d["sensor_names"] = m.sensor_name;
  d["tendon_names"] = m.tendon_name;
  d["key_names"] = m.key_name;
  d["jnt_type"] = m.jnt_type;
  d["jnt_qposadr"] = m.jnt_qposadr;
  d["jnt_dofadr"] = m.jnt_dofadr;
  d["sensor_adr"] = m.sensor_adr;
  d["sensor_dim"] = m.sensor_dim;
  std::vector<int> mocapid(static_cast<size_t>(m.nbody), -1);
  for (size_t b = 0; b < m.body_mocapid.size() && b < mocapid.size(); ++b) mocapid[b] = m.body_mocapid[b];
  d["body_mocapid"] = mocapid;
  d["stateful_actuators"] = rlt::stateful_actuators(m);
  d["actuator_ctrllimited"] = m.actuator_ctrllimited;
  d["actuator_ctrlrange"] = m.actuator_ctrlrange;
  d["qpos0"] = m.qpos0;
  d["key_time"] = m.key_time;
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "rltrain's C++ core (nanobind); use the rltrain package, not this module";
  if (_import_array() < 0) throw nb::python_error();
  nb::exception<rlt::ConfigError>(m, "ConfigError", PyExc_ValueError);
  nb::exception<rlt::CheckpointError>(m, "CheckpointError", PyExc_ValueError);
  nb::exception<rlt::MjcfError>(m, "MjcfError", PyExc_ValueError);
  nb::exception<rlt::IoError>(m, "IoError", PyExc_OSError);

  m.def("select_rows", &select_rows, "mask"_a, "values"_a,
        "np.where(mask, values, 0) row by row (None in object arrays), a fresh array, in one pass");
  nb::class_<ObjectArrayPool>(m, "ObjectArrayPool",
                              "select_rows into object arrays reused once nobody else holds them")
      .def(nb::init<>())
      .def("select_rows", &ObjectArrayPool::select_rows, "mask"_a, "values"_a);
  m.def("env_names", &rlt::env_names, "Names of every registered env (rltrain envs --names)");

  // sim/spaces.h and apps/trainer.h's result, read-only.
  nb::class_<rlt::Space>(m, "Space")
      .def_ro("dim", &rlt::Space::dim)
      .def_ro("discrete", &rlt::Space::discrete)
      .def_ro("num_actions", &rlt::Space::num_actions)
      .def_ro("low", &rlt::Space::low)
      .def_ro("high", &rlt::Space::high)
      .def("__repr__", &rlt::Space::describe);
  nb::class_<rlt::EnvSpec>(m, "EnvSpec")
      .def_ro("name", &rlt::EnvSpec::name)
      .def_ro("observation", &rlt::EnvSpec::observation)
      .def_ro("action", &rlt::EnvSpec::action)
      .def_ro("max_episode_steps", &rlt::EnvSpec::max_episode_steps)
      .def_ro("critic_obs_dim", &rlt::EnvSpec::critic_obs_dim);
  nb::class_<rlt::TrainResult>(m, "TrainResult", "What rltrain.train returns (apps/trainer.h)")
      .def_ro("run_dir", &rlt::TrainResult::run_dir)
      .def_ro("final_mean_return", &rlt::TrainResult::final_mean_return)
      .def_ro("env_steps", &rlt::TrainResult::env_steps)
      .def_ro("iterations", &rlt::TrainResult::iterations)
      .def_ro("wall_seconds", &rlt::TrainResult::wall_seconds)
      .def_ro("reached_target", &rlt::TrainResult::reached_target)
      .def_ro("stop_signal", &rlt::TrainResult::stop_signal)
      .def_ro("diverged", &rlt::TrainResult::diverged)
      .def_ro("nonfinite_resets", &rlt::TrainResult::nonfinite_resets);

  nb::class_<PyVecEnv>(m, "VecEnv")
      .def(nb::init<const std::string&, i64, const std::string&, int, const std::map<std::string, double>&>(),
           "name"_a, "num_envs"_a, "device"_a, "num_threads"_a, "params"_a)
      .def_prop_ro("spec", [](const PyVecEnv& e) { return e.env().spec(); })
      .def_prop_ro("num_envs", [](const PyVecEnv& e) { return e.env().num_envs(); })
      .def_prop_ro("device", [](const PyVecEnv& e) { return std::string(rlt::device_name(e.env().device())); })
      .def_prop_ro("device_note", [](const PyVecEnv& e) { return e.runtime().note(); })
      .def_prop_ro("num_threads", [](const PyVecEnv& e) { return e.runtime().cpu_threads(); })
      .def("params",
           [](const PyVecEnv& e) {
             std::vector<nb::tuple> out;
             for (const auto& p : e.env().params()) out.push_back(nb::make_tuple(p.name, p.value, p.doc));
             return out;
           })
      .def(
          "reset", [](PyVecEnv& e, std::uint64_t seed) { e.env().reset(seed); }, "seed"_a,
          nb::call_guard<nb::gil_scoped_release>())
      .def(
          "step",
          [](PyVecEnv& e, const FloatIn& actions) -> std::optional<i64> {
            rlt::VecEnv& env = e.env();
            check_input(actions, "step: actions", env.num_envs(), env.spec().action.dim, env.device());
            nb::gil_scoped_release released;
            env.step(actions.data());
            if (env.device() != rlt::Device::kCpu) return std::nullopt;  // the flags stay on the device
            return count_done(env.terminated(), env.truncated(), env.num_envs());
          },
          "actions"_a)
      .def(
          "reset_one", [](PyVecEnv& e, i64 i) { e.env().reset_one(i); }, "env"_a)
      .def(
          "sample_actions",
          [](nb::handle self, std::uint64_t seed, std::uint32_t step) {
            rlt::VecEnv& env = nb::cast<PyVecEnv&>(self).env();
            const float* a;
            {
              nb::gil_scoped_release released;
              a = env.sample_actions(seed, step);
            }
            return view(a, {static_cast<size_t>(env.num_envs()), static_cast<size_t>(env.spec().action.dim)}, self,
                        env.device());
          },
          "seed"_a, "step"_a)
      .def("num_nonfinite_resets", [](const PyVecEnv& e) { return e.env().num_nonfinite_resets(); })
      .def("close", &PyVecEnv::close)
      .def_prop_ro("closed", &PyVecEnv::closed)
      // Views of the batch buffers (valid, and changing, until the env is closed; the Python layer
      // documents them as valid until the next step). address(): the obs buffer's address.
      .def("views",
           [](nb::handle self) {
             const rlt::VecEnv& env = nb::cast<const PyVecEnv&>(self).env();
             const auto n = static_cast<size_t>(env.num_envs());
             const auto od = static_cast<size_t>(env.spec().observation.dim);
             const auto cd = static_cast<size_t>(env.spec().critic_obs_dim);
             const rlt::Device dev = env.device();
             nb::dict v;
             v["obs"] = view(env.obs(), {n, od}, self, dev);
             v["final_obs"] = view(env.final_obs(), {n, od}, self, dev);
             v["reward"] = view(env.reward(), {n}, self, dev);
             v["terminated"] = flag_view(env.terminated(), env.num_envs(), self, dev);
             v["truncated"] = flag_view(env.truncated(), env.num_envs(), self, dev);
             v["ep_return"] = view(env.ep_return(), {n}, self, dev);
             v["ep_length"] = view(env.ep_length(), {n}, self, dev);
             if (env.ep_forward_speed()) v["ep_forward_speed"] = view(env.ep_forward_speed(), {n}, self, dev);
             if (env.critic_obs()) {
               v["critic_obs"] = view(env.critic_obs(), {n, cd}, self, dev);
               v["final_critic_obs"] = view(env.final_critic_obs(), {n, cd}, self, dev);
             }
             return v;
           })
      .def("obs_address",
           [](const PyVecEnv& e) { return reinterpret_cast<std::uintptr_t>(static_cast<const void*>(e.env().obs())); });

  nb::class_<PyPolicy>(m, "Policy")
      .def(nb::init<const std::string&, const std::string&, int>(), "checkpoint"_a, "device"_a, "num_threads"_a)
      .def_prop_ro("spec", [](const PyPolicy& p) { return p.spec(); })
      .def_prop_ro("path", &PyPolicy::path)
      .def_prop_ro("device", [](const PyPolicy& p) { return std::string(rlt::device_name(p.device())); })
      .def_prop_ro("config_toml", [](const PyPolicy& p) { return rlt::to_toml(p.config()); })
      .def(
          "act",
          [](nb::handle self, const FloatIn& obs, bool deterministic, std::uint32_t step) {
            PyPolicy& p = nb::cast<PyPolicy&>(self);
            const i64 rows = obs.ndim() >= 1 ? static_cast<i64>(obs.shape(0)) : 0;
            check_input(obs, "policy: obs", rows, p.spec().observation.dim, p.device());
            if (rows < 1) throw std::invalid_argument("policy: obs: expected at least one row, got none");
            const float* out;
            {
              nb::gil_scoped_release released;
              out = p.act(obs.data(), rows, deterministic, step);
            }
            return view(out, {static_cast<size_t>(rows), static_cast<size_t>(p.spec().action.dim)}, self, p.device());
          },
          "obs"_a, "deterministic"_a, "step"_a);


  nb::class_<PyPhysics>(m, "Physics")
      .def(nb::init<const std::string&, bool, const std::string&, i64, int, const std::string&>(), "source"_a,
           "is_text"_a, "source_name"_a, "num_envs"_a, "num_threads"_a, "precision"_a)
      .def_prop_ro("source", &PyPhysics::source)
      .def_prop_ro("num_envs", [](const PyPhysics& p) { return p.batch().num_envs(); })
      .def_prop_ro("num_threads", [](const PyPhysics& p) { return p.batch().num_threads(); })
      .def_prop_ro("precision",
                   [](const PyPhysics& p) {
                     return std::string(p.batch().precision() == rlt::Precision::kDouble ? "double" : "float");
                   })
      .def("model_info", [](const PyPhysics& p) { return physics_model_info(p.batch().model()); })
      .def("views",
           [](nb::handle self) {
             rlt::ModelBatch& b = nb::cast<PyPhysics&>(self).batch();
             return b.precision() == rlt::Precision::kDouble ? physics_views<double>(self, b)
                                                             : physics_views<float>(self, b);
           })
      .def(
          "step",
          [](PyPhysics& p, i64 nsteps) {
            std::lock_guard<std::mutex> lock(p.mutex());
            p.batch().step(nsteps);
          },
          "nsteps"_a, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "forward",
          [](PyPhysics& p) {
            std::lock_guard<std::mutex> lock(p.mutex());
            p.batch().forward();
          },
          nb::call_guard<nb::gil_scoped_release>())
      .def(
          "reset",
          [](PyPhysics& p, int key, const std::optional<std::vector<i64>>& envs) {
            nb::gil_scoped_release released;
            std::lock_guard<std::mutex> lock(p.mutex());
            if (envs && envs->empty()) return;  // no env (an empty list's data() may be null: "every env")
            if (envs) p.batch().reset(key, envs->data(), static_cast<i64>(envs->size()));
            else p.batch().reset(key, nullptr, 0);
          },
          "key"_a, "envs"_a.none())
      .def("param_fields",
           [](const PyPhysics& p) {
             std::vector<nb::tuple> out;
             for (const rlt::ParamField& f : p.batch().param_fields())
               out.push_back(nb::make_tuple(f.name, f.count, f.width, f.non_negative, f.doc));
             return out;
           })
      // values: C-contiguous doubles, (envs' count) x count x width (the Python layer broadcasts)
      .def(
          "set_param",
          [](PyPhysics& p, const std::string& name, const nb::ndarray<const double, nb::c_contig>& values,
             const std::optional<std::vector<i64>>& envs) {
            const i64 n = envs ? static_cast<i64>(envs->size()) : p.batch().num_envs();
            i64 size = -1;
            for (const rlt::ParamField& f : p.batch().param_fields())
              if (f.name == name) size = static_cast<i64>(f.count) * f.width;
            if (size >= 0 && static_cast<i64>(values.size()) != n * size)
              throw std::invalid_argument("set_param: " + name + ": expected " + std::to_string(n * size) +
                                          " values, got " + std::to_string(values.size()));
            nb::gil_scoped_release released;
            std::lock_guard<std::mutex> lock(p.mutex());
            if (envs && envs->empty()) return;
            p.batch().set_param(name, values.data(), envs ? envs->data() : nullptr, n);
          },
          "name"_a, "values"_a, "envs"_a.none())
      .def("get_param", [](PyPhysics& p, const std::string& name) {
        const rlt::ModelBatch& b = p.batch();
        size_t size = 0;
        for (const rlt::ParamField& f : b.param_fields())
          if (f.name == name) size = static_cast<size_t>(f.count) * static_cast<size_t>(f.width);
        auto* data = new double[std::max<size_t>(1, static_cast<size_t>(b.num_envs()) * size)];
        nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<double*>(q); });
        {
          std::lock_guard<std::mutex> lock(p.mutex());
          b.get_param(name, data);  // throws for an unknown name (the capsule frees data)
        }
        return nb::ndarray<nb::numpy, double>(data, {static_cast<size_t>(b.num_envs()), size}, owner);
      }, "name"_a);

  m.def(
      "train",
      [](const std::optional<std::string>& config, const std::vector<std::string>& overrides,
         const std::optional<std::string>& run_dir, const std::optional<std::string>& resume,
         std::optional<std::uint64_t> seed, const std::optional<std::string>& device, std::int64_t iterations,
         bool restart, bool quiet) {
        rlt::TrainOptions o;
        o.config_path = config.value_or("");
        o.overrides = overrides;
        o.run_dir = run_dir.value_or("");
        o.resume_dir = resume.value_or("");
        o.seed = seed;
        o.device = device.value_or("");
        o.max_iterations = iterations;
        o.restart = restart;
        o.quiet = quiet;
        nb::gil_scoped_release released;
        return rlt::train(o);
      },
      "config"_a.none(), "overrides"_a, "run_dir"_a.none(), "resume"_a.none(), "seed"_a.none(), "device"_a.none(),
      "iterations"_a, "restart"_a, "quiet"_a);
}
