# SPDX-License-Identifier: BSD-3-Clause
# The CPU-only stand-in of the CUDA runtime API (tests/fakecuda/cudart), over the test driver:
# libcudart.so.13 against the toolkit's headers, and libcudart.so.12 against CUDA 12's runtime
# headers where the build has them (.ci/install-deps --all puts them in build/cuda12), both in
# build/tests/fakecuda/cudart; the stand-in's own test; the device oracle and halo3d built on the
# runtime API, run with typejit preloaded.

if(NOT TARGET fakecuda_13000)
  return()
endif()

# CUDA 12's cuda_runtime_api.h and driver_types.h (the CUDA 12 ABI: cudaDeviceProp,
# cudaPointerAttributes, cudaMemAdvise and cudaMemPrefetchAsync differ from 13's).
set(TJ_CUDA12_INCLUDE "" CACHE PATH
    "CUDA 12 runtime headers for the runtime stand-in's libcudart.so.12 (empty: build/cuda12's)")
set(tj_cuda12 ${TJ_CUDA12_INCLUDE})
if(NOT tj_cuda12)
  file(GLOB tj_cuda12
       ${PROJECT_BINARY_DIR}/cuda12/lib/python3*/site-packages/nvidia/cuda_runtime/include)
endif()

set(CUDART_SOURCES context.c copy.c device.c driver.c errors.c event.c ipc.c launch.c memory.c
    pointer.c pool.c stream.c unsupported.c)
list(TRANSFORM CUDART_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/cudart/)
set(CUDART_DIR ${FAKECUDA_DIR}/cudart)

# tj_cudart(MAJOR INCLUDE): libcudart.so.MAJOR, its symbols in the version node libcudart.so.MAJOR
# as the toolkit's library has them, so that programs built against the toolkit resolve here.
function(tj_cudart major include)
  set(map ${CMAKE_CURRENT_BINARY_DIR}/cudart-${major}.map)
  file(WRITE ${map} "libcudart.so.${major} {\n  global: cuda*; __cuda*;\n  local: *;\n};\n")
  add_library(fakecudart_${major} SHARED ${CUDART_SOURCES})
  target_compile_definitions(fakecudart_${major} PRIVATE CUDART_MAJOR=${major})
  target_include_directories(fakecudart_${major} SYSTEM BEFORE PRIVATE ${include})
  target_include_directories(fakecudart_${major} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(fakecudart_${major} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  target_link_options(fakecudart_${major} PRIVATE -Wl,--no-undefined -Wl,--version-script=${map})
  set_property(TARGET fakecudart_${major} APPEND PROPERTY LINK_DEPENDS ${map})
  # No VERSION/SOVERSION: the file and its SONAME are both libcudart.so.MAJOR.
  set_target_properties(fakecudart_${major} PROPERTIES OUTPUT_NAME cudart SUFFIX ".so.${major}"
                        LIBRARY_OUTPUT_DIRECTORY ${CUDART_DIR})
endfunction()

tj_cudart(13 ${CUDAToolkit_INCLUDE_DIRS})
if(tj_cuda12)
  tj_cudart(12 ${tj_cuda12})
else()
  message(STATUS "no CUDA 12 runtime headers (build/cuda12, TJ_CUDA12_INCLUDE): the runtime "
                 "stand-in's libcudart.so.12 is not built")
endif()

# The stand-in's own test, a runtime-API program linked as programs are: against the toolkit's
# libcudart.so (libcudart.so.13), or CUDA 12's libcudart.so.12; LD_LIBRARY_PATH puts the stand-in
# and the test driver first.
set(CUDART_LD_PATH ${CUDART_DIR}:${FAKECUDA_LD_PATH_13})
set(TJ_CUDART_ENV LD_LIBRARY_PATH=${CUDART_LD_PATH} FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE}
    FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE})
set(TJ_CUDART_MPI_ENV -x LD_LIBRARY_PATH=${CUDART_LD_PATH}
    -x FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE}
    -x FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE})

# tj_cudart_program(NAME MAJOR SOURCES...): a program of the runtime API of CUDA MAJOR.
function(tj_cudart_program name major)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  if(major EQUAL 12)
    file(GLOB libcudart12 ${tj_cuda12}/../lib/libcudart.so.12)
    target_include_directories(${name} SYSTEM BEFORE PRIVATE ${tj_cuda12})
    target_link_libraries(${name} PRIVATE ${libcudart12})
  else()
    target_link_libraries(${name} PRIVATE CUDA::cudart)
  endif()
  target_include_directories(${name} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(${name} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  # The stand-in is found by LD_LIBRARY_PATH only, never by a path recorded in the program.
  set_target_properties(${name} PROPERTIES SKIP_BUILD_RPATH ON)
  add_dependencies(${name} fakecudart_${major} fakecuda_13000 fakecuda_12040 fakecuda_nvrtc)
endfunction()

set(tj_cudart_majors 13)
if(tj_cuda12)
  list(APPEND tj_cudart_majors 12)
endif()
foreach(major ${tj_cudart_majors})
  tj_cudart_program(test_cudart_${major} ${major} fakecuda/cudart/test_cudart.c)
  add_test(NAME cudart_runtime_${major} COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_CUDART_ENV} FAKECUDA_DEVICES=2 FAKECUDA_SM=90,80
           $<TARGET_FILE:test_cudart_${major}>)
  add_test(NAME cudart_launch_refused_${major} COMMAND ${TJ_CHECKED}
           --once "^cudart stand-in: cannot run the program's own kernels \\(launch of _Z6kernelv"
           --once "^cudart stand-in: cudaDeviceSetLimit is not emulated \\(cudaErrorNotSupported\\)$"
           --once "^cudart stand-in: cudaMemcpy3D of a CUDA array is not emulated \\(cudaErrorNotSupported\\)$"
           -- ${CMAKE_COMMAND} -E env ${TJ_CUDART_ENV} $<TARGET_FILE:test_cudart_${major}> launch)
  add_test(NAME cudart_sticky_${major} COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_CUDART_ENV} FAKECUDA_FAIL=cuMemsetD8_v2:1=700 $<TARGET_FILE:test_cudart_${major}>
           sticky)
  set_tests_properties(cudart_runtime_${major} cudart_launch_refused_${major}
                       cudart_sticky_${major} PROPERTIES TIMEOUT 60 LABELS emu)
endforeach()
# Every function exported is one of the real library's, in its version node.
add_test(NAME cudart_exports_13 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/cudart/check_exports.sh
         $<TARGET_FILE:fakecudart_13> ${CUDAToolkit_LIBRARY_DIR}/libcudart.so.13)
set_tests_properties(cudart_exports_13 PROPERTIES TIMEOUT 60 LABELS unit)
if(tj_cuda12)
  add_test(NAME cudart_exports_12
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/cudart/check_exports.sh
           $<TARGET_FILE:fakecudart_12> ${tj_cuda12}/../lib/libcudart.so.12)
  set_tests_properties(cudart_exports_12 PROPERTIES TIMEOUT 60 LABELS unit)
endif()
# The CUDA 13 runtime on the 12.4 driver: an insufficient driver.
add_test(NAME cudart_old_driver COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
         LD_LIBRARY_PATH=${CUDART_DIR}:${FAKECUDA_LD_PATH_12}
         $<TARGET_FILE:test_cudart_13> old-driver)
set_tests_properties(cudart_old_driver PROPERTIES TIMEOUT 60 LABELS emu)

# The device oracle (tests/test_gpu_pack.c) as a program of the runtime API (TJ_CUDART: its
# buffers from tests/devbuf_rt.c), with typejit preloaded: device buffers from cudaMalloc, then
# from cudaMallocAsync (pool memory, which belongs to no context).
tj_cudart_program(test_gpu_pack_cudart 13 test_gpu_pack.c devbuf_rt.c randtype.c)
target_compile_definitions(test_gpu_pack_cudart PRIVATE TJ_CUDART)
target_link_libraries(test_gpu_pack_cudart PRIVATE MPI::MPI_C)

# halo3d --device built on the runtime API (HALO3D_CUDART), 2 ranks with typejit preloaded.
tj_cudart_program(halo3d_cudart 13 ${PROJECT_SOURCE_DIR}/bench/halo3d.c)
target_compile_definitions(halo3d_cudart PRIVATE HALO3D_CUDART)
target_include_directories(halo3d_cudart PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(halo3d_cudart PRIVATE MPI::MPI_C)

# tj_cudart_halo3d(NAME RANK1 ARGS...): emu_cudart_halo3d<NAME>_2, halo3d_cudart --device ARGS on
# 2 ranks, every exchange on the GPU path; RANK1 is what rank 1's statistics must show before
# its fallbacks (rank 0 always packs and unpacks on the GPU).
set(tj_gpu_packs "packs_gpu=[1-9][0-9]* unpacks_gpu=[1-9][0-9]* .*")
function(tj_cudart_halo3d name rank1)
  add_test(NAME emu_cudart_halo3d${name}_2 COMMAND ${TJ_CHECKED}
           --expect "^typejit\\[0\\]: stats .* ${tj_gpu_packs}gpu_fallbacks=0 .*kernel_launches=[1-9]"
           --expect "^typejit\\[1\\]: stats .* ${rank1}gpu_fallbacks=0 .*kernel_launches=[1-9]"
           --stdout "PASS: 0 wrong ghost cells"
           -- ${TJ_MPIEXEC} ${TJ_CUDART_MPI_ENV} -x TYPEJIT_STATS=1
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-cudart-halo -np 2
           $<TARGET_FILE:halo3d_cudart> --device ${ARGN} --n 8 --radius 2 --iters 2 --quiet)
  set_tests_properties(emu_cudart_halo3d${name}_2 PROPERTIES TIMEOUT 300 LABELS "emu;mpi")
endfunction()

# Each with device memory from cudaMalloc (malloc) and from cudaMallocAsync (pool).
foreach(alloc malloc pool)
  set(option "")
  set(halo_option "")
  set(suffix "")
  if(alloc STREQUAL "pool")
    set(option --stream-ordered)
    set(halo_option --alloc pool)
    set(suffix _pool)
  endif()
  add_test(NAME emu_cudart_pack${suffix} COMMAND ${TJ_CHECKED} --silent --
           ${CMAKE_COMMAND} -E env ${TJ_CUDART_ENV} LD_PRELOAD=${TJ_LIB}
           TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-cudart
           $<TARGET_FILE:test_gpu_pack_cudart> --types 20 --seed 7 ${option})
  set_tests_properties(emu_cudart_pack${suffix} PROPERTIES TIMEOUT 300 LABELS emu)
  tj_cudart_halo3d("${suffix}" "" ${halo_option})
endforeach()

# halo3d_cudart on grids of cudaMalloc3D, as TEMPI's halo exchange allocates them: padded rows
# (the datatypes describe them), copies by cudaMemcpy3D, the padding untouched; the regions by
# MPI_Isend/MPI_Irecv, and packed by MPI_Pack into one buffer for MPI_Alltoallv.
foreach(how isend pack)
  tj_cudart_halo3d(_pitched_${how} "${tj_gpu_packs}" --alloc pitched --collective ${how})
endforeach()

# A program nvcc builds: linked with -cudart shared (libcudart.so.13) it runs on the stand-in and
# its kernel's launch is refused with one line; built the default way (-cudart static) the
# runtime is inside the program, which the stand-in cannot replace (no libcudart.so is needed).
find_program(TJ_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR})
if(TJ_NVCC)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/cudart/nvcc_program.cu)
  set(shared ${CMAKE_CURRENT_BINARY_DIR}/cudart_nvcc_shared)
  set(static ${CMAKE_CURRENT_BINARY_DIR}/cudart_nvcc_static)
  add_custom_command(OUTPUT ${shared} COMMAND ${TJ_NVCC} -cudart shared -o ${shared} ${src}
                     DEPENDS ${src} COMMENT "nvcc -cudart shared nvcc_program.cu")
  add_custom_command(OUTPUT ${static} COMMAND ${TJ_NVCC} -o ${static} ${src}
                     DEPENDS ${src} COMMENT "nvcc nvcc_program.cu")
  add_custom_target(cudart_nvcc_programs ALL DEPENDS ${shared} ${static})
  add_test(NAME cudart_nvcc_shared COMMAND ${TJ_CHECKED} --stdout "^PASS: 0 failures"
           --once "^cudart stand-in: cannot run the program's own kernels \\(launch of _Z5scalePdi "
           -- ${CMAKE_COMMAND} -E env ${TJ_CUDART_ENV} ${shared})
  add_test(NAME cudart_nvcc_static COMMAND sh -c
           "readelf -d '${shared}' | grep -q 'NEEDED.*libcudart.so.13' && ! readelf -d '${static}' | grep -q 'NEEDED.*libcudart'")
  set_tests_properties(cudart_nvcc_shared cudart_nvcc_static PROPERTIES TIMEOUT 60 LABELS emu)
else()
  message(STATUS "no nvcc: the runtime stand-in's nvcc tests are not built")
endif()
