# SPDX-License-Identifier: BSD-3-Clause
# The preloaded library: exported symbols, and MPI programs under mpirun with it preloaded.
if(TJ_MPI_FAMILY STREQUAL "openmpi")
  set(TJ_FORTRAN_NAMES openmpi)
elseif(TJ_MPI_FAMILY STREQUAL "mpich")
  set(TJ_FORTRAN_NAMES mpich-f08)
else()
  set(TJ_FORTRAN_NAMES none)
endif()
tj_add_test(symbols COMMAND ${CMAKE_COMMAND} -DLIB=${TJ_LIB} -DREADELF=${CMAKE_READELF}
            -DSRC=${PROJECT_SOURCE_DIR} -DFORTRAN=${TJ_FORTRAN_NAMES}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_symbols.cmake LABELS "unit;portable" TIMEOUT 30)

# MPI test programs link only MPI: the tj_* functions they query come from the preloaded
# library, never from a second copy of the core.
add_executable(test_interpose test_interpose.c randtype.c)
target_link_libraries(test_interpose PRIVATE MPI::MPI_C Threads::Threads ${CMAKE_DL_LIBS})
target_include_directories(test_interpose PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

# Every test's verdict is its exit status: ctest ignores the exit status of a test that has a
# PASS_REGULAR_EXPRESSION, so no test has one (test `tests_checked` enforces it); a test that
# must find a line on stdout says so with run_checked.sh's --stdout.
set(TJ_CHECKED ${CMAKE_CURRENT_SOURCE_DIR}/run_checked.sh)
tj_add_test(interpose_engine LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -np 2
          $<TARGET_FILE:test_interpose> engine --types 1500)
tj_add_test(interpose_auto LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -np 2 $<TARGET_FILE:test_interpose> auto
          --types 1500)
tj_add_test(interpose_system LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=system -np 2
          $<TARGET_FILE:test_interpose> system --types 500)
tj_add_test(interpose_disabled LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_DISABLE=1 -x TYPEJIT_HOST=engine
          -np 2 $<TARGET_FILE:test_interpose> disabled --types 300)
tj_add_test(interpose_threads LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -np 2
          $<TARGET_FILE:test_interpose> threads)
tj_add_test(interpose_stats LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED}
          --expect "^typejit\\[0\\]: stats commits=[0-9]+ strided=[0-9]+ deferred=[0-9]+ fallback=[0-9]+ layouts=[0-9]+ packs_engine=[1-9][0-9]* "
          --expect "^typejit\\[1\\]: stats .*unpacks_engine=[1-9]"
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -x TYPEJIT_STATS=1 -np 2
          $<TARGET_FILE:test_interpose> engine --types 100)
# A misspelt name, under the launcher: one warning for the job, with the closest setting (the
# regular expression has no semicolon: CMake would split the argument there).
tj_add_test(interpose_misspelt_setting LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --once "ignoring TYPEJIT_HOTS: not a typejit setting. did you mean TYPEJIT_HOST.$"
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOTS=engine -np 2 $<TARGET_FILE:test_interpose> auto
          --types 50)
tj_add_test(interpose_bad_setting LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_CHECKED} --expect "ignoring TYPEJIT_HOST=\"bogus\""
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=bogus -np 1 $<TARGET_FILE:test_interpose> auto
          --types 50)

# Commit of a 1,000,000-member indexed type: typejit's translation may add only a bounded amount
# of memory over the system MPI's own commit (it once took 1.9 KB a member, and an
# irregular type's layout 16 bytes a part before its build waited for a device call); no commit
# of a host-only program builds a layout. Without the JIT: with a cold kernel cache, the
# background compile a commit starts (NVRTC, about 30 MB) ran inside the next type's measurement.
add_executable(test_huge_commit test_huge_commit.c)
target_link_libraries(test_huge_commit PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
target_include_directories(test_huge_commit PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
tj_add_test(huge_commit_memory LABELS mpi TIMEOUT 120
  COMMAND ${TJ_MPIEXEC} -x TYPEJIT_JIT=off -np 1 $<TARGET_FILE:test_huge_commit> --members 1000000
          --bound-mb 8)

# No test may have a PASS_REGULAR_EXPRESSION (see TJ_CHECKED above).
tj_add_test(tests_checked LABELS unit TIMEOUT 60
  COMMAND ${CMAKE_COMMAND} -DCTEST=${CMAKE_CTEST_COMMAND} -DBUILD=${PROJECT_BINARY_DIR}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_tests.cmake)
# The main job on host buffers, each way it moves halos, 2 and 4 ranks: typejit's engine packs
# (the stats line), and every ghost cell is right.
foreach(ranks 2 4)
  foreach(how pack alltoallv neighbor isend)
    add_test(NAME halo3d_${how}_${ranks} COMMAND ${TJ_CHECKED}
             --expect "^typejit\\[0\\]: stats commits=[1-9][0-9]* strided=[1-9][0-9]* "
             --stdout "PASS: 0 wrong ghost cells"
             -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -x TYPEJIT_STATS=1 -np ${ranks}
             $<TARGET_FILE:halo3d> --collective ${how} --n 10 --radius 2 --iters 3 --quiet)
    set_tests_properties(halo3d_${how}_${ranks} PROPERTIES TIMEOUT 300 LABELS "mpi;portable")
  endforeach()
endforeach()

# A wrong pairing, both ways (TJ_PAIRED_BUILD: the build folder of typejit against an MPI of
# another family; .ci/run pairs Open MPI 4.1 with MPICH 4.0).
set(TJ_PAIRED_BUILD "" CACHE PATH "A typejit build against another MPI family, for the pairing test")
if(TJ_PAIRED_BUILD)
  file(STRINGS ${TJ_PAIRED_BUILD}/CMakeCache.txt tj_paired_mpiexec REGEX "^MPIEXEC_EXECUTABLE:")
  string(REGEX REPLACE "^[^=]*=" "" tj_paired_mpiexec "${tj_paired_mpiexec}")
  tj_add_test(pairing LABELS "mpi;portable" TIMEOUT 300
    COMMAND ${TJ_CHECKED} --stdout "ok: both pairings pass every call through"
            -- ${CMAKE_CURRENT_SOURCE_DIR}/test_pairing.sh ${CMAKE_CURRENT_SOURCE_DIR}/mpiexec.sh
            ${TJ_LIB} $<TARGET_FILE:halo3d> ${MPIEXEC_EXECUTABLE}
            ${TJ_PAIRED_BUILD}/libtypejit.so ${TJ_PAIRED_BUILD}/halo3d ${tj_paired_mpiexec})
endif()

# MPI-4 large-count datatypes (tests/test_largecount.c; exit 77 on an MPI without them): every
# `_c` constructor committed with errors fatal, translated and packed exactly; and an
# application's own MPI_Type_get_envelope on a large type sees the same error with typejit
# preloaded as without it.
# Its device modes (calls, big) run on the test driver: tests/calls.cmake.
add_executable(test_largecount test_largecount.c cudrv.c devbuf.c tempdir.c)
target_link_libraries(test_largecount PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
target_include_directories(test_largecount PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_include_directories(test_largecount SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
tj_add_test(interpose_largecount_types LABELS "mpi;portable" TIMEOUT 300
  COMMAND ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -np 1 $<TARGET_FILE:test_largecount> types)
tj_add_test(interpose_largecount_envelope LABELS "mpi;portable" TIMEOUT 120
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/same_output.sh
          ${TJ_MPIEXEC} -np 1 $<TARGET_FILE:test_largecount> envelope
          :: ${TJ_LAUNCH} -np 1 $<TARGET_FILE:test_largecount> envelope)
