# SPDX-License-Identifier: BSD-3-Clause
# Kernel generation: generator unit checks, NVRTC compiles, host emulation against the system
# MPI, and the PTX of representative kernels.
tj_test_program(test_gen test_gen.c)
tj_add_test(jit_gen COMMAND test_gen LABELS jit TIMEOUT 60)

tj_test_program(test_nvrtc test_nvrtc.c $<TARGET_OBJECTS:tj_randtype>)
tj_add_test(jit_nvrtc COMMAND test_nvrtc --seed 1 --types 400 LABELS jit TIMEOUT 300)

# The emulation compiles generated kernels with the host C++ compiler at test time.
find_program(TJ_EMU_CXX NAMES g++ c++ clang++)
tj_test_program(test_emu test_emu.c region.c $<TARGET_OBJECTS:tj_randtype>)
if(TJ_EMU_CXX)
  target_compile_definitions(test_emu PRIVATE TJ_EMU_CXX="${TJ_EMU_CXX}"
                             TJ_EMU_INCLUDE="${CMAKE_CURRENT_SOURCE_DIR}/emu")
endif()
tj_add_test(jit_emu COMMAND test_emu --seed 1 --types 2000 LABELS jit TIMEOUT 400)

# ptxas of the toolkit found at configure time reports frames, spills and registers.
find_program(TJ_PTXAS_EXECUTABLE ptxas HINTS ${CUDAToolkit_BIN_DIR} ${CUDAToolkit_ROOT}/bin)
tj_test_program(test_ptx test_ptx.c)
if(TJ_PTXAS_EXECUTABLE)
  target_compile_definitions(test_ptx PRIVATE TJ_PTXAS="${TJ_PTXAS_EXECUTABLE}")
endif()
tj_add_test(jit_ptx COMMAND test_ptx LABELS jit TIMEOUT 120)

# Parts kernels whose parts take words of their own, on the CPU-only test driver: every
# alignment of both buffers, one object and several, against the layout's runs; and a kernel
# launched on a typed buffer its words do not allow faults there, as on a GPU.
tj_test_program(test_parts test_parts.c tempdir.c)
add_dependencies(test_parts fakecuda_13000 fakecuda_nvrtc)
add_test(NAME emu_parts COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV}
         $<TARGET_FILE:test_parts>)
add_test(NAME emu_parts_misaligned COMMAND ${TJ_CHECKED} --expect "misaligned address"
         -- ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV} $<TARGET_FILE:test_parts> misaligned)
set_tests_properties(emu_parts emu_parts_misaligned PROPERTIES TIMEOUT 600 LABELS "emu;jit")
