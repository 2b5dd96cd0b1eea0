# Script mode: install, configure the consumer against the install, build and
# run it. Any failing step fails the test.
file(REMOVE_RECURSE ${SCRATCH_DIR})
set(prefix ${SCRATCH_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# The consumer finds weft in the scratch prefix, and weft's dependencies
# where weft's own build found them (OUTER_PREFIX_PATH, '|'-separated). The
# search path goes through the environment: run() re-splits its arguments,
# so a ';' list inside one -D argument would be cut in two.
string(REPLACE "|" ":" env_prefix_path "${prefix}|${OUTER_PREFIX_PATH}")
set(ENV{CMAKE_PREFIX_PATH} "${env_prefix_path}")

run(${CMAKE_COMMAND} --install ${WEFT_BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${SCRATCH_DIR}/build -G Ninja
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${SCRATCH_DIR}/build)
run(${SCRATCH_DIR}/build/consumer)
message("${last_output}")
