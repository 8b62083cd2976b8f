// MJCF meshes (sim/mjcf_mesh.cpp): <asset><mesh> from binary STL, OBJ and inline data, compiled as
// MuJoCo 3. Expected values are MuJoCo 3.17's compiled model (python: mujoco.MjModel.from_xml_path
// on tests/data/mjcf/mesh_plane.xml and mesh_convex.xml); the trajectories are compared with
// MuJoCo 3 by tools/mujoco_peer.py (ctest mujoco_peer_mesh_plane, mujoco_peer_mesh_convex). Then
// every refusal of a mesh file: one message `file:line: mesh NAME: cannot read PATH: why`.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/libcxx_hash_order.h"
#include "sim/mjcf.h"
#include "tests/temp_dir.h"

namespace rlt {
namespace {

std::string data(const std::string& name) { return std::string(RLT_MJCF_DATA_DIR) + "/" + name; }

// Relative agreement with MuJoCo: the mesh inertia integrals are MuJoCo's own, in its order, so
// only the last bits may differ.
void expect_close(const std::vector<double>& ours, const std::vector<double>& mujoco, const char* what) {
  ASSERT_EQ(ours.size(), mujoco.size()) << what;
  for (size_t i = 0; i < ours.size(); ++i)
    EXPECT_NEAR(ours[i], mujoco[i], 1e-12 * (1 + std::abs(mujoco[i]))) << what << "[" << i << "]";
}

TEST(MjcfMesh, StlTetrahedronAndInlineWedgeAsMujoco) {
  const Model m = load_mjcf(data("mesh_plane.xml"));
  ASSERT_EQ(m.nmesh, 3);
  EXPECT_EQ(m.mesh_name, (std::vector<std::string>{"tetra", "mesh_cube", "wedge"}));  // unnamed: the file's stem
  EXPECT_EQ(m.mesh_vertnum, (std::vector<int>{4, 8, 6}));
  // only the tetrahedron collides, so only it has a hull (MuJoCo's needhull)
  EXPECT_EQ(m.mesh_graphadr, (std::vector<int>{0, -1, -1}));
  EXPECT_EQ(m.mesh_graph, (std::vector<int>{4, 4, 0,  4, 8, 12, 0,  3, 1, 2, 2, 3, 1, -1, 2, 3, 0, -1, 1,
                                            3, 0, -1, 1, 2, 0,  -1, 1, 3, 2, 0, 1, 2, 3,  0, 2, 0, 3,  1}));
  expect_close(m.body_mass, {0.0, 0.5985791829334258, 2.0000000894069694}, "body_mass");
  expect_close(m.body_inertia,
               {0.0, 0.0, 0.0, 0.001473941362330388, 0.001473903389858069, 0.0012928931011962285, 0.008888889551162746,
                0.008333333954215072, 0.0038888891786336994},
               "body_inertia");
  expect_close(m.geom_pos,
               {0.0, 0.0, 0.0, 1.1047642706682855e-18, 0.0, -4.245217532139809e-18, 0.01666666766007742,
                0.06666666766007741, 0.05000000074505807},
               "geom_pos");
  expect_close(m.geom_quat,
               {1.0, 0.0, 0.0, 0.0, 0.707106781186548, 0.0, 0.0, 0.707106781186548, 0.27059805007309906,
                0.6532814824381896, -0.27059805007309906, 0.6532814824381896},
               "geom_quat");
  expect_close(m.geom_size,
               {2.0, 2.0, 0.1, 0.10391999781131758, 0.12000000178813951, 0.14399999678134937, 0.05000000074505828,
                0.09428090556310167, 0.14142135834465253},
               "geom_size");
  EXPECT_EQ(m.geom_type[1], kGeomMesh);
  EXPECT_EQ(m.geom_dataid, (std::vector<int>{-1, 0, 2}));
}

TEST(MjcfMesh, ObjCubeOfQuadsAsMujoco) {
  const Model m = load_mjcf(data("mesh_convex.xml"));
  EXPECT_EQ(m.mesh_graphadr, (std::vector<int>{-1, 0, -1}));
  EXPECT_EQ(m.mesh_graph,
            (std::vector<int>{8, 12, 0,  6, 10, 16, 22, 27, 32, 37, 3, 2,  1, 0, 5,  4, 7, 6, 1, 2,  3, 6, 7, -1, 0,
                              2, 7,  -1, 0, 1,  3,  4,  7,  -1, 0,  2, 4,  5, 6, -1, 2, 3, 5, 7, -1, 4, 3, 6, 7,  -1,
                              0, 3,  5,  7, -1, 1,  2,  4,  0,  6,  5, -1, 3, 2, 1,  3, 1, 0, 1, 5,  0, 5, 4, 0,  7,
                              3, 0,  4,  7, 0,  2,  6,  1,  6,  5,  1, 3,  6, 2, 7,  6, 3, 5, 6, 4,  6, 7, 4}));
  expect_close(m.geom_pos, {0.0, 0.0, 0.0, 0.6, 0.0, 0.1, 0.0, 0.0, 0.0}, "geom_pos");
  expect_close(m.geom_quat, {1.0, 0.0, 0.0, 0.0, 0.984807753012208, 0.0, 0.0, 0.17364817766693033, 1.0, 0.0, 0.0, 0.0},
               "geom_quat");
  expect_close(m.geom_size, {2.0, 2.0, 0.1, 0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.05, 0, 0},
               "geom_size");
  EXPECT_EQ(m.mesh_facenum[1], 12);  // 6 quads split in two
}

// ---- refusals ----

class MeshFiles : public ::testing::Test {
 protected:
  // a directory of its own per test: ctest runs these tests in parallel, and each writes
  // mesh_model.xml (a shared temp folder let one test read another's half-written file)
  test::TempDir tmp{"rlt_mesh"};
  std::string dir = tmp.path();
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  }
  // The error of a model whose one mesh reads `file`.
  std::string error_for(const std::string& file) {
    const std::string xml =
        "<mujoco>\n  <asset>\n    <mesh name=\"m\" file=\"" + file +
        "\"/>\n  </asset>\n  <worldbody>\n    <geom type=\"mesh\" mesh=\"m\"/>\n  </worldbody>\n</mujoco>\n";
    const std::string path = write("mesh_model.xml", xml);
    try {
      load_mjcf(path);
    } catch (const MjcfError& e) {
      return e.what();
    }
    return "";
  }
  // The compiled model whose one mesh reads `file`.
  Model model_for(const std::string& file) {
    write("mesh_model.xml", "<mujoco>\n  <asset>\n    <mesh name=\"m\" file=\"" + file +
                                "\"/>\n  </asset>\n  <worldbody>\n    <geom type=\"mesh\" mesh=\"m\"/>\n"
                                "  </worldbody>\n</mujoco>\n");
    return load_mjcf(dir + "/mesh_model.xml");
  }
  std::string prefix(const std::string& file) {
    return dir + "/mesh_model.xml:3: mesh m: cannot read " + dir + "/" + file + ": ";
  }
};

TEST_F(MeshFiles, MissingFile) {
  const std::string msg = error_for("nowhere.stl");
  EXPECT_EQ(msg.rfind(prefix("nowhere.stl"), 0), 0u) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
}

TEST_F(MeshFiles, TruncatedStl) {
  std::ifstream in(data("mesh_tetra.stl"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 84u + 4 * 50);
  write("cut.stl", bytes.substr(0, bytes.size() - 7));
  const std::string msg = error_for("cut.stl");
  EXPECT_EQ(msg.rfind(prefix("cut.stl"), 0), 0u) << msg;
  EXPECT_NE(msg.find("wrong size"), std::string::npos) << msg;
  write("short.stl", bytes.substr(0, 40));
  EXPECT_NE(error_for("short.stl").find("truncated STL header"), std::string::npos);
}

TEST_F(MeshFiles, AsciiStlAndNonMeshFiles) {
  write("ascii.stl", "solid x\n  facet normal 0 0 1\n    outer loop\n      vertex 0 0 0\n" + std::string(100, ' '));
  EXPECT_NE(error_for("ascii.stl").find("ASCII STL is not supported"), std::string::npos) << error_for("ascii.stl");
  write("text.obj", "this is not a mesh\n");
  const std::string msg = error_for("text.obj");
  EXPECT_EQ(msg.rfind(prefix("text.obj"), 0), 0u) << msg;
  EXPECT_NE(msg.find("no vertices"), std::string::npos) << msg;
}

// OBJ files as tinyobjloader reads them for MuJoCo (sim/mjcf_mesh_file.cpp): quads split on their
// shorter diagonal, larger polygons triangulated, the first object's faces only. Expected faces:
// MuJoCo 3.17's mesh_face for the same files (python, mujoco.MjModel.from_xml_string).
TEST_F(MeshFiles, ObjFacesAsMujoco) {
  const std::string tail = "v 0 0 1\nf 1 2 5\nf 2 3 5\nf 3 4 5\nf 4 1 5\n";
  write("quad.obj", "v 0 0 0\nv 1 0 0\nv 3 3 0\nv 0 1 0\nv 0 0 1\nf 1 2 3 4\n" + tail);  // 1-3 is shorter
  EXPECT_EQ(model_for("quad.obj").mesh_face,
            (std::vector<int>{0, 1, 3, 1, 2, 3, 0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4}));
  write("pent.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nf 1 2 3 4 5\n");
  EXPECT_EQ(model_for("pent.obj").mesh_face, (std::vector<int>{1, 2, 3, 3, 4, 0, 0, 1, 3}));
  write("two.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\no a\nf 1 3 2\nf 1 2 4\no b\nf 1 4 3\nf 2 3 4\n");
  EXPECT_EQ(model_for("two.obj").mesh_face, (std::vector<int>{0, 2, 1, 0, 1, 3}));
  // tinyobjloader's number parsing: "1e-1", ".1" and "0.1" give the same mesh
  const std::string faces = "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";
  write("num.obj", "v 0 0 0\nv 1e-1 0 0\nv 0 .1 0\nv 0 0 0.1\n" + faces);
  write("plain.obj", "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\n" + faces);
  const Model num = model_for("num.obj");
  EXPECT_EQ(num.mesh_facenum[0], 4);
  EXPECT_EQ(num.mesh_vert, model_for("plain.obj").mesh_vert);
  // a vertex line with too few numbers: tinyobjloader fills in zeros, and MuJoCo loads it so
  write("short.obj", "v 0 0 0\nv 1 0\nv 0 1 0\nv 0 0 1\n" + faces);
  EXPECT_EQ(model_for("short.obj").mesh_vertnum[0], 4);
  // refusals: tinyobjloader's parse error, and a face index beyond the vertices (as MuJoCo: "in face
  // 3, vertex index 8 does not exist")
  write("badtok.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 2 3 x\n");
  std::string msg = error_for("badtok.obj");
  EXPECT_EQ(msg.rfind(prefix("badtok.obj"), 0), 0u) << msg;
  EXPECT_NE(msg.find("tinyobjloader: Failed parse `f' line"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;  // one line
  write("badidx.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 9\n");
  msg = error_for("badidx.obj");
  EXPECT_NE(msg.find("mesh m: in face 3, vertex index 8 does not exist"), std::string::npos) << msg;
}

// The libraries report through return values: nothing on stdout or stderr, for a file they read
// (assimp on the STL tetrahedron, tinyobjloader on an OBJ with a missing material file) or refuse.
TEST_F(MeshFiles, LibrariesPrintNothing) {
  std::ifstream in(data("mesh_tetra.stl"), std::ios::binary);
  write("t.stl", std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  write("mat.obj", "mtllib nowhere.mtl\nusemtl red\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\n"
                   "f 1 4 3\nf 2 3 4\n");
  write("bad.obj", "v 0 0 0\nf 1 2 x\n");
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(model_for("t.stl").mesh_vertnum[0], 4);
  EXPECT_EQ(model_for("mat.obj").mesh_facenum[0], 4);
  EXPECT_NE(error_for("bad.obj").find("tinyobjloader"), std::string::npos);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// MuJoCo's binary .msh: header int32 nvert, nnormal, ntexcoord, nface, then float32 vertices,
// normals, texture coordinates and int32 faces; MuJoCo's size checks, each refusal naming the file.
std::string msh(std::vector<std::int32_t> header, size_t payload_bytes) {
  std::string b(reinterpret_cast<const char*>(header.data()), 4 * header.size());
  return b + std::string(payload_bytes, '\0');
}

TEST_F(MeshFiles, MshRefusals) {
  auto expect = [&](const std::string& file, const std::string& bytes, const std::string& why) {
    write(file, bytes);
    const std::string msg = error_for(file);
    EXPECT_EQ(msg.rfind(prefix(file), 0), 0u) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
  };
  expect("empty.msh", "", "empty file");
  expect("short.msh", std::string(12, '\0'), "missing MSH header (12 bytes");
  expect("zeros.msh", std::string(64, '\0'), "invalid sizes in the MSH header (nvert 0");
  expect("normals.msh", msh({4, 3, 0, 1}, 4 * 12 + 3 * 12 + 12), "invalid sizes");  // normals: 0 or nvert
  expect("negative.msh", msh({4, 0, 0, -1}, 48), "invalid sizes");
  expect("huge.msh", msh({4, 0, 0, 0x7fffffff}, 48), "too large sizes");
  std::ifstream in(data("mesh_wedge.msh"), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(good.size(), 16u + 6 * (12 + 12 + 8) + 8 * 12);
  expect("cut.msh", good.substr(0, good.size() - 1), "wrong size for an MSH file of nvert 6, nnormal 6, ntexcoord 6, nface 8 (303 bytes, expected 304)");
  expect("long.msh", good + "x", "(305 bytes, expected 304)");
  write("x.ply", "ply\n");
  EXPECT_NE(error_for("x.ply").find("unknown mesh format \".ply\""), std::string::npos);
}

// tests/data/mjcf/mesh_msh.xml: the wedge from mesh_wedge.msh, and a mirrored copy (scale -1 1 1,
// whose faces MuJoCo keeps in the file's winding: LoadMSH and Process each flip them). Expected
// values: MuJoCo 3.17's compiled model of the same file.
TEST(MjcfMesh, MshWedgeAsMujoco) {
  const Model m = load_mjcf(data("mesh_msh.xml"));
  const std::vector<int> wedge = {0, 2, 1, 3, 4, 5, 0, 1, 4, 0, 4, 3, 0, 3, 5, 0, 5, 2, 1, 2, 5, 1, 5, 4};
  std::vector<int> both = wedge;
  both.insert(both.end(), wedge.begin(), wedge.end());
  EXPECT_EQ(m.mesh_face, both);
  expect_close(m.body_mass, {0.0, 1.6000000566244101, 2.0000000707805126}, "body_mass");
  expect_close(m.body_inertia,
               {0.0, 0.0, 0.0, 0.007111111905839727, 0.006666667200624951, 0.003111111247705089, 0.008888889882299657,
                0.008333334000781187, 0.0038888890596313615},
               "body_inertia");
  expect_close(m.geom_pos,
               {0.0, 0.0, 0.0, 0.07666666929920513, 0.04666666934887568, 0.07999999728053808, -0.07666666929920513,
                0.04666666934887568, 0.07999999728053808},
               "geom_pos");
  const std::vector<double> quat = {1.0, 0.0, 0.0, 0.0, 0.27059804703102025, 0.6532814836982599, -0.27059804703102025,
                                    0.6532814836982599, -0.27059804703102025, 0.6532814836982599, 0.27059804703102025,
                                    0.6532814836982599};
  ASSERT_EQ(m.geom_quat.size(), quat.size());
  for (size_t i = 0; i < quat.size(); ++i) EXPECT_NEAR(m.geom_quat[i], quat[i], 1e-6) << "geom_quat[" << i << "]";
}

// sim/libcxx_hash_order.h against libc++'s own std::unordered_map<std::pair<double, double>, int,
// PairHash> (MuJoCo's MakePolygons container; hash(first) ^ hash(second)): 151 keys drawn as rounded
// normal angles (theta in [-314, 314], phi in [0, 314]) by the LCG below, inserted in turn; the
// expected order was printed by that map built with clang++ -stdlib=libc++ (libc++ 14), which also
// matched this class on 2000 such sequences of 1 to 900 keys, bucket counts included.
TEST(LibcxxHashOrder, IteratesAsLibcxxUnorderedMap) {
  std::vector<std::pair<double, double>> keys;
  uint32_t s = 150;
  auto next = [&s]() {
    s = s * 1664525u + 1013904223u;
    return s >> 8;
  };
  for (int i = 0; i < 151; ++i) {
    const double theta = static_cast<double>(static_cast<int>(next() % 629) - 314);
    const double phi = static_cast<double>(next() % 315);
    keys.push_back({theta, phi});
  }
  std::set<std::pair<double, double>> seen;
  mjcf_detail::LibcxxHashOrder order;
  for (const auto& k : keys) {
    ASSERT_TRUE(seen.insert(k).second) << "the sequence has no repeated key";
    order.insert(mjcf_detail::libcxx_hash(k.first) ^ mjcf_detail::libcxx_hash(k.second));
  }
  EXPECT_EQ(order.bucket_count(), 197u);  // 2, 5, 11, 23, 47, 97, 197
  const std::vector<int> libcxx = {
      149, 147, 145, 143, 142, 141, 139, 137, 133, 131, 129, 128, 126, 125, 124, 148, 121, 120, 118, 115, 113, 110,
      108, 107, 106, 104, 103, 122, 102, 98,  97,  123, 111, 75,  93,  117, 100, 91,  90,  85,  101, 17,  84,  81,
      79,  77,  74,  70,  95,  68,  67,  3,   80,  64,  119, 27,  61,  105, 57,  92,  150, 109, 99,  83,  144, 69,
      82,  62,  112, 60,  132, 12,  63,  58,  56,  45,  55,  34,  72,  54,  140, 86,  96,  53,  52,  51,  59,  37,
      50,  48,  47,  43,  24,  42,  89,  7,   9,   66,  134, 31,  35,  49,  13,  136, 32,  36,  114, 28,  30,  78,
      29,  130, 26,  65,  39,  22,  25,  33,  23,  21,  6,   4,   20,  138, 19,  18,  40,  87,  116, 46,  71,  38,
      73,  76,  11,  2,   146, 88,  10,  16,  135, 8,   41,  5,   1,   94,  14,  127, 0,   15,  44};
  EXPECT_EQ(order.order(), libcxx);
  // libc++ hashes a double by its bits, both zeros alike (MuJoCo's angle keys can be -0.0)
  EXPECT_EQ(mjcf_detail::libcxx_hash(-0.0), 0u);
  EXPECT_EQ(mjcf_detail::libcxx_hash(0.0), 0u);
  EXPECT_EQ(mjcf_detail::libcxx_hash(1.0), 0x3ff0000000000000u);
}

// tests/data/mjcf/mesh_polygon_order.xml: the hull polygons (coplanar faces merged) in MuJoCo 3.17's
// order, which multicontact depends on (sim/multiccd.h takes the first aligned pair of faces): MuJoCo
// walks an unordered_map of libc++, its wheels' library (sim/libcxx_hash_order.h). prism7's 9
// polygons come in neither insertion order nor libstdc++'s map order; tetra_dimple's slanted face is
// three hull faces merged round a vertex 1e-6 above it, a triangle MuJoCo 3.17 winds outward.
// Expected: MuJoCo 3.17's mjModel of the same file (python: mujoco.MjModel.from_xml_path).
TEST(MjcfMesh, PolygonsInMujocoOrder) {
  const Model m = load_mjcf(data("mesh_polygon_order.xml"));
  EXPECT_EQ(m.mesh_polyadr, (std::vector<int>{0, 9}));
  EXPECT_EQ(m.mesh_polynum, (std::vector<int>{9, 4}));
  EXPECT_EQ(m.mesh_polyvertadr, (std::vector<int>{0, 7, 14, 18, 22, 26, 30, 34, 38, 42, 45, 48, 51}));
  EXPECT_EQ(m.mesh_polyvertnum, (std::vector<int>{7, 7, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3}));
  EXPECT_EQ(m.mesh_polyvert, (std::vector<int>{13, 12, 11, 10, 9,  8, 7, 2,  3, 4, 5,  6,  0, 1, 8, 1, 0,  7,
                                               6,  5,  12, 13, 12, 5, 4, 11, 4, 3, 10, 11, 2, 1, 8, 9, 10, 3,
                                               2,  9,  6,  13, 7,  0, 3, 2,  0, 1, 2,  3,  1, 3, 0, 2, 1,  0}));
  EXPECT_EQ(m.mesh_polymapadr,
            (std::vector<int>{0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54}));
  EXPECT_EQ(m.mesh_polymapnum, (std::vector<int>{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0}));
  EXPECT_EQ(m.mesh_polymap,
            (std::vector<int>{1, 2, 8, 1, 2, 6, 1, 6, 7, 1, 5, 7, 1, 4, 5, 1, 3, 4, 1, 3, 8, 0, 2, 8, 0, 2, 6,
                              0, 6, 7, 0, 5, 7, 0, 4, 5, 0, 3, 4, 0, 3, 8, 0, 2, 3, 1, 2, 3, 0, 1, 3, 0, 1, 2}));
  const std::vector<double> normal = {  // per polygon, compiled frame
      -1.0, 0.0, 0.0,  // prism7 0
      1.0, 3.962133192774295e-18, 0.0,  // prism7 1
      0.0, -0.900968870077583, -0.43388373460078383,  // prism7 2
      0.0, -0.2225208984622128, 0.97492792028312,  // prism7 3
      0.0, 0.6234898256794968, 0.7818314634716043,  // prism7 4
      0.0, 1.0, 0.0,  // prism7 5
      0.0, -0.2225208984622128, -0.97492792028312,  // prism7 6
      0.0, 0.6234898256794968, -0.7818314634716043,  // prism7 7
      0.0, -0.900968870077583, 0.43388373460078383,  // prism7 8
      -0.5773502691896257, 0.8164965809277259, -8.673617121390053e-17,  // tetra_dimple 0
      1.0, 0.0, 2.2079424871231455e-16,  // tetra_dimple 1
      -0.577350269189626, -0.40824829046386313, 0.7071067811865472,  // tetra_dimple 2
      -0.5773502691896258, -0.4082482904638629, -0.7071067811865475  // tetra_dimple 3
  };
  ASSERT_EQ(m.mesh_polynormal.size(), normal.size());
  for (size_t i = 0; i < normal.size(); ++i)  // Newell's normals in the compiled frame, to rounding
    EXPECT_NEAR(m.mesh_polynormal[i], normal[i], 1e-12) << "mesh_polynormal[" << i << "]";
}

TEST(MjcfMeshErrors, GeomNamesAMissingMesh) {
  try {
    parse_mjcf("<mujoco>\n<worldbody>\n<geom type='mesh' mesh='nope'/>\n</worldbody>\n</mujoco>", "g.xml");
    FAIL() << "accepted";
  } catch (const MjcfError& e) {
    EXPECT_EQ(std::string(e.what()), "g.xml:3: geom: mesh \"nope\" not found");
  }
}

TEST(MjcfMeshErrors, FlatMeshHasNoVolume) {
  try {  // 4 coplanar vertices: MuJoCo refuses the hull (and the volume)
    parse_mjcf(
        "<mujoco>\n<asset>\n<mesh name='flat' vertex='0 0 0 1 0 0 0 1 0 1 1 0'/>\n</asset>\n<worldbody>\n"
        "<geom type='mesh' mesh='flat'/>\n</worldbody>\n</mujoco>",
        "f.xml");
    FAIL() << "accepted";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("f.xml:3: mesh flat: mesh has coplanar vertices"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rlt
