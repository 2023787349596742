# SPDX-License-Identifier: BSD-3-Clause
# Fortran programs through typejit: Open MPI's Fortran bindings call PMPI_* directly, so these
# pass only through the Fortran entry points of src/interpose/fortran*.c. Built only when CMake
# finds a Fortran compiler and MPI's Fortran bindings; the stats line is the proof that the
# calls reached typejit (commits, strided types, and host packs done by the engine; halo.f90's
# darray over one process is the whole array, strided through its layout, which its first engine
# pack builds, so nothing falls back to the system MPI), and that every type was recorded by the
# Fortran constructors (none translated through contents).
include(CheckLanguage)
check_language(Fortran)
if(NOT CMAKE_Fortran_COMPILER)
  message(STATUS "no Fortran compiler: the Fortran tests are not built")
  return()
endif()
enable_language(Fortran)
find_package(MPI COMPONENTS Fortran)
if(NOT MPI_Fortran_FOUND)
  message(STATUS "no Fortran MPI: the Fortran tests are not built")
  return()
endif()
# The Fortran MPI must be the C one's (on a machine with several MPIs FindMPI may find another's
# mpif90): its wrapper beside the C one, with the same suffix (mpicc.mpich, mpifort.mpich), and
# its libraries include the C library typejit is built against. (FindMPI caches libraries by
# name, so an Open MPI mpif90's "mpi" can name MPICH's libmpi.so: the libraries alone do not
# tell.)
get_filename_component(tj_c_dir "${MPI_C_COMPILER}" DIRECTORY)
get_filename_component(tj_f_dir "${MPI_Fortran_COMPILER}" DIRECTORY)
get_filename_component(tj_c_ext "${MPI_C_COMPILER}" EXT)
get_filename_component(tj_f_ext "${MPI_Fortran_COMPILER}" EXT)
if(NOT tj_c_dir STREQUAL tj_f_dir OR NOT tj_c_ext STREQUAL tj_f_ext)
  message(STATUS "the Fortran MPI (${MPI_Fortran_COMPILER}) is not the C one's: the Fortran "
          "tests are not built; pass -DMPI_Fortran_COMPILER=<its mpifort>")
  return()
endif()
foreach(lib IN LISTS TJ_MPI_C_LIBRARIES)
  if(NOT lib IN_LIST MPI_Fortran_LIBRARIES)
    message(STATUS "the Fortran MPI (${MPI_Fortran_COMPILER}) is not the C one's: the Fortran "
            "tests are not built; pass -DMPI_Fortran_COMPILER=<its mpifort>")
    return()
  endif()
endforeach()

# The project's warning options are C options; these programs get the Fortran ones. Their
# comparisons of doubles are exact on purpose (small integers stored in doubles).
set(TJ_FORTRAN_OPTIONS -Wall -Wextra -Wno-compare-reals)
if(TJ_WERROR)
  list(APPEND TJ_FORTRAN_OPTIONS -Werror)
endif()
# What the programs share (tests/fortran/checks.f90), its module in a folder of its own.
add_library(tj_fortran_checks OBJECT fortran/checks.f90)
set_property(TARGET tj_fortran_checks PROPERTY COMPILE_OPTIONS ${TJ_FORTRAN_OPTIONS})
set_property(TARGET tj_fortran_checks PROPERTY Fortran_MODULE_DIRECTORY
             ${CMAKE_CURRENT_BINARY_DIR}/fortran-checks)
target_include_directories(tj_fortran_checks INTERFACE ${CMAKE_CURRENT_BINARY_DIR}/fortran-checks)
function(tj_fortran_program name source)
  add_executable(${name} ${source})
  set_property(TARGET ${name} PROPERTY COMPILE_OPTIONS ${TJ_FORTRAN_OPTIONS})
  target_link_libraries(${name} PRIVATE tj_fortran_checks MPI::MPI_Fortran)
endfunction()

tj_fortran_program(test_fortran_halo fortran/halo.f90)
tj_add_test(fortran_halo LABELS "mpi;portable" TIMEOUT 120
  COMMAND ${TJ_CHECKED}
          --expect "^typejit\\[0\\]: stats commits=[1-9][0-9]+ strided=[1-9][0-9]* deferred=[0-9]+ fallback=0 layouts=[0-9]+ packs_engine=[1-9][0-9]* packs_system=0 unpacks_engine=[1-9]"
          --expect "^typejit\\[1\\]: stats commits=[1-9][0-9]+ "
          --expect "^typejit\\[0\\]: stats .* commits_via_contents=0( |$)"
          -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -x TYPEJIT_STATS=1 -np 2
          $<TARGET_FILE:test_fortran_halo>)

if(MPI_Fortran_HAVE_F08_MODULE)
  tj_fortran_program(test_fortran_halo_f08 fortran/halo_f08.f90)
  tj_add_test(fortran_halo_f08 LABELS "mpi;portable" TIMEOUT 120
    COMMAND ${TJ_CHECKED}
            --expect "^typejit\\[0\\]: stats commits=[1-9][0-9]* strided=[1-9][0-9]* deferred=[0-9]+ fallback=0 layouts=[0-9]+ packs_engine=[1-9][0-9]* packs_system=0 unpacks_engine=[1-9]"
            --expect "^typejit\\[0\\]: stats .* commits_via_contents=0( |$)"
            -- ${TJ_MPIEXEC} -x TYPEJIT_HOST=engine -x TYPEJIT_STATS=1 -np 2
            $<TARGET_FILE:test_fortran_halo_f08>)
endif()

# The Fortran entry points of the calls typejit stages or packs beyond point to point (reductions,
# Reduce_local, Alltoall, external32, Put and Get with fences, MPI-IO at offsets), through `use
# mpi` and `use mpi_f08`: on host buffers (label portable: results exact), and on device buffers
# of the CPU-only test driver (label emu), where each call reached typejit's wrapper exactly when
# calls_staged counts it. Without these entry points, Open MPI's bindings hand the device buffers
# to the system MPI, which reads them from host code (a crash).
set(tj_fortran_apis mpi)
if(MPI_Fortran_HAVE_F08_MODULE)
  list(APPEND tj_fortran_apis f08)
endif()
# The C helper apart: MPI::MPI_Fortran carries Fortran-only options (MPICH's mpifort:
# -fallow-argument-mismatch) to every source of a target that links it.
add_library(tj_fortran_buffers OBJECT fortran/buffers.c cudrv.c)
target_include_directories(tj_fortran_buffers PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_include_directories(tj_fortran_buffers SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
foreach(api IN LISTS tj_fortran_apis)
  set(prog test_fortran_calls_${api})
  tj_fortran_program(${prog} fortran/calls.F90)
  if(api STREQUAL f08)
    target_compile_definitions(${prog} PRIVATE TJ_F08)
  endif()
  target_link_libraries(${prog} PRIVATE tj_fortran_buffers ${CMAKE_DL_LIBS})
  tj_add_test(fortran_calls_${api} LABELS "mpi;portable" TIMEOUT 120
    COMMAND ${TJ_CHECKED} --stdout "^PASS$" --expect "^typejit\\[0\\]: stats commits="
            -- ${TJ_MPIEXEC} -x TYPEJIT_STATS=1 -np 2
            $<TARGET_FILE:${prog}> host ${CMAKE_CURRENT_BINARY_DIR}/fortran_calls_${api}.dat)
  add_test(NAME emu_fortran_calls_${api} COMMAND ${TJ_CHECKED} --stdout "^PASS$"
           --expect "^typejit\\[0\\]: stats .* kernel_launches=2 .* calls_staged=13 calls_refused=0 windows_separate=1 "
           --expect "^typejit\\[1\\]: stats .* kernel_launches=2 .* calls_staged=13 calls_refused=0 windows_separate=1 "
           -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_STATS=1
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-fortran -np 2
           $<TARGET_FILE:${prog}> device ${CMAKE_CURRENT_BINARY_DIR}/emu_fortran_calls_${api}.dat)
  set_tests_properties(emu_fortran_calls_${api} PROPERTIES TIMEOUT 300 LABELS "emu;mpi")
endforeach()
