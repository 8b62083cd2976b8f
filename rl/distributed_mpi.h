// The MPI communicator (rl/distributed_mpi.cpp), built only with -DRLTRAIN_MPI=ON; rl/distributed.cpp
// is its one caller.
#pragma once

#include <memory>

#include "rl/distributed.h"

namespace rlt {

#ifdef RLTRAIN_MPI
// MPI_Init_thread, MPI_COMM_WORLD with MPI_ERRORS_RETURN (a failed call throws DistributedError),
// and a watchdog thread that ends the process with a message when a collective waits longer than
// timeout_seconds (the launcher then stops the other ranks).
std::unique_ptr<Communicator> make_mpi_communicator(double timeout_seconds);
void mpi_finalize();
[[noreturn]] void mpi_abort(int exit_code);
#endif

}  // namespace rlt
