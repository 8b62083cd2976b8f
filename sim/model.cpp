#include "sim/model.h"

namespace rlt {
namespace {

int find_name(const std::vector<std::string>& names, const std::string& name) {
  if (name.empty()) return -1;  // unnamed objects have no name to find
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

int Model::body_id(const std::string& name) const { return find_name(body_name, name); }
int Model::joint_id(const std::string& name) const { return find_name(jnt_name, name); }
int Model::key_id(const std::string& name) const { return find_name(key_name, name); }
int Model::sensor_id(const std::string& name) const { return find_name(sensor_name, name); }

}  // namespace rlt
