# SPDX-License-Identifier: BSD-3-Clause
# Installation: libtypejit.so with its SONAME links, the `typejit` command, include/typejit.h,
# a pkg-config file, a CMake package (find_package(typejit) -> typejit::typejit) and the licence.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

target_include_directories(typejit INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(typejit PROPERTIES EXPORT_NAME typejit)

install(TARGETS typejit EXPORT typejitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS typejit_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/typejit.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The licence goes wherever the binaries go (share/doc/typejit/LICENSE).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# pkg-config: absolute directories, as GNUInstallDirs may have been given absolute ones.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TJ_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(TJ_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TJ_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TJ_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# `cmake --install --prefix P` changes the prefix after configuration: the .pc file is
# written at install time so that its prefix= line is the one actually installed to, and so that
# its rpath is left out when the library lands in a folder the linker searches anyway.
configure_file(${PROJECT_SOURCE_DIR}/cmake/typejit.pc.in ${PROJECT_BINARY_DIR}/typejit.pc.in2 @ONLY)
install(CODE "
  file(READ \"${PROJECT_BINARY_DIR}/typejit.pc.in2\" _tj_pc)
  string(REGEX REPLACE \"prefix=[^\\n]*\" \"prefix=\${CMAKE_INSTALL_PREFIX}\" _tj_pc \"\${_tj_pc}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
    set(_tj_libdir \"${CMAKE_INSTALL_LIBDIR}\")
  else()
    set(_tj_libdir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}\")
  endif()
  get_filename_component(_tj_libdir \"\${_tj_libdir}\" REALPATH)
  foreach(_tj_dir ${CMAKE_C_IMPLICIT_LINK_DIRECTORIES})
    get_filename_component(_tj_dir \"\${_tj_dir}\" REALPATH)
    if(_tj_dir STREQUAL _tj_libdir)
      string(REPLACE \" -Wl,-rpath,\\\${libdir}\" \"\" _tj_pc \"\${_tj_pc}\")
    endif()
  endforeach()
  file(WRITE \"${PROJECT_BINARY_DIR}/typejit.pc\" \"\${_tj_pc}\")")
install(FILES ${PROJECT_BINARY_DIR}/typejit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(TJ_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/typejit)
install(EXPORT typejitTargets NAMESPACE typejit:: DESTINATION ${TJ_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/typejitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/typejitConfig.cmake INSTALL_DESTINATION ${TJ_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/typejitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/typejitConfig.cmake
  ${PROJECT_BINARY_DIR}/typejitConfigVersion.cmake DESTINATION ${TJ_CMAKE_DIR})
