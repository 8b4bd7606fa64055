# nVIDIA nvCOMP, optional: the nvcomp:NAME codecs of the command line and `zshuffle bench codec
# --vs nvcomp` compare it with zshuffle's own codecs. Nothing else needs it, and the build works
# without it.
#
# Looked for, in order: ZS_NVCOMP_ROOT (a folder with include/ and lib64/, such as the one
# scripts/fetch-nvcomp unpacks), then the PyPI wheel nvidia-libnvcomp-cu13 where the python3
# on PATH imports it (nvidia/libnvcomp in its site-packages), then CMake's usual places.
# nvCOMP's own package configuration is used where it is there (the wheel has one); otherwise
# the header and library alone.
#
# Defines, when found: the target zs::nvcomp, ZS_HAVE_NVCOMP (ON) and ZS_NVCOMP_LIBRARY_DIR (the
# library's folder, for the run path of what links it: a wheel's folder is in no loader path).

set(ZS_NVCOMP_ROOT "" CACHE PATH
    "Where nVIDIA nvCOMP is (include/nvcomp.h, lib64/libnvcomp.so*): scripts/fetch-nvcomp unpacks it; optional")
set(ZS_HAVE_NVCOMP OFF)

# Folders the wheel may be in: the python3 on PATH's view of nvidia.libnvcomp, and site-packages.
set(_zs_nvcomp_hints)
if(ZS_NVCOMP_ROOT)
  list(APPEND _zs_nvcomp_hints "${ZS_NVCOMP_ROOT}" "${ZS_NVCOMP_ROOT}/lib64/cmake" "${ZS_NVCOMP_ROOT}/lib/cmake")
endif()
find_program(_zs_python3 python3)
mark_as_advanced(_zs_python3)
if(_zs_python3)
  execute_process(
    COMMAND "${_zs_python3}" -c
            "import nvidia.libnvcomp as m, os; print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])"
    OUTPUT_VARIABLE _zs_nvcomp_python_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _zs_nvcomp_rc)
  if(_zs_nvcomp_rc EQUAL 0 AND IS_DIRECTORY "${_zs_nvcomp_python_dir}")
    list(APPEND _zs_nvcomp_hints "${_zs_nvcomp_python_dir}" "${_zs_nvcomp_python_dir}/lib64/cmake")
  endif()
  execute_process(
    COMMAND "${_zs_python3}" -c "import site; print(';'.join(site.getsitepackages() + [site.getusersitepackages()]))"
    OUTPUT_VARIABLE _zs_site_dirs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  foreach(_zs_site IN LISTS _zs_site_dirs)
    if(IS_DIRECTORY "${_zs_site}/nvidia/libnvcomp")
      list(APPEND _zs_nvcomp_hints "${_zs_site}/nvidia/libnvcomp" "${_zs_site}/nvidia/libnvcomp/lib64/cmake")
    endif()
  endforeach()
endif()

# With ZS_NVCOMP_ROOT set, only there: a stale copy elsewhere must not stand in for it.
if(ZS_NVCOMP_ROOT)
  set(_zs_nvcomp_only_hints NO_DEFAULT_PATH)
endif()
# Global targets: the tests link the nvcomp codecs from another folder.
set(CMAKE_FIND_PACKAGE_TARGETS_GLOBAL ON)
find_package(nvcomp CONFIG QUIET HINTS ${_zs_nvcomp_hints} ${_zs_nvcomp_only_hints})
unset(CMAKE_FIND_PACKAGE_TARGETS_GLOBAL)
if(TARGET nvcomp::nvcomp)
  add_library(zs::nvcomp INTERFACE IMPORTED GLOBAL)
  target_link_libraries(zs::nvcomp INTERFACE nvcomp::nvcomp)
  set(_zs_nvcomp_where "${nvcomp_CONFIG}")
  set(_zs_nvcomp_version "${nvcomp_VERSION}")
  set(ZS_NVCOMP_LIBRARY_DIR "${nvcomp_LIBRARY_DIR}")
else()
  # No package configuration: the header and the library alone (the version from the header).
  find_path(ZS_NVCOMP_INCLUDE_DIR nvcomp.h HINTS ${_zs_nvcomp_hints} PATH_SUFFIXES include ../../include
            ${_zs_nvcomp_only_hints})
  find_library(ZS_NVCOMP_LIBRARY NAMES nvcomp libnvcomp.so.6 libnvcomp.so.5 libnvcomp.so.4
               HINTS ${_zs_nvcomp_hints} PATH_SUFFIXES lib64 lib ../.. ${_zs_nvcomp_only_hints})
  mark_as_advanced(ZS_NVCOMP_INCLUDE_DIR ZS_NVCOMP_LIBRARY)
  if(ZS_NVCOMP_INCLUDE_DIR AND ZS_NVCOMP_LIBRARY)
    add_library(zs::nvcomp UNKNOWN IMPORTED GLOBAL)
    set_target_properties(zs::nvcomp PROPERTIES IMPORTED_LOCATION "${ZS_NVCOMP_LIBRARY}"
                                                INTERFACE_INCLUDE_DIRECTORIES "${ZS_NVCOMP_INCLUDE_DIR}")
    set(_zs_nvcomp_where "${ZS_NVCOMP_LIBRARY}")
    get_filename_component(ZS_NVCOMP_LIBRARY_DIR "${ZS_NVCOMP_LIBRARY}" DIRECTORY)
    set(_zs_nvcomp_version "unknown version")
    if(EXISTS "${ZS_NVCOMP_INCLUDE_DIR}/nvcomp/version.h")
      file(STRINGS "${ZS_NVCOMP_INCLUDE_DIR}/nvcomp/version.h" _zs_nvcomp_ver_lines
           REGEX "#define NVCOMP_VER_(MAJOR|MINOR|PATCH) ")
      foreach(_zs_part MAJOR MINOR PATCH)
        string(REGEX MATCH "NVCOMP_VER_${_zs_part} ([0-9]+)" _zs_match "${_zs_nvcomp_ver_lines}")
        set(_zs_nvcomp_${_zs_part} "${CMAKE_MATCH_1}")
      endforeach()
      set(_zs_nvcomp_version "${_zs_nvcomp_MAJOR}.${_zs_nvcomp_MINOR}.${_zs_nvcomp_PATCH}")
    endif()
  endif()
endif()

if(TARGET zs::nvcomp)
  set(ZS_HAVE_NVCOMP ON)
  message(STATUS "nvCOMP found: ${_zs_nvcomp_where} (${_zs_nvcomp_version})")
else()
  message(STATUS "nvCOMP not found (optional; set ZS_NVCOMP_ROOT, or run scripts/fetch-nvcomp): "
                 "`zshuffle bench codec --vs nvcomp` and the nvcomp:NAME codecs are off")
endif()
