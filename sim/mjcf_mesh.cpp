// MJCF compiler, meshes (sim/mjcf_compiler.h): <asset><mesh> (files read by sim/mjcf_mesh_file.cpp,
// inline vertex/face), compiled as MuJoCo 3's mjCMesh (src/user/user_mesh.cc): the convex hull (qhull, the
// same options and graph layout, built when a colliding geom uses the mesh or inertia="convex"),
// scale / refpos / refquat, the volume, centre of mass and inertia per the mesh's inertia mode
// (legacy, the default; convex; exact; shell), its principal axes (MuJoCo 3.17's Jacobi mjuu_eig3
// with its mesh tolerance, sim/mjcf_user_math.h, so that the frame and its signs are MuJoCo's), the
// vertices moved to that frame and rounded to float. A mesh geom takes the mesh's frame into its own
// pos/quat, its size from the mesh's bounds, its mass and inertia from the mesh's volume and
// equivalent inertia box.
#include <libqhull_r/qhull_ra.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "sim/libcxx_hash_order.h"
#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

namespace {

// Area of triangle (v1, v2, v3), its unit normal and centre (MuJoCo's `triangle`): 0 below mjMINVAL.
double triangle(double* normal, double* center, const double* v1, const double* v2, const double* v3) {
  double local[3];
  double* n = normal ? normal : local;
  if (center) {
    for (int k = 0; k < 3; ++k) center[k] = (v1[k] + v2[k] + v3[k]) / 3;
  }
  const double b[3] = {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]};
  const double c[3] = {v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2]};
  n[0] = b[1] * c[2] - b[2] * c[1];
  n[1] = b[2] * c[0] - b[0] * c[2];
  n[2] = b[0] * c[1] - b[1] * c[0];
  const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (len < kMinVal) return 0;
  if (normal) {
    for (int k = 0; k < 3; ++k) normal[k] /= len;
  }
  return 0.5 * len;
}

// MuJoCo's mjuu_normvec, mjuu_quat2mat, mjuu_mulquat (sim/mjcf_user_math.h); mjuu_mulvecmat (mat * vec)
// and mjuu_mulvecmatT (mat' * vec).
using mjuu::mulquat;
using mjuu::normvec;
using mjuu::quat2mat;

void mulvecmat(double* res, const double* v, const double* m) {
  const double t[3] = {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
                       m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
  std::copy_n(t, 3, res);
}
void mulvecmatT(double* res, const double* v, const double* m) {
  const double t[3] = {m[0] * v[0] + m[3] * v[1] + m[6] * v[2], m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
                       m[2] * v[0] + m[5] * v[1] + m[8] * v[2]};
  std::copy_n(t, 3, res);
}

std::string file_stem(const std::string& path) {
  const auto slash = path.find_last_of("/\\");
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

}  // namespace

// ---- reading ----

void MjcfCompiler::read_mesh_attrs(Attrs& a, MeshSpec* s) {
  a.numbers("scale", s->scale, 3, 3);
  if (const int k = a.keyword("inertia", {"convex", "exact", "legacy", "shell"}); k >= 0) s->inertia = k;
  if (a.integer("maxhullvert", &s->maxhullvert) && s->maxhullvert != -1 && s->maxhullvert < 4)
    a.fail("attribute \"maxhullvert\" must be larger than 3");
  a.ignore({"smoothnormal", "material"});  // visual
}

void MjcfCompiler::read_assets(const XMLElement* section) {
  {
    Attrs a(m_file, section);
    a.finish();
  }
  for (const XMLElement* c = section->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string n = c->Name();
    if (n == "mesh") read_mesh(c);
    else if (n == "hfield") continue;  // read_hfields (sim/mjcf_hfield.cpp)
    else if (n == "material") read_material_alpha(c);
    else if (n == "texture" || n == "skin" || n == "model") continue;  // visual
    else unsupported_element(c, "mesh, hfield; ignored: texture, material, skin, model");
  }
}

// A material's alpha (its own rgba, else its class's <default><material>, else 1): MuJoCo's mj_ray
// skips the geoms of a transparent material (geom_invisible). Its other attributes are visual.
void MjcfCompiler::read_material_alpha(const XMLElement* e) {
  Attrs a(m_file, e);
  const auto name = a.text("name");
  if (!name) return;  // no geom can name it
  double rgba[4];
  std::copy_n(find_class(a, a.text("class").value_or("main")).material_rgba, 4, rgba);
  a.numbers("rgba", rgba, 4, 4);
  m_material_alpha[*name] = rgba[3];
}

void MjcfCompiler::read_mesh(const XMLElement* e) {
  Attrs a(m_file, e);
  MeshAsset mesh;
  mesh.elem = e;
  mesh.spec = find_class(a, a.text("class").value_or("main")).mesh;
  read_mesh_attrs(a, &mesh.spec);
  mesh.file = a.text("file").value_or("");
  if (const auto v = a.list("vertex")) {
    if (v->size() % 3) a.fail("attribute \"vertex\": the number of values must be a multiple of 3");
    for (double x : *v) mesh.vert.push_back(static_cast<float>(x));
  }
  if (const auto faces = a.list("face")) {
    for (double x : *faces) {
      if (x != std::floor(x) || x < 0) a.fail("attribute \"face\": vertex indices must be non-negative integers");
      mesh.face.push_back(static_cast<int>(x));
    }
    if (mesh.face.size() % 3) a.fail("attribute \"face\": the number of values must be a multiple of 3");
  }
  a.numbers("refpos", mesh.refpos, 3, 3);
  a.numbers("refquat", mesh.refquat, 4, 4);
  a.ignore({"normal", "texcoord", "content_type"});  // visual; the content type follows the extension here
  if (a.has("builtin") || a.has("params")) a.fail("builtin meshes are not supported");
  mesh.name = a.text("name").value_or("");
  a.finish();
  no_children(e);
  if (mesh.file.empty() && mesh.vert.empty()) a.fail("a mesh needs \"file\" or \"vertex\"");
  if (!mesh.file.empty() && !mesh.vert.empty()) a.fail("repeated vertex specification (\"file\" and \"vertex\")");
  if (mesh.name.empty()) mesh.name = file_stem(mesh.file);  // MuJoCo names it after its file
  check_name(m_mesh_lines, "mesh", e, mesh.name);
  m_mesh_names[mesh.name] = static_cast<int>(m_meshes.size());
  if (!mesh.file.empty()) load_mesh_file(&mesh);
  m_meshes.push_back(std::move(mesh));
}

// ---- compiling ----

// MuJoCo's mjCMesh::MakeGraph: qhull ("qhull Qt", plus "Q9 TA<n>" under maxhullvert) on the
// vertices as read, triangulated, into the graph layout of mesh_graph.
void MjcfCompiler::make_hull(MeshAsset* mesh, const std::vector<double>& vert) {
  const int nvert = static_cast<int>(vert.size() / 3);
  const XMLElement* e = mesh->elem;
  {  // colocated / collinear / coplanar vertices: no hull
    int v1 = -1;
    double len1 = 0;
    auto dist = [&](int i, int j) {
      const double* a = &vert[3 * i];
      const double* b = &vert[3 * j];
      return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
    };
    for (int i = 1; i < nvert; ++i) {
      len1 = dist(i, 0);
      if (len1 > kMinVal) {
        v1 = i;
        break;
      }
    }
    if (v1 < 0) fail(e, "mesh has colocated vertices, cannot compute its convex hull");
    const double e1[3] = {vert[3 * v1] - vert[0], vert[3 * v1 + 1] - vert[1], vert[3 * v1 + 2] - vert[2]};
    double n[3] = {0, 0, 0};
    bool collinear = true;
    for (int i = 1; i < nvert && collinear; ++i) {
      if (i == v1) continue;
      const double e2[3] = {vert[3 * i] - vert[0], vert[3 * i + 1] - vert[1], vert[3 * i + 2] - vert[2]};
      const double len2 = std::sqrt(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]);
      if (len2 < kMinVal) continue;
      cross3(e1, e2, n);
      const double nn = norm3(n);
      if (nn > kMinVal * len1 * len2) {
        for (double& c : n) c /= nn;
        collinear = false;
      }
    }
    if (collinear) fail(e, "mesh has collinear vertices, cannot compute its convex hull");
    const double d = n[0] * vert[0] + n[1] * vert[1] + n[2] * vert[2];
    bool coplanar = true;
    for (int i = 0; i < nvert && coplanar; ++i)
      if (std::fabs(n[0] * vert[3 * i] + n[1] * vert[3 * i + 1] + n[2] * vert[3 * i + 2] - d) > kMinVal * len1)
        coplanar = false;
    if (coplanar) fail(e, "mesh has coplanar vertices, cannot compute its convex hull");
  }
  std::string opt = "qhull Qt";
  if (mesh->spec.maxhullvert > -1) opt += " Q9 TA" + std::to_string(mesh->spec.maxhullvert - 4);
  qhT qh_qh;
  qhT* qh = &qh_qh;
  qh_zero(qh, stderr);
  FILE* devnull = std::fopen("/dev/null", "w");
  qh_init_A(qh, stdin, devnull ? devnull : stdout, devnull ? devnull : stderr, 0, nullptr);
  std::vector<int>& g = mesh->graph;
  volatile bool ok = true;           // set between setjmp and a possible longjmp
  std::vector<double> points(vert);  // qhull keeps a pointer to them
  const int exitcode = setjmp(qh->errexit);
  if (!exitcode) {
    qh->NOerrexit = False;
    qh_initflags(qh, const_cast<char*>(opt.c_str()));
    qh_init_B(qh, points.data(), nvert, 3, False);
    qh_qhull(qh);
    qh_triangulate(qh);
    qh_vertexneighbors(qh);
    const int numvert = qh->num_vertices, numface = qh->num_facets;
    g.assign(2 + 3 * static_cast<size_t>(numvert) + 6 * static_cast<size_t>(numface), 0);
    g[0] = numvert, g[1] = numface;
    int* vert_edgeadr = g.data() + 2;
    int* vert_globalid = g.data() + 2 + numvert;
    int* edge_localid = g.data() + 2 + 2 * numvert;
    int* face_globalid = g.data() + 2 + 3 * numvert + 3 * numface;
    int i = 0, adr = 0;
    vertexT* vertex;
    FORALLvertices {
      const int pid = qh_pointid(qh, vertex->point);
      if (pid < 0 || pid >= nvert) {
        ok = false;
        break;
      }
      vert_edgeadr[i] = adr, vert_globalid[i] = pid;
      const int start = adr;
      facetT *facet, **facetp;
      FOREACHfacet_(vertex->neighbors) {
        vertexT *vertex1, **vertex1p;
        FOREACHsetelement_(vertexT, facet->vertices, vertex1) {
          const int pid1 = qh_pointid(qh, vertex1->point);
          if (pid1 < 0 || pid1 >= nvert) {
            ok = false;
            break;
          }
          if (pid1 != pid) {
            int j = start;
            while (j < adr && edge_localid[j] != pid1) ++j;
            if (j >= adr) edge_localid[adr++] = pid1;
          }
        }
      }
      edge_localid[adr++] = -1;
      ++i;
    }
    if (ok && adr != numvert + 3 * numface) ok = false;
    adr = 0;
    facetT* facet;
    FORALLfacets {
      int ii = 0;
      int ind[3] = {0, 1, 2};
      if (facet->toporient) ind[0] = 1, ind[1] = 0;
      vertexT *vertex1, **vertex1p;
      FOREACHsetelement_(vertexT, facet->vertices, vertex1) {
        if (ii < 3) face_globalid[adr + ind[ii]] = qh_pointid(qh, vertex1->point);
        ++ii;
      }
      if (ii != 3) ok = false;
      adr += 3;
    }
  }
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  if (devnull) std::fclose(devnull);
  if (exitcode) fail(e, "qhull could not compute the mesh's convex hull");
  if (!ok) fail(e, "qhull returned a convex hull that is not triangulated");
  // edge ids: vertex ids of the mesh -> hull vertex index
  const int numvert = g[0], numface = g[1];
  std::vector<int> hullid(static_cast<size_t>(nvert), -1);
  for (int k = 0; k < numvert; ++k) hullid[static_cast<size_t>(g[2 + numvert + k])] = k;
  for (int k = 0; k < numvert + 3 * numface; ++k) {
    int& id = g[static_cast<size_t>(2 + 2 * numvert + k)];
    if (id >= 0) id = hullid[static_cast<size_t>(id)];
  }
}

// MuJoCo's mjCMesh::Process (less normals, polygons, BVH and octree, which do not move the physics).
namespace {

// One polygon of coplanar hull faces being merged (MuJoCo's MeshPolygon): its boundary as directed
// edges, each tagged with the island (connected group of faces) it bounds; faces that share no edge
// yet start islands of their own, joined when a later face connects them.
struct PolygonBuilder {
  std::vector<std::pair<int, int>> edges;
  std::vector<int> islands;
  int nisland = 1;

  PolygonBuilder(int v1, int v2, int v3) : edges{{v1, v2}, {v2, v3}, {v3, v1}}, islands{0, 0, 0} {}

  void combine(int* island1, int* island2) {  // the smaller number survives, the numbers above shift
    if (*island2 < *island1) std::swap(*island1, *island2);
    for (int& k : islands) {
      if (k == *island2) {
        k = *island1;
      } else if (k > *island2) {
        --k;
      }
    }
  }

  void insert(int v1, int v2, int v3) {
    const int a[3] = {v1, v2, v3};
    bool add[3] = {true, true, true};
    int island = -1;
    for (int e = 0; e < 3; ++e) {  // an edge of the face met in reverse: shared, removed
      const int p = a[e], q = a[(e + 1) % 3];
      for (size_t i = 0; i < edges.size(); ++i) {
        if (edges[i].first != q || edges[i].second != p) continue;
        int other = islands[i];
        if (island == -1) {
          island = other;
        } else if (other != island) {
          --nisland;
          combine(&island, &other);
        }
        add[e] = false;
        edges.erase(edges.begin() + static_cast<long>(i));
        islands.erase(islands.begin() + static_cast<long>(i));
        break;
      }
    }
    if (island == -1) island = nisland++;
    for (int e = 0; e < 3; ++e)
      if (add[e]) edges.push_back({a[e], a[(e + 1) % 3]}), islands.push_back(island);
  }

  // The vertex cycles, one per island, each walked from its first edge on (MuJoCo's
  // MeshPolygon::Paths, whose walk looks at edges from the second on). MuJoCo 3.12's source returns
  // a group left with 3 edges as their first vertices in list order, which winds a triangle left
  // of merged faces (three faces round a vertex that lies inside it) backwards; MuJoCo 3.17's wheel
  // lists such triangles walked, as here (its mesh_polyvert: 28 such triangles on G1's meshes with
  // hands, 4 on Barkour's), a lone face's walk giving its own cycle.
  std::vector<std::vector<int>> paths() const {
    std::vector<std::vector<int>> out;
    for (int i = 0; i < nisland; ++i) {
      std::vector<int> path;
      for (size_t j = 0; j < edges.size(); ++j)
        if (islands[j] == i) {
          path = {edges[j].first, edges[j].second};
          break;
        }
      if (path.empty()) continue;
      int next = path.back();
      for (size_t l = 0; l < edges.size(); ++l) {
        bool finished = false;
        for (size_t k = 1; k < edges.size(); ++k) {
          if (islands[k] != i || edges[k].first != next) continue;
          next = edges[k].second;
          if (next == path[0]) {
            out.push_back(path);
            finished = true;
          } else {
            path.push_back(next);
          }
          break;
        }
        if (finished) break;
      }
    }
    return out;
  }
};

// The key of a face's normal direction: its azimuth and polar angle in steps of kAngleTol, rounded
// (MuJoCo's MeshPolygonKey); false for a degenerate face.
bool polygon_key(std::pair<double, double>* key, const double* v1, const double* v2, const double* v3) {
  constexpr double kAngleTol = 0.01;
  const double d12[3] = {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]};
  const double d13[3] = {v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2]};
  double n[3] = {d12[1] * d13[2] - d12[2] * d13[1], d12[2] * d13[0] - d12[0] * d13[2],
                 d12[0] * d13[1] - d12[1] * d13[0]};
  const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (len < kMinVal) return false;
  for (double& c : n) c = c / len + 0.0;  // no negative zero for atan2
  if (std::abs(n[2]) > 1.0 - 1e-7) {
    *key = {0.0, n[2] < 0 ? std::round(kPi / kAngleTol) : 0.0};
    return true;
  }
  *key = {std::round(std::atan2(n[1], n[0]) / kAngleTol), std::round(std::acos(n[2]) / kAngleTol)};
  return true;
}

}  // namespace

// The hull's faces grouped by their normal's key, each group's edge cycles its polygons, as MuJoCo's
// mjCMesh::MakePolygons; vert: the vertices as read (the hull's frame). The normals come later, in
// the compiled frame. MuJoCo lists the groups in the iteration order of an std::unordered_map keyed
// by the pair of rounded angles, hashed as hash(theta) ^ hash(phi); its wheels link libc++, whose
// map orders its nodes otherwise than our libstdc++'s, so the groups are kept in insertion order and
// listed in the order libc++'s map would give (sim/libcxx_hash_order.h; MuJoCo 3.17's mesh_poly*
// exactly on Menagerie's G1, Spot, Barkour and OP3 meshes: tools/mesh_polygons_peer.py).
void MjcfCompiler::make_polygons(MeshAsset* mesh, const std::vector<double>& vert) {
  const int nv = mesh->graph[0], nf = mesh->graph[1];
  const int* faces = mesh->graph.data() + 2 + 3 * nv + 3 * nf;
  std::map<std::pair<double, double>, int> group_of;  // key -> index in groups (equal as MuJoCo's ==)
  std::vector<PolygonBuilder> groups;                 // in insertion order
  LibcxxHashOrder order;
  for (int i = 0; i < nf; ++i) {
    const int a = faces[3 * i], b = faces[3 * i + 1], c = faces[3 * i + 2];
    std::pair<double, double> key;
    if (!polygon_key(&key, &vert[3 * static_cast<size_t>(a)], &vert[3 * static_cast<size_t>(b)],
                     &vert[3 * static_cast<size_t>(c)]))
      continue;
    const auto [it, added] = group_of.emplace(key, static_cast<int>(groups.size()));
    if (added) {
      groups.emplace_back(a, b, c);
      order.insert(libcxx_hash(key.first) ^ libcxx_hash(key.second));
    } else {
      groups[static_cast<size_t>(it->second)].insert(a, b, c);
    }
  }
  mesh->polygons.clear();
  for (int g : order.order())
    for (std::vector<int>& path : groups[static_cast<size_t>(g)].paths())
      if (path.size() >= 3) mesh->polygons.push_back(std::move(path));
  mesh->polymap.assign(vert.size() / 3, {});
  for (size_t i = 0; i < mesh->polygons.size(); ++i)
    for (int v : mesh->polygons[i]) mesh->polymap[static_cast<size_t>(v)].push_back(static_cast<int>(i));
}

void MjcfCompiler::process_mesh(MeshAsset* mesh) {
  const XMLElement* e = mesh->elem;
  const int nvert = static_cast<int>(mesh->vert.size() / 3);
  if (nvert < 4) fail(e, "a mesh needs at least 4 vertices");
  for (size_t i = 0; i < mesh->face.size(); ++i)
    if (mesh->face[i] < 0 || mesh->face[i] >= nvert)
      fail(e,
           "in face " + std::to_string(i / 3) + ", vertex index " + std::to_string(mesh->face[i]) + " does not exist");
  for (float v : mesh->vert)
    if (!std::isfinite(v)) fail(e, "a vertex coordinate is not finite");
  std::vector<double> dv(mesh->vert.begin(), mesh->vert.end());
  const int mode = mesh->spec.inertia;
  if (mode == kMeshInertiaExact) {  // faces must be consistently oriented: no half-edge twice
    std::vector<std::pair<int, int>> he;
    for (size_t i = 0; i + 2 < mesh->face.size(); i += 3) {
      const int v0 = mesh->face[i], v1 = mesh->face[i + 1], v2 = mesh->face[i + 2];
      if (triangle(nullptr, nullptr, &dv[3 * v0], &dv[3 * v1], &dv[3 * v2]) > std::sqrt(kMinVal))
        he.insert(he.end(), {{v0, v1}, {v1, v2}, {v2, v0}});
    }
    std::stable_sort(he.begin(), he.end());
    const auto it = std::adjacent_find(he.begin(), he.end());
    if (it != he.end())
      fail(e, "faces have inconsistent orientation (the faces with vertices " + std::to_string(it->first + 1) +
                  " and " + std::to_string(it->second + 1) + ")");
  }
  if (mode == kMeshInertiaConvex) mesh->need_hull = true;
  if (mesh->need_hull || mesh->face.empty()) make_hull(mesh, dv);
  if (!mesh->graph.empty()) make_polygons(mesh, dv);
  if (mesh->face.empty()) {  // no faces: the hull's
    const int nv = mesh->graph[0], nf = mesh->graph[1];
    mesh->face.assign(mesh->graph.begin() + 2 + 3 * nv + 3 * nf, mesh->graph.begin() + 2 + 3 * nv + 6 * nf);
  }
  const double* sc = mesh->spec.scale;
  if (sc[0] * sc[1] * sc[2] <= 0) {  // left-handed: MuJoCo flips the winding
    for (size_t i = 0; i + 2 < mesh->face.size(); i += 3) std::swap(mesh->face[i + 1], mesh->face[i + 2]);
  }
  // refpos, refquat, scale
  const double* rp = mesh->refpos;
  if (rp[0] != 0 || rp[1] != 0 || rp[2] != 0)
    for (int i = 0; i < nvert; ++i)
      for (int k = 0; k < 3; ++k) dv[3 * i + k] -= rp[k];
  const double* rq = mesh->refquat;
  if (rq[0] != 1 || rq[1] != 0 || rq[2] != 0 || rq[3] != 0) {
    double q[4] = {rq[0], rq[1], rq[2], rq[3]}, mat[9];
    normvec(q, 4);
    quat2mat(mat, q);
    for (int i = 0; i < nvert; ++i) mulvecmatT(&dv[3 * i], &dv[3 * i], mat);
  }
  if (sc[0] != 1 || sc[1] != 1 || sc[2] != 1)
    for (int i = 0; i < nvert; ++i)
      for (int k = 0; k < 3; ++k) dv[3 * i + k] *= sc[k];
  const int nface = static_cast<int>(mesh->face.size() / 3);
  auto vtx = [&](const int* f, int k) { return &dv[3 * static_cast<size_t>(f[k])]; };
  // centroid of the faces
  double facecen[3] = {0, 0, 0}, total_area = 0;
  for (int i = 0; i < nface; ++i) {
    const int* f = &mesh->face[3 * static_cast<size_t>(i)];
    double center[3];
    const double area = triangle(nullptr, center, vtx(f, 0), vtx(f, 1), vtx(f, 2));
    for (int k = 0; k < 3; ++k) facecen[k] += area * center[k];
    total_area += area;
  }
  if (total_area < kMinVal) fail(e, "mesh surface area is too small");
  for (double& c : facecen) c /= total_area;
  // the faces the volume and inertia integrate: the hull's under inertia="convex"
  const int* faces = mesh->face.data();
  int nf = nface;
  if (mode == kMeshInertiaConvex) {
    nf = mesh->graph[1];
    faces = mesh->graph.data() + 2 + 3 * mesh->graph[0] + 3 * nf;
  }
  double com[3] = {0, 0, 0};
  if (mode == kMeshInertiaShell) {
    double surface = 0;
    for (int i = 0; i < nface; ++i) {
      const int* f = &mesh->face[3 * static_cast<size_t>(i)];
      double center[3];
      const double area = triangle(nullptr, center, vtx(f, 0), vtx(f, 1), vtx(f, 2));
      surface += area;
      for (int k = 0; k < 3; ++k) com[k] += area * (center[k] * 3.0 / 4.0 + facecen[k] / 4.0);
    }
    if (surface < kMinVal) fail(e, "mesh surface area is too small");
    for (double& c : com) c /= surface;
  } else {
    double volume = 0;
    for (int i = 0; i < nf; ++i) {
      const int* f = faces + 3 * i;
      double normal[3], center[3];
      const double area = triangle(normal, center, vtx(f, 0), vtx(f, 1), vtx(f, 2));
      const double vec[3] = {center[0] - facecen[0], center[1] - facecen[1], center[2] - facecen[2]};
      double vol = (vec[0] * normal[0] + vec[1] * normal[1] + vec[2] * normal[2]) * area / 3;
      if (mode == kMeshInertiaLegacy) vol = std::abs(vol);
      volume += vol;
      for (int k = 0; k < 3; ++k) com[k] += vol * (center[k] * 3.0 / 4.0 + facecen[k] / 4.0);
    }
    if (volume < kMinVal) {
      if (volume < 0) fail(e, "mesh volume is negative (misoriented triangles)");
      fail(e, "mesh volume is too small (try inertia=\"shell\")");
    }
    for (double& c : com) c /= volume;
  }
  // inertia about the centre of mass (MuJoCo's ComputeInertia), recomputing the volume
  double P[6] = {0, 0, 0, 0, 0, 0}, total = 0;
  const int kk[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  for (int i = 0; i < nf; ++i) {
    const int* f = faces + 3 * i;
    double D[3], E[3], F[3];
    for (int k = 0; k < 3; ++k) {
      D[k] = vtx(f, 0)[k] - com[k], E[k] = vtx(f, 1)[k] - com[k], F[k] = vtx(f, 2)[k] - com[k];
    }
    double normal[3], center[3];
    const double area = triangle(normal, center, D, E, F);
    double vol = mode == kMeshInertiaShell
                     ? area
                     : (center[0] * normal[0] + center[1] * normal[1] + center[2] * normal[2]) * area / 3;
    if (mode == kMeshInertiaLegacy) vol = std::abs(vol);
    total += vol;
    const int C = mode == kMeshInertiaShell ? 12 : 20;
    for (int j = 0; j < 6; ++j) {
      const int a = kk[j][0], b = kk[j][1];
      P[j] += vol / C *
              (2 * (D[a] * D[b] + E[a] * E[b] + F[a] * F[b]) + D[a] * E[b] + D[b] * E[a] + D[a] * F[b] + D[b] * F[a] +
               E[a] * F[b] + E[b] * F[a]);
    }
  }
  mesh->volume = total;
  const double inert[6] = {P[1] + P[2], P[0] + P[2], P[0] + P[1], -P[3], -P[4], -P[5]};
  const double full[9] = {inert[0], inert[3], inert[4], inert[3], inert[1], inert[5], inert[4], inert[5], inert[2]};
  double eigval[3], quat[4];
  mjuu::eig3(eigval, quat, full, mjuu::kEigTolMesh);  // MuJoCo 3.17's mesh tolerance, 1e-7 relative

  if (eigval[2] <= 0) fail(e, "an eigenvalue of the mesh's inertia is not positive");
  constexpr double atol = 1e-9, rtol = 1e-6;
  if (eigval[0] + eigval[1] < eigval[2] * (1 - rtol) - atol || eigval[0] + eigval[2] < eigval[1] * (1 - rtol) - atol ||
      eigval[1] + eigval[2] < eigval[0] * (1 - rtol) - atol)
    fail(e, "the eigenvalues of the mesh's inertia violate A + B >= C");
  mesh->boxsz[0] = 0.5 * std::sqrt(6 * (eigval[1] + eigval[2] - eigval[0]) / total);
  mesh->boxsz[1] = 0.5 * std::sqrt(6 * (eigval[0] + eigval[2] - eigval[1]) / total);
  mesh->boxsz[2] = 0.5 * std::sqrt(6 * (eigval[0] + eigval[1] - eigval[2]) / total);
  // move the vertices to the centre of mass and the principal axes
  const double neg[4] = {quat[0], -quat[1], -quat[2], -quat[3]};
  double mat[9];
  quat2mat(mat, neg);
  double* aamm = mesh->aamm;
  aamm[0] = aamm[1] = aamm[2] = 1e10;
  aamm[3] = aamm[4] = aamm[5] = -1e10;
  for (int i = 0; i < nvert; ++i) {
    double* v = &dv[3 * static_cast<size_t>(i)];
    for (int k = 0; k < 3; ++k) v[k] -= com[k];
    mulvecmat(v, v, mat);
    for (int k = 0; k < 3; ++k) aamm[k] = std::min(aamm[k], v[k]), aamm[k + 3] = std::max(aamm[k + 3], v[k]);
  }
  std::copy_n(com, 3, mesh->pos);
  std::copy_n(quat, 4, mesh->quat);
  for (size_t i = 0; i < dv.size(); ++i) mesh->vert[i] = static_cast<float>(dv[i]);
  // the polygons' normals, compiled frame, in double: Newell's normal of the vertex cycle,
  // sum over edges (a, b) of ((a.y - b.y)(a.z + b.z), (a.z - b.z)(a.x + b.x), (a.x - b.x)(a.y + b.y)),
  // normalised (MuJoCo 3.17: within 6e-13 of its mesh_polynormal on Spot's and Barkour's meshes,
  // where the normal of the first three corners, MuJoCo 3.12's, is off by up to 2 on slivers)
  mesh->polynormal.assign(3 * mesh->polygons.size(), 0.0);
  for (size_t i = 0; i < mesh->polygons.size(); ++i) {
    const std::vector<int>& p = mesh->polygons[i];
    double n[3] = {0, 0, 0};
    for (size_t j = 0; j < p.size(); ++j) {
      const double* a = &dv[3 * static_cast<size_t>(p[j])];
      const double* b = &dv[3 * static_cast<size_t>(p[j + 1 < p.size() ? j + 1 : 0])];
      n[0] += (a[1] - b[1]) * (a[2] + b[2]);
      n[1] += (a[2] - b[2]) * (a[0] + b[0]);
      n[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    const double len = norm3(n);
    double* out = &mesh->polynormal[3 * i];
    if (len < 1e-14) {  // a degenerate cycle (mjuu_makenormal's bound, the user code's mjEPS)
      out[0] = 1, out[1] = 0, out[2] = 0;
    } else {
      for (int k = 0; k < 3; ++k) out[k] = n[k] / len;
    }
  }
  // the hull vertex furthest along each of the 27 directions (-1, 0, 1)^3, in float as MuJoCo's
  // (the seeds of its hill-climbing support search)
  std::fill(mesh->extrema, mesh->extrema + 27, 0);
  if (!mesh->graph.empty()) {
    const int nh = mesh->graph[0];
    float best[27];
    std::fill(best, best + 27, std::numeric_limits<float>::lowest());
    for (int l = 0; l < nh; ++l) {
      const float* v = &mesh->vert[3 * static_cast<size_t>(mesh->graph[static_cast<size_t>(2 + nh + l)])];
      int k = 0;
      for (int cx = -1; cx <= 1; ++cx)
        for (int cy = -1; cy <= 1; ++cy)
          for (int cz = -1; cz <= 1; ++cz, ++k) {
            const float dot =
                v[0] * static_cast<float>(cx) + v[1] * static_cast<float>(cy) + v[2] * static_cast<float>(cz);
            if (dot > best[k]) best[k] = dot, mesh->extrema[k] = l;
          }
    }
  }
}

void MjcfCompiler::compile_meshes() {
  // which meshes a colliding geom uses (MuJoCo builds their hulls)
  for (size_t g = 0; g < m_geoms.size(); ++g) {
    const GeomSpec& s = m_geoms[g];
    if (s.mesh.empty()) continue;
    const auto it = m_mesh_names.find(s.mesh);
    if (it == m_mesh_names.end()) fail(m_geom_elem[g], "mesh " + quoted(s.mesh) + " not found");
    if (s.type == kGeomMesh && (s.contype || s.conaffinity)) m_meshes[static_cast<size_t>(it->second)].need_hull = true;
  }
  m.nmesh = static_cast<int>(m_meshes.size());
  for (MeshAsset& mesh : m_meshes) {
    process_mesh(&mesh);
    m.mesh_vertadr.push_back(m.nmeshvert);
    m.mesh_vertnum.push_back(static_cast<int>(mesh.vert.size() / 3));
    for (float v : mesh.vert) m.mesh_vert.push_back(v);
    m.nmeshvert += static_cast<int>(mesh.vert.size() / 3);
    m.mesh_graphadr.push_back(mesh.graph.empty() ? -1 : m.nmeshgraph);
    m.mesh_graph.insert(m.mesh_graph.end(), mesh.graph.begin(), mesh.graph.end());
    m.nmeshgraph += static_cast<int>(mesh.graph.size());
    m.mesh_extrema.insert(m.mesh_extrema.end(), mesh.extrema, mesh.extrema + 27);
    m.mesh_polyadr.push_back(m.nmeshpoly);
    m.mesh_polynum.push_back(static_cast<int>(mesh.polygons.size()));
    for (size_t i = 0; i < mesh.polygons.size(); ++i) {
      m.mesh_polyvertadr.push_back(m.nmeshpolyvert);
      m.mesh_polyvertnum.push_back(static_cast<int>(mesh.polygons[i].size()));
      m.mesh_polyvert.insert(m.mesh_polyvert.end(), mesh.polygons[i].begin(), mesh.polygons[i].end());
      m.nmeshpolyvert += static_cast<int>(mesh.polygons[i].size());
      m.mesh_polynormal.insert(m.mesh_polynormal.end(), &mesh.polynormal[3 * i], &mesh.polynormal[3 * i] + 3);
    }
    m.nmeshpoly += static_cast<int>(mesh.polygons.size());
    for (size_t v = 0; v < mesh.vert.size() / 3; ++v) {  // polymap: as many entries as polyvert
      m.mesh_polymapadr.push_back(static_cast<int>(m.mesh_polymap.size()));
      const std::vector<int> none;
      const std::vector<int>& polys = v < mesh.polymap.size() ? mesh.polymap[v] : none;
      m.mesh_polymapnum.push_back(static_cast<int>(polys.size()));
      m.mesh_polymap.insert(m.mesh_polymap.end(), polys.begin(), polys.end());
    }
    m.mesh_faceadr.push_back(static_cast<int>(m.mesh_face.size() / 3));
    m.mesh_facenum.push_back(static_cast<int>(mesh.face.size() / 3));
    m.mesh_face.insert(m.mesh_face.end(), mesh.face.begin(), mesh.face.end());
    m.nmeshface += static_cast<int>(mesh.face.size() / 3);
    m.mesh_pos.insert(m.mesh_pos.end(), mesh.pos, mesh.pos + 3);
    m.mesh_quat.insert(m.mesh_quat.end(), mesh.quat, mesh.quat + 4);
    m.mesh_name.push_back(mesh.name);
  }
  m.geom_dataid.assign(m_geoms.size(), -1);
}

void MjcfCompiler::compile_mesh_geom(int i) {
  const XMLElement* e = m_geom_elem[i];
  GeomSpec& g = m_geoms[i];
  GeomFrame& f = m_geom_frames[i];
  if (g.mesh.empty()) fail(e, "a mesh geom needs attribute \"mesh\"");
  if (g.type != kGeomMesh)
    fail(e, "a primitive geom fitted to a mesh (type other than \"mesh\" with attribute \"mesh\") is not supported");
  if (f.has_fromto) fail(e, "\"fromto\" cannot be used with a mesh geom");
  const int id = m_mesh_names.at(g.mesh);
  const MeshAsset& mesh = m_meshes[static_cast<size_t>(id)];
  m.geom_dataid[i] = id;
  // MuJoCo's mjuu_frameaccum(pos, quat, meshpos, meshquat)
  double mat[9], v[3];
  normvec(f.quat, 4);
  quat2mat(mat, f.quat);
  mulvecmat(v, mesh.pos, mat);
  for (int k = 0; k < 3; ++k) f.pos[k] += v[k];
  mulquat(f.quat, f.quat, mesh.quat);
  for (int k = 0; k < 3; ++k) g.size[k] = std::max(std::abs(mesh.aamm[k]), std::abs(mesh.aamm[k + 3]));
}

}  // namespace rlt::mjcf_detail
