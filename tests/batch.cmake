# SPDX-License-Identifier: BSD-3-Clause
# One wait per call (src/gpu/batch.c), on the CPU-only test driver: tests/test_batch.c sends,
# starts, completes and runs collectives on device buffers of several regions, compares every
# received byte with the system MPI's on host copies, and counts each call's waits for the device
# (gpu_waits): with the send queue (the default) none in a non-blocking send, Start or Startall,
# one in the Waitall after them for their packs, and one per completion call that unpacks and per
# collective side; with TYPEJIT_PROGRESS=off (_sync) one per non-blocking send, Start and
# Startall too.
# Three ranks: three slots per side of MPI_Alltoallw. The kernels are compiled at the first call
# (TYPEJIT_JIT_SYNC=1), so that every later one runs the same kernels.

tj_device_program(test_batch test_batch.c)
set(TJ_BATCH_CACHE -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-batch
    -x TYPEJIT_JIT_SYNC=1)
foreach(method oneshot staged)
  add_test(NAME emu_batch_${method} COMMAND ${TJ_CHECKED} --silent --
           ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_BATCH_CACHE} -x TYPEJIT_METHOD=${method} -np 3
           $<TARGET_FILE:test_batch> --expect-waits)
endforeach()
# With the test driver's threaded mode: the bytes, not the counts (a pack may have finished before
# typejit asks).
add_test(NAME emu_batch_oneshot_threaded COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED} ${TJ_BATCH_CACHE} -x TYPEJIT_METHOD=oneshot
         -np 3 $<TARGET_FILE:test_batch>)
add_test(NAME emu_batch_oneshot_sync COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_BATCH_CACHE} -x TYPEJIT_METHOD=oneshot
         -x TYPEJIT_PROGRESS=off -np 3 $<TARGET_FILE:test_batch> --expect-waits --synchronous)
# The device method on a CUDA-aware MPI (the stand-in of tests/cudaaware_shim.c, gpu.cmake):
# point-to-point only, since that MPI takes the collectives' layouts on device memory as they are.
add_test(NAME emu_batch_device COMMAND ${TJ_CHECKED}
         --expect "^typejit\\[0\\]: stats .* method_device=[1-9][0-9]* method_oneshot=0 method_staged=0 "
         -- ${TJ_CUDAAWARE_MPIEXEC} ${TJ_BATCH_CACHE} -x TYPEJIT_METHOD=device -np 2
         $<TARGET_FILE:test_batch> --expect-waits --no-coll)
# Driver calls failing at random (a wait, a launch, a copy), three threads sending at once on one
# context's stream: a batch whose wait fails is done again step by step, staged through host
# memory where the device fails; every call exact or an MPI error.
add_test(NAME emu_batch_faults COMMAND ${TJ_CHECKED}
         --expect "FAKECUDA_FAIL draws its failures from FAKECUDA_SEED=[0-9]+"
         --expect "^typejit\\[0\\]: stats .* gpu_fallbacks=[1-9]"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_BATCH_CACHE} -x TYPEJIT_METHOD=staged
         -x TYPEJIT_STATS=1
         -x "FAKECUDA_FAIL=cuStreamSynchronize%8,cuEventSynchronize%8,cuEventQuery%4,cuLaunchKernel%3,cuMemcpyDtoHAsync_v2%3,cuMemcpyHtoDAsync_v2%3"
         -np 3 $<TARGET_FILE:test_batch> --faults --threads 3 --iters 4)
# A wait that finds the context dead (a sticky error: a kernel that faulted), in a Waitall of 24
# requests and in a blocking collective's unpacks: the call reports an MPI error, never a success,
# and the bytes before it are exact. Which wait fails is counted: an iteration of the
# point-to-point part waits 31 times, so the 44th is the second iteration's Waitall, after its 12
# Isends; one of the collectives 6 times, so the 8th is the second Alltoallw's unpacks (both
# counted without the send queue, whose waits for packs are for events).
add_test(NAME emu_batch_sticky COMMAND ${TJ_CHECKED}
         --expect "the cuda context of device 0 is unusable"
         --stdout "^rank 0: the first MPI error, from MPI_Waitall$"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_BATCH_CACHE} -x TYPEJIT_PROGRESS=off
         -x FAKECUDA_FAIL=cuStreamSynchronize:44=700
         -np 3 $<TARGET_FILE:test_batch> --sticky)
add_test(NAME emu_batch_sticky_coll COMMAND ${TJ_CHECKED}
         --expect "the cuda context of device 0 is unusable"
         --stdout "^rank 0: the first MPI error, from MPI_Alltoallw$"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_BATCH_CACHE} -x TYPEJIT_PROGRESS=off
         -x FAKECUDA_FAIL=cuStreamSynchronize:8=700
         -np 3 $<TARGET_FILE:test_batch> --sticky --no-p2p)
set_tests_properties(emu_batch_oneshot emu_batch_staged emu_batch_oneshot_sync
                     emu_batch_oneshot_threaded emu_batch_device
                     emu_batch_faults
                     emu_batch_sticky emu_batch_sticky_coll PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
