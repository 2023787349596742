# SPDX-License-Identifier: BSD-3-Clause
# The `typejit` command's helpers: the type description parser.
set(tj_typedesc_sources typedesc.c typedesc_lex.c typedesc_names.c typedesc_grammar.c
    typedesc_check.c typedesc_build.c)
list(TRANSFORM tj_typedesc_sources PREPEND ${PROJECT_SOURCE_DIR}/src/tools/)
tj_test_program(test_typedesc test_typedesc.c ${tj_typedesc_sources} $<TARGET_OBJECTS:tj_randtype>)
target_include_directories(test_typedesc PRIVATE ${PROJECT_SOURCE_DIR}/src/tools)
tj_add_test(typedesc COMMAND test_typedesc LABELS unit TIMEOUT 120)

# A stand-in MPI_Init that fails: the cache subcommands must run without starting MPI.
add_library(tj_nompi_shim SHARED nompi_shim.c)
target_link_libraries(tj_nompi_shim PRIVATE MPI::MPI_C)
# It interposes: exported whatever the MPI's header says (only Open MPI's marks its functions
# visible; built against MPICH the shim exported nothing and MPI started).
set_target_properties(tj_nompi_shim PROPERTIES C_VISIBILITY_PRESET default)
tj_add_test(tool LABELS jit TIMEOUT 300
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_tool.sh $<TARGET_FILE:typejit_tool>
          ${TJ_LIB} $<TARGET_FILE:halo3d> "${TJ_LAUNCH_WORDS}"
          $<TARGET_FILE:tj_nompi_shim>)

# Warnings about what all ranks of a job share are said once per job; the device part
# runs on the test driver when it is built.
set(TJ_WARNINGS_FAKE "")
set(TJ_WARNINGS_LABELS mpi)
if(TARGET fakecuda_13000)
  set(TJ_WARNINGS_FAKE ${FAKECUDA_LD_PATH_13})
  set(TJ_WARNINGS_LABELS mpi emu)
endif()
tj_add_test(job_warnings LABELS "${TJ_WARNINGS_LABELS}" TIMEOUT 300
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_job_warnings.sh "${TJ_LAUNCH_WORDS}"
          ${TJ_LIB} $<TARGET_FILE:halo3d> ${TJ_WARNINGS_FAKE})

# The debug log names types, ties kernels to them, and says per call what was done.
if(TARGET fakecuda_13000)
  tj_add_test(debug_log LABELS "mpi;emu" TIMEOUT 300
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_debug_log.sh "${TJ_LAUNCH_WORDS}"
            ${TJ_LIB} $<TARGET_FILE:halo3d> ${FAKECUDA_LD_PATH_13}
            ${FAKECUDA_LD_PATH_12})
endif()
