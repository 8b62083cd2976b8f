// MuJoCo 3's multicontact (engine_collision_gjk.c, nativeccd): more than one contact for a pair of
// boxes, meshes (their convex hulls), cylinders and capsules, followed step by step so that the
// contacts come out as MuJoCo 3.17's (its source at 3.12 has the box-mesh part; the rest, cylinders,
// capsules, margins and the filters below, was read from the 3.17 library's mjc_multicontact,
// mjc_ccd and mj_maxContact, and is measured against its wheel):
//   1. the features of the two shapes that GJK's simplex (apart, with a margin or a capsule) or
//      EPA's final face touches: up to three vertex ids on each shape (box corners, mesh vertices,
//      cylinder caps; none for a capsule) give a vertex, an edge or a face (simplexDim);
//   2. their candidate face normals (boxNormals, meshNormals: the polygons through those vertices,
//      sim/model_fields.h mesh_polymap; a cylinder's cap); two that face each other within
//      mjFACE_TOL (0.996), each facing the other shape along the witness direction, give a
//      face-face contact; else, where one feature is an edge or a vertex (or a capsule), its edges
//      that lie in a face of the other within mjEDGE_TOL (0.0888) give an edge-face contact; else
//      one contact;
//   3. the incident face (or edge) clipped to the reference face's side planes (polygonClip,
//      Sutherland-Hodgman), its points behind the reference face, or in front of it within the
//      margin, kept, each a contact at its own distance from that face (witnessOnFace); more than 4
//      reduced to a large-area quadrilateral (polygonQuad), an edge to its two furthest points; the
//      witnesses then moved out by half the margin of each shape (inflate).
// MuJoCo 3.17 runs it for two of box, mesh and cylinder (up to 4 contacts) and a capsule with one of
// them (up to 2), with or without margin (convex_multi below); box-box and capsule-box have their own
// colliders (sim/contact.h). Peer tests: tests/data/mjcf/multiccd_mesh.xml, multiccd_margin.xml,
// multiccd_cylinder.xml, tools/multicontact_peer.py.
// Single source (RLT_HD): fixed-size arrays; a mesh whose polygons have more than kMaxPolygon
// vertices, or whose vertices lie on more than kMaxMeshDegree polygons, keeps EPA's one contact
// (MuJoCo sizes its buffer by the model's npolygonmax and nmeshdegmax; the corpus's largest are 117
// and 36).
#pragma once

#include "sim/ccd_geom.h"
#include "sim/common.h"
#include "sim/mjccd.h"

namespace rlt::mjccd {

constexpr int kMaxPolygon = 128;    // vertices of one hull polygon (MuJoCo's npolygonmax)
constexpr int kMaxMeshDegree = 64;  // polygons through one hull vertex (MuJoCo's nmeshdegmax)
constexpr int kMaxMulticontact = 4; // MuJoCo's maxContacts for box, mesh and cylinder pairs

// MuJoCo's mjFACE_TOL and mjEDGE_TOL (engine_collision_gjk.h).
template <class T>
struct MultiTol {
  static constexpr T face = T(0.996), edge = T(0.0888);
};

// The witness pairs of one multicontact run (MuJoCo's mjCCDStatus x1, x2, dist, nx).
template <class T>
struct Witnesses {
  int n = 0;
  T dist[kMaxMulticontact];
  T x1[3 * kMaxMulticontact], x2[3 * kMaxMulticontact];
};

namespace multi_detail {

using namespace v3;

// res = mat (l1, l2, l3) (+ pos)
template <class T>
RLT_HD RLT_INLINE void globalcoord(T res[3], const T mat[9], const T* pos, T l1, T l2, T l3) {
  res[0] = mat[0] * l1 + mat[1] * l2 + mat[2] * l3;
  res[1] = mat[3] * l1 + mat[4] * l2 + mat[5] * l3;
  res[2] = mat[6] * l1 + mat[7] * l2 + mat[8] * l3;
  if (pos) res[0] += pos[0], res[1] += pos[1], res[2] += pos[2];
}

template <class T>
RLT_HD RLT_INLINE void add_scl(T r[3], const T a[3], const T b[3], T s) {
  r[0] = a[0] + s * b[0], r[1] = a[1] + s * b[1], r[2] = a[2] + s * b[2];
}

// The area of the convex quadrilateral (a, b, c, d), vertices in order: half the norm of the cross
// product of its diagonals (MuJoCo 3.17's choices follow this area, measured; 3.12's area4 summed
// two other cross products).
template <class T>
RLT_HD RLT_INLINE T area4(const T a[3], const T b[3], const T c[3], const T d[3]) {
  T ca[3], db[3], e[3];
  sub(ca, c, a);
  sub(db, d, b);
  cross(e, ca, db);
  return T(0.5) * norm(e);
}

// MuJoCo's polygonQuad: four vertex ids of the polygon (nvert > 4) spanning a large area: for each
// first corner a in turn, the other three moved on while the area grows, carried over from one a to
// the next (read from the 3.17 library's polygonClip; 3.12's source has the same walk with another
// area). A corner can come out twice (a quadrilateral that closes on itself), and is then emitted
// twice, as MuJoCo does.
template <class T>
RLT_HD void polygon_quad(int res[4], const T* poly, int nvert) {
  auto nxt = [nvert](int i) { return i == nvert - 1 ? 0 : i + 1; };
  auto p = [poly](int i) { return poly + 3 * i; };
  int b = 1, c = 2, d = 3;
  res[0] = 0, res[1] = b, res[2] = c, res[3] = d;
  T mm = area4(p(0), p(b), p(c), p(d)), m_next;
  for (int a = 0; a < nvert; ++a) {
    while (true) {
      m_next = area4(p(a), p(b), p(c), p(nxt(d)));
      if (m_next <= mm) break;
      mm = m_next, d = nxt(d);
      res[0] = a, res[1] = b, res[2] = c, res[3] = d;
      while (true) {
        m_next = area4(p(a), p(b), p(nxt(c)), p(d));
        if (m_next <= mm) break;
        mm = m_next, c = nxt(c);
        res[0] = a, res[1] = b, res[2] = c, res[3] = d;
      }
      while (true) {
        m_next = area4(p(a), p(nxt(b)), p(c), p(d));
        if (m_next <= mm) break;
        mm = m_next, b = nxt(b);
        res[0] = a, res[1] = b, res[2] = c, res[3] = d;
      }
    }
    if (b == a) {
      b = nxt(b);
      if (c == b) {
        c = nxt(c);
        if (d == c) d = nxt(d);
      }
    }
  }
}

// MuJoCo's planeNormal: the unit normal of the plane through edge (v1, v2) containing n; its offset.
template <class T>
RLT_HD T plane_normal(T res[3], const T v1[3], const T v2[3], const T n[3]) {
  T v3_[3], d1[3], d2[3];
  add(v3_, v1, n);
  sub(d1, v2, v1);
  sub(d2, v3_, v1);
  cross(res, d1, d2);
  normalize(res);
  return dot(res, v1);
}

template <class T>
RLT_HD RLT_INLINE bool halfspace(const T a[3], const T n[3], const T p[3]) {
  const T d[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
  return dot(d, n) > -Limits<T>::minval;
}

// The witness pair of clipped vertex v (on the incident feature) against the reference face
// through p with normal n: w1 is v projected onto the face's plane, w2 is w1 moved along dir (the
// incident face's normal) onto the incident face's plane; their signed distance (< 0: overlap).
// MuJoCo 3.17's (measured: its face-face witnesses lie on the reference face, and their distance
// is the depth along the incident normal; for an edge, dir = -n, this is the 3.12 witnessOnFace).
template <class T>
RLT_HD RLT_INLINE T witness_on_face(T w1[3], T w2[3], const T v[3], const T p[3], const T n[3], const T dir[3]) {
  const T d[3] = {v[0] - p[0], v[1] - p[1], v[2] - p[2]};
  const T depth = dot(d, n);
  add_scl(w1, v, n, -depth);
  const T dist = -depth * dot(n, dir);
  add_scl(w2, w1, dir, -dist);
  return dist;
}

// MuJoCo's polygonClip: face2 (nface2 vertices) clipped to the side planes of face1 (normal n), the
// points behind face1 into w (witnesses along dir).
template <class T>
RLT_HD void polygon_clip(Witnesses<T>* w, const T* face1, int nface1, const T* face2, int nface2, const T n[3],
                         const T dir[3], T keep) {
  if (nface1 < 3) return;
  T buf_a[3 * 2 * kMaxPolygon], buf_b[3 * 2 * kMaxPolygon];
  T pn[3 * kMaxPolygon], pd[kMaxPolygon];
  T* polygon = buf_a;
  T* clipped = buf_b;
  for (int i = 0; i < nface1 - 1; ++i) pd[i] = plane_normal(pn + 3 * i, face1 + 3 * i, face1 + 3 * i + 3, n);
  pd[nface1 - 1] = plane_normal(pn + 3 * (nface1 - 1), face1 + 3 * (nface1 - 1), face1, n);
  int npolygon = nface2, nclipped = 0;
  for (int i = 0; i < nface2; ++i) copy(polygon + 3 * i, face2 + 3 * i);
  for (int e = 0; e < 3 * nface1; e += 3) {
    for (int i = 0; i < npolygon; ++i) {
      const T* P = polygon + 3 * i;
      const T* Q = i < npolygon - 1 ? polygon + 3 * (i + 1) : polygon;
      const T PQ[3] = {Q[0] - P[0], Q[1] - P[1], Q[2] - P[2]};
      const bool in1 = halfspace(face1 + e, pn + e, P), in2 = halfspace(face1 + e, pn + e, Q);
      if (!in1 && !in2) continue;
      if (in1 && in2) {
        copy(clipped + 3 * nclipped++, Q);
        continue;
      }
      const T tmp = dot(pn + e, PQ);
      if (tmp != T(0)) {
        const T t = (pd[e / 3] - dot(pn + e, P)) / tmp;
        if (t >= T(0) && t <= T(1)) add_scl(clipped + 3 * nclipped++, P, PQ, t);
      }
      if (in2) copy(clipped + 3 * nclipped++, Q);
    }
    T* t = polygon;
    polygon = clipped, clipped = t;
    npolygon = nclipped, nclipped = 0;
  }
  // the points behind face1, or in front of it by no more than `keep` (MuJoCo 3.17: the pair's
  // margin, half of it from each shape that is not a capsule)
  const int mcount = npolygon;
  npolygon = 0;
  for (int i = 0; i < mcount; ++i) {
    T diff[3];
    sub(diff, polygon + 3 * i, face1);
    if (keep >= dot(diff, n)) {
      if (npolygon != i) copy(polygon + 3 * npolygon, polygon + 3 * i);
      ++npolygon;
    }
  }
  if (npolygon < 1) return;
  if (npolygon > 4) {  // MuJoCo: max_contacts < 5
    int rect[4];
    polygon_quad(rect, polygon, npolygon);
    for (int i = 0; i < 4; ++i) w->dist[i] = witness_on_face(w->x1 + 3 * i, w->x2 + 3 * i, polygon + 3 * rect[i], face1, n, dir);
    w->n = 4;
    return;
  }
  if (nface2 == 2 && npolygon > 2) {  // an edge: its two furthest points
    int best1 = 0, best2 = 1;
    T d = T(0);
    for (int i = 0; i < npolygon; ++i)
      for (int j = i + 1; j < npolygon; ++j) {
        T diff[3];
        sub(diff, polygon + 3 * j, polygon + 3 * i);
        const T d2 = dot(diff, diff);
        if (d2 > d) d = d2, best1 = i, best2 = j;
      }
    w->dist[0] = witness_on_face(w->x1, w->x2, polygon + 3 * best1, face1, n, dir);
    w->dist[1] = witness_on_face(w->x1 + 3, w->x2 + 3, polygon + 3 * best2, face1, n, dir);
    w->n = 2;
    return;
  }
  for (int i = 0; i < npolygon; ++i)
    w->dist[i] = witness_on_face(w->x1 + 3 * i, w->x2 + 3 * i, polygon + 3 * i, face1, n, dir);
  w->n = npolygon;
}

// Up to two common entries of arr1 (n) and arr2 (m).
RLT_HD RLT_INLINE int intersect(int res[2], const int* arr1, const int* arr2, int n, int m) {
  int count = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      if (arr1[i] == arr2[j]) {
        res[count++] = arr1[i];
        if (count == 2) return 2;
      }
  return count;
}

// MuJoCo's meshNormals: the world normals of the polygons through the feature's vertices.
template <class T>
RLT_HD int mesh_normals(T* res, int* resind, int dim, const GeomObj<T>& obj, const int vi[3]) {
  const int* polymap = obj.polymap;
  if (dim == 3 || dim == 2) {
    int edgeset[2], faceset[2];
    int n = intersect(edgeset, polymap + obj.polymapadr[vi[0]], polymap + obj.polymapadr[vi[1]], obj.polymapnum[vi[0]],
                      obj.polymapnum[vi[1]]);
    if (n == 0) return 0;
    if (dim == 3) {
      n = intersect(faceset, edgeset, polymap + obj.polymapadr[vi[2]], n, obj.polymapnum[vi[2]]);
      if (n == 0) return 0;
      const T* nr = obj.polynormal + 3 * faceset[0];
      globalcoord(res, obj.mat, (const T*)nullptr, nr[0], nr[1], nr[2]);
      resind[0] = faceset[0];
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      const T* nr = obj.polynormal + 3 * edgeset[i];
      globalcoord(res + 3 * i, obj.mat, (const T*)nullptr, nr[0], nr[1], nr[2]);
      resind[i] = edgeset[i];
    }
    return n;
  }
  if (dim == 1) {
    const int adr = obj.polymapadr[vi[0]], num = obj.polymapnum[vi[0]];
    if (num > kMaxMeshDegree) return 0;
    for (int i = 0; i < num; ++i) {
      const int index = polymap[adr + i];
      const T* nr = obj.polynormal + 3 * index;
      globalcoord(res + 3 * i, obj.mat, (const T*)nullptr, nr[0], nr[1], nr[2]);
      resind[i] = index;
    }
    return num;
  }
  return 0;
}

// MuJoCo's meshEdgeNormals: unit directions along the feature's edges, and their far ends. MuJoCo
// 3.17 first puts the feature's vertices (ids v1i, v2i) back at the mesh's own vertices in v (a
// margin inflated the support points).
template <class T>
RLT_HD int mesh_edge_normals(T* res, T* endverts, int dim, const GeomObj<T>& obj, T v[9], int v1i, int v2i) {
  const T* v1 = v;
  const T* v2 = v + 3;
  {
    const T* p = obj.vert + 3 * v1i;
    globalcoord(v, obj.mat, obj.pos, p[0], p[1], p[2]);
  }
  if (dim == 2) {
    const T* p = obj.vert + 3 * v2i;
    globalcoord(v + 3, obj.mat, obj.pos, p[0], p[1], p[2]);
    copy(endverts, v2);
    sub(res, v2, v1);
    normalize(res);
    return 1;
  }
  if (dim == 1) {
    const int adr = obj.polymapadr[v1i], num = obj.polymapnum[v1i];
    if (num > kMaxMeshDegree) return 0;
    for (int i = 0; i < num; ++i) {
      const int idx = obj.polymap[adr + i];
      const int padr = obj.polyvertadr[idx], nvert = obj.polyvertnum[idx];
      for (int j = 0; j < nvert; ++j) {
        if (obj.polyvert[padr + j] == v1i) {
          const int k = j == 0 ? nvert - 1 : j - 1;
          const T* vk = obj.vert + 3 * obj.polyvert[padr + k];
          globalcoord(endverts + 3 * i, obj.mat, obj.pos, vk[0], vk[1], vk[2]);
          sub(res + 3 * i, endverts + 3 * i, v1);
          normalize(res + 3 * i);
          break;
        }
      }
    }
    return num;
  }
  return 0;
}

// MuJoCo's boxNormals2: the box face whose normal is within mjFACE_TOL of n.
template <class T>
RLT_HD int box_normals2(T res[9], int resind[3], const T mat[9], const T n[3]) {
  const T normals[18] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1};
  T ln[3];
  ln[0] = mat[0] * n[0] + mat[3] * n[1] + mat[6] * n[2];
  ln[1] = mat[1] * n[0] + mat[4] * n[1] + mat[7] * n[2];
  ln[2] = mat[2] * n[0] + mat[5] * n[1] + mat[8] * n[2];
  scl(ln, ln, T(1) / m_sqrt(dot(ln, ln)));
  for (int i = 0; i < 6; ++i) {
    if (dot(ln, normals + 3 * i) > MultiTol<T>::face) {
      globalcoord(res, mat, (const T*)nullptr, normals[3 * i], normals[3 * i + 1], normals[3 * i + 2]);
      resind[0] = i;
      return 1;
    }
  }
  return 0;
}

// MuJoCo's boxNormals: the face normals of the box feature given by up to 3 corner ids.
template <class T>
RLT_HD int box_normals(T res[9], int resind[3], int dim, const GeomObj<T>& obj, const int vi[3], const T dir[3]) {
  const int v1 = vi[0], v2 = vi[1], v3_ = vi[2];
  const T* mat = obj.mat;
  if (dim == 3) {
    int c = 0;
    const int x = ((v1 & 1) && (v2 & 1) && (v3_ & 1)) - (!(v1 & 1) && !(v2 & 1) && !(v3_ & 1));
    const int y = ((v1 & 2) && (v2 & 2) && (v3_ & 2)) - (!(v1 & 2) && !(v2 & 2) && !(v3_ & 2));
    const int z = ((v1 & 4) && (v2 & 4) && (v3_ & 4)) - (!(v1 & 4) && !(v2 & 4) && !(v3_ & 4));
    globalcoord(res, mat, (const T*)nullptr, T(x), T(y), T(z));
    const int sgn = x + y + z;
    if (x) resind[c++] = 0;
    if (y) resind[c++] = 2;
    if (z) resind[c++] = 4;
    if (sgn == -1) resind[0]++;
    return c == 1 ? 1 : box_normals2(res, resind, mat, dir);
  }
  if (dim == 2) {
    int c = 0;
    const int x = ((v1 & 1) && (v2 & 1)) - (!(v1 & 1) && !(v2 & 1));
    const int y = ((v1 & 2) && (v2 & 2)) - (!(v1 & 2) && !(v2 & 2));
    const int z = ((v1 & 4) && (v2 & 4)) - (!(v1 & 4) && !(v2 & 4));
    if (x) {
      globalcoord(res, mat, (const T*)nullptr, T(x), T(0), T(0));
      resind[c++] = x > 0 ? 0 : 1;
    }
    if (y) {
      globalcoord(res + 3 * c, mat, (const T*)nullptr, T(0), T(y), T(0));
      resind[c++] = y > 0 ? 2 : 3;
    }
    if (z) {
      globalcoord(res + 3, mat, (const T*)nullptr, T(0), T(0), T(z));  // MuJoCo's: res + 3, whatever c
      resind[c++] = z > 0 ? 4 : 5;
    }
    return c == 2 ? 2 : box_normals2(res, resind, mat, dir);
  }
  if (dim == 1) {
    const T x = (v1 & 1) ? T(1) : T(-1), y = (v1 & 2) ? T(1) : T(-1), z = (v1 & 4) ? T(1) : T(-1);
    globalcoord(res + 0, mat, (const T*)nullptr, x, T(0), T(0));
    globalcoord(res + 3, mat, (const T*)nullptr, T(0), y, T(0));
    globalcoord(res + 6, mat, (const T*)nullptr, T(0), T(0), z);
    resind[0] = x > 0 ? 0 : 1;
    resind[1] = y > 0 ? 2 : 3;
    resind[2] = z > 0 ? 4 : 5;
    return 3;
  }
  return 0;
}

// MuJoCo's boxEdgeNormals; 3.17 first puts the feature's corners (ids v1i, v2i) back at the box's
// own corners in v.
template <class T>
RLT_HD int box_edge_normals(T res[9], T endverts[9], int dim, const GeomObj<T>& obj, T v[9], int v1i, int v2i) {
  const T* v1 = v;
  const T* v2 = v + 3;
  const T* s = obj.size;
  auto corner = [&](T* out, int id) {
    globalcoord(out, obj.mat, obj.pos, (id & 1) ? s[0] : -s[0], (id & 2) ? s[1] : -s[1], (id & 4) ? s[2] : -s[2]);
  };
  corner(v, v1i);
  if (dim == 2) {
    corner(v + 3, v2i);
    copy(endverts, v2);
    sub(res, v2, v1);
    normalize(res);
    return 1;
  }
  if (dim == 1) {
    const T x = (v1i & 1) ? s[0] : -s[0], y = (v1i & 2) ? s[1] : -s[1], z = (v1i & 4) ? s[2] : -s[2];
    globalcoord(endverts, obj.mat, obj.pos, -x, y, z);
    sub(res, endverts, v1);
    normalize(res);
    globalcoord(endverts + 3, obj.mat, obj.pos, x, -y, z);
    sub(res + 3, endverts + 3, v1);
    normalize(res + 3);
    globalcoord(endverts + 6, obj.mat, obj.pos, x, y, -z);
    sub(res + 6, endverts + 6, v1);
    normalize(res + 6);
    return 3;
  }
  return 0;
}

// MuJoCo's boxFace: the corners of face idx (0 +x, 1 -x, 2 +y, 3 -y, 4 +z, 5 -z), in its order.
template <class T>
RLT_HD int box_face(T res[12], const GeomObj<T>& obj, int idx) {
  const T* s = obj.size;
  // corner signs per face, MuJoCo's order
  static constexpr signed char kSign[6][4][3] = {
      {{1, 1, 1}, {1, 1, -1}, {1, -1, -1}, {1, -1, 1}},     {{-1, 1, -1}, {-1, 1, 1}, {-1, -1, 1}, {-1, -1, -1}},
      {{-1, 1, -1}, {1, 1, -1}, {1, 1, 1}, {-1, 1, 1}},     {{-1, -1, 1}, {1, -1, 1}, {1, -1, -1}, {-1, -1, -1}},
      {{-1, 1, 1}, {1, 1, 1}, {1, -1, 1}, {-1, -1, 1}},     {{1, 1, -1}, {-1, 1, -1}, {-1, -1, -1}, {1, -1, -1}}};
  if (idx < 0 || idx > 5) return 0;
  for (int k = 0; k < 4; ++k)
    globalcoord(res + 3 * k, obj.mat, obj.pos, kSign[idx][k][0] * s[0], kSign[idx][k][1] * s[1], kSign[idx][k][2] * s[2]);
  return 4;
}

// MuJoCo's meshFace: polygon idx in world coordinates, its vertices in reverse order.
template <class T>
RLT_HD int mesh_face(T* res, const GeomObj<T>& obj, int idx) {
  const int adr = obj.polyvertadr[idx], nvert = obj.polyvertnum[idx];
  if (nvert > kMaxPolygon) return 0;
  const int* pv = obj.polyvert + adr;
  int j = 0;
  for (int i = nvert - 1; i >= 0; --i) {
    const T* v = obj.vert + 3 * pv[i];
    globalcoord(res + 3 * j++, obj.mat, obj.pos, v[0], v[1], v[2]);
  }
  return nvert;
}

// Of the candidate faces (normals v of shape 1, w of shape 2), the pair facing each other most, if
// within mjFACE_TOL. MuJoCo 3.12's source takes the first such pair; 3.17 takes the best (measured on
// Menagerie's G1: an edge of each shape, shape 1's two polygons through its edge both within the
// tolerance of shape 2's, MuJoCo clips the better aligned, the second in mesh_polymap's order), and
// only faces that face the other shape along the witness direction dir = x2 - x1 by more than
// mjEDGE_TOL of its length (read from the 3.17 library's mjc_multicontact).
template <class T>
RLT_HD RLT_INLINE bool aligned_faces(int res[2], const T* v, int nv, const T* w, int nw, const T dir[3]) {
  const T lim = m_sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]) * MultiTol<T>::edge;
  T best = -MultiTol<T>::face;
  bool found = false;
  for (int i = 0; i < nv; ++i) {
    if (!(dot(dir, v + 3 * i) < -lim)) continue;
    for (int j = 0; j < nw; ++j) {
      if (!(dot(dir, w + 3 * j) > lim)) continue;
      const T d = dot(v + 3 * i, w + 3 * j);
      if (d < best) best = d, res[0] = i, res[1] = j, found = true;
    }
  }
  return found;
}

// The first face (normals `face`, each facing the other shape along `out` by more than 1e-15) and
// edge (unit directions `edge`) within mjEDGE_TOL of perpendicular: res = (edge, face).
template <class T>
RLT_HD RLT_INLINE bool aligned_face_edge(int res[2], const T* edge, int nedge, const T* face, int nface,
                                         const T out[3]) {
  for (int i = 0; i < nface; ++i) {
    if (!(dot(face + 3 * i, out) > T(1e-15))) continue;
    for (int j = 0; j < nedge; ++j)
      if (v3::abs(dot(edge + 3 * j, face + 3 * i)) < MultiTol<T>::edge) {
        res[0] = j, res[1] = i;
        return true;
      }
  }
  return false;
}

// MuJoCo 3.17's cylinder features (read from its library): a cap is a face (support vertex id 0
// the top, 1 the bottom), drawn as a 16-gon, the side an edge along the axis.
// The cap's normal, where the feature is one vertex (a cap); else none.
template <class T>
RLT_HD int cylinder_normals(T res[3], int resind[1], int dim, const GeomObj<T>& obj, const int vi[3]) {
  if (dim != 1) return 0;
  const T z = vi[0] == 0 ? T(1) : T(-1);
  res[0] = obj.mat[2] * z, res[1] = obj.mat[5] * z, res[2] = obj.mat[8] * z;
  resind[0] = vi[0];
  return 1;
}

// The side edge through v1 (a rim point of cap idx): from that cap to the other, v1 moved back onto
// the rim where a margin inflated it.
template <class T>
RLT_HD int cylinder_edge_normals(T res[3], T endvert[3], const GeomObj<T>& obj, T v1[3], int idx) {
  const T s = idx == 0 ? T(-1) : T(1);
  res[0] = s * obj.mat[2], res[1] = s * obj.mat[5], res[2] = s * obj.mat[8];
  if (obj.margin > T(0)) {
    const T d[3] = {v1[0] - obj.pos[0], v1[1] - obj.pos[1], v1[2] - obj.pos[2]};
    T lx = obj.mat[0] * d[0] + obj.mat[3] * d[1] + obj.mat[6] * d[2];
    T ly = obj.mat[1] * d[0] + obj.mat[4] * d[1] + obj.mat[7] * d[2];
    const T n2 = lx * lx + ly * ly;
    const T scl = n2 >= Limits<T>::minval2 ? obj.size[0] / m_sqrt(n2) : T(0);
    lx = lx * scl, ly = ly * scl;
    const T lz = -s * obj.size[1];
    globalcoord(v1, obj.mat, obj.pos, lx, ly, lz);
  }
  const T h2 = obj.size[1] + obj.size[1];
  add_scl(endvert, v1, res, h2);
  return 1;
}

// Cap idx (0 top, 1 bottom) as a 16-gon in MuJoCo 3.17's order and table of angles (its literal
// cosines and sines, to 15 digits).
template <class T>
RLT_HD int cylinder_face(T res[48], const GeomObj<T>& obj, int idx) {
  static constexpr double kCos[16] = {1.0, 0.923879532511287, 0.707106781186548, 0.38268343236509, 0.0,
                                      -0.38268343236509, -0.707106781186547, -0.923879532511287, -1.0,
                                      -0.923879532511287, -0.707106781186548, -0.38268343236509, 0.0,
                                      0.38268343236509, 0.707106781186547, 0.923879532511287};
  static constexpr double kSin[16] = {0.0, 0.38268343236509, 0.707106781186547, 0.923879532511287, 1.0,
                                      0.923879532511287, 0.707106781186548, 0.38268343236509, 0.0,
                                      -0.38268343236509, -0.707106781186547, -0.923879532511287, -1.0,
                                      -0.923879532511287, -0.707106781186548, -0.38268343236509};
  const T s = idx == 0 ? T(1) : T(-1);
  for (int k = 0; k < 16; ++k) {
    const T x = obj.size[0] * T(kCos[k]);
    const T y = s * (obj.size[0] * -T(kSin[k]));
    const T z = s * obj.size[1];
    globalcoord(res + 3 * k, obj.mat, obj.pos, x, y, z);
  }
  return 16;
}

// MuJoCo 3.17's capsule edge: its axis, through the witness point x (on the capsule's surface), from
// one end of the segment to the other (v1 the start, endvert the end).
template <class T>
RLT_HD int capsule_edge_normals(T res[3], T endvert[3], const GeomObj<T>& obj, T v1[3], const T x[3]) {
  res[0] = obj.mat[2], res[1] = obj.mat[5], res[2] = obj.mat[8];
  const T d[3] = {x[0] - obj.pos[0], x[1] - obj.pos[1], x[2] - obj.pos[2]};
  const T t = d[0] * res[0] + d[1] * res[1] + d[2] * res[2];
  const T a = -t - obj.size[1], b = obj.size[1] - t;
  add_scl(v1, x, res, a);
  add_scl(endvert, x, res, b);
  return 1;
}

// MuJoCo's simplexDim: 1, 2 or 3 distinct vertex ids (reordered so that they come first).
template <class T>
RLT_HD RLT_INLINE int simplex_dim(int vi[3], T v[9]) {
  if (vi[0] == vi[1]) {
    if (vi[0] == vi[2]) return 1;
    vi[1] = vi[2];
    copy(v + 3, v + 6);
    return 2;
  }
  return (vi[2] == vi[0] || vi[2] == vi[1]) ? 2 : 3;
}

}  // namespace multi_detail

// The feature of one shape that GJK's simplex or EPA's final face touches (MuJoCo 3.17 keeps it in
// its mjCCDObj): n vertices (1 to 3), their ids (box corners, mesh vertices, cylinder caps; -1 for a
// capsule) and positions.
template <class T>
struct Feature {
  int n = 0;
  int id[3];
  T v[9];
};

// MuJoCo 3.17's mjc_multicontact (read from its library; 3.12's source in engine_collision_gjk.c is
// its box-mesh part): the contacts of the touching features f1, f2 of obj1 and obj2 (boxes, meshes,
// cylinders, capsules) into w, given the witness pair x1, x2; w->n stays 0 when there are no more
// than the one contact already found. The contacts' distances count from the geoms' own surfaces,
// moved out by half the margin of each geom that is not a capsule (MuJoCo's inflate), so that they
// read as the inflated shapes' signed distances.
template <class T>
RLT_HD void multicontact(Witnesses<T>* w, const Feature<T>& f1, const Feature<T>& f2, const T x1[3], const T x2[3],
                         const GeomObj<T>& obj1, const GeomObj<T>& obj2) {
  using namespace multi_detail;
  w->n = 0;
  if (f1.n <= 0 || f2.n <= 0) return;
  if (obj1.type == kGeomMesh && obj1.polynum <= 0) return;
  if (obj2.type == kGeomMesh && obj2.polynum <= 0) return;
  // the feature's vertices as MuJoCo takes them: (v0, v1 or v0, v2 or v0)
  int v1i[3], v2i[3];
  T v1[9], v2[9];
  {
    const int a1 = f1.n != 1 ? 1 : 0, b1 = f1.n >= 3 ? 2 : 0, a2 = f2.n != 1 ? 1 : 0, b2 = f2.n >= 3 ? 2 : 0;
    v1i[0] = f1.id[0], v1i[1] = f1.id[a1], v1i[2] = f1.id[b1];
    v2i[0] = f2.id[0], v2i[1] = f2.id[a2], v2i[2] = f2.id[b2];
    copy(v1, f1.v), copy(v1 + 3, f1.v + 3 * a1), copy(v1 + 6, f1.v + 3 * b1);
    copy(v2, f2.v), copy(v2 + 3, f2.v + 3 * a2), copy(v2 + 6, f2.v + 3 * b2);
  }
  int idx1[kMaxMeshDegree], idx2[kMaxMeshDegree];
  T n1[3 * kMaxMeshDegree], n2[3 * kMaxMeshDegree], endverts[3 * kMaxMeshDegree];
  T face1[3 * kMaxPolygon], face2[3 * kMaxPolygon];
  int nface1 = simplex_dim(v1i, v1), nface2 = simplex_dim(v2i, v2);
  int nnorms1 = 0, nnorms2 = 0;
  T dir[3], dir_neg[3];
  sub(dir, x2, x1);
  sub(dir_neg, x1, x2);
  if (obj1.type == kGeomBox)
    nnorms1 = box_normals(n1, idx1, nface1, obj1, v1i, dir_neg);
  else if (obj1.type == kGeomMesh)
    nnorms1 = mesh_normals(n1, idx1, nface1, obj1, v1i);
  else if (obj1.type == kGeomCylinder)
    nnorms1 = cylinder_normals(n1, idx1, nface1, obj1, v1i);
  if (obj2.type == kGeomBox)
    nnorms2 = box_normals(n2, idx2, nface2, obj2, v2i, dir);
  else if (obj2.type == kGeomMesh)
    nnorms2 = mesh_normals(n2, idx2, nface2, obj2, v2i);
  else if (obj2.type == kGeomCylinder)
    nnorms2 = cylinder_normals(n2, idx2, nface2, obj2, v2i);
  // shape 1's edges: the feature's own (box, mesh), the side (cylinder), the axis (capsule)
  auto edge_normals = [&](T* res, const GeomObj<T>& obj, int dim, T* v, const int* vi, const T* x) -> int {
    switch (obj.type) {
      case kGeomBox:
        return box_edge_normals(res, endverts, dim, obj, v, vi[0], vi[1]);
      case kGeomMesh:
        return mesh_edge_normals(res, endverts, dim, obj, v, vi[0], vi[1]);
      case kGeomCylinder:
        return cylinder_edge_normals(res, endverts, obj, v, vi[0]);
      case kGeomCapsule:
        return capsule_edge_normals(res, endverts, obj, v, x);
      default:
        return 0;
    }
  };
  int res[2];
  bool edgecon1 = false, edgecon2 = false;
  if (!aligned_faces(res, n1, nnorms1, n2, nnorms2, dir)) {
    if (nface1 < 3 && nnorms2 > 0 && (nface1 <= nface2 || nnorms1 == 0)) {  // an edge of 1 on a face of 2
      nnorms1 = edge_normals(n1, obj1, nface1, v1, v1i, x1);
      if (nnorms1 <= 0 || !aligned_face_edge(res, n1, nnorms1, n2, nnorms2, dir)) return;
      edgecon1 = true;
    } else if (nface2 < 3) {  // an edge of 2 on a face of 1
      nnorms2 = edge_normals(n2, obj2, nface2, v2, v2i, x2);
      if (nnorms2 <= 0 || !aligned_face_edge(res, n2, nnorms2, n1, nnorms1, dir_neg)) return;
      edgecon2 = true;
    } else {
      return;
    }
  }
  auto face_of = [&](T* out, const GeomObj<T>& obj, int ind) -> int {
    switch (obj.type) {
      case kGeomBox:
        return box_face(out, obj, ind);
      case kGeomMesh:
        return mesh_face(out, obj, ind);
      case kGeomCylinder:
        return cylinder_face(out, obj, ind);
      default:
        return 0;
    }
  };
  const int i = res[0], j = res[1];
  if (edgecon1) {
    copy(face1, v1);
    copy(face1 + 3, endverts + 3 * i);
    nface1 = 2;
  } else {
    nface1 = face_of(face1, obj1, edgecon2 ? idx1[j] : idx1[i]);
  }
  if (edgecon2) {
    copy(face2, v2);
    copy(face2 + 3, endverts + 3 * i);
    nface2 = 2;
  } else {
    nface2 = face_of(face2, obj2, idx2[j]);
  }
  if (nface1 == 0 || nface2 == 0) return;  // a polygon beyond kMaxPolygon: EPA's one contact
  // half the margin of each shape that is not a capsule (a capsule's radius and margin are in its
  // witness already): the points kept within their sum, then the witnesses moved out by them along
  // out, the direction from shape 1 to shape 2
  const T m1 = obj1.type != kGeomCapsule ? T(0.5) * obj1.margin : T(0);
  const T m2 = obj2.type != kGeomCapsule ? T(0.5) * obj2.margin : T(0);
  const T keep = m2 + m1;
  T wit_dir[3], out[3];
  if (edgecon1) {  // face1 is an edge: clip it against face2, then swap the witnesses back
    scl(wit_dir, n2 + 3 * j, T(-1));
    copy(out, wit_dir);
    polygon_clip(w, face2, nface2, face1, nface1, n2 + 3 * j, wit_dir, keep);
    for (int k = 0; k < w->n; ++k) {
      T tmp[3];
      copy(tmp, w->x1 + 3 * k);
      copy(w->x1 + 3 * k, w->x2 + 3 * k);
      copy(w->x2 + 3 * k, tmp);
    }
  } else if (edgecon2) {
    scl(wit_dir, n1 + 3 * j, T(-1));
    copy(out, n1 + 3 * j);
    polygon_clip(w, face1, nface1, face2, nface2, n1 + 3 * j, wit_dir, keep);
  } else {
    copy(wit_dir, n2 + 3 * j);
    scl(out, n2 + 3 * j, T(-1));
    polygon_clip(w, face1, nface1, face2, nface2, n1 + 3 * i, wit_dir, keep);
  }
  if (w->n > 0 && (m1 != T(0) || m2 != T(0))) {  // MuJoCo's inflate
    const T sum = m1 + m2;
    for (int k = 0; k < w->n; ++k) {
      T* a = w->x1 + 3 * k;
      T* b = w->x2 + 3 * k;
      a[0] = m1 * out[0] + a[0], a[1] = m1 * out[1] + a[1], a[2] = m1 * out[2] + a[2];
      b[0] = -m2 * out[0] + b[0], b[1] = -m2 * out[1] + b[1], b[2] = -m2 * out[2] + b[2];
      w->dist[k] -= sum;
    }
  }
}

// The features of EPA's final face (its three vertices on each shape).
template <class T>
RLT_HD void face_features(Feature<T>* f1, Feature<T>* f2, const Polytope<T>& pt, int face) {
  const Face<T>& f = pt.faces[face];
  f1->n = f2->n = 3;
  for (int k = 0; k < 3; ++k) {
    const Vertex<T>& vx = pt.verts[f.verts[k]];
    f1->id[k] = vx.index1, f2->id[k] = vx.index2;
    v3::copy(f1->v + 3 * k, vx.vert1);
    v3::copy(f2->v + 3 * k, vx.vert2);
  }
}

// mjccd::ccd's after-EPA step that runs multicontact into w.
template <class T>
struct Multicontact {
  Witnesses<T>* w;
  RLT_HD void operator()(const Polytope<T>& pt, int face, const Status<T>& st, const GeomObj<T>& a,
                         const GeomObj<T>& b) const {
    Feature<T> f1, f2;
    face_features(&f1, &f2, pt, face);
    multicontact(w, f1, f2, st.x1, st.x2, a, b);
  }
};

// MuJoCo 3.17's mjc_Convex for the pairs it gives more than one contact (read from its library:
// mj_maxContact, mjc_ccd): max_contacts 4 for two of box, mesh and cylinder, 2 for a capsule with
// one of them (box-box and capsule-box have their own colliders). With nativeccd:
//   - a capsule, or a geom with a margin: GJK first on the cores (a capsule's segment, the other
//     shapes without margin), as distances up to the radii and half margins; apart by more than
//     ccd_tolerance, the witnesses moved out by them (inflate): a contact when that leaves them
//     overlapping, and multicontact from GJK's simplex;
//   - else (or deeper): GJK and EPA on the full shapes, each inflated by half the margin, and
//     multicontact from EPA's final face.
// Fills w with up to 4 witness pairs, their distances those of the inflated shapes (< 0 overlap);
// returns their count (0: apart). max_contacts 1 keeps the one contact.
template <class T>
RLT_HD int convex_multi(Witnesses<T>* w, GeomObj<T>& a, GeomObj<T>& b, int max_iterations, T tolerance,
                        int max_contacts) {
  Status<T> st{};  // value-initialized: the lambdas below capture it before GJK fills it (nvcc #549-D)
  w->n = 0;
  auto one = [&]() {  // the one witness pair in st
    if (!(st.dist < T(0)) || st.nx < 1) return 0;
    w->n = 1, w->dist[0] = st.dist;
    v3::copy(w->x1, st.x1), v3::copy(w->x2, st.x2);
    return 1;
  };
  auto min_negative = [&]() {  // multicontact's pairs, all of them when the deepest overlaps
    T min_dist = w->dist[0];
    for (int i = 1; i < w->n; ++i) min_dist = w->dist[i] < min_dist ? w->dist[i] : min_dist;
    if (!(min_dist < T(0))) w->n = 0;
    return w->n;
  };
  if (a.type == kGeomCapsule || b.type == kGeomCapsule || a.margin > T(0) || b.margin > T(0)) {
    const T margin_a = a.margin, margin_b = b.margin;
    T full_a = T(0.5) * margin_a, full_b = T(0.5) * margin_b;
    a.margin = b.margin = T(0);
    if (a.type == kGeomCapsule) a.core = true, full_a = full_a + a.size[0];
    if (b.type == kGeomCapsule) b.core = true, full_b = full_b + b.size[0];
    a.center(st.x1);
    b.center(st.x2);
    st.gjk_iterations = st.epa_iterations = 0;
    st.epa_status = -1;
    st.tolerance = tolerance;
    st.max_iterations = max_iterations < kMaxIterations ? max_iterations : kMaxIterations;
    st.dist_cutoff = T(0) + (full_a + full_b);
    st.nx = 0;
    gjk(&st, a, b);
    a.margin = margin_a, b.margin = margin_b;
    a.core = b.core = false;
    if (st.dist > tolerance) {  // apart: MuJoCo's inflate of the witness pair
      T nrm[3];
      v3::sub(nrm, st.x2, st.x1);
      const T len = v3::norm(nrm);
      if (len < T(1e-15)) {
        nrm[0] = T(1), nrm[1] = nrm[2] = T(0);
      } else {
        const T inv = T(1) / len;
        nrm[0] *= inv, nrm[1] *= inv, nrm[2] *= inv;
      }
      for (int k = 0; k < 3; ++k) {
        st.x1[k] = full_a * nrm[k] + st.x1[k];
        st.x2[k] = -full_b * nrm[k] + st.x2[k];
      }
      st.dist -= full_a + full_b;
      if (st.dist > T(0)) return 0;
      if (st.dist < T(0) && max_contacts >= 2 && st.nsimplex > 0) {
        Feature<T> f1, f2;
        f1.n = f2.n = st.nsimplex < 3 ? st.nsimplex : 3;
        for (int k = 0; k < f1.n; ++k) {
          f1.id[k] = st.simplex[k].index1, f2.id[k] = st.simplex[k].index2;
          v3::copy(f1.v + 3 * k, st.simplex[k].vert1);
          v3::copy(f2.v + 3 * k, st.simplex[k].vert2);
        }
        multicontact(w, f1, f2, st.x1, st.x2, a, b);
      }
      if (w->n > 0) return min_negative();
      return one();
    }
  }
  T dist;
  if (max_contacts >= 2) {
    dist = ccd(&st, a, b, max_iterations, tolerance, Multicontact<T>{w});
  } else {
    dist = ccd(&st, a, b, max_iterations, tolerance);
  }
  (void)dist;
  if (w->n == 0) return one();
  return min_negative();
}

}  // namespace rlt::mjccd
