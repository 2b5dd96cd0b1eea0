# Script mode: the project without_gtest against the installed weft with
# GoogleTest hidden. It must build and run; asking for the mocks as a
# component must fail at find_package, and linking them must fail naming
# GoogleTest.
include(${CMAKE_CURRENT_LIST_DIR}/install_common.cmake)
set(source ${CMAKE_CURRENT_LIST_DIR}/without_gtest)
set(hide_gtest -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON)

file(REMOVE_RECURSE ${BUILD_DIR})
configure_against_install(${source} ${BUILD_DIR}/plain ${hide_gtest})
run(${CMAKE_COMMAND} --build ${BUILD_DIR}/plain)
run(${BUILD_DIR}/plain/without_gtest)
message("${last_output}")

# expect_configure_failure(<name> <text the error must hold> <args...>)
function(expect_configure_failure name expected)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${source} -B ${BUILD_DIR}/${name} -G Ninja
            -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${hide_gtest} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${name}: configuring succeeded without GoogleTest")
  endif()
  string(REGEX REPLACE "[ \n]+" " " said "${err}")
  string(FIND "${said}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: the error does not say '${expected}':\n${err}")
  endif()
  message("${name}: refused, saying '${expected}'")
endfunction()
expect_configure_failure(component
  "weft::testing (gMock mocks) needs GoogleTest with gMock" -DASK_FOR_MOCKS=ON)
expect_configure_failure(link
  "weft::testing_needs_GoogleTest_with_gMock" -DLINK_MOCKS=ON)
