# Script mode: installs the build WEFT_BUILD_DIR into a fresh PREFIX, which
# the other install.* and examples.* tests share (CTest fixture
# weft_install).
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WEFT_BUILD_DIR}
                        --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${err}")
endif()
message("installed weft into ${PREFIX}")
