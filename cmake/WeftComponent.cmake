# Helpers shared by the component folders.

# weft_component(NAME <name> SOURCES <files...> [PUBLIC_DEPS <targets...>]
#                [PRIVATE_DEPS <targets...>] [HEADERS_NOT_INSTALLED])
# Declares library weft_<name>, aliased weft::<name> and exported as
# weft::<name>. Public headers live next to the sources as <name>/*.h and are
# included as "weft/<name>/x.h" once installed, "<name>/x.h" in the tree.
# HEADERS_NOT_INSTALLED: a library weft's own libraries share but users
# never include (base/): its archive is installed, its headers are not.
# NAMESPACE: the namespace of its public names (default weft::<name>);
# PRIVATE_NAMESPACE: of its private code (default weft::<name>::internal).
function(weft_component)
  cmake_parse_arguments(ARG "HEADERS_NOT_INSTALLED" "NAME;NAMESPACE;PRIVATE_NAMESPACE"
                        "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
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
  if(NOT ARG_NAMESPACE)
    set(ARG_NAMESPACE weft::${ARG_NAME})
  endif()
  if(NOT ARG_PRIVATE_NAMESPACE)
    set(ARG_PRIVATE_NAMESPACE weft::${ARG_NAME}::internal)
  endif()
  weft_namespace(${target} ${ARG_NAMESPACE} ${ARG_PRIVATE_NAMESPACE})
  weft_warnings(${target})
  install(TARGETS ${target} EXPORT weftTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(ARG_HEADERS_NOT_INSTALLED)
    return()
  endif()
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

# weft_namespace(<target> <namespace> [<private namespace>]): the namespaces
# of the target's public names and of its private code (the second defaults
# to the first: an executable's code is all its own), which
# weft-include-check --namespaces holds the files of its folder to
# (docs/architecture.md, "Namespaces").
function(weft_namespace target namespace)
  set(private ${namespace})
  if(ARGC GREATER 2)
    set(private ${ARGV2})
  endif()
  set_target_properties(${target} PROPERTIES WEFT_NAMESPACE ${namespace}
                                             WEFT_PRIVATE_NAMESPACE ${private})
endfunction()
