# SPDX-License-Identifier: BSD-3-Clause
# The library owns its exports: the dynamic symbols libtypejit.so defines are exactly the MPI
# entry points its source defines, its Fortran names, and the tj_* API of include/typejit.h.
# Inputs: LIB (the library), READELF, SRC (the source tree), FORTRAN: "openmpi" (every C entry point
# also under the five Fortran names of Open MPI's bindings), "mpich-f08" (the entry points without
# a buffer, the window synchronisations and MPI_Win_free among them, also under their mpi_f08 name,
# mpi_x_f08_: the MPICH family's mpi_f08 calls PMPI_* for those) or "none" (the standard ABI: the
# MPI's own Fortran bindings call the C functions).

# The entry points the source defines as they are (TJ_EXPORT int MPI_X(...)); the wrappers,
# TJ_WRAPPER(MPI_X)(...), are read from the library below, however the source makes them.
file(GLOB sources ${SRC}/src/interpose/*.c)
set(plain_defined "")
foreach(f IN LISTS sources)
  file(READ ${f} text)
  string(REGEX MATCHALL "\nTJ_EXPORT int MPI_[A-Za-z0-9_]+\\(" plain "${text}")
  # A wrapper defined as a plain MPI_X would be exported only where the MPI's header says so.
  string(REGEX MATCHALL "\n(int|double) MPIX?_[A-Za-z0-9_]+\\(" bare "${text}")
  if(bare)
    message(FATAL_ERROR "${f} defines ${bare}: define a wrapper as TJ_WRAPPER(MPI_X) and list it in TJ_WRAPPERS")
  endif()
  foreach(m IN LISTS plain)
    string(REGEX REPLACE ".*(MPI_[A-Za-z0-9_]+).*" "\\1" name "${m}")
    list(APPEND plain_defined ${name})
  endforeach()
endforeach()
# The lists the trampolines are made from (src/interpose/wrappers.h) must name every wrapper
# compiled (a wrapper they do not name would never be called), and a wrapper they name must be
# defined (else exports.c's trampoline does not link); TJ_WRAPPERS holds those with Fortran
# entry points.
file(READ ${SRC}/src/interpose/wrappers.h text)
# The calls exported only to hand the send queue's sends on (TJ_FLUSHED_CALLS) have no wrapper:
# their block is read apart.
string(REGEX MATCH "#define TJ_FLUSHED_CALLS\\(_X\\)[^#]*" flushed_block "${text}")
string(REPLACE "${flushed_block}" "" text "${text}")
string(REGEX MATCHALL "_X\\(MPI_[A-Za-z0-9_]+\\)" flushed "${flushed_block}")
list(TRANSFORM flushed REPLACE "_X\\((.*)\\)" "\\1")
string(REGEX MATCHALL "_X\\(MPIX?_[A-Za-z0-9_]+\\)" listed "${text}")
list(TRANSFORM listed REPLACE "_X\\((.*)\\)" "\\1")
string(REGEX MATCH "#define TJ_WRAPPERS\\(_X\\)[^#]*" fortran_block "${text}")
string(REGEX MATCHALL "_X\\(MPI_[A-Za-z0-9_]+\\)" with_fortran "${fortran_block}")
list(TRANSFORM with_fortran REPLACE "_X\\((.*)\\)" "\\1")
# The wrappers this build compiled (some lists are empty where the MPI lacks their calls): the
# hidden tj_wrap_* functions in the library's symbol table. Every unconditional one must be there.
execute_process(COMMAND ${READELF} -W -s ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIB}")
endif()
string(REGEX MATCHALL " tj_wrap_MPIX?_[A-Za-z0-9_]+" compiled "${out}")
list(TRANSFORM compiled REPLACE " tj_wrap_" "")
list(REMOVE_DUPLICATES compiled)
string(REGEX MATCH "#define TJ_WRAPPERS_C\\(_X\\)[^#]*" c_block "${text}")
string(REGEX MATCHALL "_X\\(MPI_[A-Za-z0-9_]+\\)" always "${c_block}")
list(TRANSFORM always REPLACE "_X\\((.*)\\)" "\\1")
list(APPEND always ${with_fortran})
set(absent ${always})
list(REMOVE_ITEM absent ${compiled})
if(absent)
  message(FATAL_ERROR "wrappers listed unconditionally but not compiled: ${absent}")
endif()
set(unlisted ${compiled})
list(REMOVE_ITEM unlisted ${listed})
if(unlisted)
  message(FATAL_ERROR "wrappers compiled but not in the lists of src/interpose/wrappers.h: ${unlisted}")
endif()
list(LENGTH compiled ndefined)
if(ndefined LESS 60)
  message(FATAL_ERROR "found only ${ndefined} MPI wrappers in ${LIB}")
endif()
# Each of them has its entry point, marked by the hidden tj_flush_MPI_X.
string(REGEX MATCHALL " tj_flush_MPI_[A-Za-z0-9_]+" flushed_compiled "${out}")
list(TRANSFORM flushed_compiled REPLACE " tj_flush_" "")
list(REMOVE_DUPLICATES flushed_compiled)
set(absent ${flushed})
list(REMOVE_ITEM absent ${flushed_compiled})
if(absent OR NOT flushed)
  message(FATAL_ERROR "calls listed in TJ_FLUSHED_CALLS but without an entry point: ${absent}")
endif()
set(defined ${compiled} ${plain_defined} ${flushed_compiled})
set(fortran_names ${with_fortran} ${plain_defined})

set(expected ${defined})
if(FORTRAN STREQUAL "openmpi")
  foreach(name IN LISTS fortran_names)
    string(REGEX REPLACE "^MPI_" "" rest ${name})
    string(TOLOWER ${rest} lower)
    string(TOUPPER ${rest} upper)
    list(APPEND expected mpi_${lower} mpi_${lower}_ mpi_${lower}__ MPI_${upper} ompi_${lower}_f)
  endforeach()
elseif(FORTRAN STREQUAL "mpich-f08")
  foreach(name IN LISTS fortran_names)
    if(name MATCHES "^MPI_(Init|Init_thread|Finalize|Type_.*|Pack_size|Wait.*|Test.*|Start.*|Request_.*|Win_(fence|post|complete|wait|test|lock|unlock|lock_all|unlock_all|sync|flush|flush_all|flush_local|flush_local_all|free))$")
      string(REGEX REPLACE "^MPI_" "" rest ${name})
      string(TOLOWER ${rest} lower)
      list(APPEND expected mpi_${lower}_f08_)
    endif()
  endforeach()
elseif(NOT FORTRAN STREQUAL "none")
  message(FATAL_ERROR "FORTRAN must be openmpi, mpich-f08 or none, not '${FORTRAN}'")
endif()
file(STRINGS ${SRC}/include/typejit.h api REGEX "^TJ_API ")
foreach(line IN LISTS api)
  string(REGEX REPLACE ".*[ *](tj_[a-z_]+)\\(.*" "\\1" name "${line}")
  list(APPEND expected ${name})
endforeach()

# Exported: defined (not UND), global or weak, and visible to other objects (a hidden symbol in
# the dynamic table, such as the linker's section bounds, is not).
execute_process(COMMAND ${READELF} -W --dyn-syms ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIB}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(exported "")
foreach(line IN LISTS lines)
  if(line MATCHES " +(GLOBAL|WEAK) +(DEFAULT|PROTECTED) +[0-9]+ ([^ @]+)")
    list(APPEND exported ${CMAKE_MATCH_3})
  endif()
endforeach()

set(missing ${expected})
list(REMOVE_ITEM missing ${exported})
set(extra ${exported})
list(REMOVE_ITEM extra ${expected})
if(missing OR extra)
  message(FATAL_ERROR "libtypejit.so's exports differ from its source.\n"
          "Defined but not exported: ${missing}\nExported but not defined: ${extra}")
endif()
list(LENGTH exported n)
message(STATUS "${n} exported symbols: ${ndefined} MPI entry points (Fortran: ${FORTRAN}) and the tj_* API")
