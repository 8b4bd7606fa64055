/* The Arrow C Data Interface and C Device Data Interface: the structs and constants through which
 * zs/arrow.hpp hands tables to other libraries and takes them from them.
 *
 * Their layout is an ABI that Apache Arrow publishes (docs: "The Arrow C data interface" and
 * "The Arrow C Device data interface"); they are declared here, field for field, so that
 * zshuffle needs no Arrow library. Each block sits under the guard macro that the specification
 * names, so a program that includes Arrow's or nanoarrow's own declarations first (or after this
 * file, when theirs are guarded the same way) sees one definition of each struct.
 *
 * This header is plain C, and includes nothing but <stdint.h>. */
#ifndef ZS_ARROW_C_INTERFACE_H
#define ZS_ARROW_C_INTERFACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

/* ArrowSchema.flags bits. */
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

/* The type of an array: a format string ("i" int32, "U" large utf8, "+s" struct ...), a field
 * name, and one child schema per child field. */
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  /* Frees what the producer allocated and sets release to NULL; NULL marks a released schema. */
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

/* The data of an array: `length` values starting `offset` values into its buffers. */
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  /* Frees what the producer allocated and sets release to NULL; NULL marks a released array. */
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

/* Where an array's buffers live. */
typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

/* An ArrowArray whose buffers live on a device. For CUDA, sync_event is NULL or points to a
 * cudaEvent_t that the consumer waits for before reading the buffers; array.release frees
 * everything, the event included. */
struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  ArrowDeviceType device_type;
  void* sync_event;
  int64_t reserved[3];
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#ifdef __cplusplus
}
#endif

#endif /* ZS_ARROW_C_INTERFACE_H */
