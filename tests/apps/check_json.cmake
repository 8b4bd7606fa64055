# Checks a JSON file that the command line wrote: it must parse, and each check must hold.
#
#   cmake -DFILE=out.json "-DCHECKS=verified=ON|columns.0.name=a.u32" -P check_json.cmake
#
# A check is PATH=VALUE: PATH names a member by keys and array indices joined by dots, VALUE is
# what CMake's string(JSON GET) gives for it (booleans read ON and OFF). Checks are separated by |.
cmake_minimum_required(VERSION 3.25)
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "check_json: '${FILE}' does not exist")
endif()
file(READ "${FILE}" text)
string(JSON members ERROR_VARIABLE problem LENGTH "${text}")
if(problem)
  message(FATAL_ERROR "check_json: '${FILE}' is not valid JSON: ${problem}")
endif()
string(REPLACE "|" ";" checks "${CHECKS}")
foreach(check IN LISTS checks)
  string(FIND "${check}" "=" equals)
  string(SUBSTRING "${check}" 0 ${equals} path)
  math(EXPR value_at "${equals} + 1")
  string(SUBSTRING "${check}" ${value_at} -1 expected)
  string(REPLACE "." ";" keys "${path}")
  string(JSON actual ERROR_VARIABLE problem GET "${text}" ${keys})
  if(problem)
    message(FATAL_ERROR "check_json: ${path} in '${FILE}': ${problem}")
  endif()
  if(NOT actual STREQUAL expected)
    message(FATAL_ERROR "check_json: ${path} in '${FILE}' is '${actual}', expected '${expected}'")
  endif()
  message(STATUS "check_json: ${path} = ${actual}")
endforeach()
