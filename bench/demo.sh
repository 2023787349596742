#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The main job as `cmake --build build --target demo` runs it (docs/halo3d.md): halo3d on RANKS
# ranks with libtypejit.so preloaded and TYPEJIT_STATS=1, three times:
#   1. the grid in host memory, packed by typejit's CPU packer (TYPEJIT_HOST=engine);
#   2. the grid in device memory: on the GPU where nvidia-smi lists one, else on the CPU-only test
#      driver of the tests (TEST_DRIVER, tests/fakecuda in the build), on which typejit's real
#      kernels are generated, compiled by NVRTC, cached and run on the CPU; from an empty kernel
#      cache (CACHE);
#   3. the same again on that cache, which now holds every kernel: nothing is compiled.
#   demo.sh RANKS LIBTYPEJIT HALO3D CACHE TEST_DRIVER LAUNCHER...
# TEST_DRIVER is `none` when the build has no test driver (tests off, or no C++ compiler). The
# launcher is tests/mpiexec.sh with the MPI's own, which takes Open MPI's -np/-x spelling.
set -u
ranks=$1 lib=$2 halo3d=$3 cache=$4 driver=$5
shift 5
say() { printf '\ndemo: %s\n' "$*"; }
# run "COUNTER..." COMMAND...: runs one job, then says the given counters of each rank's stats
# line (printed at MPI_Finalize, in no fixed order), rank by rank.
run() {
    counters=$1
    shift
    log=$(mktemp)
    "$@" 2>"$log"
    rc=$?
    cat "$log" >&2
    for r in $(seq 0 $((ranks - 1))); do
        line=$(grep "^typejit\[$r\]: stats " "$log") || continue
        picked=""
        for c in $counters; do
            picked="$picked $(echo "$line" | grep -o " $c=[0-9]*" | tr -d ' ')"
        done
        echo "demo: rank $r:$picked"
    done
    rm -f "$log"
    return $rc
}

say "1/3: halo3d on $ranks ranks, grid in host memory, packed by typejit's CPU packer"
run "packs_engine unpacks_engine" "$@" -np "$ranks" -x "LD_PRELOAD=$lib" -x TYPEJIT_HOST=engine \
    -x TYPEJIT_STATS=1 "$halo3d" --quiet || exit 1

gpu=$(nvidia-smi -L 2>/dev/null | grep '^GPU ' | head -n 1)
if [ -n "$gpu" ]; then
    where="on this machine's GPU (${gpu%% (UUID*})"
    set -- "$@" -x TYPEJIT_CACHE_DIR="$cache"
elif [ "$driver" != none ] && [ -e "$driver/13.0/libcuda.so.1" ]; then
    where="on the CPU-only test driver
demo: (no GPU here: $driver stands in for libcuda.so.1 and runs typejit's
demo: kernels on the CPU to check them; the times halo3d prints mean nothing)"
    set -- "$@" -x TYPEJIT_CACHE_DIR="$cache" \
        -x "LD_LIBRARY_PATH=$driver/13.0:$driver/nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
    say "no GPU here and no test driver in this build (it is built with the tests, by a C++ \
compiler): the device runs are left out"
    exit 0
fi
rm -rf "$cache"
counters="kernel_launches jit_compiles cache_hits_disk"
say "2/3: the same exchange with the grid in device memory, $where
demo: kernel cache $cache, emptied first"
run "$counters" "$@" -np "$ranks" -x "LD_PRELOAD=$lib" -x TYPEJIT_STATS=1 "$halo3d" --device ||
    exit 1
say "3/3: again, on the kernel cache the last run filled: every kernel from disk, none compiled"
run "$counters" "$@" -np "$ranks" -x "LD_PRELOAD=$lib" -x TYPEJIT_STATS=1 "$halo3d" --device \
    --quiet || exit 1
