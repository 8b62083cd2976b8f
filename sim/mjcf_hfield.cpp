// MJCF height fields (MuJoCo 3's mjCHField, user_objects.cc; the XML reader's <hfield>): the
// <asset><hfield> elements into the model's hfield_* arrays, and geoms of type hfield.
//   name          defaults to the file's name without directory and extension (MuJoCo's rule)
//   size          radius_x radius_y elevation_z base_z, each > 0
//   nrow, ncol    with elevation (nrow * ncol numbers, the first row the one at +y: the XML text
//                 reads top to bottom, MuJoCo flips it) or without (zeros: a field filled at run
//                 time, as dm_control's quadruped does)
//   file          a PNG (content_type image/png, or a .png name) read as 8-bit grey the way MuJoCo's
//                 lodepng does (the red channel of a colour image, the high byte of 16 bits, low
//                 bit depths scaled to 0..255), its rows flipped (image row 0 is the +y edge); any
//                 other file is MuJoCo's custom binary format (int32 nrow, int32 ncol, nrow * ncol
//                 float32, row 0 at -y). Resolved as MuJoCo: meshdir (else assetdir) relative to the
//                 main file. A missing, empty, truncated or undecodable file stops the compile with
//                 `file:line: hfield NAME: cannot read FILE: why`.
// The elevations are then normalized to [0, 1] in float as MuJoCo (minus the minimum, divided by
// the range when it exceeds mjEPS) and stored row-major, row 0 at y = -radius_y, column 0 at
// x = -radius_x. A geom of type hfield takes its size from the field (MuJoCo: radius_x, radius_y,
// elevation_z / 4 + base_z / 2), and its mass and inertia as a box of that size (MuJoCo's
// mjCGeom::GetVolume / SetInertia); it may sit in a moving body (sim/hfield.h works in the field's
// current frame).
#include <png.h>

#include <cstdint>
#include <cstdio>
#include <fstream>

#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

namespace {

struct ReadError {
  std::string why;
};

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReadError{"no such file or not readable"};
  const std::string text = stream_bytes(in);
  if (in.bad()) throw ReadError{"read error"};
  if (text.empty()) throw ReadError{"empty file"};
  return std::vector<unsigned char>(text.begin(), text.end());
}

struct PngSource {
  const std::vector<unsigned char>* bytes;
  size_t pos;
};

void png_read_from_memory(png_structp png, png_bytep out, png_size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (src->pos + n > src->bytes->size()) png_error(png, "truncated PNG data");
  std::memcpy(out, src->bytes->data() + src->pos, n);
  src->pos += n;
}

void png_error_to_string(png_structp png, png_const_charp msg) {
  auto* err = static_cast<std::string*>(png_get_error_ptr(png));
  *err = msg ? msg : "PNG error";
  png_longjmp(png, 1);
}

void png_warning_ignore(png_structp, png_const_charp) {}

// 8-bit grey as lodepng's conversion to LCT_GREY gives it (see the top of the file), row-major, image
// row 0 first.
std::vector<unsigned char> decode_png_grey(const std::vector<unsigned char>& bytes, int* width, int* height) {
  if (bytes.size() < 8 || png_sig_cmp(bytes.data(), 0, 8) != 0) throw ReadError{"not a PNG file"};
  std::string err;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, png_error_to_string, png_warning_ignore);
  if (!png) throw ReadError{"libpng: out of memory"};
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    throw ReadError{"libpng: out of memory"};
  }
  PngSource src{&bytes, 0};
  std::vector<unsigned char> pixels, grey;
  std::vector<png_bytep> rows;
  png_uint_32 w = 0, h = 0;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw ReadError{"PNG decoding failed: " + err};
  }
  png_set_read_fn(png, &src, png_read_from_memory);
  png_read_info(png, info);
  w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  const int color = png_get_color_type(png, info);
  png_set_expand(png);  // palette to RGB, grey 1/2/4 bits to 8, tRNS to alpha
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t channels = png_get_channels(png, info);
  const size_t rowbytes = png_get_rowbytes(png, info);
  if (w == 0 || h == 0 || (channels != 1 && channels != 3) || rowbytes != channels * w) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw ReadError{"unsupported PNG layout"};
  }
  pixels.resize(rowbytes * h);
  rows.resize(h);
  for (png_uint_32 r = 0; r < h; ++r) rows[r] = pixels.data() + r * rowbytes;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  (void)color;
  grey.resize(static_cast<size_t>(w) * h);
  for (size_t i = 0; i < grey.size(); ++i) grey[i] = pixels[i * channels];  // grey, or the red channel
  *width = static_cast<int>(w), *height = static_cast<int>(h);
  return grey;
}

std::string strip_path_and_ext(const std::string& file) {
  const auto slash = file.find_last_of("/\\");
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  const auto dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

bool ends_with_png(const std::string& file) {
  if (file.size() < 4) return false;
  std::string ext = file.substr(file.size() - 4);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".png";
}

}  // namespace

void MjcfCompiler::read_hfields(const XMLElement* asset) {
  for (const XMLElement* e = asset->FirstChildElement("hfield"); e; e = e->NextSiblingElement("hfield")) {
    Attrs a(m_file, e);
    const std::optional<std::string> file = a.text("file");
    const std::string name = a.text("name").value_or(file ? strip_path_and_ext(*file) : "");
    const XmlOrigin* o = origin_of(e);
    auto stop = [&](const std::string& what) {
      throw MjcfError(o ? o->file : m_file, line_of(e), "hfield", name, o ? what + o->chain : what);
    };
    double size[4];
    if (a.numbers("size", size, 4, 4) == 0) stop("attribute \"size\" (4 numbers) is required");
    for (double s : size)
      if (!(s > 0)) stop("size parameter is not positive");
    int nrow = 0, ncol = 0;
    a.integer("nrow", &nrow);
    a.integer("ncol", &ncol);
    if (nrow < 0 || ncol < 0) stop("nrow and ncol must be non-negative");
    const std::optional<std::vector<double>> elevation = a.list("elevation");
    const std::optional<std::string> content_type = a.text("content_type");
    a.finish();
    std::vector<float> data;
    if (file) {
      if (nrow || ncol || elevation) stop("hfield specified from file and manually (nrow, ncol, elevation)");
      const bool png = content_type ? *content_type == "image/png" : ends_with_png(*file);
      if (content_type && !png && *content_type != "image/vnd.mujoco.hfield")
        stop("unsupported content type: " + quoted(*content_type));
      std::string dir = m_opt.meshdir.empty() ? m_opt.assetdir : m_opt.meshdir;
      if (!dir.empty() && dir.back() != '/') dir += '/';
      if (dir.empty() || dir[0] != '/') dir = m_main_dir + dir;
      const std::string path = !file->empty() && (*file)[0] == '/' ? *file : dir + *file;
      try {
        const std::vector<unsigned char> bytes = read_bytes(path);
        if (png) {
          const std::vector<unsigned char> grey = decode_png_grey(bytes, &ncol, &nrow);
          data.resize(grey.size());
          for (int r = 0; r < nrow; ++r)
            for (int c = 0; c < ncol; ++c) data[r * ncol + c] = static_cast<float>(grey[(nrow - 1 - r) * ncol + c]);
        } else {
          int32_t dims[2];
          if (bytes.size() < sizeof dims) throw ReadError{"truncated header"};
          std::memcpy(dims, bytes.data(), sizeof dims);
          if (dims[0] < 1 || dims[1] < 1) throw ReadError{"non-positive dimensions in the header"};
          const size_t n = static_cast<size_t>(dims[0]) * static_cast<size_t>(dims[1]);
          if (bytes.size() != sizeof dims + n * sizeof(float))
            throw ReadError{"size does not match the header's nrow * ncol"};
          nrow = dims[0], ncol = dims[1];
          data.resize(n);
          std::memcpy(data.data(), bytes.data() + sizeof dims, n * sizeof(float));
        }
      } catch (const ReadError& err) {
        stop("cannot read " + path + ": " + err.why);
      }
    } else {
      if (nrow < 1 || ncol < 1) stop("hfield not specified (give file, or nrow and ncol)");
      data.assign(static_cast<size_t>(nrow) * ncol, 0.0f);
      if (elevation) {
        if (elevation->size() != data.size()) stop("elevation data length must match nrow*ncol");
        for (int r = 0; r < nrow; ++r)  // the text reads top (+y) to bottom: row 0 is its last line
          for (int c = 0; c < ncol; ++c)
            data[(nrow - 1 - r) * ncol + c] = static_cast<float>((*elevation)[static_cast<size_t>(r) * ncol + c]);
      }
    }
    if (nrow < 2 || ncol < 2) stop("nrow and ncol must be at least 2 (a grid of cells)");
    // MuJoCo's normalization to [0, 1], in float.
    float emin = 1e10f, emax = -1e10f;
    for (float v : data) emin = std::min(emin, v), emax = std::max(emax, v);
    if (!(emin <= emax) || !std::isfinite(emin) || !std::isfinite(emax)) stop("invalid elevation data range");
    for (float& v : data) {
      v -= emin;
      if (emax - emin > static_cast<float>(kEps)) v /= (emax - emin);
    }
    check_name(m_hfield_names, "hfield", e, name);
    if (!name.empty()) m_hfield_ids[name] = m.nhfield;
    m.hfield_size.insert(m.hfield_size.end(), size, size + 4);
    m.hfield_nrow.push_back(nrow);
    m.hfield_ncol.push_back(ncol);
    m.hfield_adr.push_back(m.nhfielddata);
    for (float v : data) m.hfield_data.push_back(static_cast<double>(v));
    m.nhfield++;
    m.nhfielddata += nrow * ncol;
  }
}

void MjcfCompiler::compile_hfield_geom(int geom, GeomSpec* g) {
  const XMLElement* e = m_geom_elem[geom];
  if (g->type != kGeomHField) fail(e, "attribute \"hfield\" is for geoms of type hfield");
  if (g->hfield.empty()) fail(e, "a geom of type hfield needs attribute \"hfield\"");
  const auto it = m_hfield_ids.find(g->hfield);
  if (it == m_hfield_ids.end()) fail(e, "hfield " + quoted(g->hfield) + " is not defined in <asset>");
  const int h = it->second;
  const double* hs = m.hfield_size.data() + 4 * h;
  g->size[0] = hs[0], g->size[1] = hs[1], g->size[2] = 0.25 * hs[2] + 0.5 * hs[3];
  m.geom_dataid[static_cast<size_t>(geom)] = h;
}

}  // namespace rlt::mjcf_detail
