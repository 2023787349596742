# SPDX-License-Identifier: BSD-3-Clause
# The method model: its choices on synthetic system tables (unit), and `typejit measure` on the
# CPU-only test driver with 2 ranks and with 1, each followed by a check that the table it wrote
# parses. The test driver's timings mean nothing: no timing is asserted, only that every
# quantity was measured and the file validates.
tj_test_program(test_model test_model.c tempdir.c)
tj_add_test(model COMMAND test_model LABELS unit TIMEOUT 120)

if(NOT TARGET fakecuda_13000)
  return()
endif()

set(TJ_MEASURE_DIR ${CMAKE_CURRENT_BINARY_DIR}/emu-measure)
tj_reset_test(emu_measure_reset ${TJ_MEASURE_DIR} emu emu_measure_clean)

# Two ranks on this node: kernels, copies, launch latency and host ping-pong (Debian's Open MPI
# is not CUDA-aware: no device ping-pong), written where --output says.
add_test(NAME emu_measure_2 COMMAND ${TJ_CHECKED} --silent
         --stdout "ping-pong, pinned host memory, peer on this node: done"
         --stdout "device ping-pong not measured" --stdout "wrote .*table-2\\.txt"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${TJ_MEASURE_DIR}/cache -np 2
         $<TARGET_FILE:typejit_tool> measure --quick --output ${TJ_MEASURE_DIR}/table-2.txt)
set_tests_properties(emu_measure_2 PROPERTIES TIMEOUT 600 LABELS "emu;mpi"
  FIXTURES_REQUIRED emu_measure_clean FIXTURES_SETUP emu_measure_2)
add_test(NAME emu_measure_2_parses
         COMMAND $<TARGET_FILE:test_model> --parse ${TJ_MEASURE_DIR}/table-2.txt)
set_tests_properties(emu_measure_2_parses PROPERTIES TIMEOUT 60 LABELS emu
  FIXTURES_REQUIRED emu_measure_2)

# One rank: no ping-pong (it says so); the table goes to its default place under the cache root.
add_test(NAME emu_measure_1 COMMAND ${TJ_CHECKED} --silent
         --stdout "one rank: the MPI's ping-pong is not measured"
         --stdout "wrote .*/cache/system/sm_90-[^/]*-13000\\.txt"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${TJ_MEASURE_DIR}/cache -np 1
         $<TARGET_FILE:typejit_tool> measure --quick)
set_tests_properties(emu_measure_1 PROPERTIES TIMEOUT 600 LABELS "emu;mpi"
  FIXTURES_REQUIRED emu_measure_clean FIXTURES_SETUP emu_measure_1)
add_test(NAME emu_measure_1_parses COMMAND sh -c
         "exec \"$0\" --parse \"$1\"/sm_90-*-13000.txt" $<TARGET_FILE:test_model>
         ${TJ_MEASURE_DIR}/cache/system)
set_tests_properties(emu_measure_1_parses PROPERTIES TIMEOUT 60 LABELS emu
  FIXTURES_REQUIRED emu_measure_1)

# No device: it says so and exits 1, writing nothing.
add_test(NAME emu_measure_no_device COMMAND ${TJ_CHECKED} --status 1
         --expect "typejit measure: no CUDA device: nothing measured"
         -- ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV}
         FAKECUDA_DEVICES=0 TYPEJIT_CACHE_DIR=${TJ_MEASURE_DIR}/none
         $<TARGET_FILE:typejit_tool> measure --quick)
set_tests_properties(emu_measure_no_device PROPERTIES TIMEOUT 60 LABELS emu
  FAIL_REGULAR_EXPRESSION "wrote")
