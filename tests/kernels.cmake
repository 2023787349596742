# The kernel supply layer (src/kernels): the background compiler at volume.
if(TARGET fakecuda_nvrtc)
  tj_test_program(test_compiler test_compiler.c)
  add_dependencies(test_compiler fakecuda_nvrtc)
  # Only the NVRTC shim (no driver): kernels for the target without a device.
  add_test(NAME kernels_compiler_volume COMMAND ${TJ_CHECKED}
           --once "^the test double refuses every compile"
           -- ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${FAKECUDA_DIR}/nvrtc
           TYPEJIT_JIT=always TYPEJIT_CACHE=off FAKECUDA_NVRTC_REFUSE=1 TYPEJIT_JIT_THREADS=4
           $<TARGET_FILE:test_compiler>)
  set_tests_properties(kernels_compiler_volume PROPERTIES TIMEOUT 180 LABELS "unit;jit")
endif()

# The generic kernel takes the one supply path too, compile lock included: of two ranks that
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

# The layers as docs/architecture.md draws them, checked on the #include lines of the library:
# every folder includes only its own and lower layers, and no two modules include each other.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.py
           ${PROJECT_SOURCE_DIR})
  set_tests_properties(layers PROPERTIES TIMEOUT 30 LABELS unit)
endif()
