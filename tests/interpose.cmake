# The preloaded library: exported symbols, and MPI programs under mpirun with it preloaded.
tj_add_test(symbols COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:typejit> -DNM=${CMAKE_NM}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_symbols.cmake LABELS unit TIMEOUT 30)

# MPI test programs link only MPI: the tj_* functions they query come from the preloaded
# library, never from a second copy of the core.
add_executable(test_interpose test_interpose.c randtype.c)
target_link_libraries(test_interpose PRIVATE MPI::MPI_C Threads::Threads ${CMAKE_DL_LIBS})
target_include_directories(test_interpose PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

set(TJ_CHECKED ${CMAKE_CURRENT_SOURCE_DIR}/run_checked.sh)
# What run_checked.sh prints when its stderr check fails. A test with a PASS_REGULAR_EXPRESSION
# ignores the exit status, so it needs this as its FAIL_REGULAR_EXPRESSION, or the check is lost.
set(TJ_CHECKED_FAILS "unexpected output on stderr|stderr has no line matching|lines matching \\(exactly 1 expected\\)")
tj_add_test(interpose_engine LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -np 2
          $<TARGET_FILE:test_interpose> engine --types 1500)
tj_add_test(interpose_system LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -np 2 $<TARGET_FILE:test_interpose> system
          --types 500)
tj_add_test(interpose_disabled LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_DISABLE=1 -x TYPEJIT_HOST=engine
          -np 2 $<TARGET_FILE:test_interpose> disabled --types 300)
tj_add_test(interpose_threads LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED} --silent -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -np 2
          $<TARGET_FILE:test_interpose> threads)
tj_add_test(interpose_stats LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED}
          --expect "^typejit\\[0\\]: stats commits=[0-9]+ strided=[0-9]+ fallback=[0-9]+ packs_engine=[1-9][0-9]* "
          --expect "^typejit\\[1\\]: stats .*unpacks_engine=[1-9]"
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -x TYPEJIT_STATS=1 -np 2
          $<TARGET_FILE:test_interpose> engine --types 100)
# A misspelt name, under the launcher: one warning for the job, with the closest setting (the
# regular expression has no semicolon: CMake would split the argument there).
tj_add_test(interpose_misspelt_setting LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED} --once "ignoring TYPEJIT_HOTS: not a typejit setting. did you mean TYPEJIT_HOST.$"
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOTS=engine -np 2 $<TARGET_FILE:test_interpose> system
          --types 50)
tj_add_test(interpose_bad_setting LABELS mpi TIMEOUT 300
  COMMAND ${TJ_CHECKED} --expect "ignoring TYPEJIT_HOST=\"bogus\""
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=bogus -np 1 $<TARGET_FILE:test_interpose> system
          --types 50)

# Commit of a 1,000,000-member indexed type: typejit's translation may add only a bounded amount
# of memory over the system MPI's own commit (it took 1.9 KB a member before issue 11).
add_executable(test_huge_commit test_huge_commit.c)
target_link_libraries(test_huge_commit PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
target_include_directories(test_huge_commit PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
tj_add_test(huge_commit_memory LABELS mpi TIMEOUT 120
  COMMAND ${TJ_MPIEXEC} -np 1 $<TARGET_FILE:test_huge_commit> --members 1000000 --bound-mb 32)
