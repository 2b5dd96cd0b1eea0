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
