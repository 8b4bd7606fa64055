// Shuffle a table by key across MPI ranks: on the GPUs when every rank has its own, else on the CPU.
#include <zs/comm/mpi_communicator.hpp>
#include <zs/comm/nccl_communicator.hpp>
#include <zs/comm/shuffle_table.hpp>
#include <zs/memory.hpp>
#include <zs/partition.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  zs::mpi_environment mpi_running(&argc, &argv);
  zs::mpi_communicator mpi;
  int const me = mpi.rank(), ranks = mpi.size();
  std::vector<std::int64_t> customer;
  std::vector<double> amount;
  std::vector<std::string> note;
  for (int i = 0; i < 1000; ++i) {
    customer.push_back(i % 97);
    amount.push_back(me + i * 0.25);
    note.push_back("order " + std::to_string(me) + "-" + std::to_string(i));
  }
  zs::table orders{{"customer", "amount", "note"}, {}};
  orders.columns.push_back(zs::column::from_values<std::int64_t>(customer));
  orders.columns.push_back(zs::column::from_values<double>(amount));
  orders.columns.push_back(zs::column::from_strings(note));
  std::size_t const key[] = {0};  // rows with equal customers meet on one rank

  int gpus = 0;
  if (zs::cuda_device_available() && cudaGetDeviceCount(&gpus) == cudaSuccess) cudaSetDevice(zs::device_for_rank(gpus));
  zs::shuffled_table mine;
  if (mpi.all_ok(gpus > 0) && zs::ranks_have_distinct_gpus(mpi)) {
    zs::cuda_stream stream;
    zs::nccl_communicator nccl(mpi);
    for (auto& c : orders.columns) c = c.copy_to(zs::memory_kind::device, stream);
    mine = zs::shuffle_table(nccl, orders, key, {}, stream);
    for (auto& c : mine.rows.columns) c = c.copy_to(zs::memory_kind::host, stream);
  } else {
    mine = zs::shuffle_table(mpi, orders, key, {});
  }

  auto const& got = mine.rows.columns[0];
  bool ok = mpi.allreduce_sum(got.size()) == 1000u * static_cast<unsigned>(ranks);
  for (std::uint64_t r = 0; r < got.size(); ++r) {
    ok = ok && zs::hash_key(got.view().values<std::int64_t>()[r]) % ranks == static_cast<unsigned>(me);
  }
  std::printf("rank %d: %llu rows, %s\n", me, static_cast<unsigned long long>(got.size()), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
