#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What typejit costs the launch of a program it cannot speed up: bench_launch (2
# ranks: MPI_Init, commit a strided type, one host exchange of it, MPI_Finalize) launched RUNS
# times (default 15) in each configuration, alternating so that all see the same machine state:
# the system MPI alone, then typejit preloaded without a CUDA driver, and both again with the
# CPU-only test driver on the library path (a machine with a driver but a program that never
# touches device memory). Prints each configuration's median and minimum wall time of a whole
# launch and the median's difference and ratio to the system MPI alone of the same driver
# setting, and the median CPU time of the two ranks together (each process from its start to
# after MPI_Finalize: what typejit adds, much less disturbed by other work on the machine than
# the wall time of a launch); writes bench/results/launch-MPI.csv (or $OUT/launch-MPI.csv).
#   bash bench/run-launch.sh [--runs N] [--mpi openmpi|mpich]
# --mpi: Debian's Open MPI 4.1 (mpirun, the default) or MPICH 4.0 (mpiexec.mpich, whose launches
# take a tenth of the time, so that a millisecond shows); each has its own release build.
# TEST_DRIVER: the test driver's folder (default build/tests/fakecuda/13.0, from a build with the
# tests); LIB: the libtypejit.so to preload (default the release build's).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-15}
mpi=openmpi
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --mpi) mpi="$2"; shift 2 ;;
    *) echo "usage: bash bench/run-launch.sh [--runs N] [--mpi openmpi|mpich]"; exit 2 ;;
    esac
done
case "$mpi" in
openmpi) launcher=mpirun build=${BUILD:-build-bench} ;;
mpich)
    launcher=mpiexec.mpich build=${BUILD:-build-bench-mpich}
    export RELEASE_CMAKE_ARGS="-DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpifort.mpich" ;;
*) echo "run-launch: --mpi openmpi or mpich, not $mpi"; exit 2 ;;
esac
driver=${TEST_DRIVER:-build/tests/fakecuda/13.0}
. bench/release-build.sh
release_build launch typejit bench_launch
lib=${LIB:-$build/libtypejit.so}
if [ ! -e "$driver/libcuda.so.1" ]; then
    echo "run-launch: no test driver in $driver (build the tests, or set TEST_DRIVER)"
    exit 1
fi
driver=$(cd "$driver" && pwd)

launch() { # $1: alone|typejit  $2: none|driver -> "wall_us cpu_us" of one launch
    local pre=() env=() t0 t1 cpu
    [ "$1" = typejit ] && pre=(-x "LD_PRELOAD=$lib")
    [ "$2" = driver ] && env=(-x "LD_LIBRARY_PATH=$driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    t0=$(date +%s%N)
    # tests/mpiexec.sh speaks to both launchers (variables set by env(1) in front of each rank).
    cpu=$(tests/mpiexec.sh "$launcher" -np 2 "${pre[@]}" "${env[@]}" \
        -x TYPEJIT_CACHE_DIR="$build/launch-cache" "$build/bench/bench_launch") ||
        { echo "run-launch: bench_launch failed ($1, $2)" >&2; exit 1; }
    t1=$(date +%s%N)
    echo "$(((t1 - t0) / 1000)) $(echo "$cpu" | awk -F= '/^cpu_us=/ { s += $2 } END { print s }')"
}

echo "run,driver,library,ms,cpu_ms" >"$out/launch-$mpi.csv"
for i in $(seq "$runs"); do
    for d in none driver; do
        for p in alone typejit; do
            read -r us cpu <<<"$(launch $p $d)" || exit 1
            [ -n "$cpu" ] || exit 1
            awk -v i="$i" -v d="$d" -v p="$p" -v us="$us" -v cpu="$cpu" \
                'BEGIN { printf "%s,%s,%s,%.2f,%.2f\n", i, d, p, us / 1000, cpu / 1000 }' \
                >>"$out/launch-$mpi.csv"
        done
    done
done

stat() { # $1 driver $2 library $3 column -> "median min"
    awk -F, -v d="$1" -v p="$2" -v c="$3" 'NR > 1 && $2 == d && $3 == p { print $c }' \
        "$out/launch-$mpi.csv" |
        sort -g | awk '{ v[NR] = $1 } END { printf "%s %s", v[int((NR + 1) / 2)], v[1] }'
}
printf "%-20s %-17s %9s %8s %8s %7s %9s %8s\n" "driver" "library" "median ms" "min ms" \
    "vs alone" "ratio" "CPU ms" "vs alone"
for d in none driver; do
    read -r base _ <<<"$(stat $d alone 4)"
    read -r cbase _ <<<"$(stat $d alone 5)"
    for p in alone typejit; do
        read -r med min <<<"$(stat $d $p 4)"
        read -r cpu _ <<<"$(stat $d $p 5)"
        awk -v d="$d" -v p="$p" -v med="$med" -v min="$min" -v base="$base" -v cpu="$cpu" \
            -v cbase="$cbase" 'BEGIN {
            name = d == "none" ? "no CUDA driver" : "test driver on path"
            lib = p == "alone" ? "system MPI alone" : "typejit preloaded"
            printf "%-20s %-17s %9.1f %8.1f %+8.1f %7.3f %9.1f %+8.1f\n", name, lib, med, min,
                med - base, med / base, cpu, cpu - cbase }'
    done
done
echo "$mpi ($launcher): medians of $runs launches of 2 ranks each; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
