// How cuRAND's device Philox4_32_10 lines up with rltrain's Philox (sim/philox.h), so that bulk
// noise drawn with cuRAND on the GPU has a CPU twin (DESIGN.md D4). From curand_kernel.h and
// curand_philox4x32_x.h (CUDA 13):
//   curand_init(seed, subsequence, offset, &s) sets
//     key = (seed low 32 bits, seed high 32 bits)
//     ctr = (0, 0, subsequence low, subsequence high), then adds offset / 4 to the 64-bit
//           (ctr.x, ctr.y) with carry into (z, w), and starts at word offset % 4 of that block.
//   Each block is curand_Philox4x32_10(ctr, key): the same 10-round function, round constants and
//   key schedule as philox4x32_10() here. curand()/curand4() then step (ctr.x, ctr.y) as one
//   64-bit counter, four words per block.
// So philox4x32_10(ctr, k0, k1) is what curand4 (or four curand calls) returns first after
//   curand_init(k0 | k1 << 32, ctr.v[2] | ctr.v[3] << 32, 4 * (ctr.v[0] | ctr.v[1] << 32)),
// valid while 4 * (ctr.v[0] | ctr.v[1] << 32) fits in 64 bits, i.e. ctr.v[1] < 2^30.
// Later cuRAND blocks advance ctr.v[0] (with carry into v[1]), whereas Philox::next4 advances
// ctr.v[3]: the j-th next4() of a Philox is the first block of its own curand_init.
// tests/kernels/test_cuda_executor.cu checks all of this against cuRAND on a GPU.
#pragma once

#include "sim/philox.h"

namespace rlt {

struct CurandPhiloxInit {
  unsigned long long seed;
  unsigned long long subsequence;
  unsigned long long offset;  // in 32-bit words
};

RLT_HD RLT_INLINE CurandPhiloxInit curand_philox_init_for(U32x4 ctr, u32 k0, u32 k1) {
  return CurandPhiloxInit{
      static_cast<unsigned long long>(k0) | (static_cast<unsigned long long>(k1) << 32),
      static_cast<unsigned long long>(ctr.v[2]) | (static_cast<unsigned long long>(ctr.v[3]) << 32),
      4ull * (static_cast<unsigned long long>(ctr.v[0]) | (static_cast<unsigned long long>(ctr.v[1]) << 32))};
}

// The curand_init arguments whose first block is rng's next next4().
RLT_HD RLT_INLINE CurandPhiloxInit curand_philox_init_for(const Philox& rng) {
  return curand_philox_init_for(rng.ctr, rng.k0, rng.k1);
}

}  // namespace rlt
