# SPDX-License-Identifier: BSD-3-Clause
# Windows in device memory on an MPI that is not CUDA-aware (docs/device-calls.md, "Windows in
# device memory"): every synchronisation mode on windows in device, managed and page-locked
# memory against the system MPI on host windows, byte for byte, at 2 and 3 ranks on the CPU-only
# test driver; the bytes each synchronisation moves; a window past its allocation refused with one
# error line per process; and the pass-through with a CUDA-aware MPI.
tj_device_program(test_windows test_windows.c devbuf.c)
foreach(np 2 3)
  add_test(NAME emu_windows_${np} COMMAND ${TJ_CHECKED} --stdout "^PASS: "
           --once "^typejit\\[0\\]: error: MPI_Win_create: the window's 4096 bytes at 0x[0-9a-f]+ reach outside their device allocation; MPI_ERR_BUFFER"
           -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-windows -np ${np}
           $<TARGET_FILE:test_windows>)
  set_tests_properties(emu_windows_${np} PROPERTIES TIMEOUT 300 LABELS "emu;mpi")
endforeach()
# With a CUDA-aware MPI (the stand-in of tests/cudaaware_shim.c) a window in device memory is the
# MPI's own: its base and model, nothing copied.
add_test(NAME emu_windows_cudaaware_2 COMMAND ${TJ_CHECKED} --stdout "^PASS: "
         --expect "^typejit\\[0\\]: stats .* windows_separate=0 window_dtoh_bytes=0 window_htod_bytes=0$"
         -- ${TJ_CUDAAWARE_MPIEXEC}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-windows -np 2
         $<TARGET_FILE:test_windows> --cudaaware)
set_tests_properties(emu_windows_cudaaware_2 PROPERTIES TIMEOUT 120 LABELS "emu;mpi")
