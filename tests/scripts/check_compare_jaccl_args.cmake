# scripts/compare-jaccl.sh refuses each bad argument with exit 2 and one
# line saying what is wrong, before it builds or runs anything (no JACCL
# source is needed to see it).
#
#   cmake -DSCRIPT=<scripts/compare-jaccl.sh> -P check_compare_jaccl_args.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED SCRIPT)
  message(FATAL_ERROR "usage: cmake -DSCRIPT=<compare-jaccl.sh> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()

# Each case: the arguments, then the line expected on stderr, |-separated.
set(cases
  "|compare-jaccl: --jaccl-src=DIR is required (an MLX checkout or its mlx/distributed/jaccl/lib)"
  "--jaccl-src=/nonexistent/jaccl|compare-jaccl: --jaccl-src: no folder /nonexistent/jaccl"
  "--jaccl-src=/|compare-jaccl: --jaccl-src: / holds no jaccl/jaccl.h and examples/allreduce_bench.cpp (nor under mlx/distributed/jaccl/lib)"
  "--sizes=6|compare-jaccl: --sizes: 6 is not a positive multiple of 4 bytes (float32 elements)"
  "--sizes=1K,2X|compare-jaccl: --sizes: \"2X\" is not a size (bytes, with K, M or G)"
  "--sizes=1.5M|compare-jaccl: --sizes: \"1.5M\" is not a size (bytes, with K, M or G)"
  "--worlds=torus:4|compare-jaccl: --worlds: \"torus:4\": the topology is mesh or ring"
  "--worlds=mesh:9|compare-jaccl: --worlds: \"mesh:9\": 2 to 8 ranks (JACCL's mesh takes at most 8)"
  "--worlds=ring:4:2:1|compare-jaccl: --worlds: \"ring:4:2:1\" is not TOPOLOGY:RANKS[:CABLES]"
  "--iters=1|compare-jaccl: --iters=1: at least 2 (one all-sum's time is T(N) - T(1) over N - 1)"
  "--repeats=0|compare-jaccl: --repeats=0 is not a positive whole number"
  "--quick|--bogus|compare-jaccl: unknown argument --bogus (see the usage at the top of ${SCRIPT})")
set(problems "")
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts -1 want)
  list(REMOVE_AT parts -1)
  execute_process(COMMAND bash ${SCRIPT} ${parts}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 30)
  string(STRIP "${err}" err)
  if(NOT code EQUAL 2 OR NOT err STREQUAL want OR NOT out STREQUAL "")
    string(APPEND problems "\n  [${parts}]: exit ${code}, stderr '${err}', stdout '${out}'; want exit 2 and '${want}'")
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "compare-jaccl.sh:${problems}")
endif()
