// A multilayer perceptron over a slice of the flat parameter buffer (DESIGN.md D6):
// forward keeps each layer's output for the hand-written backward. Single source: GEMMs through
// gemm(exec, ...) (Eigen on the CPU, cuBLAS on CUDA), everything else through parallel_for.
//
// Parameter layout at `offset` in the flat buffer, layer by layer: W (in x out, row-major), b (out).
#pragma once

#include <stdexcept>
#include <vector>

#include "rl/ops.h"
#if !defined(__CUDACC__)
#include "sim/cpu_executor.h"  // (the extern instantiations at the end)
#endif

namespace rlt {

struct MlpShape {
  int in = 0;
  std::vector<int> hidden;
  int out = 0;
  Activation act = Activation::kTanh;

  int num_layers() const { return static_cast<int>(hidden.size()) + 1; }
  int layer_in(int l) const { return l == 0 ? in : hidden[static_cast<size_t>(l - 1)]; }
  int layer_out(int l) const { return l == num_layers() - 1 ? out : hidden[static_cast<size_t>(l)]; }
  i64 num_params() const {
    i64 n = 0;
    for (int l = 0; l < num_layers(); ++l) n += static_cast<i64>(layer_in(l) + 1) * layer_out(l);
    return n;
  }
  i64 weight_offset(int l) const {
    i64 n = 0;
    for (int k = 0; k < l; ++k) n += static_cast<i64>(layer_in(k) + 1) * layer_out(k);
    return n;
  }
  i64 bias_offset(int l) const { return weight_offset(l) + static_cast<i64>(layer_in(l)) * layer_out(l); }
  int max_width() const {
    int w = out;
    for (int h : hidden) w = h > w ? h : w;
    return w;
  }
};

// y[r, j] = act(y[r, j] + b[j]); kNone on the output layer. Run by parallel_for_2d over
// (rows x width): the CPU loops j innermost (vectorized), CUDA runs one thread per element.
constexpr Activation kNoActivation = static_cast<Activation>(-1);
template <class T, Activation A>
struct BiasActivate {
  T* y;
  const T* b;
  int width;
  RLT_HD void operator()(i64 r, int j) const {
    const T z = y[r * width + j] + b[j];
    y[r * width + j] = A == kNoActivation ? z : activate<A>(z);
  }
};

// dz[idx] *= act'(h[idx]); the activation a template argument, as BiasActivate's (a switch per
// element keeps the CPU's loop scalar).
template <class T, Activation A>
struct ActivationBackward {
  T* dz;
  const T* h;
  RLT_HD void operator()(i64 idx) const { dz[idx] *= activate_grad_from_output<A>(h[idx]); }
};

template <class T>
struct FillValue {
  T* x;
  T v;
  RLT_HD void operator()(i64 i) const { x[i] = v; }
};

// Bytes Mlp::reserve allocates for max_rows rows of scalar_bytes each: every layer's output, the
// two backward scratches of the widest layer, a column of ones.
inline i64 mlp_scratch_bytes(const MlpShape& shape, i64 max_rows, i64 scalar_bytes) {
  i64 n = 2 * static_cast<i64>(shape.max_width()) + 1;
  for (int l = 0; l < shape.num_layers(); ++l) n += shape.layer_out(l);
  return n * max_rows * scalar_bytes;
}

// Scratch space for one MLP at a given maximum batch; owns the activations.
template <class T, class Exec>
class Mlp {
 public:
  using Buf = typename Exec::template Buffer<T>;

  Mlp() = default;
  Mlp(const MlpShape& shape, i64 offset, i64 max_rows, const Exec& exec) : m_shape(shape), m_offset(offset) {
    reserve(max_rows, exec);
  }

  const MlpShape& shape() const { return m_shape; }
  i64 offset() const { return m_offset; }
  i64 max_rows() const { return m_max_rows; }

  void reserve(i64 max_rows, const Exec& exec) {
    m_max_rows = max_rows;
    m_out.clear();
    for (int l = 0; l < m_shape.num_layers(); ++l) m_out.emplace_back(max_rows * m_shape.layer_out(l));
    m_dz.resize(max_rows * m_shape.max_width());
    m_dh.resize(max_rows * m_shape.max_width());
    m_ones.resize(max_rows);
    parallel_for(exec, max_rows, FillValue<T>{m_ones.data(), T(1)});
  }

  // x: (rows x in). Returns the output (rows x out), valid until the next forward.
  const T* forward(const Exec& exec, const T* params, const T* x, i64 rows) {
    check_rows(rows);
    const T* in = x;
    for (int l = 0; l < m_shape.num_layers(); ++l) {
      const int ni = m_shape.layer_in(l), no = m_shape.layer_out(l);
      T* y = m_out[static_cast<size_t>(l)].data();
      gemm(exec, false, false, rows, no, ni, T(1), in, params + m_offset + m_shape.weight_offset(l), T(0), y);
      const T* b = params + m_offset + m_shape.bias_offset(l);
      const Activation act = l + 1 < m_shape.num_layers() ? m_shape.act : kNoActivation;
      switch (act) {
        case Activation::kTanh:
          parallel_for_2d(exec, rows, no, BiasActivate<T, Activation::kTanh>{y, b, no});
          break;
        case Activation::kElu:
          parallel_for_2d(exec, rows, no, BiasActivate<T, Activation::kElu>{y, b, no});
          break;
        case Activation::kRelu:
          parallel_for_2d(exec, rows, no, BiasActivate<T, Activation::kRelu>{y, b, no});
          break;
        default:
          parallel_for_2d(exec, rows, no, BiasActivate<T, kNoActivation>{y, b, no});
          break;
      }
      in = y;
    }
    m_input = x;
    m_rows = rows;
    return m_out.back().data();
  }

  // After forward on the same rows: d_out (rows x out) is dLoss/dOutput. Writes parameter
  // gradients into grads (same layout as params, overwritten, not accumulated). When d_x is
  // non-null it receives dLoss/dInput (rows x in).
  void backward(const Exec& exec, const T* params, const T* d_out, T* grads, T* d_x = nullptr) {
    const i64 rows = m_rows;
    const int last = m_shape.num_layers() - 1;
    // dz: dLoss/d(layer l's pre-activation output); the output layer's is d_out itself, each hidden
    // layer's is computed into the scratch dz does not point at (m_dh, m_dz in turn), not copied.
    const T* dz = d_out;
    for (int l = last; l >= 0; --l) {
      const int ni = m_shape.layer_in(l), no = m_shape.layer_out(l);
      const T* h_in = l == 0 ? m_input : m_out[static_cast<size_t>(l - 1)].data();
      // dW = h_in^T dz ; db = 1^T dz
      gemm(exec, true, false, ni, no, rows, T(1), h_in, dz, T(0), grads + m_offset + m_shape.weight_offset(l));
      gemm(exec, true, false, 1, no, rows, T(1), m_ones.data(), dz, T(0), grads + m_offset + m_shape.bias_offset(l));
      if (l == 0 && d_x == nullptr) break;
      // dh_in = dz W^T
      T* dh = l == 0 ? d_x : (dz == m_dh.data() ? m_dz.data() : m_dh.data());
      gemm(exec, false, true, rows, ni, no, T(1), dz, params + m_offset + m_shape.weight_offset(l), T(0), dh);
      if (l == 0) break;
      switch (m_shape.act) {
        case Activation::kTanh:
          parallel_for(exec, rows * ni, ActivationBackward<T, Activation::kTanh>{dh, h_in});
          break;
        case Activation::kElu:
          parallel_for(exec, rows * ni, ActivationBackward<T, Activation::kElu>{dh, h_in});
          break;
        default:
          parallel_for(exec, rows * ni, ActivationBackward<T, Activation::kRelu>{dh, h_in});
          break;
      }
      dz = dh;
    }
  }

 private:
  void check_rows(i64 rows) const {
    if (rows > m_max_rows) throw std::logic_error("Mlp: more rows than reserved");
  }

  MlpShape m_shape;
  i64 m_offset = 0;
  i64 m_max_rows = 0;
  std::vector<Buf> m_out;  // per layer (rows x layer_out), written by forward
  Buf m_dz, m_dh;          // (rows x max_width) backward scratch
  Buf m_ones;              // (max_rows) of 1, for bias gradients as a GEMM
  const T* m_input = nullptr;
  i64 m_rows = 0;
};

// The host's one copy of each (rl/ppo_cpu.cpp; double: the gradient checks). Not for nvcc.
#if !defined(__CUDACC__)
extern template class Mlp<float, CpuExecutor>;
extern template class Mlp<double, CpuExecutor>;
#endif

}  // namespace rlt
