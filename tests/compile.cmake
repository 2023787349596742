# One compile per kernel per shared cache (issue 12): 16 ranks, oversubscribed, commit the same
# 20 strided types into one cold cache at once; no device is needed (TYPEJIT_JIT=always).
foreach(mode sync background)
  add_test(NAME compile_once_${mode}_reset COMMAND ${CMAKE_COMMAND} -E rm -rf
           ${CMAKE_CURRENT_BINARY_DIR}/compile-once-${mode})
  set_tests_properties(compile_once_${mode}_reset PROPERTIES LABELS "mpi;jit"
                       FIXTURES_SETUP compile_once_${mode})
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
