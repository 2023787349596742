# Which family of MPI the headers belong to (docs/mpis.md): handles are pointers in Open MPI,
# ints in the MPICH family (MPICH, Intel MPI, MVAPICH, Cray MPICH), opaque pointers of their own
# in the MPI 5.0 standard ABI. Sets TJ_MPI_FAMILY to openmpi, mpich or abi.
include(CheckSymbolExists)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
set(CMAKE_REQUIRED_QUIET ON)
check_symbol_exists(MPI_ABI_VERSION mpi.h TJ_HAVE_MPI_ABI_VERSION)
check_symbol_exists(OPEN_MPI mpi.h TJ_HAVE_OPEN_MPI)
check_symbol_exists(MPICH mpi.h TJ_HAVE_MPICH)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
if(TJ_HAVE_MPI_ABI_VERSION)
  set(TJ_MPI_FAMILY abi)
elseif(TJ_HAVE_OPEN_MPI)
  set(TJ_MPI_FAMILY openmpi)
elseif(TJ_HAVE_MPICH)
  set(TJ_MPI_FAMILY mpich)
else()
  message(FATAL_ERROR "typejit knows Open MPI, the MPICH family and the MPI 5.0 standard ABI; "
          "the mpi.h of ${MPI_C_COMPILER} is none of them")
endif()
if(TYPEJIT_MPI_ABI AND NOT TJ_MPI_FAMILY STREQUAL "abi")
  message(FATAL_ERROR "TYPEJIT_MPI_ABI=ON but ${MPI_C_COMPILER} -mpi-abi gives no mpi_abi.h; "
          "pass -DMPI_C_COMPILER=<the MPI's mpicc_abi>")
endif()
message(STATUS "MPI family: ${TJ_MPI_FAMILY} (${MPI_C_COMPILER}, MPI ${MPI_C_VERSION})")
