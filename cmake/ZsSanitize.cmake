# Sanitizer and fuzzing instrumentation of the C++ sources (included by the top-level
# CMakeLists.txt before any target is made, so that every library, test and tool gets it).
#
#   ZS_SANITIZE=address,undefined   AddressSanitizer and UndefinedBehaviorSanitizer on every C++
#                                   source and link. UBSan halts at the first finding
#                                   (-fno-sanitize-recover=all), so a test cannot pass over it.
#   ZS_BUILD_FUZZERS=ON             clang++ 16 or newer: coverage instrumentation for libFuzzer
#                                   (-fsanitize=fuzzer-no-link) on the same sources, and the
#                                   targets in fuzz/ (linked with -fsanitize=fuzzer).
#
# CUDA sources stay uninstrumented: nvcc compiles them with its own host compiler
# (CMAKE_CUDA_HOST_COMPILER, g++ where CMAKE_CXX_COMPILER is clang++), and their device code
# runs on a GPU the sanitizers cannot see; compute-sanitizer covers it (scripts/device-check).
# scripts/run-sanitized builds and runs the tests this way with the runtime options and the
# LeakSanitizer suppressions they need; scripts/fuzz does the same for the fuzz targets.

set(ZS_SANITIZE "" CACHE STRING
    "Sanitizers for the C++ sources, as -fsanitize takes them (e.g. address,undefined); empty for none")
option(ZS_BUILD_FUZZERS "Build the libFuzzer targets in fuzz/ (needs clang++ as the C++ compiler)" OFF)

if(ZS_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ZS_BUILD_FUZZERS needs clang++ 16 or newer as the C++ compiler (libFuzzer is "
                      "part of clang), not ${CMAKE_CXX_COMPILER_ID}: configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_CUDA_HOST_COMPILER=g++ (scripts/fuzz does)")
endif()

set(ZS_INSTRUMENT_FLAGS "")
if(ZS_SANITIZE)
  # Frame pointers keep the reports' stacks whole at any optimisation level.
  list(APPEND ZS_INSTRUMENT_FLAGS -fsanitize=${ZS_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
endif()
if(ZS_INSTRUMENT_FLAGS)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${ZS_INSTRUMENT_FLAGS}>")
  # Every link that the C++ driver makes takes the runtime; a CUDA link step (none today) would
  # need the flags passed through -Xcompiler.
  add_link_options("$<$<LINK_LANGUAGE:CXX>:${ZS_INSTRUMENT_FLAGS}>")
endif()
if(ZS_BUILD_FUZZERS)
  # Coverage feedback from the library's own code, without libFuzzer's main: the fuzz targets
  # link that (-fsanitize=fuzzer in fuzz/CMakeLists.txt).
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
endif()
