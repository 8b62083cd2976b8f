// The convex collider (sim/convex.h) against closed forms, and cylinder/ellipsoid compiled masses
// and inertias against MuJoCo 3's formulas (issue 16, wp-mjcf-geoms).
#include <gtest/gtest.h>

#include <cmath>

#include "sim/convex.h"
#include "sim/mjcf.h"

namespace rlt {
namespace {

Mat3<double> mul(const Mat3<double>& a, const Mat3<double>& b) {
  Mat3<double> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      r.m[3 * i + j] = 0;
      for (int k = 0; k < 3; ++k) r.m[3 * i + j] += a.m[3 * i + k] * b.m[3 * k + j];
    }
  return r;
}
Mat3<double> eye() { return Mat3<double>{{1, 0, 0, 0, 1, 0, 0, 0, 1}}; }
Mat3<double> rot_xyz(double a, double b, double c) {  // R = Rx(a) Ry(b) Rz(c)
  const Mat3<double> rx{{1, 0, 0, 0, std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a)}};
  const Mat3<double> ry{{std::cos(b), 0, std::sin(b), 0, 1, 0, -std::sin(b), 0, std::cos(b)}};
  const Mat3<double> rz{{std::cos(c), -std::sin(c), 0, std::sin(c), std::cos(c), 0, 0, 0, 1}};
  return mul(mul(rx, ry), rz);
}

TEST(Convex, SphereSphereMatchesClosedForm) {
  const Mat3<double> I = eye();
  const convex::Shape<double> a{kGeomSphere, {0, 0, 0}, I, {0.3, 0, 0}, 0};
  const convex::Shape<double> b{kGeomSphere, {0.1, 0.2, 0.4}, I, {0.2, 0, 0}, 0};
  convex::Penetration<double> p;
  ASSERT_TRUE(convex::penetration(a, b, &p));
  const double d = std::sqrt(0.01 + 0.04 + 0.16);
  EXPECT_NEAR(p.depth, 0.5 - d, 1e-9);
  // EPA stops when the depth gains under 1e-10: on two curved surfaces the normal is then good to
  // ~sqrt(1e-10 / radius), ~1e-5 (the depth to 1e-10).
  EXPECT_NEAR(p.normal.z, 0.4 / d, 1e-4);
}

TEST(Convex, EllipsoidOnBoxDepthIsTheSupportPoint) {
  const Mat3<double> R = rot_xyz(0.3, 0.2, 0.1);
  const Vec3<double> s{0.1, 0.07, 0.12};
  const Vec3<double> c{0.01, 0.02, 0.31};
  const convex::Shape<double> egg{kGeomEllipsoid, c, R, s, 0};
  const convex::Shape<double> box{kGeomBox, {0, 0, 0.1}, eye(), {0.4, 0.4, 0.1}, 0};
  convex::Penetration<double> p;
  ASSERT_TRUE(convex::penetration(egg, box, &p));
  const Vec3<double> low = egg.support({0, 0, -1});
  EXPECT_NEAR(p.depth, 0.2 - low.z, 1e-9);
  EXPECT_NEAR(p.normal.z, -1, 1e-9);
  EXPECT_NEAR(p.pa.x, low.x, 1e-6);
  EXPECT_NEAR(p.pa.y, low.y, 1e-6);
  // apart: no contact
  const convex::Shape<double> high{kGeomEllipsoid, {0, 0, 0.5}, R, s, 0};
  EXPECT_FALSE(convex::penetration(high, box, &p));
}

TEST(Convex, CylinderOnBoxSideways) {
  // a cylinder lying along x on a box top, 1 mm into it
  const Mat3<double> R = rot_xyz(0, M_PI / 2, 0);
  const convex::Shape<double> cyl{kGeomCylinder, {0, 0, 0.2 + 0.05 - 0.001}, R, {0.05, 0.2, 0}, 0};
  const convex::Shape<double> box{kGeomBox, {0, 0, 0.1}, eye(), {0.4, 0.4, 0.1}, 0};
  convex::Penetration<double> p;
  ASSERT_TRUE(convex::penetration(cyl, box, &p));
  EXPECT_NEAR(p.depth, 0.001, 1e-9);
  EXPECT_NEAR(p.normal.z, -1, 1e-9);
}

TEST(Convex, CompiledCylinderEllipsoidInertia) {
  const Model m = parse_mjcf(R"(<mujoco><worldbody>
    <body name="c"><freejoint/><geom type="cylinder" size="0.1 0.2" density="500"/></body>
    <body name="e"><freejoint/><geom type="ellipsoid" size="0.1 0.2 0.3"/></body>
    <body name="f"><freejoint/><geom type="cylinder" fromto="0 0 0 0.3 0 0.4" size="0.05" mass="2"/></body>
  </worldbody></mujoco>)",
                             "inline.xml");
  const double mc = 500 * M_PI * 0.01 * 0.4;
  EXPECT_NEAR(m.body_mass[1], mc, 1e-12);
  EXPECT_NEAR(m.body_inertia[3 * 1 + 2], mc * 0.01 / 2, 1e-12);
  const double me = 1000 * 4 * M_PI * 0.1 * 0.2 * 0.3 / 3;
  EXPECT_NEAR(m.body_mass[2], me, 1e-12);
  EXPECT_NEAR(m.geom_size[3 * 2 + 1], 0.25, 1e-12);  // fromto: half-length
  EXPECT_NEAR(m.body_mass[3], 2, 1e-12);
}

}  // namespace
}  // namespace rlt
