// Shuffle a table by key across MPI ranks: on the GPUs when every rank has one, else on the CPU.
#include <zs/comm/context.hpp>
#include <zs/partition.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  zs::mpi_environment mpi(&argc, &argv);
  zs::context ctx;  // picks this rank's GPU and the path: NCCL, MPI or the CPU
  int const me = ctx.host().rank(), ranks = ctx.host().size();

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
  zs::shuffled_table const mine = zs::shuffle_table(ctx, orders, key, {});

  auto const& got = mine.rows.columns[0];  // host memory, like the input
  bool ok = ctx.host().allreduce_sum(got.size()) == 1000u * static_cast<unsigned>(ranks);
  for (std::uint64_t r = 0; r < got.size(); ++r) {
    ok = ok && zs::hash_key(got.view().values<std::int64_t>()[r]) % ranks == static_cast<unsigned>(me);
  }
  std::printf("rank %d: %llu rows, %s; %s\n", me, static_cast<unsigned long long>(got.size()), ok ? "ok" : "WRONG",
              ctx.description().c_str());
  return ok ? 0 : 1;
}
