# SPDX-License-Identifier: BSD-3-Clause
# Device buffers in every MPI call that takes one (docs/device-calls.md): the table against the
# system MPI's headers and the library's wrappers (tests/check_device_calls.cmake).

string(REPLACE ";" "\\;" TJ_MPI_INCLUDE_ARG "${MPI_C_INCLUDE_DIRS}")
tj_add_test(device_calls_table COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/docs/device-calls.md
            "-DINCLUDE_DIRS=${TJ_MPI_INCLUDE_ARG}" -DLIB=$<TARGET_FILE:typejit> -DNM=${CMAKE_NM}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_device_calls.cmake LABELS unit TIMEOUT 60)

# Every function of the table on device buffers against the system MPI on host copies, at 3
# ranks (label emu: on the CPU-only test driver, an MPI that is not CUDA-aware); and the
# pass-through answers on the CUDA-aware stand-in (tests/cudaaware_shim.c). Not at 2 ranks too:
# the 3-rank run makes every call of the 2-rank one (each root, a Cartesian neighbour that is
# MPI_PROC_NULL), and the 2-rank ring, one peer on both sides, is in the tests below and emu_p2p_*.
tj_device_program(test_calls test_calls.c devbuf.c)
add_test(NAME emu_device_calls_3 COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np 3
         $<TARGET_FILE:test_calls>)
set_tests_properties(emu_device_calls_3 PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
add_test(NAME emu_device_calls_cudaaware_2 COMMAND ${TJ_CHECKED}
         --expect "^cudaaware shim\\[0\\]: [1-9][0-9]* device buffers staged"
         -- ${TJ_CUDAAWARE_MPIEXEC}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np 2
         $<TARGET_FILE:test_calls> --cudaaware)
set_tests_properties(emu_device_calls_cudaaware_2 PROPERTIES TIMEOUT 600 LABELS "emu;mpi")

# The calls refused on device memory with an MPI that is not CUDA-aware: MPI_ERR_BUFFER and one
# error line per function, however often it is called.
add_test(NAME emu_device_calls_refused COMMAND ${TJ_CHECKED}
         --once "^typejit\\[0\\]: error: MPI_Win_attach: device memory cannot be attached to a dynamic window when the system MPI is not CUDA-aware"
         --once "^typejit\\[0\\]: error: MPI_Buffer_attach: the buffer is in device memory and the system MPI is not CUDA-aware"
         --once "^typejit\\[0\\]: error: MPIX?_Allreduce_init: a persistent collective on device memory"
         --once "^typejit\\[0\\]: error: MPIX?_Alltoall_init: a persistent collective on device memory"
         --once "^typejit\\[0\\]: error: MPI_T_cvar_read: an MPI_T value buffer in device memory"
         --once "^typejit\\[0\\]: error: MPI_T_cvar_write: an MPI_T value buffer in device memory"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np 2
         $<TARGET_FILE:test_calls> --only refuse)
set_tests_properties(emu_device_calls_refused PROPERTIES TIMEOUT 300 LABELS "emu;mpi")

# A type over MPI_BOTTOM whose blocks lie in host and device memory (either order), two device
# allocations, managed and device memory: MPI_ERR_BUFFER with one error line per call, never a
# crash (Open MPI segfaulted in MPI_Pack before); blocks together (two host allocations, one
# device allocation) packed exactly.
add_test(NAME emu_device_calls_split COMMAND ${TJ_CHECKED}
         --expect "^typejit\\[0\\]: error: MPI_Pack: the datatype's bytes lie in more than one allocation or memory kind"
         --expect "^typejit\\[0\\]: error: MPI_Allreduce: the datatype's bytes lie in more than one allocation"
         --expect "^typejit\\[0\\]: error: MPI_Reduce_local: the datatype's bytes lie in more than one allocation"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np 2
         $<TARGET_FILE:test_calls> --only mixed)
set_tests_properties(emu_device_calls_split PROPERTIES TIMEOUT 300 LABELS "emu;mpi")

# The large-count forms (`_c`) on device buffers, where the MPI has them (tests/test_largecount.c;
# 77, a skip, elsewhere): one call of each family against the system MPI's int form on host
# copies, at 2 ranks; and counts past 2^31 packed and unpacked between device buffers (one kernel
# each way, its indices past 2^31) and between host buffers (the CPU engine), and positions past
# 2^31 between every pair of host and device buffers. The big test writes about 2.2 GB at once
# (2.7 GB peak resident on the test driver, which backs device memory as touched; 4.3 GB of
# device memory allocated on a GPU) and takes about a minute of CPU: one at a time.
add_test(NAME emu_largecount_calls COMMAND ${TJ_CHECKED}
         --once "^typejit\\[0\\]: error: MPI_Buffer_attach_c: the buffer is in device memory"
         --once "^typejit\\[0\\]: error: MPI_Isendrecv_c: the buffer is in device memory"
         --once "^typejit\\[0\\]: error: MPI_Allreduce_init_c: a persistent collective on device memory" --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np 2
         $<TARGET_FILE:test_largecount> calls)
set_tests_properties(emu_largecount_calls PROPERTIES TIMEOUT 300 LABELS "emu;mpi"
                     SKIP_RETURN_CODE 77)
add_test(NAME emu_largecount_big COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_HOST=engine
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np 1
         $<TARGET_FILE:test_largecount> big)
set_tests_properties(emu_largecount_big PROPERTIES TIMEOUT 600 LABELS "emu;mpi"
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK big_memory)
