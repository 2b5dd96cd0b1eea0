# Helpers shared by the component folders.

# weft_component(NAME <name> SOURCES <files...> [PUBLIC_DEPS <targets...>]
#                [PRIVATE_DEPS <targets...>])
# Declares library weft_<name>, aliased weft::<name> and exported as
# weft::<name>. Public headers live next to the sources as <name>/*.h and are
# included as "weft/<name>/x.h" once installed, "<name>/x.h" in the tree.
function(weft_component)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target weft_${ARG_NAME})
  add_library(${target} ${ARG_SOURCES})
  add_library(weft::${ARG_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_NAME}
                                             OUTPUT_NAME weft_${ARG_NAME})
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/weft>)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  weft_warnings(${target})
  install(TARGETS ${target} EXPORT weftTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # Public headers: every .h directly in the component folder (not internal/).
  file(GLOB headers ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  install(FILES ${headers}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft/${ARG_NAME})
endfunction()

function(weft_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                                             -Wno-missing-field-initializers)
  endif()
endfunction()
