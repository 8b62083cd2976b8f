// MuJoCo's compiler-side arithmetic (its src/user/user_util.cc, the `mjuu_` functions), for the MJCF
// compiler's frames: the compiled poses must be MuJoCo's to the last bit where MuJoCo compares them
// (its "sameframe" test, 1e-6) or picks a frame out of a near tie (principal axes of a nearly
// symmetric inertia). Host code; each function keeps MuJoCo's order of operations.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>

namespace rlt::mjcf_detail::mjuu {

constexpr double kUserEps = 1e-14;  // MuJoCo's mjEPS of the compiler (user_util.h)

// mjuu_normvec: unit length unless the norm is below mjEPS or already within mjEPS of 1.
inline void normvec(double* v, int n) {
  double nrm = 0;
  for (int i = 0; i < n; ++i) nrm += v[i] * v[i];
  if (nrm < kUserEps) return;
  nrm = std::sqrt(nrm);
  if (std::abs(nrm - 1) > kUserEps) {
    for (int i = 0; i < n; ++i) v[i] /= nrm;
  }
}

// mjuu_quat2mat (row-major; the identity quaternion gives the identity exactly).
inline void quat2mat(double* r, const double* q) {
  if (q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0) {
    for (int i = 0; i < 9; ++i) r[i] = (i % 4 == 0) ? 1 : 0;
    return;
  }
  const double q00 = q[0] * q[0], q01 = q[0] * q[1], q02 = q[0] * q[2], q03 = q[0] * q[3];
  const double q11 = q[1] * q[1], q12 = q[1] * q[2], q13 = q[1] * q[3];
  const double q22 = q[2] * q[2], q23 = q[2] * q[3], q33 = q[3] * q[3];
  r[0] = q00 + q11 - q22 - q33;
  r[4] = q00 - q11 + q22 - q33;
  r[8] = q00 - q11 - q22 + q33;
  r[1] = 2 * (q12 - q03);
  r[2] = 2 * (q13 + q02);
  r[3] = 2 * (q12 + q03);
  r[5] = 2 * (q23 - q01);
  r[6] = 2 * (q13 - q02);
  r[7] = 2 * (q23 + q01);
}

// mjuu_mulquat: a * b, then normvec; res may alias a or b.
inline void mulquat(double* res, const double* a, const double* b) {
  double t[4] = {
      a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
      a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  normvec(t, 4);
  std::copy_n(t, 4, res);
}

// mjuu_mulmat: 3x3 a * b (row-major); res may alias a or b.
inline void mulmat(double* res, const double* a, const double* b) {
  double t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  std::copy_n(t, 9, res);
}

// The tolerances MuJoCo 3.17 passes to its eigen solver: the body compiler (an inertia from geoms,
// a fullinertia) and a mesh's inertia (mjCMesh::Process), read from its library's call sites.
constexpr double kEigTolBody = 4e-15;
constexpr double kEigTolMesh = 1e-7;

// MuJoCo 3.17's mjuu_eig3(eigval, eigvec, quat, mat, tol): the eigen-decomposition of a symmetric
// 3x3 matrix by Jacobi rotations accumulated in a quaternion (from the identity), eigenvalues sorted
// decreasing by quarter turns. Its 3.17 form, measured (its C source at hand is older): tolerances
// relative to the matrix's largest entry |m|max, iterating while the largest off-diagonal entry of
// D = R' mat R exceeds max(tol, 4e-15) |m|max (no stop on a small rotation angle, as older MuJoCo
// had), each rotation's half angle from tan(theta/2) = t / (1 + sqrt(1 + t^2)), the sort's margin
// max(tol, 1e-12) |m|max. Bit for bit MuJoCo 3.17's body_iquat for 300 fullinertia matrices,
// nearly symmetric ones included; its engine twin mju_eig3 (normalize4 instead of normvec) agreed
// on 1004 of 1004. The quaternion is the frame of principal axes, eigval the moments along them.
inline void eig3(double eigval[3], double quat[4], const double mat[9], double tol) {
  double scale = 0;
  for (int i = 0; i < 9; ++i) scale = std::max(std::abs(mat[i]), scale);
  const double tol_offdiag = std::max(4e-15, tol) * scale;
  quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  double D[9], tmp[9], rot[9];
  for (int iter = 0; iter < 500; ++iter) {
    quat2mat(rot, quat);  // D = rot' mat rot
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) tmp[3 * i + j] = rot[3 * j + i];
    mulmat(tmp, tmp, mat);
    mulmat(D, tmp, rot);
    eigval[0] = D[0], eigval[1] = D[4], eigval[2] = D[8];
    int rk, ck, rotk;  // the largest off-diagonal entry (row, column) and the axis rotated about
    if (std::abs(D[1]) > std::abs(D[2]) && std::abs(D[1]) > std::abs(D[5])) {
      rk = 0, ck = 1, rotk = 2;
    } else if (std::abs(D[2]) > std::abs(D[5])) {
      rk = 0, ck = 2, rotk = 1;
    } else {
      rk = 1, ck = 2, rotk = 0;
    }
    if (std::abs(D[3 * rk + ck]) <= tol_offdiag) break;
    // 2x2 symmetric Schur: t = tan(theta), then the half angle's tangent, cosine and sine
    const double tau = (D[4 * ck] - D[4 * rk]) / (2 * D[3 * rk + ck]);
    const double t = tau >= 0 ? 1.0 / (tau + std::sqrt(1 + tau * tau)) : -1.0 / (-tau + std::sqrt(1 + tau * tau));
    const double half_tan = t / (1 + std::sqrt(1 + t * t));
    const double half_cos = 1 / std::sqrt(1 + half_tan * half_tan);
    double q[4] = {half_cos, 0, 0, 0};
    q[rotk + 1] = (rotk == 1 ? half_tan : -half_tan) * half_cos;
    mulquat(quat, quat, q);
    normvec(quat, 4);
  }
  const double sort_margin = std::max(1e-12, tol) * scale;
  for (int j = 0; j < 3; ++j) {  // bubble sort 0, 1, 0, each swap a quarter turn of the frame
    const int j1 = j % 2;
    if (eigval[j1] + sort_margin < eigval[j1 + 1]) {
      std::swap(eigval[j1], eigval[j1 + 1]);
      double q[4] = {0.707106781186548, 0, 0, 0};  // MuJoCo's cos(pi/4) = sin(pi/4)
      q[(j1 + 2) % 3 + 1] = q[0];
      mulquat(quat, quat, q);
      normvec(quat, 4);
    }
  }
}

}  // namespace rlt::mjcf_detail::mjuu
