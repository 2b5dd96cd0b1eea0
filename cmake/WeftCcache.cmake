# Compiles through ccache when it is installed (WEFT_CCACHE=OFF, or a
# CMAKE_CXX_COMPILER_LAUNCHER of your own, turns this off). With the cache
# keyed on paths relative to the checkout, a fresh clone (CI's, or a second
# worktree) reuses what any checkout on this machine compiled before, so it
# recompiles only what differs; the objects are the same either way.
option(WEFT_CCACHE "Compile through ccache when it is installed" ON)
if(WEFT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(WEFT_CCACHE_PROGRAM ccache)
  if(WEFT_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER
        ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
        CCACHE_NOHASHDIR=1 ${WEFT_CCACHE_PROGRAM})
    message(STATUS "weft: compiling through ${WEFT_CCACHE_PROGRAM}")
  endif()
endif()
