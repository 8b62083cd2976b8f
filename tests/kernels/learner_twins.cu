// The CUDA instantiations of tests/kernels/learner_twins.h: the same templates the CPU side runs,
// compiled by nvcc so that parallel_for, reduce_sum and select_last_flagged are kernels and the
// GEMMs go to cuBLAS. Kept apart from the test bodies so that nvcc compiles only this.
#include "kernels/cuda_executor.cuh"
#include "kernels/cuda_gemm.h"
#include "tests/kernels/learner_twins.h"

namespace rlt {
namespace twins {

template GaeResult run_gae<CudaExecutor>(const CudaExecutor&, const GaeCase&);
template double run_adam<CudaExecutor>(const CudaExecutor&, const std::vector<float>&, const AdamHyper&, AdamState&);
template MomentsResult run_moments<CudaExecutor>(const CudaExecutor&, int, const std::vector<std::vector<float>>&);
template SelectResult run_select_last_flagged<CudaExecutor>(const CudaExecutor&, const std::vector<std::uint8_t>&,
                                                            const std::vector<float>&, const std::vector<std::int32_t>&,
                                                            i64, double);
template SampleResult run_sample_action<CudaExecutor>(const CudaExecutor&, const SampleCase&);
template std::vector<float> run_normalize_obs<CudaExecutor>(const CudaExecutor&, const std::vector<float>&,
                                                            const std::vector<float>&, const std::vector<float>&, float,
                                                            bool);
template UpdateResult run_update<CudaExecutor>(const CudaExecutor&, const PolicySpec&, const MinibatchHost&,
                                               const PpoCoefs<float>&, const AdamHyper&, const AdamState&);

}  // namespace twins
}  // namespace rlt
