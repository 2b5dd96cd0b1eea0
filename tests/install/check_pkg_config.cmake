# Script mode: compiles pkg_config/main.cc with nothing but the compiler and
# `pkg-config --cflags --libs weft` from the weft installed in PREFIX, then
# runs it.
include(${CMAKE_CURRENT_LIST_DIR}/install_common.cmake)
find_program(pkg_config NAMES pkg-config pkgconf REQUIRED)
# weft.pc, then the .pc files of weft's dependencies where weft's build
# found them (Abseil from a prefix of its own, say).
set(pc_path "${PREFIX}/${LIBDIR}/pkgconfig")
string(REPLACE "|" ";" outer "${OUTER_PREFIX_PATH}")
foreach(p IN LISTS outer)
  string(APPEND pc_path ":${p}/${LIBDIR}/pkgconfig:${p}/lib/pkgconfig")
endforeach()
if(DEFINED ENV{PKG_CONFIG_PATH})
  string(APPEND pc_path ":$ENV{PKG_CONFIG_PATH}")
endif()
set(ENV{PKG_CONFIG_PATH} "${pc_path}")

run(${pkg_config} --cflags --libs weft)
separate_arguments(pc_flags UNIX_COMMAND "${last_output}")
separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
separate_arguments(link_flags UNIX_COMMAND "${EXE_LINKER_FLAGS}")
file(MAKE_DIRECTORY ${BUILD_DIR})
run(${CXX_COMPILER} -std=c++20 ${cxx_flags} ${CMAKE_CURRENT_LIST_DIR}/pkg_config/main.cc
    -o ${BUILD_DIR}/pkg_config_consumer ${pc_flags} ${link_flags})
run(${BUILD_DIR}/pkg_config_consumer)
message("${last_output}")
