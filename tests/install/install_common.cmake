# Shared by the scripts of tests/install (CMake script mode): run a command
# and fail the test on a non-zero exit, and the environment that makes a
# project find the scratch install of weft and weft's own dependencies.

# run(<command...>): runs it; sets last_output (stdout) in the caller.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# The project finds weft in PREFIX, and weft's dependencies where weft's
# own build found them (OUTER_PREFIX_PATH, '|'-separated). The search path
# goes through the environment: run() re-splits its arguments, so a ';'
# list inside one -D argument would be cut in two.
string(REPLACE "|" ":" env_prefix_path "${PREFIX}|${OUTER_PREFIX_PATH}")
set(ENV{CMAKE_PREFIX_PATH} "${env_prefix_path}")

# configure_against_install(<source dir> <build dir> [extra args...]):
# configures with weft's compiler and flags (a sanitizer build's too).
function(configure_against_install source build)
  run(${CMAKE_COMMAND} -S ${source} -B ${build} -G Ninja
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}"
      ${ARGN})
endfunction()
