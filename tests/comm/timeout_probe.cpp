// A job in which one rank stops answering: rank 1 sleeps instead of joining a collective that
// every other rank enters. Run under mpirun with ZS_TIMEOUT set; the waiting ranks must end
// the job after the timeout with a line naming the rank and the collective (tests/comm
// CMakeLists.txt checks it), not wait for the sleeper.
#include <chrono>
#include <cstdio>
#include <thread>

#include "zs/comm/mpi_communicator.hpp"

int main(int argc, char** argv) {
  zs::mpi_environment mpi(&argc, &argv);
  zs::mpi_communicator comm;
  if (comm.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
  } else {
    comm.allreduce_max(1);
  }
  std::printf("rank %d: the collective completed; the timeout did not end the job\n", comm.rank());
  return 1;
}
