# Script mode: configures the project SOURCE_DIR in BUILD_DIR against the
# weft installed in PREFIX, builds it, and runs RUN (a program it built)
# when given. Any failing step fails the test.
include(${CMAKE_CURRENT_LIST_DIR}/install_common.cmake)
file(REMOVE_RECURSE ${BUILD_DIR})
configure_against_install(${SOURCE_DIR} ${BUILD_DIR})
run(${CMAKE_COMMAND} --build ${BUILD_DIR})
if(RUN)
  run(${BUILD_DIR}/${RUN})
  message("${last_output}")
endif()
message("built ${SOURCE_DIR} against ${PREFIX}")
