// MJCF compiler, <include file="..."/> (sim/mjcf_compiler.h): before anything is read, every include
// is replaced by the children of the included file's <mujoco> root, as MuJoCo 3 does, wherever it
// stands (top level, <worldbody>, <default>, <actuator>, ...). The spliced elements are copies in
// the main document; each carries an XmlOrigin (its file, line and include chain) as its tinyxml2
// user data, so errors name the included file and line, followed by "(included from FILE:LINE)".
//
// MuJoCo 3.17's rules, checked with its Python bindings: a relative path is looked up in the main
// file's directory first, then in the including file's directory; the included file's root must be
// <mujoco>; a file may be included only once ("already included", which also stops loops).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/mjcf_compiler.h"

namespace rlt::mjcf_detail {

namespace {

std::string directory_of(const std::string& file) {
  const auto slash = file.find_last_of('/');
  return slash == std::string::npos ? "" : file.substr(0, slash + 1);
}

// A key for "already included": the canonical path when the file exists, else the path as given.
std::string file_key(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

bool readable(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  return static_cast<bool>(in);
}

}  // namespace

void copy_origins(const tinyxml2::XMLNode* from, tinyxml2::XMLNode* to, const std::string& file,
                  const std::string& chain, std::vector<std::unique_ptr<XmlOrigin>>* origins) {
  if (const XMLElement* e = from->ToElement()) {
    if (void* data = e->GetUserData()) {
      to->SetUserData(data);
    } else {
      origins->push_back(std::make_unique<XmlOrigin>(XmlOrigin{file, e->GetLineNum(), chain}));
      to->SetUserData(origins->back().get());
    }
  }
  const tinyxml2::XMLNode* f = from->FirstChild();
  tinyxml2::XMLNode* t = to->FirstChild();
  for (; f && t; f = f->NextSibling(), t = t->NextSibling()) copy_origins(f, t, file, chain, origins);
}

void MjcfCompiler::expand_includes(tinyxml2::XMLDocument* doc, tinyxml2::XMLElement* parent, const std::string& file,
                                   const std::string& chain) {
  if (m_included.empty()) m_included.insert(file_key(m_file));  // the main file counts as included
  tinyxml2::XMLElement* c = parent->FirstChildElement();
  while (c) {
    tinyxml2::XMLElement* next = c->NextSiblingElement();
    if (std::strcmp(c->Name(), "include") != 0) {
      expand_includes(doc, c, file, chain);
      c = next;
      continue;
    }
    const int line = line_of(c);
    auto refuse = [&](const std::string& what) { throw MjcfError(file, line, "include", "", what + chain); };
    const char* name = c->Attribute("file");
    if (!name || !*name) refuse("attribute \"file\" is required");
    for (const tinyxml2::XMLAttribute* a = c->FirstAttribute(); a; a = a->Next()) {
      if (std::strcmp(a->Name(), "file") != 0)
        refuse("unsupported attribute " + quoted(a->Name()) + " (supported: file)");
    }
    if (c->FirstChildElement()) refuse("<include> takes no child elements");

    // MuJoCo 3.17: relative to the main file's directory first, then to the including file's
    std::vector<std::string> candidates;
    if (name[0] == '/') {
      candidates.push_back(name);
    } else {
      candidates.push_back(m_main_dir + name);
      const std::string local = directory_of(file) + name;
      if (local != candidates[0]) candidates.push_back(local);
    }
    std::string path;
    for (const std::string& p : candidates) {
      if (readable(p)) {
        path = p;
        break;
      }
    }
    if (path.empty()) {
      std::string tried;
      for (const std::string& p : candidates) tried += (tried.empty() ? "" : ", ") + quoted(p);
      refuse("cannot open the included file " + quoted(name) + " (tried " + tried + ")");
    }
    if (!m_included.insert(file_key(path)).second) {
      refuse("file " + quoted(name) + " is already included (MuJoCo includes a file once; an include loop?)");
    }

    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string sub_chain =
        " (included from " + file + ":" + std::to_string(line) + (chain.empty() ? ")" : ", from " + chain.substr(16));
    auto sub = std::make_unique<tinyxml2::XMLDocument>();
    if (sub->Parse(text.str().c_str(), text.str().size()) != tinyxml2::XML_SUCCESS) {
      std::string detail = sub->ErrorStr() ? sub->ErrorStr() : "";
      const auto colon = detail.find(": ");
      if (detail.rfind("Error=", 0) == 0 && colon != std::string::npos) detail = detail.substr(colon + 2);
      std::string what = std::string("malformed XML (") + sub->ErrorName() + ")";
      if (!detail.empty()) what += ": " + detail;
      throw MjcfError(path, sub->ErrorLineNum(), "xml", "", what + sub_chain);
    }
    tinyxml2::XMLElement* root = sub->RootElement();
    if (!root) throw MjcfError(path, 1, "xml", "", "no root element" + sub_chain);
    if (std::strcmp(root->Name(), "mujoco") != 0) {
      throw MjcfError(path, root->GetLineNum(), root->Name(), "",
                      "the root element of an included file must be <mujoco>" + sub_chain);
    }
    for (const tinyxml2::XMLAttribute* a = root->FirstAttribute(); a; a = a->Next()) {
      if (std::strcmp(a->Name(), "model") != 0) {
        throw MjcfError(path, root->GetLineNum(), "mujoco", "",
                        "unsupported attribute " + quoted(a->Name()) + " (supported: model)" + sub_chain);
      }
    }
    expand_includes(sub.get(), root, path, sub_chain);

    tinyxml2::XMLNode* after = c;
    for (const tinyxml2::XMLNode* n = root->FirstChild(); n; n = n->NextSibling()) {
      tinyxml2::XMLNode* copy = n->DeepClone(doc);
      copy_origins(n, copy, path, sub_chain, &m_origins);
      parent->InsertAfterChild(after, copy);
      after = copy;
    }
    parent->DeleteChild(c);
    c = next;
  }
}

}  // namespace rlt::mjcf_detail
