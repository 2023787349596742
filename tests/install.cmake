# SPDX-License-Identifier: BSD-3-Clause
# The installed tree (cmake/install.cmake): a consumer found through find_package, another
# built with pkg-config's flags. Not in a sanitizer build: its library needs the sanitizer runtime
# loaded first, which a plain consumer program does not do (the packaging is the same).
if(TJ_SANITIZE)
  return()
endif()
tj_add_test(install_cmake LABELS unit TIMEOUT 60
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
          ${PROJECT_VERSION} cmake)
tj_add_test(install_pkgconfig LABELS unit TIMEOUT 60
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
          ${PROJECT_VERSION} pkg-config)
