# On a CUDA device (exit 77 without one): the oracle on device buffers through the preloaded
# library, with JIT kernels and with the generic kernel.
tj_test_program(test_gpu_pack test_gpu_pack.c randtype.c)
tj_add_test(gpu_pack_jit LABELS gpu TIMEOUT 600
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:typejit>
          TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/gpu-cache
          $<TARGET_FILE:test_gpu_pack> --types 400)
tj_add_test(gpu_pack_generic LABELS gpu TIMEOUT 600
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:typejit> TYPEJIT_JIT=off
          TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/gpu-cache
          $<TARGET_FILE:test_gpu_pack> --types 200 --seed 2)
