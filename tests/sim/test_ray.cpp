// Ray casting (sim/ray.h, MuJoCo 3's engine_ray.c) against analytic distances: each primitive from
// outside, from inside, past its edge and from behind, in double and float; mesh triangles and a
// height field's surface, base and walls on compiled MJCF; the filters of ray_cast (the excluded
// body, geoms hidden by rgba or material alpha); the MJCF refusals of rangefinders. The sensor's
// agreement with MuJoCo 3 over a moving scanner is sensor_peer_rangefinder.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <string>

#include "sim/mjcf.h"
#include "sim/ray.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {

// Tolerances: the closed forms below and MuJoCo's quadratic / plane solutions round differently,
// by a few ulps of the distance (double), or of float (float; about 1e-7 relative at ~1 m).
template <class T>
double tol() {
  return sizeof(T) == 8 ? 1e-12 : 2e-6;
}

// Row-major rotation of `angle` about axis 0 (x), 1 (y) or 2 (z).
template <class T>
void rot(int axis, double angle, T* mat) {
  const double c = std::cos(angle), s = std::sin(angle);
  double r[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const int a = (axis + 1) % 3, b = (axis + 2) % 3;
  r[3 * a + a] = c, r[3 * a + b] = -s, r[3 * b + a] = s, r[3 * b + b] = c;
  for (int k = 0; k < 9; ++k) mat[k] = static_cast<T>(r[k]);
}

using A3 = std::array<double, 3>;

template <class T>
T cast(int type, const A3& pos3, const T* mat, const A3& size3, const A3& pnt3, const A3& vec3) {
  const T pos[3] = {T(pos3[0]), T(pos3[1]), T(pos3[2])}, size[3] = {T(size3[0]), T(size3[1]), T(size3[2])};
  const T pnt[3] = {T(pnt3[0]), T(pnt3[1]), T(pnt3[2])}, vec[3] = {T(vec3[0]), T(vec3[1]), T(vec3[2])};
  return ray_geom_local(pos, mat, size, pnt, vec, type);
}

template <class T>
class RayPrimitive : public ::testing::Test {};
using RealTypes = ::testing::Types<double, float>;
TYPED_TEST_SUITE(RayPrimitive, RealTypes);

TYPED_TEST(RayPrimitive, Plane) {
  using T = TypeParam;
  T eye[9];
  rot(0, 0.0, eye);
  const A3 o = {0, 0, 0}, inf = {0, 0, 1}, finite = {1, 0.5, 1};
  // distances in units of |vec|: 3 m down at 2 m per unit
  EXPECT_NEAR(cast<T>(kGeomPlane, o, eye, inf, {1, 2, 3}, {0, 0, -2}), 1.5, tol<T>());
  // slanted: from (0, 0, 1) along (1, 0, -1): hits (1, 0, 0) at x = 1
  EXPECT_NEAR(cast<T>(kGeomPlane, o, eye, inf, {0, 0, 1}, {1, 0, -1}), 1, tol<T>());
  // from behind, or parallel, or pointing away: no hit (only the front face)
  EXPECT_EQ(cast<T>(kGeomPlane, o, eye, inf, {0, 0, -1}, {0, 0, 1}), T(-1));
  EXPECT_EQ(cast<T>(kGeomPlane, o, eye, inf, {0, 0, 1}, {1, 0, 0}), T(-1));
  EXPECT_EQ(cast<T>(kGeomPlane, o, eye, inf, {0, 0, 1}, {0, 0, 1}), T(-1));
  // a finite plane: only within its rectangle (half sizes 1 x 0.5)
  EXPECT_NEAR(cast<T>(kGeomPlane, o, eye, finite, {0.9, 0.4, 1}, {0, 0, -1}), 1,
              tol<T>());
  EXPECT_EQ(cast<T>(kGeomPlane, o, eye, finite, {0.9, 0.6, 1}, {0, 0, -1}), T(-1));
  // turned 90 degrees about y: its normal is +x (mat's third column)
  T roty[9];
  rot(1, M_PI / 2, roty);
  EXPECT_NEAR(cast<T>(kGeomPlane, {1, 0, 0}, roty, inf, {3, 0.3, -2},
                      {-1, 0, 0}),
              2, tol<T>());
}

TYPED_TEST(RayPrimitive, Sphere) {
  using T = TypeParam;
  T eye[9];
  rot(0, 0.0, eye);
  const A3 c = {1, 0, 0}, r = {0.5, 0, 0};
  EXPECT_NEAR(cast<T>(kGeomSphere, c, eye, r, {-2, 0, 0}, {1, 0, 0}), 2.5, tol<T>());
  // off-centre by 0.3: the chord's half length is 0.4
  EXPECT_NEAR(cast<T>(kGeomSphere, c, eye, r, {-2, 0.3, 0}, {1, 0, 0}), 2.6, tol<T>());
  // from inside: the far side
  EXPECT_NEAR(cast<T>(kGeomSphere, c, eye, r, {1, 0, 0}, {0, 0, 1}), 0.5, tol<T>());
  EXPECT_EQ(cast<T>(kGeomSphere, c, eye, r, {-2, 0.6, 0}, {1, 0, 0}), T(-1));
  EXPECT_EQ(cast<T>(kGeomSphere, c, eye, r, {-2, 0, 0}, {-1, 0, 0}), T(-1));
}

TYPED_TEST(RayPrimitive, Capsule) {
  using T = TypeParam;
  T roty[9];
  rot(1, M_PI / 2, roty);  // the capsule's axis (z) along world x
  const A3 o = {0, 0, 0}, s = {0.2, 0.5, 0};
  // along the axis: the end cap's pole at x = -0.7
  EXPECT_NEAR(cast<T>(kGeomCapsule, o, roty, s, {-2, 0, 0}, {1, 0, 0}), 1.3, tol<T>());
  // across the cylinder part
  EXPECT_NEAR(cast<T>(kGeomCapsule, o, roty, s, {0.3, -1, 0}, {0, 1, 0}), 0.8,
              tol<T>());
  // across the end cap, 0.1 past the cylinder part: the cap's chord half length sqrt(0.04 - 0.01)
  EXPECT_NEAR(cast<T>(kGeomCapsule, o, roty, s, {0.6, -1, 0}, {0, 1, 0}),
              1 - std::sqrt(0.03), tol<T>());
  EXPECT_EQ(cast<T>(kGeomCapsule, o, roty, s, {0.75, -1, 0}, {0, 1, 0}), T(-1));
  // from inside: out through the side
  EXPECT_NEAR(cast<T>(kGeomCapsule, o, roty, s, {0.1, 0, 0}, {0, 0, 1}), 0.2, tol<T>());
}

TYPED_TEST(RayPrimitive, Ellipsoid) {
  using T = TypeParam;
  T eye[9], rotz[9];
  rot(0, 0.0, eye);
  rot(2, M_PI / 2, rotz);
  const A3 o = {0, 0, 0}, s = {0.3, 0.2, 0.1};
  EXPECT_NEAR(cast<T>(kGeomEllipsoid, o, eye, s, {0, 0, 2}, {0, 0, -1}), 1.9, tol<T>());
  EXPECT_NEAR(cast<T>(kGeomEllipsoid, o, eye, s, {-1, 0, 0}, {1, 0, 0}), 0.7, tol<T>());
  // half-way out along x the surface is at z = 0.1 sqrt(3/4)
  EXPECT_NEAR(cast<T>(kGeomEllipsoid, o, eye, s, {0.15, 0, 2}, {0, 0, -1}),
              2 - 0.1 * std::sqrt(0.75), tol<T>());
  // turned 90 degrees about z: its 0.2 axis along world x
  EXPECT_NEAR(cast<T>(kGeomEllipsoid, o, rotz, s, {-1, 0, 0}, {1, 0, 0}), 0.8,
              tol<T>());
  EXPECT_EQ(cast<T>(kGeomEllipsoid, o, eye, s, {0.31, 0, 2}, {0, 0, -1}), T(-1));
}

TYPED_TEST(RayPrimitive, Cylinder) {
  using T = TypeParam;
  T eye[9];
  rot(0, 0.0, eye);
  const A3 o = {0, 0, 0}, s = {0.2, 0.5, 0};
  EXPECT_NEAR(cast<T>(kGeomCylinder, o, eye, s, {0.1, 0, 2}, {0, 0, -1}), 1.5,
              tol<T>());  // the flat top
  EXPECT_NEAR(cast<T>(kGeomCylinder, o, eye, s, {-1, 0, 0.4}, {1, 0, 0}), 0.8,
              tol<T>());  // the round side
  // slanted onto the rim: from (-1, 0, 1) along (1, 0, -1) meets x = -0.2 at z = 0.2 (side)
  EXPECT_NEAR(cast<T>(kGeomCylinder, o, eye, s, {-1, 0, 1}, {1, 0, -1}), 0.8,
              tol<T>());
  // from (-0.5, 0, 1) along (1, 0, -1): the top (z = 0.5) at x = 0, inside the radius
  EXPECT_NEAR(cast<T>(kGeomCylinder, o, eye, s, {-0.5, 0, 1}, {1, 0, -1}), 0.5,
              tol<T>());
  EXPECT_EQ(cast<T>(kGeomCylinder, o, eye, s, {0.25, 0, 2}, {0, 0, -1}), T(-1));
  EXPECT_EQ(cast<T>(kGeomCylinder, o, eye, s, {-1, 0, 0.6}, {1, 0, 0}), T(-1));
  // from inside: out through the top
  EXPECT_NEAR(cast<T>(kGeomCylinder, o, eye, s, {0, 0, 0}, {0, 0, 1}), 0.5, tol<T>());
}

TYPED_TEST(RayPrimitive, Box) {
  using T = TypeParam;
  T rotz[9];
  rot(2, M_PI / 2, rotz);  // half sizes 0.1 0.2 0.3: 0.2 along world x, 0.1 along world y
  const A3 c = {0, 0, 1}, s = {0.1, 0.2, 0.3};
  EXPECT_NEAR(cast<T>(kGeomBox, c, rotz, s, {-1, 0, 1}, {1, 0, 0}), 0.8, tol<T>());
  EXPECT_NEAR(cast<T>(kGeomBox, c, rotz, s, {0, -1, 1.2}, {0, 1, 0}), 0.9, tol<T>());
  EXPECT_NEAR(cast<T>(kGeomBox, c, rotz, s, {0.15, 0.05, 3}, {0, 0, -1}), 1.7,
              tol<T>());
  // from inside: the exit face
  EXPECT_NEAR(cast<T>(kGeomBox, c, rotz, s, {0, 0, 1}, {0, 0, 1}), 0.3, tol<T>());
  EXPECT_EQ(cast<T>(kGeomBox, c, rotz, s, {0.25, 0, 3}, {0, 0, -1}), T(-1));
  // every face crossed: entering -x at 0.8, leaving +x at 1.2
  T eye[9];
  rot(0, 0.0, eye);
  const T pos[3] = {0, 0, 1}, size[3] = {T(0.2), T(0.1), T(0.3)}, pnt[3] = {-1, 0, 1}, vec[3] = {1, 0, 0};
  T all[6];
  EXPECT_NEAR(ray_detail::ray_box(pos, eye, size, pnt, vec, all), 0.8, tol<T>());
  EXPECT_NEAR(all[0], 0.8, tol<T>());
  EXPECT_NEAR(all[1], 1.2, tol<T>());
  for (int k = 2; k < 6; ++k) EXPECT_EQ(all[k], T(-1)) << k;
}

// Surface normals (MuJoCo 3's mj_ray normal): analytic ones of a primitive of each kind, world frame,
// and 0 on a miss.
TYPED_TEST(RayPrimitive, SurfaceNormals) {
  using T = TypeParam;
  T mat[9];
  rot(2, 0.5, mat);  // turned 0.5 rad about z
  const T c = T(std::cos(0.5)), s = T(std::sin(0.5));
  auto normal_of = [&](int type, const A3& size3, const A3& pnt3, const A3& vec3, T* n) {
    const T pos[3] = {T(1), T(0), T(0)}, size[3] = {T(size3[0]), T(size3[1]), T(size3[2])};
    const T pnt[3] = {T(pnt3[0]), T(pnt3[1]), T(pnt3[2])}, vec[3] = {T(vec3[0]), T(vec3[1]), T(vec3[2])};
    return ray_geom_local(pos, mat, size, pnt, vec, type, n);
  };
  T n[3];
  // sphere (radius 0.5 at (1, 0, 0)) met by a ray along x at height 0.5 / sqrt(2): 45 degrees up its side
  const double h = 0.5 / std::sqrt(2.0);
  ASSERT_GE(normal_of(kGeomSphere, {0.5, 0, 0}, {-1, 0, h}, {2, 0, 0}, n), 0);
  EXPECT_NEAR(n[0], -std::sqrt(0.5), tol<T>());
  EXPECT_NEAR(n[1], 0, tol<T>());
  EXPECT_NEAR(n[2], std::sqrt(0.5), tol<T>());
  // box (half sizes 0.2 0.3 0.4) from below: the -z face
  ASSERT_GE(normal_of(kGeomBox, {0.2, 0.3, 0.4}, {1, 0, -2}, {0, 0, 1}, n), 0);
  EXPECT_NEAR(n[0], 0, tol<T>());
  EXPECT_NEAR(n[1], 0, tol<T>());
  EXPECT_NEAR(n[2], -1, tol<T>());
  // box from -x in the world: the face whose local normal is -x after the turn (mat times (-1, 0, 0))
  ASSERT_GE(normal_of(kGeomBox, {0.2, 0.2, 0.4}, {-2, 0, 0}, {1, 0, 0}, n), 0);
  EXPECT_NEAR(n[0], -c, tol<T>());
  EXPECT_NEAR(n[1], -s, tol<T>());
  EXPECT_NEAR(n[2], 0, tol<T>());
  // cylinder (radius 0.3, half height 0.5) from above: its top cap; from the side: radial, z = 0
  ASSERT_GE(normal_of(kGeomCylinder, {0.3, 0.5, 0}, {1.1, 0, 3}, {0, 0, -1}, n), 0);
  EXPECT_NEAR(n[2], 1, tol<T>());
  ASSERT_GE(normal_of(kGeomCylinder, {0.3, 0.5, 0}, {3, 0, 0.2}, {-1, 0, 0}, n), 0);
  EXPECT_NEAR(n[0], 1, tol<T>());
  EXPECT_NEAR(n[2], 0, tol<T>());
  // capsule (radius 0.1, half length 0.5) from above: the top cap's pole
  ASSERT_GE(normal_of(kGeomCapsule, {0.1, 0.5, 0}, {1, 0, 3}, {0, 0, -1}, n), 0);
  EXPECT_NEAR(n[2], 1, tol<T>());
  // plane: its z axis; a miss: 0
  ASSERT_GE(normal_of(kGeomPlane, {0, 0, 0}, {0, 0, 2}, {0.1, 0, -1}, n), 0);
  EXPECT_NEAR(n[2], 1, tol<T>());
  EXPECT_LT(normal_of(kGeomSphere, {0.5, 0, 0}, {-2, 3, 0}, {1, 0, 0}, n), 0);
  EXPECT_EQ(n[0], 0);
  EXPECT_EQ(n[1], 0);
  EXPECT_EQ(n[2], 0);
}

TEST(Ray, TriangleInsideOutsideAndBehind) {
  const double v[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const double vec[3] = {0, 0, -1};
  double b0[3], b1[3];
  ray_detail::normal_plane_basis(vec, b0, b1);
  const double in[3] = {0.2, 0.3, 2}, out[3] = {0.6, 0.6, 2}, below[3] = {0.2, 0.3, -1};
  EXPECT_NEAR(ray_detail::ray_triangle(v, in, vec, b0, b1), 2, 1e-15);
  EXPECT_EQ(ray_detail::ray_triangle(v, out, vec, b0, b1), -1);
  EXPECT_LT(ray_detail::ray_triangle(v, below, vec, b0, b1), 0);  // behind the origin: negative
  // the basis is orthonormal and normal to the ray
  EXPECT_NEAR(ray_detail::dot3(b0, b1), 0, 1e-15);
  EXPECT_NEAR(ray_detail::dot3(b0, vec), 0, 1e-15);
  EXPECT_NEAR(ray_detail::dot3(b1, b1), 1, 1e-15);
}

// A compiled model at qpos0 with its kinematics done, and a ray cast on it.
struct Scene {
  explicit Scene(const std::string& xml) : model(parse_mjcf(xml, "/tmp/rlt_ray_test.xml")), sim(model) {
    kinematics(sim.m(), sim.d);
  }
  double cast(std::initializer_list<double> p, std::initializer_list<double> v, int exclude = -1,
              int* geom = nullptr) {
    double pnt[3], vec[3];
    std::copy(p.begin(), p.end(), pnt);
    std::copy(v.begin(), v.end(), vec);
    return ray_cast(sim.m(), sim.d, pnt, vec, exclude, geom);
  }
  Model model;
  test::Sim<double> sim;
};

TEST(Ray, MeshTrianglesNotHull) {
  // An L-shaped prism (concave; extruded along z from -0.1 to 0.1): the ray down the notch passes
  // the hull but misses the triangles.
  Scene s(R"(<mujoco><asset><mesh name="l" vertex="
      0 0 -0.1  1 0 -0.1  1 0.4 -0.1  0.4 0.4 -0.1  0.4 1 -0.1  0 1 -0.1
      0 0 0.1  1 0 0.1  1 0.4 0.1  0.4 0.4 0.1  0.4 1 0.1  0 1 0.1"
      face="0 2 1  0 3 2  0 5 3  3 5 4  6 7 8  6 8 9  6 9 11  9 10 11
            0 1 7  0 7 6  1 2 8  1 8 7  2 3 9  2 9 8  3 4 10  3 10 9  4 5 11  4 11 10  5 0 6  5 6 11"/></asset>
      <worldbody><geom name="l" type="mesh" mesh="l" contype="0" conaffinity="0"/></worldbody></mujoco>)");
  // The mesh is moved to its centre of mass and principal axes, the geom frame with it, so world
  // coordinates are those of the file, to the float rounding of the vertices in the mesh frame
  // (MuJoCo's mesh_vert is float): 1e-7 m. Down onto the arm: the top face at z = 0.1.
  const double tol = 1e-7;
  int g = -2;
  EXPECT_NEAR(s.cast({0.2, 0.7, 1}, {0, 0, -1}, -1, &g), 0.9, tol);
  EXPECT_EQ(g, 0);
  EXPECT_NEAR(s.cast({0.8, 0.2, 1}, {0, 0, -2}), 0.45, tol);
  // into the notch (inside the hull): nothing
  EXPECT_EQ(s.cast({0.7, 0.7, 1}, {0, 0, -1}, -1, &g), -1);
  EXPECT_EQ(g, -1);
  // sideways through the notch into the inner wall x = 0.4
  EXPECT_NEAR(s.cast({2, 0.7, 0}, {-1, 0, 0}), 1.6, tol);
}

TEST(Ray, HeightFieldSurfaceBaseAndWalls) {
  // 2 x 2 grid: elevation 1 at y = -1 (the text's last row) and 0 at y = +1, so the surface is
  // z = 0.25 (1 - y) over [-1, 1]^2; the base is 0.2 deep.
  Scene s(R"(<mujoco><asset><hfield name="h" nrow="2" ncol="2" size="1 1 0.5 0.2" elevation="0 0  1 1"/></asset>
      <worldbody><geom type="hfield" hfield="h"/></worldbody></mujoco>)");
  EXPECT_NEAR(s.cast({0.3, 0, 2}, {0, 0, -1}), 1.75, 1e-12);         // the surface
  EXPECT_NEAR(s.cast({-0.7, -0.6, 2}, {0, 0, -1}), 1.6, 1e-12);      // the surface, the other triangle
  EXPECT_NEAR(s.cast({0, 0, -1}, {0, 0, 1}), 0.8, 1e-12);            // the base's bottom
  EXPECT_NEAR(s.cast({-2, -0.5, 0.1}, {1, 0, 0}), 1, 1e-12);         // the wall x = -1 below the edge
  EXPECT_NEAR(s.cast({0, -3, 0.2}, {0, 1, 0}), 2, 1e-12);            // the wall y = -1 (surface 0.5 there)
  EXPECT_NEAR(s.cast({-2, 0, -0.1}, {1, 0, 0}), 1, 1e-12);           // the base's side
  EXPECT_EQ(s.cast({-2, 0.8, 0.1}, {1, 0, 0}), -1);                  // over the surface (0.05 there)
  // slanted onto the slope: from (0, 1, 1) along (0, -1, -1) meets z = 0.25 (1 - y) at y = 0.2
  EXPECT_NEAR(s.cast({0, 1, 1}, {0, -1, -1}), 0.8, 1e-12);
}

TEST(Ray, CastSkipsTheExcludedBodyAndHiddenGeoms) {
  Scene s(R"(<mujoco>
      <asset><material name="clear" rgba="1 1 1 0"/><material name="solid" rgba="1 1 1 0.3"/></asset>
      <worldbody>
        <geom name="far" type="box" size="0.1 1 1" pos="3 0 0"/>
        <geom name="ghost" type="box" size="0.1 1 1" pos="1 0 0" rgba="1 0 0 0"/>
        <geom name="ghost_mat" type="box" size="0.1 1 1" pos="1.5 0 0" material="clear"/>
        <body name="b" pos="2 0 0"><geom name="near" type="sphere" size="0.2"/></body>
        <geom name="glass" type="box" size="1 1 0.1" pos="0 0 3" material="solid" rgba="1 1 1 0"/>
      </worldbody></mujoco>)");
  ASSERT_EQ(s.model.geom_invisible.size(), 5u);
  // the world's geoms first (far, ghost, ghost_mat, glass), then body b's (near)
  EXPECT_EQ(s.model.geom_invisible[1], 1);
  EXPECT_EQ(s.model.geom_invisible[2], 1);
  EXPECT_EQ(s.model.geom_invisible[3], 0);  // a visible material overrides the geom's alpha
  int g = -2;
  EXPECT_NEAR(s.cast({0, 0, 0}, {1, 0, 0}, -1, &g), 1.8, 1e-12);  // the ghosts skipped: the sphere
  EXPECT_EQ(g, 4);
  EXPECT_NEAR(s.cast({0, 0, 0}, {1, 0, 0}, 1, &g), 2.9, 1e-12);  // body b excluded: the far wall
  EXPECT_EQ(g, 0);
  EXPECT_NEAR(s.cast({0, 0, 0}, {1, 0, 0}, 0, &g), 1.8, 1e-12);  // the world excluded: its geoms too
  EXPECT_EQ(g, 4);
  EXPECT_NEAR(s.cast({0, 0, 0}, {0, 0, 1}), 2.9, 1e-12);  // the glass
  EXPECT_EQ(s.cast({0, 0, 0}, {-1, 0, 0}, -1, &g), -1);
  EXPECT_EQ(g, -1);
}

std::string error_of(const std::string& sensor) {
  try {
    parse_mjcf("<mujoco><worldbody><body><freejoint/><geom size='0.1'/><site name='s'/></body></worldbody><sensor>" +
                   sensor + "</sensor></mujoco>",
               "/tmp/rlt_ray_test.xml");
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

TEST(Ray, RangefinderRefusals) {
  EXPECT_EQ(error_of("<rangefinder site='s' cutoff='2' noise='0.1' data='dist'/>"), "");
  EXPECT_NE(error_of("<rangefinder camera='c'/>").find("camera rangefinders are not supported"), std::string::npos);
  EXPECT_EQ(error_of("<rangefinder site='s' data='dist normal'/>"), "");
  EXPECT_EQ(error_of("<rangefinder site='s' data='dist dir origin point depth'/>"), "");
  EXPECT_NE(error_of("<rangefinder/>").find("attribute \"site\" is required"), std::string::npos);
  EXPECT_NE(error_of("<rangefinder site='nope'/>").find("unknown object"), std::string::npos);
  EXPECT_NE(error_of("<rangefinder site='s' cutoff='-1'/>").find("non-negative"), std::string::npos);
  EXPECT_NE(error_of("<rangefinder site='s' delay='0.1'/>").find("delay"), std::string::npos);
}

TEST(Ray, GeomWithUnknownMaterialIsRefused) {
  std::string what;
  try {
    parse_mjcf("<mujoco><worldbody><geom size='0.1' material='m'/></worldbody></mujoco>", "/tmp/rlt_ray_test.xml");
  } catch (const MjcfError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("material \"m\" not found"), std::string::npos) << what;
}

}  // namespace
}  // namespace rlt
