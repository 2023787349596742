# Fails unless every dynamic symbol libtypejit.so defines is an MPI_* wrapper (C or Fortran) or a
# tj_* API function, and the Fortran entry points are there. Input: LIB (the library path), NM.
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(bad "")
set(n 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-f]+ [A-Za-z] (.+)$")
    set(sym ${CMAKE_MATCH_1})
    math(EXPR n "${n} + 1")
    # C wrappers MPI_X_y (and Open MPI's MPIX_X_y extensions), tj_ API, and the Fortran entry points (src/interpose/fortran.c): every
    # mangling of mpif.h (mpi_x, mpi_x_, mpi_x__, MPI_X) and ompi_x_f, which mpi_f08 calls.
    if(NOT sym MATCHES "^(MPIX?_[A-Z][a-z_]+|tj_[a-z_]+|mpi_[a-z_]+|MPI_[A-Z_]+|ompi_[a-z_]+_f)$")
      list(APPEND bad ${sym})
    endif()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "libtypejit.so exports symbols outside MPI_*, tj_* and the Fortran MPI names: ${bad}")
endif()
foreach(sym mpi_type_commit mpi_type_commit_ mpi_type_commit__ MPI_TYPE_COMMIT ompi_type_commit_f
            mpi_alltoallw mpi_alltoallw_ mpi_alltoallw__ MPI_ALLTOALLW ompi_alltoallw_f
            mpi_ineighbor_alltoallv_ ompi_ineighbor_alltoallv_f MPI_BCAST ompi_ibcast_f
            MPI_Type_commit MPI_Type_vector MPI_Type_dup MPI_Alltoallw)
  if(NOT out MATCHES " ${sym}\n")
    message(FATAL_ERROR "libtypejit.so does not export ${sym}")
  endif()
endforeach()
if(n LESS 10)
  message(FATAL_ERROR "libtypejit.so exports only ${n} symbols; the wrappers are missing")
endif()
message(STATUS "${n} exported symbols, all MPI_*, tj_* or Fortran MPI names")
