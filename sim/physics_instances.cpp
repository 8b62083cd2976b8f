// The host's one copy of the physics entry points and of HostModel, for float and double.
// sim/*.h is single-source and header-only, so every translation unit that steps a model used to
// compile the whole physics again (about 25 s of optimizer per type and file: most of the tests'
// build time). The headers declare these specializations `extern template` for the host, and this
// file instantiates them; the functions they call stay inline within them. Results are the same
// bits: the same code under the same flags (-ffp-contract=off). nvcc's translation units keep
// instantiating their own (device code does not link across files without -rdc).
#include "sim/constraints.h"
#include "sim/contact.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"
#include "sim/sensors.h"

namespace rlt {

template class HostModel<float>;
template class HostModel<double>;

template void physics_forward<float>(const ModelView<float>&, const DataView<float>&, const float*, float, bool);
template void step_rk4<float>(const ModelView<float>&, const DataView<float>&, const float*, bool);
template void physics_substep<float>(const ModelView<float>&, const DataView<float>&, const float*, bool, bool);
template void physics_step<float>(const ModelView<float>&, const DataView<float>&, const float*, int, int*);
template void physics_forward<double>(const ModelView<double>&, const DataView<double>&, const double*, double, bool);
template void step_rk4<double>(const ModelView<double>&, const DataView<double>&, const double*, bool);
template void physics_substep<double>(const ModelView<double>&, const DataView<double>&, const double*, bool, bool);
template void physics_step<double>(const ModelView<double>&, const DataView<double>&, const double*, int, int*);
template void detect_contacts<float>(const ModelView<float>&, const DataView<float>&);
template void detect_contacts<double>(const ModelView<double>&, const DataView<double>&);
template void soft_constraint_acceleration<float>(const ModelView<float>&, const DataView<float>&, float, float);
template void set_invweight0<float>(const ModelView<float>&, std::vector<float>&);
template void soft_constraint_acceleration<double>(const ModelView<double>&, const DataView<double>&, double, double);
template void set_invweight0<double>(const ModelView<double>&, std::vector<double>&);
template void compute_sensors<float>(const ModelView<float>&, const DataView<float>&);
template void compute_sensors<double>(const ModelView<double>&, const DataView<double>&);

}  // namespace rlt
