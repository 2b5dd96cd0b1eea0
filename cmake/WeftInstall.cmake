# find_package(weft) support: exports every weft:: target.
set(WEFT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${WEFT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake INSTALL_DESTINATION ${WEFT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake
              ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
        DESTINATION ${WEFT_CMAKE_DIR})

# pkg-config: <libdir>/pkgconfig/weft.pc, for builds that do not use CMake.
# Its paths are relative to the .pc file (${pcfiledir}), so the installed
# tree can move and `cmake --install --prefix` needs no reconfigure.
function(_weft_pc_path dir out)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
set(weft_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH WEFT_PC_PREFIX_FROM_PCDIR /prefix/${weft_pc_dir} /prefix)
_weft_pc_path("${CMAKE_INSTALL_LIBDIR}" WEFT_PC_LIBDIR)
_weft_pc_path("${CMAKE_INSTALL_INCLUDEDIR}" WEFT_PC_INCLUDEDIR)
# The libraries are static by default, so what they use privately goes in
# too: Abseil's pkg-config names (Debian's libabsl-dev and Homebrew's abseil
# ship them), the loader's -ldl and the threads the bootstrap starts.
set(WEFT_PC_REQUIRES "absl_status absl_statusor absl_strings absl_str_format \
absl_flat_hash_map absl_flat_hash_set")
set(WEFT_PC_SYSTEM_LIBS "${CMAKE_THREAD_LIBS_INIT}")
foreach(lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND WEFT_PC_SYSTEM_LIBS " -l${lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in
               ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${weft_pc_dir})
