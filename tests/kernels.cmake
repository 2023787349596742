# SPDX-License-Identifier: BSD-3-Clause
# The kernel lookup layer (src/kernels): the background compiler at volume, its bounded stop
# at MPI_Finalize, its threads' signal mask, and its stop at exit without MPI_Finalize.
tj_test_program(test_compiler test_compiler.c)
if(TARGET fakecuda_nvrtc)
  add_dependencies(test_compiler fakecuda_nvrtc)
  # Only the NVRTC shim (no driver): kernels for the target without a device.
  add_test(NAME kernels_compiler_volume COMMAND ${TJ_CHECKED}
           --once "^the test double refuses every compile"
           -- ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${FAKECUDA_DIR}/nvrtc
           TYPEJIT_JIT=always TYPEJIT_CACHE=off FAKECUDA_NVRTC_REFUSE=1 TYPEJIT_JIT_THREADS=4
           $<TARGET_FILE:test_compiler> volume)
  add_test(NAME kernels_compiler_exit COMMAND ${TJ_CHECKED} --silent
           -- ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${FAKECUDA_DIR}/nvrtc
           TYPEJIT_JIT=always TYPEJIT_CACHE=off FAKECUDA_NVRTC_DELAY_MS=1500 TYPEJIT_JIT_THREADS=2
           $<TARGET_FILE:test_compiler> exit)
  set_tests_properties(kernels_compiler_volume kernels_compiler_exit PROPERTIES TIMEOUT 180
                       LABELS "unit;jit")
endif()
set(TJ_LOCK_CACHE ${CMAKE_CURRENT_BINARY_DIR}/compiler-lock-cache)
add_test(NAME kernels_compiler_lock COMMAND sh -c "rm -rf ${TJ_LOCK_CACHE} && exec \"$@\"" sh
         ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env TYPEJIT_JIT=always TYPEJIT_ARCH=sm_90
         TYPEJIT_CACHE_DIR=${TJ_LOCK_CACHE} $<TARGET_FILE:test_compiler> lock)
add_test(NAME kernels_compiler_signals COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
         TYPEJIT_JIT=always TYPEJIT_ARCH=sm_90 TYPEJIT_CACHE=off
         $<TARGET_FILE:test_compiler> signals)
set_tests_properties(kernels_compiler_lock kernels_compiler_signals PROPERTIES TIMEOUT 180
                     LABELS "unit;jit")

# The generic kernel takes the one lookup path too, compile lock included: of two ranks that
# need it at once from an empty cache, one compiles each direction and the other waits for its
# entry (2 compiles in all, not one per rank).
if(TARGET fakecuda_nvrtc)
  set(TJ_GENERIC_CACHE ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-generic)
  add_test(NAME emu_generic_compiled_once COMMAND sh -c
           "rm -rf ${TJ_GENERIC_CACHE} && exec \"$@\"" sh
           ${CMAKE_CURRENT_SOURCE_DIR}/stat_sum.sh jit_compiles 2 --
           ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_STATS=1 -x TYPEJIT_JIT=off
           -x TYPEJIT_CACHE_DIR=${TJ_GENERIC_CACHE} -np 2
           $<TARGET_FILE:halo3d> --device --n 6 --radius 1 --iters 1 --quiet)
  set_tests_properties(emu_generic_compiled_once PROPERTIES TIMEOUT 300 LABELS "emu;mpi")
endif()

# The layers as docs/architecture.md draws them, checked on the #include lines of the library and
# on the calls of its objects: every folder includes and calls only its own and lower layers, no
# two modules include each other, no circle of calls runs between modules, every file is named.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.py
           ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_NM})
  set_tests_properties(layers PROPERTIES TIMEOUT 60 LABELS unit)
  # Each layer's mutable state in one structure (docs/architecture.md, "Each layer's state"): the
  # writable variables of static storage at file scope in the library's objects, at most the 19
  # there are (a structure and a thread-local one per layer, the driver's state word, the
  # Fortran slots' table).
  add_test(NAME library_state COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_state.py
           ${PROJECT_BINARY_DIR} 19 ${CMAKE_OBJDUMP})
  set_tests_properties(library_state PROPERTIES TIMEOUT 60 LABELS unit)
endif()

# The rest of this file is of label heavy: the kernel cache's keys and the warm tool.
if(NOT TJ_HEAVY_TESTS)
  return()
endif()

# The disk cache must be keyed by the exact kernel source, so that a library
# whose generator emits other text never loads the kernels of the old one. The variant below is
# the whole library built with another thread-block size baked into its kernels
# (TJ_GEN_BLOCK_THREADS; a compile definition of these test targets only), so a stale kernel
# would also be launched with the wrong geometry and move the wrong bytes.
add_library(typejit_core_variant OBJECT ${TJ_CORE_SOURCES} ${TJ_TEMPLATES_C})
add_dependencies(typejit_core_variant tj_jit) # generates ${TJ_TEMPLATES_C}
target_include_directories(typejit_core_variant PUBLIC
  ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}
  ${PROJECT_BINARY_DIR}/generated ${UTHASH_INCLUDE_DIR} ${XXHASH_INCLUDE_DIR})
target_include_directories(typejit_core_variant SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(typejit_core_variant PUBLIC TJ_VERSION_STRING="${PROJECT_VERSION}"
                           PRIVATE TJ_GEN_BLOCK_THREADS=128)
target_link_libraries(typejit_core_variant PUBLIC MPI::MPI_C Threads::Threads ${CMAKE_DL_LIBS} m)
add_library(typejit_variant SHARED ${TJ_INTERPOSE_SOURCES})
target_link_libraries(typejit_variant PRIVATE typejit_core_variant)
get_target_property(tool_sources typejit_tool SOURCES)
list(TRANSFORM tool_sources PREPEND ${PROJECT_SOURCE_DIR}/src/tools/)
add_executable(typejit_tool_variant ${tool_sources})
target_link_libraries(typejit_tool_variant PRIVATE typejit_core_variant)
target_include_directories(typejit_tool_variant PRIVATE ${PROJECT_SOURCE_DIR}/src/tools)

# The warm tool: what the original build warmed, the variant compiles again (none of its
# kernels is "already cached"), and the original then finds all of its own.
set(TJ_VARIANT_CACHE ${CMAKE_CURRENT_BINARY_DIR}/variant-cache)
set(TJ_VARIANT_TYPES ${CMAKE_CURRENT_SOURCE_DIR}/variant.types)
add_test(NAME kernels_variant_warm COMMAND sh -c
         "rm -rf ${TJ_VARIANT_CACHE} &&
          $0 warm --jobs 2 --cache-dir ${TJ_VARIANT_CACHE} ${TJ_VARIANT_TYPES} | tee /dev/stderr |
            grep -q ': 24 kernels: 24 compiled, 0 already cached, 0 failed' &&
          $1 warm --jobs 2 --cache-dir ${TJ_VARIANT_CACHE} ${TJ_VARIANT_TYPES} | tee /dev/stderr |
            grep -q ': 24 kernels: 24 compiled, 0 already cached, 0 failed' &&
          $0 warm --jobs 2 --cache-dir ${TJ_VARIANT_CACHE} ${TJ_VARIANT_TYPES} | tee /dev/stderr |
            grep -q ': 24 kernels: 0 compiled, 24 already cached, 0 failed'"
         $<TARGET_FILE:typejit_tool> $<TARGET_FILE:typejit_tool_variant>)
set_tests_properties(kernels_variant_warm PROPERTIES TIMEOUT 300 LABELS jit)
tj_heavy(kernels_variant_warm)

# The device oracle, on the test driver: the original fills a cache at commit, then the variant
# runs the same types on that cache and must compile its own kernels (a stale one would leave
# poisoned bytes), and the reverse.
if(TARGET fakecuda_nvrtc)
  set(TJ_VARIANT_EMU_CACHE ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-variant)
  tj_reset_test(emu_variant_reset ${TJ_VARIANT_EMU_CACHE} emu emu_variant)
  set(variant_oracle $<TARGET_FILE:test_gpu_pack> --types 24 --seed 21)
  add_test(NAME emu_variant_original COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB} TYPEJIT_JIT_SYNC=1
           TYPEJIT_CACHE_DIR=${TJ_VARIANT_EMU_CACHE} ${variant_oracle})
  add_test(NAME emu_variant_other COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_EMU_ENV} LD_PRELOAD=$<TARGET_FILE:typejit_variant> TYPEJIT_JIT_SYNC=1
           TYPEJIT_CACHE_DIR=${TJ_VARIANT_EMU_CACHE} ${variant_oracle} --expect-compiles)
  add_test(NAME emu_variant_original_again COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB} TYPEJIT_JIT_SYNC=1
           TYPEJIT_CACHE_DIR=${TJ_VARIANT_EMU_CACHE} ${variant_oracle} --expect-no-compiles)
  set_tests_properties(emu_variant_original emu_variant_other emu_variant_original_again
                       PROPERTIES TIMEOUT 600 LABELS emu FIXTURES_REQUIRED emu_variant
                       RESOURCE_LOCK emu_variant_cache)
  set_tests_properties(emu_variant_other PROPERTIES DEPENDS emu_variant_original)
  set_tests_properties(emu_variant_original_again PROPERTIES DEPENDS emu_variant_other)
  tj_heavy(emu_variant_reset emu_variant_original emu_variant_other emu_variant_original_again)
endif()

# `typejit warm` fills exactly the keys the runtime looks up. A program's types
# are written as type descriptions (halo3d --describe, with the fused sets of its neighbor mode;
# the device oracle's --describe), warmed, and the program then runs on the test driver with the
# NVRTC of the test double refusing every compile: nothing may be compiled, not even tried, and
# no call may fall back to the generic kernel.
if(TARGET fakecuda_nvrtc)
  string(REPLACE ";" " " emu_env_sh "${TJ_EMU_ENV}") # for the sh -c command lines below
  set(TJ_WARM_HALO ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-warm-halo)
  # The tool runs with the test double's NVRTC, as the runs do: its build is in the keys.
  add_test(NAME emu_warm_halo_setup COMMAND sh -c
           "rm -rf ${TJ_WARM_HALO} && mkdir -p ${TJ_WARM_HALO} && $0 --describe --n 6 --radius 1 >${TJ_WARM_HALO}.types && env ${emu_env_sh} $1 warm --jobs 2 --cache-dir ${TJ_WARM_HALO} ${TJ_WARM_HALO}.types"
           $<TARGET_FILE:halo3d> $<TARGET_FILE:typejit_tool>)
  set_tests_properties(emu_warm_halo_setup PROPERTIES TIMEOUT 300 LABELS emu
                       FIXTURES_SETUP emu_warm_halo)
  set(warmed "jit_compiles=0 jit_failures=0 jit_background=0 packs_generic_while_compiling=0 .*cache_misses=0 ")
  # halo3d on the cache DIR that the fixture FIXTURE warmed, the NVRTC of the test double refusing
  # every compile: on both ranks nothing compiled nor missed (EXPECT: more run_checked.sh options).
  function(tj_warmed_halo name dir fixture)
    cmake_parse_arguments(T "" "" "EXPECT;ARGS" ${ARGN})
    add_test(NAME ${name} COMMAND ${TJ_CHECKED}
             --expect "^typejit\\[0\\]: stats .*${warmed}" --expect "^typejit\\[1\\]: stats .*${warmed}"
             ${T_EXPECT} --stdout "PASS: 0 wrong ghost cells"
             -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x FAKECUDA_NVRTC_REFUSE=1 -x TYPEJIT_STATS=1
             -x TYPEJIT_CACHE_DIR=${dir} -np 2
             $<TARGET_FILE:halo3d> --device ${T_ARGS} --iters 2 --quiet)
    set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS "emu;mpi"
                         FIXTURES_REQUIRED ${fixture})
    tj_heavy(${name})
  endfunction()
  foreach(how pack isend neighbor)
    set(expect "")
    if(how STREQUAL "neighbor")
      set(expect --expect "^typejit\\[0\\]: stats .* fused_launches=[1-9]"
                 --expect "^typejit\\[1\\]: stats .* fused_launches=[1-9]")
    endif()
    tj_warmed_halo(emu_warm_halo_${how} ${TJ_WARM_HALO} emu_warm_halo EXPECT ${expect}
                   ARGS --collective ${how} --n 6 --radius 1)
  endforeach()
  tj_heavy(emu_warm_halo_setup)

  # Faces sent from d + offset, as hand-written halo codes send them (halo3d --offset-faces, one
  # double a point: many buffers and packed positions 8 bytes off a 16-byte boundary): the
  # default warm of the program's datatypes alone (no fused sets) leaves nothing to compile.
  set(TJ_WARM_OFFSET ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-warm-offset)
  set(offset_halo --offset-faces --n 6 --radius 1 --per-point 1)
  string(REPLACE ";" " " offset_halo_sh "${offset_halo}")
  add_test(NAME emu_warm_offset_setup COMMAND sh -c
           "rm -rf ${TJ_WARM_OFFSET} && mkdir -p ${TJ_WARM_OFFSET} && $0 --describe ${offset_halo_sh} | sed '/^fused/d' >${TJ_WARM_OFFSET}.types && env ${emu_env_sh} $1 warm --jobs 2 --cache-dir ${TJ_WARM_OFFSET} ${TJ_WARM_OFFSET}.types"
           $<TARGET_FILE:halo3d> $<TARGET_FILE:typejit_tool>)
  set_tests_properties(emu_warm_offset_setup PROPERTIES TIMEOUT 300 LABELS emu
                       FIXTURES_SETUP emu_warm_offset)
  foreach(how pack isend)
    tj_warmed_halo(emu_warm_offset_${how} ${TJ_WARM_OFFSET} emu_warm_offset
                   ARGS --collective ${how} ${offset_halo})
  endforeach()
  tj_heavy(emu_warm_offset_setup)

  # The oracle's types at every word (it packs misaligned buffers and positions too), kernels
  # with edges included.
  set(TJ_WARM_ORACLE ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-warm-oracle)
  set(warm_oracle $<TARGET_FILE:test_gpu_pack> --types 40 --seed 31)
  add_test(NAME emu_warm_oracle_setup COMMAND sh -c
           "rm -rf ${TJ_WARM_ORACLE} && mkdir -p ${TJ_WARM_ORACLE} && \"$@\" --describe ${TJ_WARM_ORACLE}.types && env ${emu_env_sh} $<TARGET_FILE:typejit_tool> warm --all-words --jobs 2 --cache-dir ${TJ_WARM_ORACLE} ${TJ_WARM_ORACLE}.types"
           sh ${warm_oracle})
  set_tests_properties(emu_warm_oracle_setup PROPERTIES TIMEOUT 600 LABELS emu
                       FIXTURES_SETUP emu_warm_oracle)
  add_test(NAME emu_warm_oracle COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB} FAKECUDA_NVRTC_REFUSE=1
           TYPEJIT_CACHE_DIR=${TJ_WARM_ORACLE} ${warm_oracle} --expect-no-compiles --expect-edges)
  set_tests_properties(emu_warm_oracle PROPERTIES TIMEOUT 600 LABELS emu
                       FIXTURES_REQUIRED emu_warm_oracle)
  tj_heavy(emu_warm_oracle_setup emu_warm_oracle)
endif()
