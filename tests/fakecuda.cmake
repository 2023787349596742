# SPDX-License-Identifier: BSD-3-Clause
# The CPU-only test double of the CUDA driver (tests/fakecuda): libcuda.so.1 built for driver
# 13.0 and 12.4, the NVRTC shim that carries each program's source to it, and the double's own
# test. Other test files run under ${TJ_EMU_ENV}, ${TJ_EMU_ENV_12} or, with mpirun,
# ${TJ_EMU_MPI_ENV}.

find_program(TJ_EMU_CXX NAMES g++ c++ clang++)
if(NOT TJ_EMU_CXX)
  message(WARNING "no host C++ compiler: the fake CUDA driver and its tests are not built")
  return()
endif()

set(FAKECUDA_DIR ${CMAKE_CURRENT_BINARY_DIR}/fakecuda)
# Host-compiled kernels, cached by a hash of everything that makes them (source, compiler and
# flags, tests/emu/tj_emu.h): builds against other MPIs may share one folder (.ci/run does).
set(TJ_FAKECUDA_KERNEL_CACHE "" CACHE PATH
    "Where the test double keeps host-compiled kernels (empty: tests/fakecuda-kernels here)")
set(FAKECUDA_KERNEL_CACHE ${CMAKE_CURRENT_BINARY_DIR}/fakecuda-kernels)
if(TJ_FAKECUDA_KERNEL_CACHE)
  set(FAKECUDA_KERNEL_CACHE ${TJ_FAKECUDA_KERNEL_CACHE})
endif()
set(FAKECUDA_SOURCES context.c copy.c device.c fault.c grid.c init.c inject.c ipc.c kernel.c
    managed.c memory.c module.c pointer.c pool.c procaddr.c stream.c trace.c track.c vmm.c)
list(TRANSFORM FAKECUDA_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/)

# One libcuda.so.1 per emulated driver version (directory name and CUDA_VERSION-style number).
foreach(version 13.0:13000 12.4:12040)
  string(REPLACE ":" ";" version ${version})
  list(GET version 0 dir)
  list(GET version 1 number)
  set(target fakecuda_${number})
  add_library(${target} SHARED ${FAKECUDA_SOURCES})
  target_include_directories(${target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(${target} PRIVATE FAKECUDA_VERSION=${number}
    FAKECUDA_CXX="${TJ_EMU_CXX}" FAKECUDA_EMU_DIR="${CMAKE_CURRENT_SOURCE_DIR}/emu"
    FAKECUDA_DEFAULT_CACHE="${FAKECUDA_KERNEL_CACHE}")
  target_link_libraries(${target} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  # No VERSION/SOVERSION: the file and its SONAME are both libcuda.so.1.
  set_target_properties(${target} PROPERTIES OUTPUT_NAME cuda SUFFIX ".so.1"
                        LIBRARY_OUTPUT_DIRECTORY ${FAKECUDA_DIR}/${dir})
endforeach()

# libnvrtc.so.13, found by name before the toolkit's; it forwards to the toolkit's by path.
add_library(fakecuda_nvrtc SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/nvrtc_shim.c
            ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/nvrtc_cache.c)
target_include_directories(fakecuda_nvrtc SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(fakecuda_nvrtc PRIVATE
  FAKECUDA_REAL_NVRTC="${CUDAToolkit_LIBRARY_DIR}/libnvrtc.so.13")
target_link_libraries(fakecuda_nvrtc PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
# The real library's symbols carry the version node libnvrtc.so.13; so do the shim's.
target_link_options(fakecuda_nvrtc PRIVATE -Wl,--no-undefined -Wl,--build-id
  -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/nvrtc_shim.map)
set_property(TARGET fakecuda_nvrtc APPEND PROPERTY LINK_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/nvrtc_shim.map)
set_target_properties(fakecuda_nvrtc PROPERTIES OUTPUT_NAME nvrtc SUFFIX ".so.13"
                      LIBRARY_OUTPUT_DIRECTORY ${FAKECUDA_DIR}/nvrtc)

# How tests run on the double: the driver and the shim first on the library path.
set(FAKECUDA_LD_PATH_13 ${FAKECUDA_DIR}/13.0:${FAKECUDA_DIR}/nvrtc)
set(FAKECUDA_LD_PATH_12 ${FAKECUDA_DIR}/12.4:${FAKECUDA_DIR}/nvrtc)
if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
  string(APPEND FAKECUDA_LD_PATH_13 ":$ENV{LD_LIBRARY_PATH}")
  string(APPEND FAKECUDA_LD_PATH_12 ":$ENV{LD_LIBRARY_PATH}")
endif()
# NVRTC's results are kept beside the host-compiled kernels: every test starts typejit with an
# empty kernel cache, and the same kernels recur across tests and builds.
set(FAKECUDA_NVRTC_CACHE ${FAKECUDA_KERNEL_CACHE}/nvrtc)
set(TJ_EMU_ENV LD_LIBRARY_PATH=${FAKECUDA_LD_PATH_13} FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE}
    FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE})
set(TJ_EMU_ENV_12 LD_LIBRARY_PATH=${FAKECUDA_LD_PATH_12} FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE}
    FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE})
set(TJ_EMU_MPI_ENV -x LD_LIBRARY_PATH=${FAKECUDA_LD_PATH_13} -x FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE}
    -x FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE})
# The test driver's threaded mode (FAKECUDA_STREAM_THREAD=1): queued device work runs on a thread
# of the driver's own beside the host, as on a GPU. The device tests of the send queue, the
# point-to-point paths, one wait per call and the halo exchanges run in both modes
# (their *_threaded variants).
set(TJ_EMU_THREADED -x FAKECUDA_STREAM_THREAD=1)

# The double's own test, linked against the toolkit's stub so libcuda.so.1 resolves at run time
# to whichever double is first on LD_LIBRARY_PATH.
add_executable(test_fakecuda fakecuda/test_fakecuda.c)
target_include_directories(test_fakecuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_include_directories(test_fakecuda SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(test_fakecuda PRIVATE CUDA::cuda_driver Threads::Threads ${CMAKE_DL_LIBS})
add_dependencies(test_fakecuda fakecuda_13000 fakecuda_12040 fakecuda_nvrtc)
# No skip code: under the emu label nothing may be skipped.
add_test(NAME fakecuda_driver COMMAND ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV} $<TARGET_FILE:test_fakecuda>)
add_test(NAME fakecuda_driver_12
         COMMAND ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV_12} $<TARGET_FILE:test_fakecuda>)
set_tests_properties(fakecuda_driver fakecuda_driver_12 PROPERTIES TIMEOUT 300 LABELS emu)
