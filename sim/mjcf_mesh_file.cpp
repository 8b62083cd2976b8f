// MJCF compiler, mesh files (sim/mjcf_compiler.h): the vertices and faces of an <asset><mesh file>,
// as MuJoCo 3 reads them, before sim/mjcf_mesh.cpp compiles the mesh.
//
// Who parses what, and why (docs/MJCF.md, "Mesh files"):
// - OBJ: tinyobjloader (Debian libtinyobjloader-dev), the library MuJoCo's obj_decoder plugin calls,
//   with the same defaults (ObjReader, triangulate): the `v` list as is, the faces of the first shape
//   only, quads split on their shorter diagonal and larger polygons triangulated as tinyobjloader
//   does. MuJoCo's float parsing and triangulation are tinyobjloader's, so no parser of ours could
//   match them as exactly.
// - Binary STL: assimp (Debian libassimp-dev) decodes the triangles, with no post-processing (so no
//   JoinIdenticalVertices: three vertices per face, in file order); MuJoCo's stl_decoder rules are
//   ours: the header checks (1 to 200000 faces, 84 + 50 n bytes: ASCII STL is refused, as MuJoCo
//   refuses it, though assimp would read it), the 2^30 bound, and vertices merged when bit-identical,
//   numbered in order of first use.
// - MuJoCo's .msh: no library reads it; a strict reader of its layout (mjCMesh::LoadMSH, 16-byte
//   header of int32 nvert, nnormal, ntexcoord, nface; float32 vertices, normals, texcoords; int32
//   faces), with MuJoCo's size checks.
// Every refusal is one line naming the file: `mesh NAME: cannot read PATH: why`.
#include <assimp/Importer.hpp>
#include <assimp/scene.h>
#include <tiny_obj_loader.h>

#include <array>
#include <functional>
#include <climits>
#include <cstring>
#include <fstream>

#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

namespace {

std::string lower_extension(const std::string& path) {
  const auto slash = path.find_last_of("/\\");
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

using Refuse = const std::function<void(const std::string&)>&;

// Binary STL: MuJoCo's stl_decoder checks, assimp's triangles, MuJoCo's vertex merge.
void read_stl(const std::string& bytes, std::vector<float>* vert, std::vector<int>* face, Refuse cannot) {
  if (bytes.empty()) cannot("empty file");
  if (bytes.size() < 84) cannot("truncated STL header (" + std::to_string(bytes.size()) + " bytes)");
  std::int32_t nface = 0;
  std::memcpy(&nface, bytes.data() + 80, 4);
  if (nface < 1 || nface > 200000)
    cannot("the binary STL header gives " + std::to_string(nface) +
           " triangles (1 to 200000; ASCII STL is not supported, as in MuJoCo)");
  if (static_cast<size_t>(nface) * 50 != bytes.size() - 84)
    cannot("wrong size for a binary STL of " + std::to_string(nface) + " triangles (" + std::to_string(bytes.size()) +
           " bytes, expected " + std::to_string(84 + 50 * size_t(nface)) +
           "; truncated, or ASCII STL, which is not supported)");
  Assimp::Importer importer;  // no logger is created, so assimp prints nothing
  const aiScene* scene = importer.ReadFileFromMemory(bytes.data(), bytes.size(), 0, "stl");
  if (!scene) cannot(std::string("assimp: ") + importer.GetErrorString());
  if (scene->mNumMeshes != 1 || scene->mMeshes[0]->mNumFaces != static_cast<unsigned>(nface) ||
      scene->mMeshes[0]->mNumVertices != 3 * static_cast<unsigned>(nface))
    cannot("assimp did not return the file's " + std::to_string(nface) + " triangles");
  const aiMesh* m = scene->mMeshes[0];
  // bit patterns -> vertex id, numbered in order of first appearance, as stl_decoder: an
  // open-addressing table of (bits, id) slots, linear probing (the ids do not depend on the table;
  // std::map was a quarter of the compile of a mesh-heavy model, std::unordered_map's node per
  // vertex a quarter of the G1's mesh loading under the sanitizers)
  struct Slot {
    std::array<std::uint32_t, 3> key;
    int id = -1;
  };
  size_t cap = 16;
  while (cap < 6 * static_cast<size_t>(nface)) cap *= 2;  // at most 3 nface keys: load <= 1/2
  std::vector<Slot> table(cap);
  const auto hash = [](const std::array<std::uint32_t, 3>& k) {
    std::uint64_t h = k[0] * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 29) ^ k[1]) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31) ^ k[2]) * 0x94D049BB133111EBull;
    return static_cast<size_t>(h ^ (h >> 32));
  };
  vert->reserve(vert->size() + 3 * static_cast<size_t>(nface));  // closed meshes: about nface / 2 vertices
  face->reserve(face->size() + 3 * static_cast<size_t>(nface));
  constexpr float kBound = 1073741824.0f;  // 2^30
  for (unsigned i = 0; i < m->mNumFaces; ++i) {
    if (m->mFaces[i].mNumIndices != 3) cannot("assimp returned a face that is not a triangle");
    for (int j = 0; j < 3; ++j) {
      const aiVector3D& p = m->mVertices[m->mFaces[i].mIndices[j]];
      const float v[3] = {p.x, p.y, p.z};
      for (float x : v)
        if (std::fabs(x) > kBound) cannot("a vertex exceeds the bounds (2^30)");
      std::array<std::uint32_t, 3> key;
      std::memcpy(key.data(), v, 12);
      size_t k = hash(key) & (cap - 1);
      while (table[k].id >= 0 && table[k].key != key) k = (k + 1) & (cap - 1);
      if (table[k].id < 0) {
        table[k] = {key, static_cast<int>(vert->size() / 3)};
        for (float x : v) vert->push_back(x);
      }
      face->push_back(table[k].id);
    }
  }
}

// OBJ: tinyobjloader as MuJoCo's obj_decoder calls it.
void read_obj(const std::string& bytes, std::vector<float>* vert, std::vector<int>* face, Refuse cannot) {
  tinyobj::ObjReader reader;  // reports through Error() / Warning(), prints nothing
  reader.ParseFromString(bytes, std::string());
  if (!reader.Valid()) {
    std::string err = reader.Error();
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    for (char& c : err)
      if (c == '\n') c = ';';
    cannot("tinyobjloader: " + err);
  }
  const tinyobj::attrib_t& attrib = reader.GetAttrib();
  if (attrib.vertices.empty()) cannot("no vertices (not an OBJ mesh?)");
  *vert = attrib.vertices;
  const auto& shapes = reader.GetShapes();
  if (shapes.empty()) return;  // vertices only: MuJoCo takes the hull's faces
  // MuJoCo reads the first shape's faces only (an `o` or `g` line starts another; Menagerie's LEAP
  // hand has two such files): the same here, so that volume, inertia and hull are MuJoCo's.
  const tinyobj::mesh_t& m = shapes[0].mesh;
  if (m.indices.empty()) {
    if (!shapes[0].lines.indices.empty() || !shapes[0].points.indices.empty())
      cannot("lines or points in place of faces are not supported");
    return;
  }
  size_t idx = 0;
  for (const unsigned char nv : m.num_face_vertices) {
    if (nv != 3) cannot("tinyobjloader returned a face of " + std::to_string(nv) + " vertices");
    for (size_t k = 0; k < 3; ++k) face->push_back(m.indices[idx + k].vertex_index);
    idx += 3;
  }
}

// MuJoCo's .msh (mjCMesh::LoadMSH): sizes checked as MuJoCo does; normals and texture coordinates
// (visual) skipped.
void read_msh(const std::string& bytes, std::vector<float>* vert, std::vector<int>* face, Refuse cannot) {
  if (bytes.empty()) cannot("empty file");
  if (bytes.size() < 16) cannot("missing MSH header (" + std::to_string(bytes.size()) + " bytes, 16 needed)");
  std::int32_t n[4];  // nvert, nnormal, ntexcoord, nface
  std::memcpy(n, bytes.data(), 16);
  const std::int32_t nvert = n[0], nnormal = n[1], ntexcoord = n[2], nface = n[3];
  const std::string sizes = "nvert " + std::to_string(nvert) + ", nnormal " + std::to_string(nnormal) +
                            ", ntexcoord " + std::to_string(ntexcoord) + ", nface " + std::to_string(nface);
  if (nvert < 4 || nface < 0 || nnormal < 0 || ntexcoord < 0 || (nnormal > 0 && nnormal != nvert) ||
      (ntexcoord > 0 && ntexcoord != nvert))
    cannot("invalid sizes in the MSH header (" + sizes +
           "; nvert >= 4, normals and texture coordinates none or one per vertex)");
  constexpr size_t kMax = INT_MAX;
  if (size_t(nvert) >= kMax / 12 || size_t(nnormal) >= kMax / 12 || size_t(ntexcoord) >= kMax / 8 ||
      size_t(nface) >= kMax / 12)
    cannot("too large sizes in the MSH header (" + sizes + ")");
  const size_t expected = 16 + 12 * size_t(nvert) + 12 * size_t(nnormal) + 8 * size_t(ntexcoord) + 12 * size_t(nface);
  if (bytes.size() != expected)
    cannot("wrong size for an MSH file of " + sizes + " (" + std::to_string(bytes.size()) + " bytes, expected " +
           std::to_string(expected) + ")");
  vert->resize(3 * size_t(nvert));
  std::memcpy(vert->data(), bytes.data() + 16, 12 * size_t(nvert));
  face->resize(3 * size_t(nface));
  std::memcpy(face->data(), bytes.data() + expected - 12 * size_t(nface), 12 * size_t(nface));
}

}  // namespace

void MjcfCompiler::load_mesh_file(MeshAsset* mesh) {
  const std::string& f = mesh->file;
  const std::string path = !f.empty() && f[0] == '/' ? f : m.meshdir + f;
  auto cannot = [&](const std::string& why) { fail(mesh->elem, "cannot read " + path + ": " + why); };
  const std::string ext = lower_extension(f);
  if (ext != ".stl" && ext != ".obj" && ext != ".msh")
    cannot("unknown mesh format " + quoted(ext) + " (STL, OBJ and MSH are supported)");
  std::ifstream in(path, std::ios::binary);
  if (!in) cannot(std::strerror(errno));
  const std::string bytes = stream_bytes(in);
  if (in.bad()) cannot("read error");
  if (ext == ".stl") {
    read_stl(bytes, &mesh->vert, &mesh->face, cannot);
  } else if (ext == ".obj") {
    read_obj(bytes, &mesh->vert, &mesh->face, cannot);
  } else {
    read_msh(bytes, &mesh->vert, &mesh->face, cannot);
    // MuJoCo's LoadMSH flips the winding under a left-handed scale, and mjCMesh::Process flips it
    // again (as for every mesh, sim/mjcf_mesh.cpp): the pre-flip here keeps that net effect.
    const double* sc = mesh->spec.scale;
    if (sc[0] * sc[1] * sc[2] <= 0)
      for (size_t i = 0; i + 2 < mesh->face.size(); i += 3) std::swap(mesh->face[i + 1], mesh->face[i + 2]);
  }
}

}  // namespace rlt::mjcf_detail
