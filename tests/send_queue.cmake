# SPDX-License-Identifier: BSD-3-Clause
# The send queue (src/calls/send_queue.c) on the CPU-only test driver: tests/test_send_queue.c on
# 2 ranks. 26 device Isends wait for nothing, completion calls that test never wait, random mixes
# of sends keep MPI's order, a rank blocked after a device Isend completes, queued sends freed,
# cancelled and polled, and one left at MPI_Finalize arrives. With the default settings, with a
# progress thread and 4 threads sending at once, and without the queue (TYPEJIT_PROGRESS=off).
tj_device_program(test_send_queue test_send_queue.c)
set(TJ_SEND_QUEUE_CACHE -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-send-queue
    -x TYPEJIT_JIT_SYNC=1)
add_test(NAME emu_send_queue COMMAND ${TJ_CHECKED} --stdout "every byte exact" --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_SEND_QUEUE_CACHE} -np 2
         $<TARGET_FILE:test_send_queue> --expect-no-waits)
add_test(NAME emu_send_queue_threads COMMAND ${TJ_CHECKED} --stdout "every byte exact" --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_SEND_QUEUE_CACHE} -x TYPEJIT_PROGRESS=thread -np 2
         $<TARGET_FILE:test_send_queue> --threads 4 --rounds 150)
add_test(NAME emu_send_queue_sync COMMAND ${TJ_CHECKED} --stdout "every byte exact" --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_SEND_QUEUE_CACHE} -x TYPEJIT_PROGRESS=off -np 2
         $<TARGET_FILE:test_send_queue>)
# The same with queued work running beside the host (the test driver's threaded mode): a pack
# may still run, or have finished, at any call.
add_test(NAME emu_send_queue_threaded COMMAND ${TJ_CHECKED} --stdout "every byte exact" --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED} ${TJ_SEND_QUEUE_CACHE} -np 2
         $<TARGET_FILE:test_send_queue> --expect-no-waits)
add_test(NAME emu_send_queue_threads_threaded COMMAND ${TJ_CHECKED} --stdout "every byte exact" --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED} ${TJ_SEND_QUEUE_CACHE}
         -x TYPEJIT_PROGRESS=thread -np 2 $<TARGET_FILE:test_send_queue> --threads 4 --rounds 150)
set_tests_properties(emu_send_queue emu_send_queue_threads emu_send_queue_sync
                     emu_send_queue_threaded emu_send_queue_threads_threaded
                     PROPERTIES TIMEOUT 300 LABELS "emu;mpi")
