// MJCF compiler, <replicate count offset euler sep childclass> (sim/mjcf_compiler.h): before the
// body tree is read, each replicate becomes `count` <frame>s in its place, copy i holding its children
// with every name attribute suffixed by sep + i (i zero-padded to the digits of count), as MuJoCo 3's
// reader does (xml_native_reader.cc: the children are parsed into a frame that mjs_attach copies
// count times with that suffix, then deleted). Copy i's frame: MuJoCo's accumulation, pos_0 = 0,
// pos_{i+1} = pos_i + R(quat_i) offset, quat_i = euler(i * euler) (resolved anew for each i, in the
// compiler's angle unit and eulerseq). A nested replicate is expanded first, so its suffix comes
// before the outer one's ("s_0-1"), as in MuJoCo. The copies keep their source's file and line
// (XmlOrigin), so errors name the element the user wrote.
//
// Checked against MuJoCo 3.17 (tests/data/mjcf/structure/replicate.xml; mujoco_peer and
// tests/sim/test_mjcf_structure.cpp): names, order (a replicate's geoms between the geoms around it,
// its bodies likewise), positions and orientations. Refused where MuJoCo refuses (no count, a joint
// as a direct child) and where it silently drops what is written: an <inertial> as a direct child,
// attributes outside its schema (pos, quat, name are accepted and ignored by MuJoCo), a negative count.
#include <cstdio>

#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

namespace {

bool holds_body_elements(const char* name) {
  return std::strcmp(name, "worldbody") == 0 || std::strcmp(name, "body") == 0 || std::strcmp(name, "frame") == 0 ||
         std::strcmp(name, "replicate") == 0;
}

std::string format_numbers(const double* v, int n) {
  std::string out;
  char buf[40];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);  // round-trips the double exactly
    out += (i ? " " : "") + std::string(buf);
  }
  return out;
}

// MuJoCo's UpdateString: sep, then i left-padded with zeros to the number of digits of count.
std::string copy_suffix(const std::string& sep, int count, int i) {
  const std::string digits = std::to_string(i);
  const size_t width = std::to_string(count).size();
  return sep + std::string(width > digits.size() ? width - digits.size() : 0, '0') + digits;
}

size_t count_elements(const tinyxml2::XMLElement* e) {
  size_t n = 1;
  for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) n += count_elements(c);
  return n;
}

void append_to_names(tinyxml2::XMLElement* e, const std::string& suffix) {
  if (const char* name = e->Attribute("name")) e->SetAttribute("name", (std::string(name) + suffix).c_str());
  for (tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) append_to_names(c, suffix);
}

}  // namespace

// MuJoCo refuses a joint in a replicate outside a body of its own, frames around it or not; an
// <inertial> there it drops (refused here).
void MjcfCompiler::check_replicate_children(const XMLElement* e) const {
  for (const XMLElement* k = e->FirstChildElement(); k; k = k->NextSiblingElement()) {
    const std::string n = k->Name();
    if (n == "joint" || n == "freejoint") fail(k, "a joint cannot be a direct child of <replicate> (as in MuJoCo)");
    if (n == "inertial") fail(k, "an <inertial> as a direct child of <replicate> is not supported (MuJoCo drops it)");
    if (std::strcmp(e->Name(), "replicate") == 0 && n != "body" && n != "frame" && n != "replicate" && n != "geom" &&
        n != "site" && n != "camera" && n != "light")
      unsupported_element(k, "body, frame, replicate, geom, site; ignored: camera, light");
    if (n == "frame" || n == "replicate") check_replicate_children(k);
  }
}

void MjcfCompiler::expand_replicates(tinyxml2::XMLDocument* doc, tinyxml2::XMLElement* parent) {
  tinyxml2::XMLElement* c = parent->FirstChildElement();
  while (c) {
    tinyxml2::XMLElement* next = c->NextSiblingElement();
    if (std::strcmp(c->Name(), "replicate") != 0 || !holds_body_elements(parent->Name())) {
      expand_replicates(doc, c);  // (a replicate elsewhere is left for that section to refuse)
      c = next;
      continue;
    }
    Attrs a(m_file, c);
    if (!a.has("count")) a.fail("attribute \"count\" is required");
    int count = 0;
    a.integer("count", &count);
    if (count < 0) a.fail("attribute \"count\" must be non-negative, got " + std::to_string(count));
    double offset[3] = {0, 0, 0}, euler[3] = {0, 0, 0};
    a.numbers("offset", offset, 3, 3);
    a.numbers("euler", euler, 3, 3);
    const std::string sep = a.text("sep").value_or("");
    const auto childclass = a.text("childclass");
    if (childclass) find_class(a, *childclass);
    a.finish();
    check_replicate_children(c);
    expand_replicates(doc, c);  // nested replicates first: their suffixes come first
    // A bound of ours (MuJoCo has none): nested counts multiply, and a typo such as count="100000"
    // in two levels would build 10^10 elements before any message.
    const size_t per_copy = count_elements(c);  // the copy's frame and its contents
    if (static_cast<size_t>(count) > (kMaxReplicatedElements - m_replicated) / per_copy)
      a.fail("the replicates would make more than " + std::to_string(kMaxReplicatedElements) +
             " elements in all (count " + std::to_string(count) + " x " + std::to_string(per_copy) + ")");
    m_replicated += static_cast<size_t>(count) * per_copy;

    double pos[3] = {0, 0, 0};
    tinyxml2::XMLNode* after = c;
    for (int i = 0; i < count; ++i) {
      const double angles[3] = {i * euler[0], i * euler[1], i * euler[2]};
      double quat[4];
      euler_to_quat(angles, quat);
      tinyxml2::XMLElement* frame = doc->NewElement("frame");
      copy_origins(c, frame, m_file, "", &m_origins);  // (a frame without children: the replicate's origin)
      frame->SetAttribute("pos", format_numbers(pos, 3).c_str());
      frame->SetAttribute("quat", format_numbers(quat, 4).c_str());
      if (childclass) frame->SetAttribute("childclass", childclass->c_str());
      const std::string suffix = copy_suffix(sep, count, i);
      for (const tinyxml2::XMLNode* k = c->FirstChild(); k; k = k->NextSibling()) {
        if (!k->ToElement()) continue;  // comments
        tinyxml2::XMLNode* copy = k->DeepClone(doc);
        copy_origins(k, copy, m_file, "", &m_origins);
        append_to_names(copy->ToElement(), suffix);
        frame->InsertEndChild(copy);
      }
      parent->InsertAfterChild(after, frame);
      after = frame;
      // MuJoCo's mjuu_frameaccum: the next copy's position moves by this copy's rotation of offset
      const Eigen::Vector3d step = quat_to_mat(quat) * Eigen::Vector3d(offset[0], offset[1], offset[2]);
      for (int k = 0; k < 3; ++k) pos[k] += step(k);
    }
    parent->DeleteChild(c);
    c = next;
  }
}

}  // namespace rlt::mjcf_detail
