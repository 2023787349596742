# SPDX-License-Identifier: BSD-3-Clause
# Device paths. Each scenario is registered twice: label `gpu` on whatever driver the machine has
# (exit 77, shown as skipped, without a device), and label `emu` on the CPU-only test double of
# tests/fakecuda/ (TJ_EMU_ENV), which every CI run executes: there nothing may be skipped.
# The test programs are applications: they use the CUDA driver through tests/cudrv.c and reach
# typejit only through the preloaded library.

function(tj_device_program name)
  add_executable(${name} ${ARGN} cudrv.c)
  target_link_libraries(${name} PRIVATE MPI::MPI_C Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_include_directories(${name} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
endfunction()

# tj_device_test(NAME [EMU_ONLY] [TIMEOUT s] [ENV VAR=VALUE...] [EMU_ENV VAR=VALUE...]
#                [CHECK run_checked.sh options...] COMMAND ...)
# ENV applies to both runs, EMU_ENV to the emulated one only (fake driver knobs). In the emu run
# a skip (77) is a failure.
function(tj_device_test name)
  cmake_parse_arguments(T "EMU_ONLY" "TIMEOUT" "ENV;EMU_ENV;CHECK;COMMAND;FIXTURES" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT T_CHECK)
    set(T_CHECK --silent)
  endif()
  set(preload LD_PRELOAD=${TJ_LIB})
  if(NOT T_EMU_ONLY)
    tj_add_test(gpu_${name} LABELS gpu TIMEOUT ${T_TIMEOUT}
      COMMAND ${TJ_CHECKED} ${T_CHECK} -- ${CMAKE_COMMAND} -E env ${preload}
              TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/gpu-cache ${T_ENV} ${T_COMMAND})
  endif()
  add_test(NAME emu_${name} COMMAND ${TJ_CHECKED} ${T_CHECK} -- ${CMAKE_COMMAND} -E env
           ${TJ_EMU_ENV} ${preload} TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache
           ${T_ENV} ${T_EMU_ENV} ${T_COMMAND})
  set_tests_properties(emu_${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS emu)
endfunction()

# tj_emu_twice(NAME DIR TIMEOUT s FIRST run_checked.sh options... SECOND options... COMMAND ...)
# One command twice on one cache, DIR, that NAME_reset empties first: NAME_first, checked by the
# FIRST options, fills it, and NAME_second, checked by the SECOND ones, runs on what it left.
function(tj_emu_twice name dir)
  cmake_parse_arguments(T "" "TIMEOUT" "FIRST;SECOND;COMMAND" ${ARGN})
  tj_reset_test(${name}_reset ${dir} emu ${name})
  add_test(NAME ${name}_first COMMAND ${TJ_CHECKED} ${T_FIRST} -- ${T_COMMAND})
  add_test(NAME ${name}_second COMMAND ${TJ_CHECKED} ${T_SECOND} -- ${T_COMMAND})
  set_tests_properties(${name}_first PROPERTIES FIXTURES_REQUIRED ${name}
                       FIXTURES_SETUP ${name}_filled)
  set_tests_properties(${name}_second PROPERTIES FIXTURES_REQUIRED "${name};${name}_filled")
  set_tests_properties(${name}_first ${name}_second PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS emu)
  tj_heavy(${name}_reset ${name}_first ${name}_second)
endfunction()

tj_device_program(test_gpu_pack test_gpu_pack.c devbuf.c randtype.c)
tj_device_program(test_compile_burst test_compile_burst.c)

# The oracle with JIT kernels on a cold kernel cache, then again on the cache it filled, which
# must compile nothing. The fixture orders the two and starts from an empty cache; the kernels
# are compiled at commit (TYPEJIT_JIT_SYNC=1), so that the first run ends with all of them.
tj_reset_test(emu_cache_reset ${CMAKE_CURRENT_BINARY_DIR}/emu-cache emu emu_cold)
tj_device_test(pack_jit TIMEOUT 900 ENV TYPEJIT_JIT_SYNC=1
  COMMAND $<TARGET_FILE:test_gpu_pack> --types 150 --expect-edges)
set_tests_properties(emu_pack_jit PROPERTIES FIXTURES_REQUIRED emu_cold FIXTURES_SETUP emu_warm)
tj_device_test(pack_jit_warm EMU_ONLY TIMEOUT 600 ENV TYPEJIT_JIT_SYNC=1
  COMMAND $<TARGET_FILE:test_gpu_pack> --types 150 --expect-no-compiles --expect-edges)
set_tests_properties(emu_pack_jit_warm PROPERTIES FIXTURES_REQUIRED emu_warm)

if(TJ_HEAVY_TESTS)
  # The default, background compiles, from an empty cache: the first calls of each type run the
  # generic kernel, exactly.
  tj_reset_test(emu_background_reset ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-background
                emu emu_background)
  tj_device_test(pack_background EMU_ONLY TIMEOUT 600
    ENV TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-background
    COMMAND $<TARGET_FILE:test_gpu_pack> --types 60 --seed 4 --expect-generic)
  set_tests_properties(emu_pack_background PROPERTIES FIXTURES_REQUIRED emu_background)

  # One run leaves the cache warm: the default settings (background compiles) with
  # TYPEJIT_JIT_DRAIN long enough for every queued compile, twice on one cache; the second run
  # compiles nothing. Kernels a call needs at other words than its commit's are queued by the
  # call, and layouts that share a device-table kernel share its cache entry (a second run
  # compiled again what the first had taken from its memory table).
  tj_emu_twice(emu_rerun ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-rerun TIMEOUT 600
    FIRST --expect "^typejit\\[0\\]: stats .* jit_compiles=[1-9][0-9]* jit_failures=0 "
    SECOND --expect "^typejit\\[0\\]: stats .* jit_compiles=0 jit_failures=0 jit_background=0 "
    COMMAND ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB} TYPEJIT_STATS=1
            TYPEJIT_JIT_DRAIN=600 TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-rerun
            $<TARGET_FILE:test_gpu_pack> --types 40 --seed 2)

  # A start-up's burst: 600 distinct strided types committed one after another in the default
  # settings (background compiles), twice on one cache. The background compiler drops none of
  # the requests: the first run compiles every kernel, a pack and an unpack kernel a type
  # (MPI_Finalize drains the queue), and the second compiles nothing.
  tj_emu_twice(emu_burst ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-burst TIMEOUT 1500
    FIRST --expect "^typejit\\[0\\]: stats .* jit_compiles=1200 jit_failures=0 "
    SECOND --expect "^typejit\\[0\\]: stats .* cache_misses=0 .*"
           --expect "^typejit\\[0\\]: stats .* jit_compiles=0 jit_failures=0 jit_background=0 "
    COMMAND ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB} TYPEJIT_STATS=1
            TYPEJIT_JIT_DRAIN=1200 TYPEJIT_JIT_THREADS=2
            TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-burst
            $<TARGET_FILE:test_compile_burst> --types 600)

  # Volume, in the default settings (background compiles): 1500 random types, constructions of
  # 100 random layouts (about 250 kernels), three times on one cache: cold, then warm twice. Each
  # run is the full oracle; the warm ones must find kernels on disk.
  tj_reset_test(emu_volume_reset ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-volume emu emu_volume)
  set(TJ_VOLUME ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV}
      LD_PRELOAD=${TJ_LIB} TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-volume
      $<TARGET_FILE:test_gpu_pack> --types 1500 --families 100 --seed 21)
  add_test(NAME emu_volume_cold COMMAND ${TJ_VOLUME})
  add_test(NAME emu_volume_warm COMMAND ${TJ_VOLUME} --expect-disk-hits)
  add_test(NAME emu_volume_warm2 COMMAND ${TJ_VOLUME} --expect-disk-hits)
  set_tests_properties(emu_volume_cold PROPERTIES FIXTURES_REQUIRED emu_volume
                       FIXTURES_SETUP emu_volume_1)
  set_tests_properties(emu_volume_warm PROPERTIES FIXTURES_REQUIRED "emu_volume;emu_volume_1"
                       FIXTURES_SETUP emu_volume_2)
  set_tests_properties(emu_volume_warm2 PROPERTIES FIXTURES_REQUIRED "emu_volume;emu_volume_2")
  set_tests_properties(emu_volume_cold emu_volume_warm emu_volume_warm2 PROPERTIES TIMEOUT 600
                       LABELS emu)
  tj_heavy(emu_background_reset emu_pack_background emu_volume_reset emu_volume_cold
           emu_volume_warm emu_volume_warm2)
endif()

# The generic kernel (TYPEJIT_JIT=off): the layout as run-time arguments.
tj_device_test(pack_generic TIMEOUT 600 ENV TYPEJIT_JIT=off
  COMMAND $<TARGET_FILE:test_gpu_pack> --types 60 --seed 2)

# The emulated kernels built with AddressSanitizer and UndefinedBehaviorSanitizer
# (FAKECUDA_CXXFLAGS; the runtime preloaded first, as it must be): an out-of-bounds access of a
# kernel's arguments or locals, or an undefined behaviour such as a signed overflow in its index
# arithmetic, ends the run with the sanitizer's report. The default, background compiles.
execute_process(COMMAND ${TJ_EMU_CXX} -print-file-name=libasan.so OUTPUT_VARIABLE TJ_LIBASAN
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(EXISTS "${TJ_LIBASAN}" AND NOT TJ_SANITIZE AND TJ_HEAVY_TESTS)
  add_test(NAME emu_pack_sanitized COMMAND ${TJ_CHECKED} --silent -- ${CMAKE_COMMAND} -E env
           ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIBASAN}:${TJ_LIB}
           "FAKECUDA_CXXFLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all"
           ASAN_OPTIONS=detect_leaks=0 TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache
           $<TARGET_FILE:test_gpu_pack> --types 60 --seed 6)
  set_tests_properties(emu_pack_sanitized PROPERTIES TIMEOUT 600 LABELS emu)
  tj_heavy(emu_pack_sanitized)
elseif(TJ_HEAVY_TESTS AND NOT TJ_SANITIZE)
  message(STATUS "no libasan.so beside ${TJ_EMU_CXX}: emu_pack_sanitized is not run")
endif()

# A 12.4 driver cannot load NVRTC 13's kernels and lacks cuEventElapsedTime_v2: typejit says so
# once and stages every call, exactly.
add_test(NAME emu_pack_driver12 COMMAND ${TJ_CHECKED}
         --once "nvrtc 13\\.[0-9]+ is newer than the cuda driver \\(12\\.4\\)"
         -- ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV_12} LD_PRELOAD=${TJ_LIB}
         TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-12
         $<TARGET_FILE:test_gpu_pack> --types 40 --seed 3 --expect-staged)
set_tests_properties(emu_pack_driver12 PROPERTIES TIMEOUT 300 LABELS emu)

# Contexts and devices: a thread that never touched CUDA, device 1 of another arch, an
# application-owned context, two devices in one call, four threads, a type past its allocation,
# and the current context after every call and after MPI_Finalize.
tj_device_program(test_gpu_context test_gpu_context.c)
tj_device_test(contexts EMU_ENV FAKECUDA_DEVICES=2 FAKECUDA_SM=90,80
  CHECK --once "a device pack reaches outside its allocation"
  COMMAND $<TARGET_FILE:test_gpu_context>)

# Big counts and footprints (tests/test_bigcount.c): past 2^31 and 2^32 bytes exact, overflowing
# ones MPI errors, the context alive after each. Every refusal is logged.
# A device message past 2^31 packed bytes is MPI_ERR_COUNT where the MPI has no large-count
# calls; where it has them (MPICH, the standard ABI) it could travel, and the test's stand-in
# allocation makes it MPI_ERR_BUFFER ("a device send reaches outside").
if(TJ_HEAVY_TESTS)
  tj_device_program(test_bigcount test_bigcount.c)
  if(TJ_MPI_FAMILY STREQUAL "openmpi")
    set(TJ_BIG_MESSAGE "MPI_ERR_COUNT")
  else()
    set(TJ_BIG_MESSAGE "a device send reaches outside its allocation")
  endif()
  tj_device_test(bigcount EMU_ONLY TIMEOUT 300
    CHECK --expect "a device pack reaches outside its allocation" --expect "${TJ_BIG_MESSAGE}"
    COMMAND $<TARGET_FILE:test_bigcount>)
  # The same on the generic kernel (TYPEJIT_JIT=off): 64-bit offsets for objects spanning 4 GiB
  # and more, 32-bit ones from the lowest byte below.
  tj_device_test(bigcount_generic EMU_ONLY TIMEOUT 300 ENV TYPEJIT_JIT=off
    CHECK --expect "a device pack reaches outside its allocation" --expect "${TJ_BIG_MESSAGE}"
    COMMAND $<TARGET_FILE:test_bigcount>)
  tj_heavy(emu_bigcount emu_bigcount_generic)
endif()

# Out of memory in typejit's own allocations (tests/failmalloc_shim.c fails the N-th, for each
# N in turn): every call exact or MPI_ERR_NO_MEM, no non-blocking call blocking, no leak.
add_library(tj_failmalloc_shim SHARED failmalloc_shim.c)
target_link_libraries(tj_failmalloc_shim PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(tj_failmalloc_shim PROPERTIES C_VISIBILITY_PRESET default) # it interposes
tj_device_program(test_oom test_oom.c)
add_test(NAME emu_oom COMMAND ${TJ_CHECKED} --expect "out of memory" -- ${CMAKE_COMMAND} -E env
         ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB}:$<TARGET_FILE:tj_failmalloc_shim>
         TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache TYPEJIT_JIT_SYNC=1
         $<TARGET_FILE:test_oom>)
set_tests_properties(emu_oom PROPERTIES TIMEOUT 300 LABELS emu)

# Threads in one context while the application resets it (tests/test_gpu_race.c), built with
# ThreadSanitizer together with src/gpu/cuda.c: a data race on typejit's record of the context
# fails it. Not in a sanitizer build (AddressSanitizer and ThreadSanitizer do not mix).
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_c_source_compiles("int main(void) { return 0; }" TJ_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(TJ_HAVE_TSAN AND NOT TJ_SANITIZE AND TJ_HEAVY_TESTS)
  add_executable(test_gpu_race test_gpu_race.c ${PROJECT_SOURCE_DIR}/src/gpu/cuda.c
                 ${PROJECT_SOURCE_DIR}/src/util/log.c ${PROJECT_SOURCE_DIR}/src/util/stats.c
                 ${PROJECT_SOURCE_DIR}/src/util/state.c)
  target_include_directories(test_gpu_race PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                             ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_include_directories(test_gpu_race SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(test_gpu_race PRIVATE -fsanitize=thread -g)
  target_link_options(test_gpu_race PRIVATE -fsanitize=thread)
  target_link_libraries(test_gpu_race PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  add_test(NAME emu_gpu_race COMMAND ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV}
           TSAN_OPTIONS=halt_on_error=1:exitcode=66 $<TARGET_FILE:test_gpu_race> 20000)
  set_tests_properties(emu_gpu_race PROPERTIES TIMEOUT 300 LABELS emu)
  tj_heavy(emu_gpu_race)
endif()

# Injected driver failures: exact bytes through a fallback, or a clear MPI error; a failure that
# repeats on every call is logged once; a sticky error ends typejit's use of the context with one
# error line.
tj_device_test(fault_launch EMU_ONLY EMU_ENV FAKECUDA_FAIL=cuLaunchKernel:1+
  CHECK --once "cuda call cuLaunchKernel\\(.* failed"
  COMMAND $<TARGET_FILE:test_gpu_context> faults)
# The application's own 18 allocations come first; typejit's staging buffer is the 19th.
tj_device_test(fault_alloc EMU_ONLY EMU_ENV FAKECUDA_FAIL=cuMemAlloc_v2:19+
  CHECK --once "cuda call cuMemAlloc\\(.* failed"
  COMMAND $<TARGET_FILE:test_gpu_context> faults)
tj_device_test(fault_module EMU_ONLY EMU_ENV FAKECUDA_FAIL=cuModuleLoadData:1+
  CHECK --once "cuda call cuModuleLoadData\\(.* failed"
  COMMAND $<TARGET_FILE:test_gpu_context> faults)
tj_device_test(fault_copy EMU_ONLY EMU_ENV FAKECUDA_FAIL=cuMemcpyDtoHAsync_v2:1+
  CHECK --once "cuda call cuMemcpyDtoHAsync\\(.* failed"
  COMMAND $<TARGET_FILE:test_gpu_context> faults --expect-errors)
tj_device_test(fault_sticky EMU_ONLY EMU_ENV FAKECUDA_FAIL=cuLaunchKernel:2+=700
  CHECK --once "the cuda context of device 0 is unusable"
  COMMAND $<TARGET_FILE:test_gpu_context> faults --expect-errors --sticky)

# The main job with its fields in device memory, 2 and 4 ranks under mpirun.
foreach(ranks 2 4)
  add_test(NAME emu_halo3d_device_${ranks} COMMAND ${TJ_CHECKED}
           --expect "^typejit\\[0\\]: stats .* packs_gpu=[1-9][0-9]* unpacks_gpu=[1-9][0-9]* .*kernel_launches=[1-9]"
           --stdout "PASS: 0 wrong ghost cells"
           -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_STATS=1
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-halo -np ${ranks}
           $<TARGET_FILE:halo3d> --device --n 12 --radius 2 --iters 2 --quiet)
  set_tests_properties(emu_halo3d_device_${ranks} PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
endforeach()

# The README's first command ends with the demo (`cmake --build build --target demo`,
# bench/demo.sh): run as a user runs it, from an empty kernel cache, it must show kernels made at
# commit, every ghost cell right in all three runs, and the third run taking every kernel from
# the disk cache and compiling none, on both ranks.
add_test(NAME demo COMMAND ${TJ_CHECKED}
         --stdout "kernels=jit"
         --stdout "^demo: rank 0: kernel_launches=[1-9][0-9]* jit_compiles=0 cache_hits_disk=[1-9]"
         --stdout "^demo: rank 1: kernel_launches=[1-9][0-9]* jit_compiles=0 cache_hits_disk=[1-9]"
         -- ${PROJECT_SOURCE_DIR}/tests/demo_check.sh
         ${PROJECT_SOURCE_DIR}/bench/demo.sh 2 ${TJ_LIB} $<TARGET_FILE:halo3d>
         ${CMAKE_CURRENT_BINARY_DIR}/demo-cache ${CMAKE_CURRENT_BINARY_DIR}/fakecuda ${TJ_LAUNCH}
         -x FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE} -x FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE})
set_tests_properties(demo PROPERTIES TIMEOUT 300 LABELS "emu;mpi")

# bench/gpu-bench.sh, the one command a GPU user is told to run, on this build's test driver:
# every step once on tiny sizes, so that it cannot break unseen (its times mean nothing and are not
# reported). It checks each step's table (bench_gpu_pack --smoke: every path it times, once on
# tiny objects, the halo regions' mapped packs among them; ping-pong, collectives, halo3d's PASS),
# and any line on stderr fails the test.
if(TJ_BUILD_BENCH)
add_test(NAME emu_gpu_bench COMMAND ${TJ_CHECKED} --silent --stdout "tests rc=0, bench rc=0"
         -- ${CMAKE_COMMAND} -E env FAKECUDA_KERNEL_CACHE=${FAKECUDA_KERNEL_CACHE}
         FAKECUDA_NVRTC_CACHE=${FAKECUDA_NVRTC_CACHE} OUT=${CMAKE_CURRENT_BINARY_DIR}/gpu-bench
         bash ${PROJECT_SOURCE_DIR}/bench/gpu-bench.sh --test-driver ${PROJECT_BINARY_DIR})
set_tests_properties(emu_gpu_bench PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
endif()

# Point-to-point on device buffers against the system MPI, each send method, 2 and 4 ranks,
# four threads, and a peer without typejit (the second application context of mpirun gets no
# LD_PRELOAD; it uses host buffers).
tj_device_program(test_p2p test_p2p.c devbuf.c randtype.c)
foreach(method oneshot staged auto)
  add_test(NAME emu_p2p_${method} COMMAND ${TJ_CHECKED} --silent --
           ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_METHOD=${method}
           -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p -np 2
           $<TARGET_FILE:test_p2p> --types 126)
  set_tests_properties(emu_p2p_${method} PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
endforeach()
add_test(NAME emu_p2p_oneshot_threaded COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED} -x TYPEJIT_METHOD=oneshot
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p -np 2
         $<TARGET_FILE:test_p2p> --types 126)
add_test(NAME emu_p2p_threads_threaded COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} ${TJ_EMU_THREADED}
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 2 $<TARGET_FILE:test_p2p> --types 36 --threads 4 --seed 9)
set_tests_properties(emu_p2p_oneshot_threaded emu_p2p_threads_threaded PROPERTIES TIMEOUT 600
                     LABELS "emu;mpi")
add_test(NAME emu_p2p_ring4 COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 4 $<TARGET_FILE:test_p2p> --types 72 --seed 5)
add_test(NAME emu_p2p_threads COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 2 $<TARGET_FILE:test_p2p> --types 36 --threads 4 --seed 9)
# The same with tests/slow_irecv_shim.c: the system MPI pauses after posting each receive, so
# that threads whose receives shared a communicator and tag (the test's own reference receives
# over its self communicator, typejit's) would take each other's messages every run.
add_library(tj_slow_irecv_shim SHARED slow_irecv_shim.c)
target_link_libraries(tj_slow_irecv_shim PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
set_target_properties(tj_slow_irecv_shim PROPERTIES C_VISIBILITY_PRESET default) # it interposes
add_test(NAME emu_p2p_threads_slow_irecv COMMAND ${TJ_CHECKED} --silent --
         ${TJ_LAUNCH} -x LD_PRELOAD=${TJ_LIB}:$<TARGET_FILE:tj_slow_irecv_shim>
         ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 2 $<TARGET_FILE:test_p2p> --types 36 --threads 4 --seed 9)
add_test(NAME emu_p2p_plain_peer COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 1 $<TARGET_FILE:test_p2p> --types 72 --seed 11 :
         -np 1 ${TJ_EMU_MPI_ENV} $<TARGET_FILE:test_p2p> --types 72 --seed 11 --host-only)
# Eight threads finishing partial objects (messages shorter than the receive buffer) at once:
# each must get its own bytes. tests/slow_sendrecv_shim.c makes the system MPI's Sendrecv pause
# between its receive and its send (a schedule any MPI may take), so that threads sharing a
# communicator and tag would take each other's messages every run, not once in many.
add_library(tj_slow_sendrecv_shim SHARED slow_sendrecv_shim.c)
target_link_libraries(tj_slow_sendrecv_shim PRIVATE MPI::MPI_C)
set_target_properties(tj_slow_sendrecv_shim PROPERTIES C_VISIBILITY_PRESET default) # it interposes
add_test(NAME emu_p2p_partial_threads COMMAND ${TJ_CHECKED} --silent --
         ${TJ_LAUNCH} -x LD_PRELOAD=${TJ_LIB}:$<TARGET_FILE:tj_slow_sendrecv_shim>
         ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 1 $<TARGET_FILE:test_p2p> --partial-stress 300 --threads 8)
# Kernels only for a process that uses CUDA (TYPEJIT_JIT=auto): commits and host buffers only
# compile nothing and load no NVRTC, without a driver (kernels=none; skipped where one is
# installed) and with the test driver (kernels=later); the first device buffer then brings the
# kernels of every type committed before, in the background, and the next packs run them.
tj_device_program(test_jit_gate test_jit_gate.c devbuf.c)
add_test(NAME jit_gate_nodriver COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} -np 1 $<TARGET_FILE:test_jit_gate> --no-driver)
set_tests_properties(jit_gate_nodriver PROPERTIES TIMEOUT 120 LABELS "mpi;portable"
                     SKIP_RETURN_CODE 77)
add_test(NAME emu_jit_gate_host COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE=off -np 1 $<TARGET_FILE:test_jit_gate>)
add_test(NAME emu_jit_gate_device COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE=off -np 1
         $<TARGET_FILE:test_jit_gate> --device)
set_tests_properties(emu_jit_gate_host emu_jit_gate_device PROPERTIES TIMEOUT 300
                     LABELS "emu;mpi")

# Requests freed while active, as MPICH's pt2pt/rqfree frees them (an Isend, Ibsend, Issend and
# Irsend through an attached buffer, the receive of a small message): the program completes, and
# the receives it waited for hold their bytes, under typejit as without it, on host buffers (with
# and without the test driver on the library path) and on device buffers, which typejit packs and
# whose freed requests its MPI_Finalize completes. (Freeing the receive of a large message too
# hangs MPICH 4.0 by itself: docs/mpis.md; test_rqfree --free-large-recv reproduces it.)
tj_device_program(test_rqfree test_rqfree.c devbuf.c)
add_test(NAME rqfree_host_alone COMMAND ${TJ_CHECKED} --silent --
         ${TJ_LAUNCH} -np 2 $<TARGET_FILE:test_rqfree>)
add_test(NAME rqfree_host COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} -np 2 $<TARGET_FILE:test_rqfree>)
set_tests_properties(rqfree_host_alone rqfree_host PROPERTIES TIMEOUT 120
                     LABELS "mpi;portable")
add_test(NAME emu_rqfree_host COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -np 2 $<TARGET_FILE:test_rqfree>)
add_test(NAME emu_rqfree_device COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p
         -np 2 $<TARGET_FILE:test_rqfree> --device)
set_tests_properties(emu_rqfree_host emu_rqfree_device PROPERTIES TIMEOUT 120 LABELS "emu;mpi")

# TYPEJIT_STAGE_CONTIGUOUS=no on an MPI that is not CUDA-aware cannot be obeyed (the MPI would
# read device memory as host memory: it crashed in Open MPI's convertor): one warning for the
# job, and contiguous device buffers are staged as with the default.
add_test(NAME emu_p2p_stage_contiguous_no COMMAND ${TJ_CHECKED}
         --once "^typejit\\[[01]\\]: warning: TYPEJIT_STAGE_CONTIGUOUS=no needs a cuda-aware system mpi"
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_STAGE_CONTIGUOUS=no
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p -np 2
         $<TARGET_FILE:test_p2p> --types 36 --seed 3)
set_tests_properties(emu_p2p_ring4 emu_p2p_threads emu_p2p_threads_slow_irecv emu_p2p_plain_peer
                     emu_p2p_partial_threads emu_p2p_stage_contiguous_no
                     PROPERTIES TIMEOUT 600 LABELS "emu;mpi")

# Volume through the send paths and a collective: test_p2p on 1500 types of 100 layouts, every
# type also through MPI_Alltoallv, at 4 ranks, twice on one cache (cold, warm), in the default
# settings. (Not at 2 ranks too: the 4-rank run makes the same calls on the same types, each
# between neighbours of a ring; emu_p2p_* run the 2-rank ring, one peer on both sides.)
foreach(ranks 4)
  if(NOT TJ_HEAVY_TESTS)
    break()
  endif()
  set(cache ${CMAKE_CURRENT_BINARY_DIR}/emu-cache-volume-p2p-${ranks})
  tj_reset_test(emu_volume_p2p_${ranks}_reset ${cache} emu emu_volume_p2p_${ranks})
  foreach(run cold warm)
    add_test(NAME emu_volume_p2p_${ranks}_${run} COMMAND ${TJ_CHECKED} --silent --
             ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x TYPEJIT_CACHE_DIR=${cache} -np ${ranks}
             $<TARGET_FILE:test_p2p> --types 1500 --families 100 --seed 21 --collective)
    set_tests_properties(emu_volume_p2p_${ranks}_${run} PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
  endforeach()
  set_tests_properties(emu_volume_p2p_${ranks}_cold PROPERTIES
                       FIXTURES_REQUIRED emu_volume_p2p_${ranks}
                       FIXTURES_SETUP emu_volume_p2p_${ranks}_filled)
  set_tests_properties(emu_volume_p2p_${ranks}_warm PROPERTIES
                       FIXTURES_REQUIRED "emu_volume_p2p_${ranks};emu_volume_p2p_${ranks}_filled")
  tj_heavy(emu_volume_p2p_${ranks}_reset emu_volume_p2p_${ranks}_cold emu_volume_p2p_${ranks}_warm)
endforeach()

# On a CUDA-aware MPI: tests/cudaaware_shim.c, preloaded after typejit, makes the system MPI take
# the test driver's device memory, so the `device` method (typejit packs into device staging and
# hands it to the MPI) and the pass-through of device buffers run. The stats line must show
# device-method transfers.
add_library(tj_cudaaware_shim SHARED cudaaware_shim.c)
target_link_libraries(tj_cudaaware_shim PRIVATE MPI::MPI_C Threads::Threads ${CMAKE_DL_LIBS})
target_include_directories(tj_cudaaware_shim SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
set_target_properties(tj_cudaaware_shim PROPERTIES C_VISIBILITY_PRESET default) # it interposes
set(TJ_CUDAAWARE_MPIEXEC ${TJ_LAUNCH}
    -x LD_PRELOAD=${TJ_LIB}:$<TARGET_FILE:tj_cudaaware_shim>
    ${TJ_EMU_MPI_ENV} -x CUDAAWARE_SHIM_STATS=1 -x TYPEJIT_STATS=1)
add_test(NAME emu_p2p_device COMMAND ${TJ_CHECKED}
         --expect "^typejit\\[0\\]: stats .* method_device=[1-9][0-9]* method_oneshot=0 method_staged=0 "
         --expect "^typejit\\[1\\]: stats .* method_device=[1-9][0-9]* method_oneshot=0 method_staged=0 "
         --expect "^cudaaware shim\\[0\\]: [1-9][0-9]* device buffers staged"
         -- ${TJ_CUDAAWARE_MPIEXEC} -x TYPEJIT_METHOD=device
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-p2p -np 2
         $<TARGET_FILE:test_p2p> --types 126 --seed 13)
set_tests_properties(emu_p2p_device PROPERTIES TIMEOUT 600 LABELS "emu;mpi")

# Every allocation kind a program brings (tests/devbuf.h; docs/device-buffers.md, "Allocation
# kinds") through MPI_Pack/MPI_Unpack, Send/Recv, Isend/Irecv both ways with device memory, and
# MPI_Alltoall, against the system MPI on host copies, each call with kernels where a kernel
# applies (two devices: device 1's kinds beside device 0's), and host memory left to the system
# MPI (on a system whose devices report pageable memory access, FAKECUDA_PAGEABLE=1, malloc memory
# included). Then injected failures of the
# pointer query (MPI_ERR_INTERN or exact bytes, and the error line), of typejit's page-locked
# staging (exact bytes through pageable staging, said once) and of its device staging.
tj_device_program(test_bufkinds test_bufkinds.c devbuf.c)
add_test(NAME emu_bufkinds COMMAND ${TJ_CHECKED} --silent --
         ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x FAKECUDA_DEVICES=2 -x FAKECUDA_PAGEABLE=1
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-bufkinds -np 2
         $<TARGET_FILE:test_bufkinds> --all)

set(TJ_BUFKINDS_FAULT_KINDS device,pool,pool_user,vmm,vmm_host,managed_advise,registered,dev1)
# tj_bufkinds_fault_test(NAME FAULT KINDS CHECK run_checked.sh options... ENV VAR=VALUE...)
# test_bufkinds --faults FAULT over the allocation kinds KINDS, with the failures ENV injects.
function(tj_bufkinds_fault_test name fault kinds)
  cmake_parse_arguments(T "" "" "CHECK;ENV" ${ARGN})
  add_test(NAME ${name} COMMAND ${TJ_CHECKED} ${T_CHECK}
           -- ${CMAKE_COMMAND} -E env ${TJ_EMU_ENV} LD_PRELOAD=${TJ_LIB} FAKECUDA_DEVICES=2
           ${T_ENV} TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-bufkinds
           $<TARGET_FILE:test_bufkinds> --faults ${fault} --kinds ${kinds})
endfunction()

tj_bufkinds_fault_test(emu_bufkinds_fault_query query ${TJ_BUFKINDS_FAULT_KINDS}
  CHECK --expect "cannot tell where buffer 0x[0-9a-f]+ lies: cuPointerGetAttributes failed"
  ENV FAKECUDA_FAIL=cuPointerGetAttributes%10 FAKECUDA_SEED=29)
tj_bufkinds_fault_test(emu_bufkinds_fault_pinned pinned ${TJ_BUFKINDS_FAULT_KINDS}
  CHECK --once "info: page-locked host memory for staging could not be allocated"
  ENV FAKECUDA_FAIL=cuMemHostGetDevicePointer_v2:1+ TYPEJIT_LOG=info TYPEJIT_METHOD=oneshot)
# Every cuMemAlloc failing (an application holding the device's memory) with the staged method:
# typejit's device staging is page-locked mapped memory instead, exact, said once (the kinds
# below allocate without cuMemAlloc).
tj_bufkinds_fault_test(emu_bufkinds_fault_devstage devstage
  pool,pool_user,vmm,vmm_host,managed_advise,registered
  CHECK --once "info: device memory for staging could not be allocated"
  ENV FAKECUDA_FAIL=cuMemAlloc_v2:1+ TYPEJIT_LOG=info TYPEJIT_METHOD=staged)
set_tests_properties(emu_bufkinds emu_bufkinds_fault_query emu_bufkinds_fault_pinned
                     emu_bufkinds_fault_devstage PROPERTIES TIMEOUT 600 LABELS "emu;mpi")

# The fused halo exchange (halo3d --collective neighbor) on grids of each allocation kind, each
# rank on its own device (two devices, two ranks): every ghost cell right, fused kernels, nothing
# staged (tests/halo3d_allocs.sh).
add_test(NAME emu_halo3d_allocs_2 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/halo3d_allocs.sh 2
         device pool vmm vmm_host managed other pitched
         -- ${TJ_MPIEXEC} ${TJ_EMU_MPI_ENV} -x FAKECUDA_DEVICES=2 -x TYPEJIT_STATS=1
         -x TYPEJIT_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/emu-cache-halo -np 2
         $<TARGET_FILE:halo3d> --device --collective neighbor --n 10 --radius 2 --iters 2 --quiet)
set_tests_properties(emu_halo3d_allocs_2 PROPERTIES TIMEOUT 600 LABELS "emu;mpi")
