// MuJoCo 3's native convex collision (nativeccd: engine_collision_gjk.c's mjc_ccd for one contact),
// followed step by step so that its contacts come out the same to rounding: GJK with the
// Montanari et al. signed-volume subdistance, its gjkIntersect fallback once a tetrahedron is
// built, the initial polytopes from a 2-, 3- or 4-simplex (polytope2/3/4), and EPA's horizon walk
// with its face map, stopping when the upper and lower bounds on the depth are within
// ccd_tolerance (mjMINVAL for two discrete shapes, boxes, meshes and height-field prisms without
// margin, which also stop on a repeated support vertex) or after ccd_iterations. The contact is the
// final face's witness points: pos their midpoint, normal x1 - x2 (from object 1 to object 2),
// dist their signed distance (< 0 when they overlap).
// Objects are any types with MuJoCo's mjCCDObj interface: support(res, dir) for a unit dir,
// center(res), margin (each support point moved out by margin / 2 along dir), vertindex (the
// support vertex's id for discrete shapes, -1 otherwise) and discrete (box, mesh or prism). sim/hfield.h
// uses it for a geom against a height field's prisms (MuJoCo's mjc_ConvexHField).
// Single source (RLT_HD): fixed-size arrays sized by kMaxIterations (MuJoCo sizes its buffer by
// ccd_iterations: 5 + N vertices, 6 N faces), no recursion (the horizon walk keeps its own stack).
// Float and double, with MuJoCo's single-precision limits (mjUSESINGLE) for float.
#pragma once

#include "sim/common.h"

namespace rlt::mjccd {

// The most ccd_iterations a model may ask for (MuJoCo's default is 35): sizes the polytope.
constexpr int kMaxIterations = 64;
constexpr int kMaxVerts = 5 + kMaxIterations, kMaxFaces = 6 * kMaxIterations;
constexpr int kMaxHorizon = 64;  // horizon edges (MuJoCo's buffer holds 24)

// MuJoCo's numerical limits (engine_collision_gjk.c; mjUSESINGLE for float).
template <class T>
struct Limits;
template <>
struct Limits<double> {
  static constexpr double minval = 1e-15, minval2 = 1e-30, maxval2 = 1e20;
  static constexpr double mindist2 = 1e-30, mindist3 = 1e-30, mindist4 = 1e-30, minepatol = 1e-15;
  static constexpr double max_limit = 1.7976931348623157e308;
};
template <>
struct Limits<float> {
  static constexpr float minval = 1e-15f, minval2 = 1e-30f, maxval2 = 1e20f;
  static constexpr float mindist2 = 1e-10f, mindist3 = 1e-10f, mindist4 = 1e-17f, minepatol = 1e-7f;
  static constexpr float max_limit = 3.402823466e38f;
};

namespace v3 {
template <class T>
RLT_HD RLT_INLINE void add(T r[3], const T a[3], const T b[3]) {
  r[0] = a[0] + b[0], r[1] = a[1] + b[1], r[2] = a[2] + b[2];
}
template <class T>
RLT_HD RLT_INLINE void sub(T r[3], const T a[3], const T b[3]) {
  r[0] = a[0] - b[0], r[1] = a[1] - b[1], r[2] = a[2] - b[2];
}
template <class T>
RLT_HD RLT_INLINE T dot(const T a[3], const T b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class T>
RLT_HD RLT_INLINE T norm(const T a[3]) {
  return m_sqrt(dot(a, a));
}
template <class T>
RLT_HD RLT_INLINE void copy(T r[3], const T a[3]) {
  r[0] = a[0], r[1] = a[1], r[2] = a[2];
}
template <class T>
RLT_HD RLT_INLINE void scl(T r[3], const T a[3], T s) {
  r[0] = s * a[0], r[1] = s * a[1], r[2] = s * a[2];
}
template <class T>
RLT_HD RLT_INLINE void cross(T r[3], const T a[3], const T b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
template <class T>
RLT_HD RLT_INLINE T det(const T a[3], const T b[3], const T c[3]) {  // a . (b x c)
  return a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
}
template <class T>
RLT_HD RLT_INLINE T abs(T x) {
  return x < T(0) ? -x : x;
}
// mju_normalize3: (1, 0, 0) below mjMINVAL
template <class T>
RLT_HD RLT_INLINE void normalize(T v[3]) {
  const T n = m_sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n < Limits<T>::minval) {
    v[0] = T(1), v[1] = T(0), v[2] = T(0);
  } else {
    const T inv = T(1) / n;
    v[0] *= inv, v[1] *= inv, v[2] *= inv;
  }
}
// res = mat v (row-major 3x3)
template <class T>
RLT_HD RLT_INLINE void mul_mat_vec(T r[3], const T m[9], const T v[3]) {
  const T a = m[0] * v[0] + m[1] * v[1] + m[2] * v[2];
  const T b = m[3] * v[0] + m[4] * v[1] + m[5] * v[2];
  const T c = m[6] * v[0] + m[7] * v[1] + m[8] * v[2];
  r[0] = a, r[1] = b, r[2] = c;
}
// res = mat^T v
template <class T>
RLT_HD RLT_INLINE void mul_mat_t_vec(T r[3], const T m[9], const T v[3]) {
  const T a = m[0] * v[0] + m[3] * v[1] + m[6] * v[2];
  const T b = m[1] * v[0] + m[4] * v[1] + m[7] * v[2];
  const T c = m[2] * v[0] + m[5] * v[1] + m[8] * v[2];
  r[0] = a, r[1] = b, r[2] = c;
}
}  // namespace v3

// A vertex of the Minkowski difference: vert = vert1 - vert2, and the discrete shapes' vertex ids.
template <class T>
struct Vertex {
  T vert[3], vert1[3], vert2[3];
  int index1, index2;
};

// mjCCDStatus for one contact.
template <class T>
struct Status {
  int separated;
  T dist;         // distance between the witness points (< 0: penetration)
  T x1[3], x2[3]; // witness points (GJK's starting points: the objects' centers)
  int nx;         // 0 or 1 witness pair
  int max_iterations;
  T tolerance;
  T dist_cutoff;
  int gjk_iterations, epa_iterations, epa_status;
  Vertex<T> simplex[4];
  int nsimplex;
};

// S_{A-B}(dir) = S_A(dir) - S_B(-dir), each moved out by its margin / 2 (MuJoCo's support()).
template <class T, class A, class B>
RLT_HD RLT_INLINE void support(Vertex<T>* v, A& a, B& b, const T dir[3], const T dir_neg[3]) {
  a.support(v->vert1, dir);
  if (a.margin > T(0)) {
    const T mg = T(0.5) * a.margin;
    v->vert1[0] += dir[0] * mg, v->vert1[1] += dir[1] * mg, v->vert1[2] += dir[2] * mg;
  }
  b.support(v->vert2, dir_neg);
  if (b.margin > T(0)) {
    const T mg = T(0.5) * b.margin;
    v->vert2[0] += dir_neg[0] * mg, v->vert2[1] += dir_neg[1] * mg, v->vert2[2] += dir_neg[2] * mg;
  }
  v3::sub(v->vert, v->vert1, v->vert2);
  v->index1 = a.vertindex;
  v->index2 = b.vertindex;
}

template <class A, class B>
RLT_HD RLT_INLINE bool discrete_pair(const A& a, const B& b) {
  return a.margin == 0 && b.margin == 0 && a.discrete && b.discrete;
}

// ---- the signed-volume subdistance (Montanari et al. 2017), as MuJoCo's S1D/S2D/S3D ----

template <class T>
RLT_HD RLT_INLINE void lincomb(T r[3], const T* c, int n, const T* v1, const T* v2, const T* v3, const T* v4) {
  switch (n) {
    case 0:
      r[0] = r[1] = r[2] = T(0);
      break;
    case 1:
      for (int i = 0; i < 3; ++i) r[i] = c[0] * v1[i];
      break;
    case 2:
      for (int i = 0; i < 3; ++i) r[i] = c[0] * v1[i] + c[1] * v2[i];
      break;
    case 3:
      for (int i = 0; i < 3; ++i) r[i] = c[0] * v1[i] + c[1] * v2[i] + c[2] * v3[i];
      break;
    default:
      for (int i = 0; i < 3; ++i) r[i] = c[0] * v1[i] + c[1] * v2[i] + c[2] * v3[i] + c[3] * v4[i];
      break;
  }
}

// The origin projected on the plane through v1, v2, v3; nonzero when the plane is degenerate.
template <class T>
RLT_HD int project_origin_plane(T res[3], const T v1[3], const T v2[3], const T v3[3]) {
  T d21[3], d31[3], d32[3], n[3];
  v3::sub(d21, v2, v1);
  v3::sub(d31, v3, v1);
  v3::sub(d32, v3, v2);
  v3::cross(n, d32, d21);
  T nv = v3::dot(n, v2), nn = v3::dot(n, n);
  if (nn == T(0)) return 1;
  if (nv != T(0) && nn > Limits<T>::minval) {
    v3::scl(res, n, nv / nn);
    return 0;
  }
  v3::cross(n, d21, d31);
  nv = v3::dot(n, v1), nn = v3::dot(n, n);
  if (nn == T(0)) return 1;
  if (nv != T(0) && nn > Limits<T>::minval) {
    v3::scl(res, n, nv / nn);
    return 0;
  }
  v3::cross(n, d31, d32);
  nv = v3::dot(n, v3), nn = v3::dot(n, n);
  v3::scl(res, n, nv / nn);
  return 0;
}

template <class T>
RLT_HD RLT_INLINE void project_origin_line(T res[3], const T v1[3], const T v2[3]) {
  T d[3];
  v3::sub(d, v2, v1);
  const T s = -(v3::dot(v2, d) / v3::dot(d, d));
  res[0] = v2[0] + s * d[0], res[1] = v2[1] + s * d[1], res[2] = v2[2] + s * d[2];
}

template <class T>
RLT_HD RLT_INLINE int same_sign(T a, T b) {
  if (a > T(0) && b > T(0)) return 1;
  if (a < T(0) && b < T(0)) return -1;
  return 0;
}

template <class T>
RLT_HD void s1d(T lambda[2], const T s1[3], const T s2[3]) {
  T p[3];
  project_origin_line(p, s1, s2);
  T mu = s1[0] - s2[0], mu_max = mu;
  int index = 0;
  mu = s1[1] - s2[1];
  if (v3::abs(mu) >= v3::abs(mu_max)) mu_max = mu, index = 1;
  mu = s1[2] - s2[2];
  if (v3::abs(mu) >= v3::abs(mu_max)) mu_max = mu, index = 2;
  const T c1 = p[index] - s2[index], c2 = s1[index] - p[index];
  const bool same = same_sign(mu_max, c1) && same_sign(mu_max, c2);
  lambda[0] = same ? c1 / mu_max : T(0);
  lambda[1] = same ? c2 / mu_max : T(1);
}

// The triangle v1 v2 v3 and the point p projected on the coordinate plane where the triangle's
// area is largest: that area's determinant m_max and the three cofactors of p (MuJoCo's S2D and
// triAffineCoord share them); p's affine coordinates are c3k / m_max.
template <class T>
RLT_HD void planar_cofactors(T& m_max, T& c31, T& c32, T& c33, const T v1[3], const T v2[3], const T v3_[3],
                             const T p[3]) {
  const T m14 = v2[1] * v3_[2] - v2[2] * v3_[1] - v1[1] * v3_[2] + v1[2] * v3_[1] + v1[1] * v2[2] - v1[2] * v2[1];
  const T m24 = v2[0] * v3_[2] - v2[2] * v3_[0] - v1[0] * v3_[2] + v1[2] * v3_[0] + v1[0] * v2[2] - v1[2] * v2[0];
  const T m34 = v2[0] * v3_[1] - v2[1] * v3_[0] - v1[0] * v3_[1] + v1[1] * v3_[0] + v1[0] * v2[1] - v1[1] * v2[0];
  int x, y;
  const T mu1 = v3::abs(m14), mu2 = v3::abs(m24), mu3 = v3::abs(m34);
  if (mu1 >= mu2 && mu1 >= mu3) {
    m_max = m14, x = 1, y = 2;
  } else if (mu2 >= mu3) {
    m_max = m24, x = 0, y = 2;
  } else {
    m_max = m34, x = 0, y = 1;
  }
  c31 = p[x] * v2[y] + p[y] * v3_[x] + v2[x] * v3_[y] - p[x] * v3_[y] - p[y] * v2[x] - v3_[x] * v2[y];
  c32 = p[x] * v3_[y] + p[y] * v1[x] + v3_[x] * v1[y] - p[x] * v1[y] - p[y] * v3_[x] - v1[x] * v3_[y];
  c33 = p[x] * v1[y] + p[y] * v2[x] + v1[x] * v2[y] - p[x] * v2[y] - p[y] * v1[x] - v2[x] * v1[y];
}

template <class T>
RLT_HD void s2d(T lambda[3], const T s1[3], const T s2[3], const T s3[3]) {
  T p[3];
  if (project_origin_plane(p, s1, s2, s3)) {
    s1d(lambda, s1, s2);
    lambda[2] = T(0);
    return;
  }
  T m_max, c31, c32, c33;
  planar_cofactors(m_max, c31, c32, c33, s1, s2, s3, p);
  const int comp1 = same_sign(m_max, c31), comp2 = same_sign(m_max, c32), comp3 = same_sign(m_max, c33);
  if (comp1 && comp2 && comp3) {
    lambda[0] = c31 / m_max, lambda[1] = c32 / m_max, lambda[2] = c33 / m_max;
    return;
  }
  T dmin = Limits<T>::max_limit;
  if (!comp1) {
    T l[2], xx[3];
    s1d(l, s2, s3);
    lincomb(xx, l, 2, s2, s3, (const T*)nullptr, (const T*)nullptr);
    lambda[0] = T(0), lambda[1] = l[0], lambda[2] = l[1];
    dmin = v3::dot(xx, xx);
  }
  if (!comp2) {
    T l[2], xx[3];
    s1d(l, s1, s3);
    lincomb(xx, l, 2, s1, s3, (const T*)nullptr, (const T*)nullptr);
    const T d = v3::dot(xx, xx);
    if (d < dmin) lambda[0] = l[0], lambda[1] = T(0), lambda[2] = l[1], dmin = d;
  }
  if (!comp3) {
    T l[2], xx[3];
    s1d(l, s1, s2);
    lincomb(xx, l, 2, s1, s2, (const T*)nullptr, (const T*)nullptr);
    const T d = v3::dot(xx, xx);
    if (d < dmin) lambda[0] = l[0], lambda[1] = l[1], lambda[2] = T(0);
  }
}

template <class T>
RLT_HD void s3d(T lambda[4], const T s1[3], const T s2[3], const T s3[3], const T s4[3]) {
  const T c41 = -v3::det(s2, s3, s4), c42 = v3::det(s1, s3, s4), c43 = -v3::det(s1, s2, s4), c44 = v3::det(s1, s2, s3);
  const T m_det = c41 + c42 + c43 + c44;
  const int comp1 = same_sign(m_det, c41), comp2 = same_sign(m_det, c42), comp3 = same_sign(m_det, c43),
            comp4 = same_sign(m_det, c44);
  if (comp1 && comp2 && comp3 && comp4) {
    lambda[0] = c41 / m_det, lambda[1] = c42 / m_det, lambda[2] = c43 / m_det, lambda[3] = c44 / m_det;
    return;
  }
  T dmin = Limits<T>::max_limit;
  if (!comp1) {
    T l[3], xx[3];
    s2d(l, s2, s3, s4);
    lincomb(xx, l, 3, s2, s3, s4, (const T*)nullptr);
    lambda[0] = T(0), lambda[1] = l[0], lambda[2] = l[1], lambda[3] = l[2];
    dmin = v3::dot(xx, xx);
  }
  if (!comp2) {
    T l[3], xx[3];
    s2d(l, s1, s3, s4);
    lincomb(xx, l, 3, s1, s3, s4, (const T*)nullptr);
    const T d = v3::dot(xx, xx);
    if (d < dmin) lambda[0] = l[0], lambda[1] = T(0), lambda[2] = l[1], lambda[3] = l[2], dmin = d;
  }
  if (!comp3) {
    T l[3], xx[3];
    s2d(l, s1, s2, s4);
    lincomb(xx, l, 3, s1, s2, s4, (const T*)nullptr);
    const T d = v3::dot(xx, xx);
    if (d < dmin) lambda[0] = l[0], lambda[1] = l[1], lambda[2] = T(0), lambda[3] = l[2], dmin = d;
  }
  if (!comp4) {
    T l[3], xx[3];
    s2d(l, s1, s2, s3);
    lincomb(xx, l, 3, s1, s2, s3, (const T*)nullptr);
    const T d = v3::dot(xx, xx);
    if (d < dmin) lambda[0] = l[0], lambda[1] = l[1], lambda[2] = l[2], lambda[3] = T(0);
  }
}

template <class T>
RLT_HD RLT_INLINE void subdistance(T lambda[4], int n, const Vertex<T> s[4]) {
  lambda[0] = lambda[1] = lambda[2] = lambda[3] = T(0);
  switch (n) {
    case 4:
      s3d(lambda, s[0].vert, s[1].vert, s[2].vert, s[3].vert);
      break;
    case 3:
      s2d(lambda, s[0].vert, s[1].vert, s[2].vert);
      break;
    case 2:
      s1d(lambda, s[0].vert, s[1].vert);
      break;
    default:
      lambda[0] = T(1);
      break;
  }
}

// ---- GJK ----

template <class T, class A, class B>
RLT_HD RLT_INLINE void gjk_support(Vertex<T>* v, A& a, B& b, const T x_k[3], T x_norm) {
  T dir[3], dir_neg[3];
  v3::scl(dir_neg, x_k, T(1) / x_norm);
  v3::scl(dir, dir_neg, T(-1));
  support(v, a, b, dir, dir_neg);
}

template <class T>
RLT_HD RLT_INLINE T signed_distance(T normal[3], const Vertex<T>* v1, const Vertex<T>* v2, const Vertex<T>* v3_) {
  T d1[3], d2[3];
  v3::sub(d1, v3_->vert, v1->vert);
  v3::sub(d2, v2->vert, v1->vert);
  v3::cross(normal, d1, d2);
  const T n2 = v3::dot(normal, normal);
  if (n2 > Limits<T>::minval2 && n2 < Limits<T>::maxval2) {
    v3::scl(normal, normal, T(1) / m_sqrt(n2));
    return v3::dot(normal, v1->vert);
  }
  return Limits<T>::max_limit;
}

// 1: in contact (st->simplex a tetrahedron around the origin), 0: apart, -1: inconclusive.
template <class T, class A, class B>
RLT_HD int gjk_intersect(Status<T>* st, A& a, B& b) {
  Vertex<T> s4[4] = {st->simplex[0], st->simplex[1], st->simplex[2], st->simplex[3]};
  int s[4] = {0, 1, 2, 3};
  int k = st->gjk_iterations;
  const int kmax = st->max_iterations;
  for (; k < kmax; ++k) {
    T dist[4], normals[12];
    dist[0] = signed_distance(normals + 0, s4 + s[2], s4 + s[1], s4 + s[3]);
    dist[1] = signed_distance(normals + 3, s4 + s[0], s4 + s[2], s4 + s[3]);
    dist[2] = signed_distance(normals + 6, s4 + s[1], s4 + s[0], s4 + s[3]);
    dist[3] = signed_distance(normals + 9, s4 + s[0], s4 + s[1], s4 + s[2]);
    if (dist[3] == T(0) || dist[2] == T(0) || dist[1] == T(0) || dist[0] == T(0)) {
      st->gjk_iterations = k;
      return -1;
    }
    int i = dist[0] < dist[1] ? 0 : 1;
    int j = dist[2] < dist[3] ? 2 : 3;
    const int index = dist[i] < dist[j] ? i : j;
    if (dist[index] > T(0)) {
      st->nsimplex = 4;
      for (int q = 0; q < 4; ++q) st->simplex[q] = s4[s[q]];
      st->gjk_iterations = k;
      return 1;
    }
    const T* nrm = normals + 3 * index;
    const T neg[3] = {-nrm[0], -nrm[1], -nrm[2]};
    support(s4 + s[index], a, b, nrm, neg);
    if (v3::dot(nrm, s4[s[index]].vert) < T(0)) {
      st->nsimplex = 0;
      st->gjk_iterations = k;
      return 0;
    }
    i = (index + 1) & 3;
    j = (index + 2) & 3;
    const int sw = s[i];
    s[i] = s[j];
    s[j] = sw;
  }
  st->gjk_iterations = k;
  return -1;
}

// MuJoCo's gjk(): st->x1, x2 hold the starting points (the centers) on entry.
template <class T, class A, class B>
RLT_HD void gjk(Status<T>* st, A& a, B& b) {
  const bool get_dist = st->dist_cutoff > T(0);
  bool backup_gjk = !get_dist;
  Vertex<T>* simplex = st->simplex;
  int n = 0, k = 0;
  const int kmax = st->max_iterations;
  T x_k[3], lambda[4] = {T(0), T(0), T(0), T(0)};
  const T tol2 = st->tolerance * st->tolerance;
  st->separated = 0;
  const bool discrete = discrete_pair(a, b);
  const T epsilon = discrete ? T(0) : T(0.5) * tol2;
  // (MuJoCo 3.17: down to mjMINVAL also when computing distances, read from its library)
  const T min_norm = discrete || get_dist ? Limits<T>::minval : st->tolerance;
  v3::sub(x_k, st->x1, st->x2);
  T x_norm = v3::norm(x_k), x_norm_prev = T(0);
  for (; k < kmax; ++k) {
    if (x_norm < min_norm || v3::abs(x_norm_prev - x_norm) < Limits<T>::minval) break;
    gjk_support(simplex + n, a, b, x_k, x_norm);
    const T* s_k = simplex[n].vert;
    const T diff[3] = {x_k[0] - s_k[0], x_k[1] - s_k[1], x_k[2] - s_k[2]};
    if (v3::dot(x_k, diff) < epsilon) break;
    const T lower = v3::dot(x_k, s_k);
    if (!get_dist) {
      if (lower > T(0)) {
        st->separated = 1, st->gjk_iterations = k, st->nsimplex = 0, st->nx = 0, st->dist = Limits<T>::max_limit;
        return;
      }
    } else if (st->dist_cutoff < Limits<T>::max_limit) {
      if (lower > T(0) && lower >= st->dist_cutoff * x_norm) {
        st->separated = 1, st->gjk_iterations = k, st->nsimplex = 0, st->nx = 0, st->dist = Limits<T>::max_limit;
        return;
      }
    }
    if (n == 3 && backup_gjk) {
      st->gjk_iterations = k;
      const int ret = gjk_intersect(st, a, b);
      if (ret != -1) {
        st->nx = 0;
        st->separated = ret == 0;
        st->dist = ret > 0 ? T(0) : Limits<T>::max_limit;
        return;
      }
      k = st->gjk_iterations;
      backup_gjk = false;
    }
    subdistance(lambda, n + 1, simplex);
    n = 0;
    for (int i = 0; i < 4; ++i) {
      if (lambda[i] == T(0)) continue;
      simplex[n] = simplex[i];
      lambda[n++] = lambda[i];
    }
    if (n < 1) {  // SHOULD NOT OCCUR (MuJoCo)
      st->gjk_iterations = k, st->nsimplex = 0, st->nx = 0, st->dist = Limits<T>::max_limit, st->separated = 1;
      return;
    }
    lincomb(x_k, lambda, n, simplex[0].vert, simplex[1].vert, simplex[2].vert, simplex[3].vert);
    x_norm_prev = x_norm;
    x_norm = v3::norm(x_k);
    if (n == 4) break;
  }
  if (n > 0) {
    lincomb(st->x1, lambda, n, simplex[0].vert1, simplex[1].vert1, simplex[2].vert1, simplex[3].vert1);
    lincomb(st->x2, lambda, n, simplex[0].vert2, simplex[1].vert2, simplex[2].vert2, simplex[3].vert2);
  }
  Vertex<T> tmp;
  gjk_support(&tmp, a, b, x_k, x_norm);
  if (v3::dot(x_k, tmp.vert) > T(0)) st->separated = 1;
  st->nx = 1;
  st->gjk_iterations = k;
  st->nsimplex = n;
  st->dist = (n == 4 && !st->separated) ? T(0) : x_norm;
}

// ---- EPA ----

template <class T>
struct Face {
  int verts[3];  // polytope vertex ids
  int adj[3];    // adjacent faces across [v1,v2], [v2,v3], [v3,v1]
  T v[3];        // the origin's projection on the face (its outward normal times the distance)
  T dist2;       // |v|^2
  int index;     // slot in the map; -1: not in the map; -2: deleted
};

template <class T>
struct Polytope {
  Vertex<T> verts[kMaxVerts];
  int nverts;
  Face<T> faces[kMaxFaces];
  int nfaces, maxfaces;
  T center[3];
  int map[kMaxFaces];  // face ids
  int nmap;
  int hz_indices[kMaxHorizon], hz_edges[kMaxHorizon], hz_nedges;
  bool hz_overflow;
  const T* hz_w;
};

enum EpaStatus {
  kEpaSuccess = 0,
  kEpaP2InvalidFaces,
  kEpaP2Nonconvex,
  kEpaP2OriginOnFace,
  kEpaP3BadNormal,
  kEpaP3InvalidV4,
  kEpaP3InvalidV5,
  kEpaP3MissingOrigin,
  kEpaP3OriginOnFace,
  kEpaP4MissingOrigin,
};

template <class T>
RLT_HD RLT_INLINE int insert_vertex(Polytope<T>* pt, const Vertex<T>& v) {
  const int n = pt->nverts++;
  pt->verts[n] = v;
  return n;
}

template <class T, class A, class B>
RLT_HD int epa_support(Polytope<T>* pt, A& a, B& b, const T d[3], T dnorm) {
  T dir[3] = {T(1), T(0), T(0)}, dir_neg[3] = {T(-1), T(0), T(0)};
  if (dnorm > Limits<T>::minval) {
    dir[0] = d[0] / dnorm, dir[1] = d[1] / dnorm, dir[2] = d[2] / dnorm;
    v3::scl(dir_neg, dir, T(-1));
  }
  const int n = pt->nverts++;
  support(pt->verts + n, a, b, dir, dir_neg);
  return n;
}

// Attach a face (vertex ids v1, v2, v3; adjacent faces); its squared distance to the origin (0:
// degenerate).
template <class T>
RLT_HD T attach_face(Polytope<T>* pt, int v1, int v2, int v3, int adj1, int adj2, int adj3) {
  Face<T>* f = &pt->faces[pt->nfaces++];
  f->verts[0] = v1, f->verts[1] = v2, f->verts[2] = v3;
  f->adj[0] = adj1, f->adj[1] = adj2, f->adj[2] = adj3;
  f->dist2 = T(0), f->index = -1;
  if (project_origin_plane(f->v, pt->verts[v3].vert, pt->verts[v2].vert, pt->verts[v1].vert)) return T(0);
  T outward[3];
  v3::sub(outward, pt->verts[v1].vert, pt->center);
  if (v3::dot(f->v, outward) < T(0)) v3::scl(f->v, f->v, T(-1));
  f->dist2 = v3::dot(f->v, f->v);
  f->index = -1;
  return f->dist2;
}

template <class T>
RLT_HD RLT_INLINE void delete_face(Polytope<T>* pt, int fi) {
  Face<T>* f = &pt->faces[fi];
  if (f->index >= 0) {
    pt->map[f->index] = pt->map[--pt->nmap];
    pt->faces[pt->map[f->index]].index = f->index;
  }
  f->index = -2;
}

template <class T>
RLT_HD RLT_INLINE void add_edge(Polytope<T>* pt, int index, int edge) {
  if (pt->hz_nedges >= kMaxHorizon) {
    pt->hz_overflow = true;
    return;
  }
  pt->hz_edges[pt->hz_nedges] = edge;
  pt->hz_indices[pt->hz_nedges++] = index;
}

template <class T>
RLT_HD RLT_INLINE int get_edge(const Face<T>& f, int vertex) {
  if (f.verts[0] == vertex) return 0;
  if (f.verts[1] == vertex) return 1;
  return 2;
}

template <class T>
RLT_HD RLT_INLINE bool visible(const Polytope<T>* pt, int fi) {
  const Face<T>& f = pt->faces[fi];
  return v3::dot(f.v, pt->hz_w) - f.dist2 > Limits<T>::minval;
}

// MuJoCo's horizonRec, depth first with an explicit stack: 1 when face f0 is visible from w (it
// and the visible faces behind it are deleted and the horizon's edges added), 0 otherwise.
template <class T>
RLT_HD int horizon_rec(Polytope<T>* pt, int f0, int e0) {
  if (!visible(pt, f0)) return 0;
  struct Frame {
    int f, e, k, verts[3];
  };
  constexpr int kDepth = 64;
  Frame st[kDepth];
  int depth = 0;
  auto push = [&](int f, int e) {
    Frame& fr = st[depth++];
    fr.f = f, fr.e = e, fr.k = 1;
    for (int q = 0; q < 3; ++q) fr.verts[q] = pt->faces[f].verts[q];
    delete_face(pt, f);
  };
  push(f0, e0);
  while (depth > 0) {
    Frame& fr = st[depth - 1];
    if (fr.k == 3) {
      if (--depth > 0) ++st[depth - 1].k;  // the child was visible: no edge
      continue;
    }
    const int i = (fr.e + fr.k) % 3;
    const int adj = pt->faces[fr.f].adj[i];
    if (pt->faces[adj].index > -2) {
      const int adj_edge = get_edge(pt->faces[adj], fr.verts[(i + 1) % 3]);
      if (visible(pt, adj)) {
        if (depth >= kDepth) {
          pt->hz_overflow = true;
          return 1;
        }
        push(adj, adj_edge);
        continue;
      }
      add_edge(pt, adj, adj_edge);
    }
    ++fr.k;
  }
  return 1;
}

template <class T>
RLT_HD void horizon(Polytope<T>* pt, int fi) {
  delete_face(pt, fi);
  const Face<T> f = pt->faces[fi];
  int adj = f.adj[0];
  int adj_edge = get_edge(pt->faces[adj], f.verts[1]);
  if (!horizon_rec(pt, adj, adj_edge)) add_edge(pt, adj, adj_edge);
  adj = f.adj[1];
  adj_edge = get_edge(pt->faces[adj], f.verts[2]);
  if (pt->faces[adj].index > -2 && !horizon_rec(pt, adj, adj_edge)) add_edge(pt, adj, adj_edge);
  adj = f.adj[2];
  adj_edge = get_edge(pt->faces[adj], f.verts[0]);
  if (pt->faces[adj].index > -2 && !horizon_rec(pt, adj, adj_edge)) add_edge(pt, adj, adj_edge);
}

// The affine coordinates of p on triangle v1 v2 v3 (MuJoCo's triAffineCoord).
template <class T>
RLT_HD void tri_affine_coord(T lambda[3], const T v1[3], const T v2[3], const T v3_[3], const T p[3]) {
  T m_max, c31, c32, c33;
  planar_cofactors(m_max, c31, c32, c33, v1, v2, v3_, p);
  lambda[0] = c31 / m_max, lambda[1] = c32 / m_max, lambda[2] = c33 / m_max;
}

template <class T>
RLT_HD bool tri_point_intersect(const T v1[3], const T v2[3], const T v3_[3], const T p[3]) {
  T l[3];
  tri_affine_coord(l, v1, v2, v3_, p);
  if (l[0] < T(0) || l[1] < T(0) || l[2] < T(0)) return false;
  T pr[3], d[3];
  for (int i = 0; i < 3; ++i) pr[i] = v1[i] * l[0] + v2[i] * l[1] + v3_[i] * l[2];
  v3::sub(d, pr, p);
  return v3::norm(d) < Limits<T>::minval;
}

template <class T>
RLT_HD bool same_side(const T p0[3], const T p1[3], const T p2[3], const T p3[3]) {
  T d1[3], d2[3], d3[3], d4[3], n[3];
  v3::sub(d1, p1, p0);
  v3::sub(d2, p2, p0);
  v3::cross(n, d1, d2);
  v3::sub(d3, p3, p0);
  const T dot1 = v3::dot(n, d3);
  v3::scl(d4, p0, T(-1));
  const T dot2 = v3::dot(n, d4);
  return (dot1 > T(0) && dot2 > T(0)) || (dot1 < T(0) && dot2 < T(0));
}

template <class T>
RLT_HD bool test_tetra(const T p0[3], const T p1[3], const T p2[3], const T p3[3]) {
  return same_side(p0, p1, p2, p3) && same_side(p1, p2, p3, p0) && same_side(p2, p3, p0, p1) &&
         same_side(p3, p0, p1, p2);
}

template <class T>
RLT_HD void rotmat(T r[9], const T axis[3]) {  // 120 degrees about axis
  const T n = v3::norm(axis);
  const T u1 = axis[0] / n, u2 = axis[1] / n, u3 = axis[2] / n;
  const T s = T(0.86602540378), c = T(-0.5);
  r[0] = c + u1 * u1 * (T(1) - c);
  r[1] = u1 * u2 * (T(1) - c) - u3 * s;
  r[2] = u1 * u3 * (T(1) - c) + u2 * s;
  r[3] = u2 * u1 * (T(1) - c) + u3 * s;
  r[4] = c + u2 * u2 * (T(1) - c);
  r[5] = u2 * u3 * (T(1) - c) - u1 * s;
  r[6] = u1 * u3 * (T(1) - c) - u2 * s;
  r[7] = u2 * u3 * (T(1) - c) + u1 * s;
  r[8] = c + u3 * u3 * (T(1) - c);
}

template <class T>
RLT_HD int ray_triangle(const T v1[3], const T v2[3], const T v3_[3], const T v4[3], const T v5[3]) {
  T d12[3], d13[3], d14[3], d15[3];
  v3::sub(d12, v2, v1);
  v3::sub(d13, v3_, v1);
  v3::sub(d14, v4, v1);
  v3::sub(d15, v5, v1);
  const T vol1 = v3::det(d13, d14, d12), vol2 = v3::det(d14, d15, d12), vol3 = v3::det(d15, d13, d12);
  if (vol1 >= T(0) && vol2 >= T(0) && vol3 >= T(0)) return 1;
  if (vol1 <= T(0) && vol2 <= T(0) && vol3 <= T(0)) return -1;
  return 0;
}

template <class T>
RLT_HD RLT_INLINE void replace_simplex3(Polytope<T>* pt, Status<T>* st, int v1, int v2, int v3_) {
  st->nsimplex = 3;
  st->simplex[0] = pt->verts[v1];
  st->simplex[1] = pt->verts[v2];
  st->simplex[2] = pt->verts[v3_];
  pt->nfaces = pt->nverts = pt->nmap = 0;
}

template <class T>
RLT_HD RLT_INLINE void fill_map(Polytope<T>* pt, int n) {
  for (int i = 0; i < n; ++i) pt->map[i] = i, pt->faces[i].index = i;
  pt->nmap = n;
}

template <class T, class A, class B>
RLT_HD int polytope3(Polytope<T>* pt, Status<T>* st, A& a, B& b) {
  const T* v1 = st->simplex[0].vert;
  const T* v2 = st->simplex[1].vert;
  const T* v3_ = st->simplex[2].vert;
  v3::add(pt->center, v1, v2);
  v3::add(pt->center, pt->center, v3_);
  v3::scl(pt->center, pt->center, T(1) / T(3));
  T d1[3], d2[3], n[3], n_neg[3];
  v3::sub(d1, v2, v1);
  v3::sub(d2, v3_, v1);
  v3::cross(n, d1, d2);
  const T n_norm = v3::norm(n);
  if (n_norm < Limits<T>::minval) return kEpaP3BadNormal;
  v3::scl(n_neg, n, T(-1));
  const int v1i = insert_vertex(pt, st->simplex[0]);
  const int v2i = insert_vertex(pt, st->simplex[1]);
  const int v3i = insert_vertex(pt, st->simplex[2]);
  const int v5i = epa_support(pt, a, b, n_neg, n_norm);
  const int v4i = epa_support(pt, a, b, n, n_norm);
  const T* v4 = pt->verts[v4i].vert;
  const T* v5 = pt->verts[v5i].vert;
  if (tri_point_intersect(v1, v2, v3_, v4)) return kEpaP3InvalidV4;
  if (tri_point_intersect(v1, v2, v3_, v5)) return kEpaP3InvalidV5;
  if (st->dist > T(10) * Limits<T>::minval && !test_tetra(v1, v2, v3_, v4) && !test_tetra(v1, v2, v3_, v5))
    return kEpaP3MissingOrigin;
  const T md = Limits<T>::mindist3;
  if (attach_face(pt, v4i, v1i, v2i, 1, 3, 2) < md) return kEpaP3OriginOnFace;
  if (attach_face(pt, v4i, v3i, v1i, 2, 4, 0) < md) return kEpaP3OriginOnFace;
  if (attach_face(pt, v4i, v2i, v3i, 0, 5, 1) < md) return kEpaP3OriginOnFace;
  if (attach_face(pt, v5i, v2i, v1i, 5, 0, 4) < md) return kEpaP3OriginOnFace;
  if (attach_face(pt, v5i, v1i, v3i, 3, 1, 5) < md) return kEpaP3OriginOnFace;
  if (attach_face(pt, v5i, v3i, v2i, 4, 2, 3) < md) return kEpaP3OriginOnFace;
  fill_map(pt, 6);
  return kEpaSuccess;
}

template <class T, class A, class B>
RLT_HD int polytope2(Polytope<T>* pt, Status<T>* st, A& a, B& b) {
  const T* v1 = st->simplex[0].vert;
  const T* v2 = st->simplex[1].vert;
  v3::add(pt->center, v1, v2);
  v3::scl(pt->center, pt->center, T(0.5));
  T diff[3];
  v3::sub(diff, v2, v1);
  T value = Limits<T>::max_limit;
  int index = 0;
  for (int i = 0; i < 3; ++i)
    if (v3::abs(diff[i]) < value) value = v3::abs(diff[i]), index = i;
  T e[3] = {T(0), T(0), T(0)};
  e[index] = T(1);
  T d1[3], d2[3], d3[3], r[9];
  v3::cross(d1, e, diff);
  rotmat(r, diff);
  v3::mul_mat_vec(d2, r, d1);
  v3::mul_mat_vec(d3, r, d2);
  const int v1i = insert_vertex(pt, st->simplex[0]);
  const int v2i = insert_vertex(pt, st->simplex[1]);
  const int v3i = epa_support(pt, a, b, d1, v3::norm(d1));
  const int v4i = epa_support(pt, a, b, d2, v3::norm(d2));
  const int v5i = epa_support(pt, a, b, d3, v3::norm(d3));
  const T md = Limits<T>::mindist2;
  const int tri[6][6] = {{v1i, v3i, v4i, 1, 3, 2}, {v1i, v5i, v3i, 2, 4, 0}, {v1i, v4i, v5i, 0, 5, 1},
                         {v2i, v4i, v3i, 5, 0, 4}, {v2i, v3i, v5i, 3, 1, 5}, {v2i, v5i, v4i, 4, 2, 3}};
  for (int f = 0; f < 6; ++f) {
    if (attach_face(pt, tri[f][0], tri[f][1], tri[f][2], tri[f][3], tri[f][4], tri[f][5]) < md) {
      replace_simplex3(pt, st, tri[f][0], tri[f][1], tri[f][2]);
      return polytope3(pt, st, a, b);
    }
  }
  if (!ray_triangle(v1, v2, pt->verts[v3i].vert, pt->verts[v4i].vert, pt->verts[v5i].vert)) return kEpaP2Nonconvex;
  fill_map(pt, 6);
  return kEpaSuccess;
}

template <class T, class A, class B>
RLT_HD int polytope4(Polytope<T>* pt, Status<T>* st, A& a, B& b) {
  const int v1 = insert_vertex(pt, st->simplex[0]);
  const int v2 = insert_vertex(pt, st->simplex[1]);
  const int v3_ = insert_vertex(pt, st->simplex[2]);
  const int v4 = insert_vertex(pt, st->simplex[3]);
  v3::add(pt->center, pt->verts[v1].vert, pt->verts[v2].vert);
  v3::add(pt->center, pt->center, pt->verts[v3_].vert);
  v3::add(pt->center, pt->center, pt->verts[v4].vert);
  v3::scl(pt->center, pt->center, T(0.25));
  const T md = Limits<T>::mindist4;
  const int tri[4][6] = {{v1, v2, v3_, 1, 3, 2}, {v1, v4, v2, 2, 3, 0}, {v1, v3_, v4, 0, 3, 1}, {v4, v3_, v2, 2, 0, 1}};
  for (int f = 0; f < 4; ++f) {
    if (attach_face(pt, tri[f][0], tri[f][1], tri[f][2], tri[f][3], tri[f][4], tri[f][5]) < md) {
      replace_simplex3(pt, st, tri[f][0], tri[f][1], tri[f][2]);
      return polytope3(pt, st, a, b);
    }
  }
  if (!test_tetra(pt->verts[v1].vert, pt->verts[v2].vert, pt->verts[v3_].vert, pt->verts[v4].vert))
    return kEpaP4MissingOrigin;
  fill_map(pt, 4);
  return kEpaSuccess;
}

// The witness points of face fi; their signed distance.
template <class T>
RLT_HD T epa_witness(const Polytope<T>* pt, int fi, T x1[3], T x2[3]) {
  const Face<T>& f = pt->faces[fi];
  const Vertex<T>& v1 = pt->verts[f.verts[0]];
  const Vertex<T>& v2 = pt->verts[f.verts[1]];
  const Vertex<T>& v3_ = pt->verts[f.verts[2]];
  T l[3];
  tri_affine_coord(l, v1.vert, v2.vert, v3_.vert, f.v);
  lincomb(x1, l, 3, v1.vert1, v2.vert1, v3_.vert1, (const T*)nullptr);
  lincomb(x2, l, 3, v1.vert2, v2.vert2, v3_.vert2, (const T*)nullptr);
  return -m_sqrt(f.dist2);
}

// MuJoCo's epa(): the face that best approximates the penetration depth (-1: none); the witness
// points in st->x1, x2 and their signed distance in st->dist.
template <class T, class A, class B>
RLT_HD int epa(Status<T>* st, Polytope<T>* pt, A& a, B& b) {
  T upper = Limits<T>::max_limit, upper2 = Limits<T>::max_limit, lower2;
  int face = -1, pface = -1;
  const bool discrete = discrete_pair(a, b);
  const T tolerance = discrete ? Limits<T>::minepatol : st->tolerance;
  int k;
  const int kmax = st->max_iterations < 1000 ? st->max_iterations : 1000;
  for (k = 0; k < kmax; ++k) {
    pface = face;
    lower2 = Limits<T>::max_limit;
    for (int i = 0; i < pt->nmap; ++i) {
      if (pt->faces[pt->map[i]].dist2 < lower2) {
        face = pt->map[i];
        lower2 = pt->faces[face].dist2;
      }
    }
    if (lower2 > upper2 || face < 0) {
      face = pface;
      break;
    }
    if (lower2 <= T(0)) break;  // the origin on a face's plane (MuJoCo warns)
    const T lower = m_sqrt(lower2);
    if (pt->nverts >= kMaxVerts) break;
    const int wi = epa_support(pt, a, b, pt->faces[face].v, lower);
    const Vertex<T>* w = pt->verts + wi;
    const T upper_k = v3::dot(pt->faces[face].v, w->vert) / lower;
    if (upper_k < upper) upper = upper_k, upper2 = upper * upper;
    if (upper - lower < tolerance) {
      // No contact when the first support point lies below the face (MuJoCo: by more than 1e-10;
      // float's rounding of upper alone reaches that at millimetre depths, so float allows 1e-5 of
      // the depth more, else a shallow contact at rest comes and goes).
      const T slack = sizeof(T) == sizeof(float) ? T(1e-10) + T(1e-5) * lower : T(1e-10);
      if (k == 0 && upper < lower - slack) face = -1;
      break;
    }
    if (discrete) {
      int i = 0;
      const int nverts = pt->nverts - 1;
      for (; i < nverts; ++i)
        if (w->index1 == pt->verts[i].index1 && w->index2 == pt->verts[i].index2) break;
      if (i != nverts) break;
    }
    pt->hz_w = w->vert;
    pt->hz_nedges = 0;
    pt->hz_overflow = false;
    horizon(pt, face);
    if (pt->hz_nedges < 3 || pt->hz_overflow) {
      face = -1;
      break;
    }
    const int nfaces = pt->nfaces, nedges = pt->hz_nedges;
    if (nedges > pt->maxfaces - pt->nfaces) break;  // out of face memory (MuJoCo warns)
    for (int i = 0; i < nedges; ++i) {
      const int cur = nfaces + i, prev = i == 0 ? nfaces + nedges - 1 : cur - 1, next = nfaces + (i + 1) % nedges;
      const int hi = pt->hz_indices[i], he = pt->hz_edges[i];
      Face<T>* hf = &pt->faces[hi];
      const int v1 = hf->verts[he], v2 = hf->verts[(he + 1) % 3];
      hf->adj[he] = cur;
      const T dist2 = attach_face(pt, wi, v2, v1, prev, hi, next);
      if (dist2 == T(0)) {
        face = -1;
        break;
      }
      if (dist2 >= lower2 && dist2 <= upper2) {
        const int idx = pt->nmap++;
        pt->map[idx] = pt->nfaces - 1;
        pt->faces[pt->nfaces - 1].index = idx;
      }
    }
    pt->hz_nedges = 0;
    if (!pt->nmap || face < 0) break;
  }
  st->epa_iterations = k;
  if (face >= 0) {
    st->dist = epa_witness(pt, face, st->x1, st->x2);
    st->nx = 1;
  } else {
    st->nx = 0;
    st->dist = T(0);
  }
  return face;
}

// No more contacts from the final polytope (ccd's default after-EPA step).
struct NoMulticontact {
  template <class T, class A, class B>
  RLT_HD void operator()(const Polytope<T>&, int, const Status<T>&, A&, B&) const {}
};

// MuJoCo's mjc_ccd for one contact without distances (dist_cutoff 0) and for objects that are not
// spheres or capsules (sim/hfield.h takes those as MuJoCo does: a point or segment first, the full
// shape only when it is within tolerance). Returns the signed distance (< 0: contact, witness
// points in st->x1, x2); MuJoCo's mjc_penetration takes a contact where it is negative.
// after_epa(polytope, face, status, a, b) runs when EPA found a face (MuJoCo's multicontact;
// sim/multiccd.h).
template <class T, class A, class B, class AfterEpa = NoMulticontact>
RLT_HD T ccd(Status<T>* st, A& a, B& b, int max_iterations, T tolerance, AfterEpa&& after_epa = AfterEpa()) {
  a.center(st->x1);
  b.center(st->x2);
  st->gjk_iterations = st->epa_iterations = 0;
  st->epa_status = -1;
  st->tolerance = tolerance;
  st->max_iterations = max_iterations < kMaxIterations ? max_iterations : kMaxIterations;
  st->dist_cutoff = T(0);
  st->nx = 0;
  gjk(st, a, b);
  if (st->dist <= tolerance && st->nsimplex > 1 && !st->separated) {
    st->dist = T(0);
    Polytope<T> pt;
    pt.nfaces = pt.nmap = pt.nverts = pt.hz_nedges = 0;
    pt.hz_overflow = false;
    pt.maxfaces = 6 * st->max_iterations;
    int ret;
    if (st->nsimplex == 2)
      ret = polytope2(&pt, st, a, b);
    else if (st->nsimplex == 3)
      ret = polytope3(&pt, st, a, b);
    else
      ret = polytope4(&pt, st, a, b);
    st->epa_status = ret;
    if (ret == kEpaSuccess) {
      const int face = epa(st, &pt, a, b);
      if (face >= 0) after_epa(pt, face, *st, a, b);
    }
  }
  return st->dist;
}

}  // namespace rlt::mjccd
