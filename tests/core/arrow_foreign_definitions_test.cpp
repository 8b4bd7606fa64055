// zs/arrow.hpp beside another library's declarations of the Arrow C structs: this file declares
// them first, under the specification's guard macros, as Arrow's abi.h and nanoarrow do, and
// zshuffle's header must then compile against those and work with them.
#include <cstdint>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
#endif

#include "zs/arrow.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(ArrowForeignDefinitions, ExportAndImportWorkWithTheOtherLibrarysStructs) {
  zs::table t;
  t.names = {"v", "s"};
  std::vector<std::int64_t> const values{1, 2, 3};
  t.columns.push_back(zs::column::from_values(std::span<const std::int64_t>(values)));
  std::vector<std::string> const strings{"a", "", "é"};
  t.columns.push_back(zs::column::from_strings(strings));
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(std::move(t), &schema, &array);
  zs::table const back = zs::import_from_arrow(&schema, &array);
  EXPECT_EQ(back.names, (std::vector<std::string>{"v", "s"}));
  EXPECT_EQ(back.columns[1].strings(), strings);
  EXPECT_EQ(array.release, nullptr);
}

}  // namespace
