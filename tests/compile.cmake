# SPDX-License-Identifier: BSD-3-Clause
# One compile per kernel per shared cache: 16 ranks, oversubscribed, commit the same
# 20 strided types into one cold cache at once; no device is needed (TYPEJIT_JIT=always).
foreach(mode sync background)
  tj_reset_test(compile_once_${mode}_reset ${CMAKE_CURRENT_BINARY_DIR}/compile-once-${mode}
                "mpi;jit" compile_once_${mode})
endforeach()
add_test(NAME compile_once_sync COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} -x TYPEJIT_JIT=always -x TYPEJIT_ARCH=sm_90 -x TYPEJIT_JIT_SYNC=1
         -x TYPEJIT_HOST=engine -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/compile-once-sync
         -np 16 $<TARGET_FILE:test_compile_once> --types 20)
add_test(NAME compile_once_background COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} -x TYPEJIT_JIT=always -x TYPEJIT_ARCH=sm_90 -x TYPEJIT_HOST=engine
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/compile-once-background
         -np 16 $<TARGET_FILE:test_compile_once> --types 20 --background)
foreach(mode sync background)
  set_tests_properties(compile_once_${mode} PROPERTIES TIMEOUT 600 LABELS "mpi;jit"
                       FIXTURES_REQUIRED compile_once_${mode} RUN_SERIAL TRUE)
endforeach()
add_executable(test_compile_once test_compile_once.c)
target_link_libraries(test_compile_once PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
target_include_directories(test_compile_once PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

# tj_finalize_now_test(NAME DIR CHECK run_checked.sh options... ENV -x VAR=VALUE...
#                      PROPERTIES ...)
# A job of one rank that commits 8 types and ends at once (test_compile_once --finalize-now), on
# the cache DIR, in the settings ENV adds.
function(tj_finalize_now_test name dir)
  cmake_parse_arguments(T "" "" "CHECK;ENV;PROPERTIES" ${ARGN})
  add_test(NAME ${name} COMMAND ${TJ_CHECKED} ${T_CHECK}
           -- ${TJ_MPIEXEC} -x TYPEJIT_JIT=always -x TYPEJIT_ARCH=sm_90 -x TYPEJIT_HOST=engine
           ${T_ENV} -x TYPEJIT_CACHE_DIR=${dir}
           -np 1 $<TARGET_FILE:test_compile_once> --types 8 --finalize-now)
  set_tests_properties(${name} PROPERTIES TIMEOUT 600 LABELS "mpi;jit" ${T_PROPERTIES})
endfunction()

# A job that ends right after its commits still leaves its kernels in the cache: MPI_Finalize
# waits for the background compiles (TYPEJIT_JIT_DRAIN), so the stats line of the first run shows
# all 16 compiled and the second run (sync mode) compiles nothing and finds all 16 on disk.
tj_reset_test(compile_drain_reset ${CMAKE_CURRENT_BINARY_DIR}/compile-drain "mpi;jit" compile_drain)
tj_finalize_now_test(compile_drain_first ${CMAKE_CURRENT_BINARY_DIR}/compile-drain
  CHECK --expect "^typejit\\[0\\]: stats .* jit_compiles=16 jit_failures=0 jit_background=16 "
  ENV -x TYPEJIT_STATS=1 -x TYPEJIT_JIT_DRAIN=300
  PROPERTIES FIXTURES_REQUIRED compile_drain FIXTURES_SETUP compile_drained)
tj_finalize_now_test(compile_drain_second ${CMAKE_CURRENT_BINARY_DIR}/compile-drain
  CHECK --expect "^typejit\\[0\\]: stats .* jit_compiles=0 jit_failures=0 .* cache_hits_disk=16 cache_misses=0"
  ENV -x TYPEJIT_STATS=1 -x TYPEJIT_JIT_SYNC=1
  PROPERTIES FIXTURES_REQUIRED compile_drained)

# TYPEJIT_JIT_DRAIN=0: MPI_Finalize does not wait; what is still queued is dropped, and an info
# line says how many (16 kernels are asked for at once, the first takes milliseconds to compile).
tj_reset_test(compile_nodrain_reset ${CMAKE_CURRENT_BINARY_DIR}/compile-nodrain
              "mpi;jit" compile_nodrain)
tj_finalize_now_test(compile_nodrain ${CMAKE_CURRENT_BINARY_DIR}/compile-nodrain
  CHECK --once "^typejit\\[0\\]: info: [1-9][0-9]* background compile\\(s\\) still queued after TYPEJIT_JIT_DRAIN=0 s are dropped"
  ENV -x TYPEJIT_LOG=info -x TYPEJIT_JIT_DRAIN=0
  PROPERTIES FIXTURES_REQUIRED compile_nodrain)
