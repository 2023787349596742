# SPDX-License-Identifier: BSD-3-Clause
# Collectives on device buffers (src/calls/coll.c), on the CPU-only test driver: every interposed
# collective against the system MPI on host copies, 2, 3 and 4 ranks (3: an intercommunicator of
# two groups of different sizes); and the main job, halo3d --device, with each way it exchanges
# halos.

tj_device_program(test_coll test_coll.c devbuf.c randtype.c)
foreach(ranks 2 3 4)
  add_test(NAME emu_coll_${ranks} COMMAND ${TJ_CHECKED} --silent --
           ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-coll -np ${ranks}
           $<TARGET_FILE:test_coll> --iters 44 --seed ${ranks})
  set_tests_properties(emu_coll_${ranks} PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
endforeach()

# On a CUDA-aware MPI (the stand-in of tests/cudaaware_shim.c, defined in gpu.cmake): strided
# device sides are still packed, the others go to the MPI as they are; the stand-in must have
# staged some.
foreach(ranks 2 3)
  add_test(NAME emu_coll_cudaaware_${ranks} COMMAND ${TJ_CHECKED}
           --expect "^cudaaware shim\\[0\\]: [1-9][0-9]* device buffers staged"
           -- ${TJ_CUDAAWARE_MPIEXEC}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-coll -np ${ranks}
           $<TARGET_FILE:test_coll> --iters 44 --seed 1${ranks})
  set_tests_properties(emu_coll_cudaaware_${ranks} PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
endforeach()

# The main job with its fields in device memory, each way of exchanging halos, 2 and 4 ranks.
# Exchanging by isend leaves the packs of the 26 MPI_Isends of a step running (the send queue
# starts the sends) and waits twice, in the MPI_Waitall: once for the queued packs, once for the
# unpacks: 4 waits for the run; with TYPEJIT_PROGRESS=off (isend_sync) once per MPI_Isend and
# once in the MPI_Waitall: 27 a step, 54 for the run (src/gpu/batch.c).
foreach(ranks 2 4)
  foreach(how alltoallv neighbor isend isend_sync)
    set(waits "")
    set(mode ${how})
    set(env "")
    if(how STREQUAL "isend")
      set(waits --expect "^typejit\\[0\\]: stats .* gpu_waits=4 .*sends_queued=52 ")
    elseif(how STREQUAL "isend_sync")
      set(waits --expect "^typejit\\[0\\]: stats .* gpu_waits=54 .*sends_queued=0 ")
      set(mode isend)
      set(env -x TYPEJIT_PROGRESS=off)
    endif()
    add_test(NAME emu_halo3d_${how}_${ranks} COMMAND ${TJ_CHECKED}
             --expect "^typejit\\[0\\]: stats .* packs_gpu=[1-9][0-9]* unpacks_gpu=[1-9][0-9]* .*kernel_launches=[1-9]"
             ${waits} --stdout "PASS: 0 wrong ghost cells"
             -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_STATS=1 ${env}
             -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-halo -np ${ranks}
             $<TARGET_FILE:halo3d> --device --collective ${mode} --n 8 --radius 3 --iters 2 --quiet)
    set_tests_properties(emu_halo3d_${how}_${ranks} PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
  endforeach()
endforeach()

# The isend and neighbor exchanges with the test driver's threaded mode, and the isend one with
# host compute between posting and waiting (--overlap): the ghost cells, not the counts.
foreach(how isend neighbor)
  add_test(NAME emu_halo3d_${how}_threaded_2 COMMAND ${TJ_CHECKED}
           --stdout "PASS: 0 wrong ghost cells"
           -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-halo -np 2
           $<TARGET_FILE:halo3d> --device --collective ${how} --n 8 --radius 3 --iters 3 --quiet)
  set_tests_properties(emu_halo3d_${how}_threaded_2 PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
endforeach()
add_test(NAME emu_halo3d_overlap_threaded_2 COMMAND ${TJ_CHECKED}
         --stdout "^overlap: compute [0-9.]+ us a step; in MPI calls"
         --stdout "PASS: 0 wrong ghost cells"
         --expect "^typejit\\[0\\]: stats .* sends_queued=78 "
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED} -x TYPEJIT_STATS=1
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-halo -np 2
         $<TARGET_FILE:halo3d> --device --collective isend --n 8 --radius 3 --iters 3
         --overlap 2000 --quiet)
set_tests_properties(emu_halo3d_overlap_threaded_2 PROPERTIES TIMEOUT 600 LABELS "emu;mpi")

# A soak: the main job in every exchange mode for hundreds of iterations while a few percent of
# typejit's driver calls fail at random (launches, syncs, copies, module loads; FAKECUDA_FAIL's
# probability rules, drawn from FAKECUDA_SEED, which the test driver says). Each failure must end
# in a staged fallback or an MPI error that halo3d --tolerate-errors recovers from by redoing the
# exchange; never a crash, a hang or a wrong ghost cell. The application's own driver calls are
# not failed (it would stop at the first). The alltoallv and isend modes run at 4 ranks only:
# 150 iterations of 4 processes draw as many failures as 300 of 2, in the same calls.
set(TJ_SOAK_FAIL "cuLaunchKernel%3,cuStreamSynchronize%2,cuMemcpyDtoHAsync_v2%2,cuMemcpyHtoDAsync_v2%2,cuModuleLoadData%10")
set(TJ_SOAKS pack:2:300 neighbor:2:300 alltoallv:4:150 isend:4:150)
if(NOT TJ_HEAVY_TESTS)
  set(TJ_SOAKS "")
endif()
foreach(soak ${TJ_SOAKS})
  string(REPLACE ":" ";" soak ${soak})
  list(GET soak 0 how)
  list(GET soak 1 ranks)
  list(GET soak 2 iters)
  add_test(NAME emu_soak_${how}_${ranks} COMMAND ${TJ_CHECKED}
           --expect "FAKECUDA_FAIL draws its failures from FAKECUDA_SEED=[0-9]+"
           --expect "^typejit\\[0\\]: stats .* gpu_fallbacks=[1-9]"
           --stdout "MPI errors met and recovered from: [0-9]+" --stdout "PASS: 0 wrong ghost cells"
           -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_STATS=1 -x "FAKECUDA_FAIL=${TJ_SOAK_FAIL}"
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-halo -np ${ranks}
           $<TARGET_FILE:halo3d> --device --collective ${how} --n 8 --radius 2 --iters ${iters}
           --tolerate-errors --quiet)
  set_tests_properties(emu_soak_${how}_${ranks} PROPERTIES TIMEOUT 300 LABELS "emu;mpi")
  tj_heavy(emu_soak_${how}_${ranks})
endforeach()

# The collective benchmark as a smoke run: every collective and method once on one size. The
# test driver's timings mean nothing and are never reported.
if(TJ_BUILD_BENCH)
  add_test(NAME emu_bench_coll COMMAND ${TJ_CHECKED}
           --stdout "^alltoallv,typejit,2," --stdout "^bcast,host,2,"
           -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-coll -np 2
           $<TARGET_FILE:bench_coll> --smoke)
  set_tests_properties(emu_bench_coll PROPERTIES TIMEOUT 600 LABELS "emu;mpi"
                       FAIL_REGULAR_EXPRESSION "failed|error")
endif()
