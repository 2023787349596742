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
# tj_emu_calls_test(NAME NP n TIMEOUT s [CHECK run_checked.sh options...] [LAUNCH launcher...]
#                   [PROPERTIES ...] COMMAND program args...)
# A program of these tests at n ranks on the test driver (LAUNCH: the launcher and its options,
# by default the MPI that is not CUDA-aware), on the kernel cache they share.
function(tj_emu_calls_test name)
  cmake_parse_arguments(T "" "NP;TIMEOUT" "CHECK;LAUNCH;PROPERTIES;COMMAND" ${ARGN})
  if(NOT T_CHECK)
    set(T_CHECK --silent)
  endif()
  if(NOT T_LAUNCH)
    set(T_LAUNCH ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV})
  endif()
  add_test(NAME ${name} COMMAND ${TJ_CHECKED} ${T_CHECK} -- ${T_LAUNCH}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-calls -np ${T_NP}
           ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "emu;mpi" ${T_PROPERTIES})
endfunction()

tj_emu_calls_test(emu_device_calls_3 NP 3 TIMEOUT 600
  COMMAND $<TARGET_FILE:test_calls>)
tj_emu_calls_test(emu_device_calls_cudaaware_2 NP 2 TIMEOUT 600
  CHECK --expect "^cudaaware shim\\[0\\]: [1-9][0-9]* device buffers staged"
  LAUNCH ${TJ_CUDAAWARE_MPIEXEC}
  COMMAND $<TARGET_FILE:test_calls> --cudaaware)

# The calls refused on device memory with an MPI that is not CUDA-aware: MPI_ERR_BUFFER and one
# error line per function, however often it is called.
tj_emu_calls_test(emu_device_calls_refused NP 2 TIMEOUT 300
  CHECK --once "^typejit\\[0\\]: error: MPI_Win_attach: device memory cannot be attached to a dynamic window when the system MPI is not CUDA-aware"
        --once "^typejit\\[0\\]: error: MPI_Buffer_attach: the buffer is in device memory and the system MPI is not CUDA-aware"
        --once "^typejit\\[0\\]: error: MPIX?_Allreduce_init: a persistent collective on device memory"
        --once "^typejit\\[0\\]: error: MPIX?_Alltoall_init: a persistent collective on device memory"
        --once "^typejit\\[0\\]: error: MPI_T_cvar_read: an MPI_T value buffer in device memory"
        --once "^typejit\\[0\\]: error: MPI_T_cvar_write: an MPI_T value buffer in device memory"
  COMMAND $<TARGET_FILE:test_calls> --only refuse)

# A type over MPI_BOTTOM whose blocks lie in host and device memory (either order), two device
# allocations, managed and device memory: MPI_ERR_BUFFER with one error line per call, never a
# crash (Open MPI segfaulted in MPI_Pack before); blocks together (two host allocations, one
# device allocation) packed exactly.
tj_emu_calls_test(emu_device_calls_split NP 2 TIMEOUT 300
  CHECK --expect "^typejit\\[0\\]: error: MPI_Pack: the datatype's bytes lie in more than one allocation or memory kind"
        --expect "^typejit\\[0\\]: error: MPI_Allreduce: the datatype's bytes lie in more than one allocation"
        --expect "^typejit\\[0\\]: error: MPI_Reduce_local: the datatype's bytes lie in more than one allocation"
  COMMAND $<TARGET_FILE:test_calls> --only mixed)

# The large-count forms (`_c`) on device buffers, where the MPI has them (tests/test_largecount.c;
# 77, a skip, elsewhere): one call of each family against the system MPI's int form on host
# copies, at 2 ranks; and counts past 2^31 packed and unpacked between device buffers (one kernel
# each way, its indices past 2^31) and between host buffers (the CPU engine), and positions past
# 2^31 between every pair of host and device buffers. The big test writes about 2.2 GB at once
# (2.7 GB peak resident on the test driver, which backs device memory as touched; 4.3 GB of
# device memory allocated on a GPU) and takes about a minute of CPU: one at a time.
tj_emu_calls_test(emu_largecount_calls NP 2 TIMEOUT 300
  CHECK --once "^typejit\\[0\\]: error: MPI_Buffer_attach_c: the buffer is in device memory"
        --once "^typejit\\[0\\]: error: MPI_Isendrecv_c: the buffer is in device memory"
        --once "^typejit\\[0\\]: error: MPI_Allreduce_init_c: a persistent collective on device memory"
  PROPERTIES SKIP_RETURN_CODE 77
  COMMAND $<TARGET_FILE:test_largecount> calls)
tj_emu_calls_test(emu_largecount_big NP 1 TIMEOUT 600
  LAUNCH ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_HOST=engine
  PROPERTIES SKIP_RETURN_CODE 77 RESOURCE_LOCK big_memory
  COMMAND $<TARGET_FILE:test_largecount> big)
