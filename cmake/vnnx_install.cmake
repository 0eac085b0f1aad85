# Installs the headers (the vnnx target's HEADERS file set), the vnnx tool, the exported
# vnnx::vnnx target with vnnxConfig.cmake and its version file, and vnnx.pc for pkg-config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A header-only library: the package is architecture independent and lives under share/.
set(VNNX_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/vnnx" CACHE STRING
    "Where vnnxConfig.cmake is installed, relative to the prefix")
set(VNNX_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_DATADIR}/pkgconfig" CACHE STRING
    "Where vnnx.pc is installed, relative to the prefix")

install(TARGETS vnnx EXPORT vnnxTargets
        FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT vnnxTargets NAMESPACE vnnx:: DESTINATION "${VNNX_INSTALL_CMAKEDIR}")

# The config file finds everything relative to itself, so the same file also serves the build
# tree (find_package(vnnx) with vnnx_DIR set to the build folder, beside the exported targets).
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/vnnxConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/vnnxConfig.cmake" INSTALL_DESTINATION "${VNNX_INSTALL_CMAKEDIR}")
# Pre-1.0: a different minor version is a different API.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/vnnxConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/vnnxConfig.cmake" "${PROJECT_BINARY_DIR}/vnnxConfigVersion.cmake"
        DESTINATION "${VNNX_INSTALL_CMAKEDIR}")

# includedir relative to ${prefix} when it can be, so a pkg-config --define-prefix works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(VNNX_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(VNNX_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# The prefix found from where vnnx.pc lies, so that the file stays right when the install is
# moved or made with `cmake --install --prefix`.
if(IS_ABSOLUTE "${VNNX_INSTALL_PKGCONFIGDIR}")
  set(VNNX_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH vnnx_pc_up "/prefix/${VNNX_INSTALL_PKGCONFIGDIR}" "/prefix")
  string(REGEX REPLACE "/$" "" vnnx_pc_up "${vnnx_pc_up}")
  set(VNNX_PC_PREFIX "\${pcfiledir}/${vnnx_pc_up}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/vnnx.pc.in" "${PROJECT_BINARY_DIR}/vnnx.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/vnnx.pc" DESTINATION "${VNNX_INSTALL_PKGCONFIGDIR}")
export(EXPORT vnnxTargets NAMESPACE vnnx:: FILE "${PROJECT_BINARY_DIR}/vnnxTargets.cmake")
# pkg-config prefers <name>-uninstalled.pc when it is on PKG_CONFIG_PATH: the source tree, uninstalled.
set(VNNX_PC_UNINSTALLED_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
configure_file("${CMAKE_CURRENT_LIST_DIR}/vnnx-uninstalled.pc.in" "${PROJECT_BINARY_DIR}/pkgconfig/vnnx-uninstalled.pc" @ONLY)

if(TARGET vnnx_tool)
  install(TARGETS vnnx_tool RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()
