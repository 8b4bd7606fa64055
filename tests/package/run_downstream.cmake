# cmake -P script behind the package_downstream test (tests/package/CMakeLists.txt says what it
# checks). Each step's output goes to the test log; the first failing step fails the test.
foreach(var ZS_BUILD_DIR ZS_SOURCE_DIR ZS_WORK_DIR ZS_GENERATOR ZS_CXX_COMPILER ZS_MPIEXEC)
  if(NOT ${var})
    message(FATAL_ERROR "run_downstream.cmake: ${var} is not set")
  endif()
endforeach()

function(zs_step name)
  message(STATUS "package test: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "package test: ${name} failed (${result})")
  endif()
endfunction()

file(REMOVE_RECURSE "${ZS_WORK_DIR}")
set(staging "${ZS_WORK_DIR}/staging")
set(prefix "${ZS_WORK_DIR}/prefix")

zs_step("install into a temporary prefix"
  "${CMAKE_COMMAND}" --install "${ZS_BUILD_DIR}" --prefix "${staging}")
# Nothing in the installed files may point back at the staging prefix or the build tree.
file(RENAME "${staging}" "${prefix}")

set(configure_args
  -S "${ZS_SOURCE_DIR}" -B "${ZS_WORK_DIR}/build" -G "${ZS_GENERATOR}"
  -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_CXX_COMPILER=${ZS_CXX_COMPILER}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DZS_EXPECTED_PREFIX=${prefix}"
  # Only the prefix above may provide the package, never a registry entry of another build.
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(ZS_CUDA_ROOT)
  list(APPEND configure_args "-DCUDAToolkit_ROOT=${ZS_CUDA_ROOT}")
endif()
if(ZS_NCCL_ROOT)
  list(APPEND configure_args "-DNCCL_ROOT=${ZS_NCCL_ROOT}")
endif()
zs_step("configure the downstream project" "${CMAKE_COMMAND}" ${configure_args})
zs_step("build the downstream project" "${CMAKE_COMMAND}" --build "${ZS_WORK_DIR}/build")

# Two ranks: the program exchanges frames between them through zshuffle::comm.
zs_step("run the downstream program on 2 ranks"
  "${ZS_MPIEXEC}" -n 2 ${ZS_MPIEXEC_FLAGS} "${ZS_WORK_DIR}/build/zs_downstream")
zs_step("run the README's quickstart on 2 ranks"
  "${ZS_MPIEXEC}" -n 2 ${ZS_MPIEXEC_FLAGS} "${ZS_WORK_DIR}/build/zs_quickstart")
