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
