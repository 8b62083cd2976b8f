#include "sim/spaces.h"

#include <cmath>
#include <sstream>

namespace rlt {

std::string Space::describe() const {
  std::ostringstream os;
  if (discrete) {
    os << "Discrete(" << num_actions << ")";
    return os.str();
  }
  os << "Box(" << dim << ", [";
  for (int i = 0; i < dim; ++i) {
    if (i) os << ", ";
    if (std::isinf(low[i]) && std::isinf(high[i])) os << "unbounded";
    else os << low[i] << ".." << high[i];
  }
  os << "])";
  return os.str();
}

}  // namespace rlt
