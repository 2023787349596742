#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The host overhead of interposition: an 8-byte MPI_BYTE ping-pong in host memory
# between two ranks, with and without libtypejit.so preloaded, alternating RUNS (default 9) times
# each so that both see the same machine state. Prints each run, the medians and their ratio, and writes
# bench/results/host_overhead.csv (or $OUT/host_overhead.csv). Round trips of a few tenths of a
# microsecond are easily disturbed by other work on the machine: the medians and minima of the
# runs are compared, and the load average is printed with them.
# Then host MPI_Alltoall and MPI_Allreduce (the collectives typejit wraps, in a program
# that never uses a device), RUNS alternating runs each way on 2 ranks, written to
# host_collectives.csv, with the ratio of the medians.
#   bash bench/run-overhead.sh [--reps N]
set -uo pipefail
cd "$(dirname "$0")/.."
reps=20000
while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps="$2"; shift 2 ;;
    *) echo "usage: bash bench/run-overhead.sh [--reps N]"; exit 2 ;;
    esac
done
. bench/release-build.sh
release_build overhead typejit bench_pingpong
run() { # $1: yes|no (preload)
    local pre=()
    [ "$1" = yes ] && pre=(-x "LD_PRELOAD=$build/libtypejit.so")
    mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "${pre[@]}" \
        "$build/bench/bench_pingpong" --host --reps "$reps" | tail -1
}
echo "preloaded,run,roundtrip_us" >"$out/host_overhead.csv"
runs=${RUNS:-9}
for i in $(seq "$runs"); do
    for p in no yes; do
        t=$(run $p | cut -d, -f3)
        echo "$p,$i,$t" | tee -a "$out/host_overhead.csv"
    done
done
# The same, per call, free of the network: MPI_Send/MPI_Recv to MPI_PROC_NULL, best of five
# passes of 10 million calls, three processes each way.
echo "preloaded,run,ns_per_call" >"$out/call_overhead.csv"
for i in 1 2 3; do
    for p in no yes; do
        pre=()
        [ "$p" = yes ] && pre=(-x "LD_PRELOAD=$build/libtypejit.so")
        t=$(mpirun --allow-run-as-root --oversubscribe --bind-to core -np 1 "${pre[@]}" \
            "$build/bench/bench_pingpong" --calls | tail -1 | cut -d, -f3)
        echo "$p,$i,$t" | tee -a "$out/call_overhead.csv"
    done
done
best() { awk -F, -v p="$1" 'NR > 1 && $1 == p { print $3 }' "$out/call_overhead.csv" | sort -g | head -1; }
echo "per call (best of all runs): system MPI alone $(best no) ns, with typejit $(best yes) ns"

stat() { # $1: yes|no -> "median min"
    awk -F, -v p="$1" 'NR > 1 && $1 == p { print $3 }' "$out/host_overhead.csv" | sort -g |
        awk '{ v[NR] = $1 } END { printf "%s %s", v[int((NR + 1) / 2)], v[1] }'
}
read -r med_no min_no <<<"$(stat no)"
read -r med_yes min_yes <<<"$(stat yes)"
awk -v a="$med_no" -v b="$med_yes" -v c="$min_no" -v d="$min_yes" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
    printf "round trip, median: system MPI alone %.4f us, with typejit %.4f us, ratio %.4f\n", a, b, b / a
    printf "round trip, minimum: system MPI alone %.4f us, with typejit %.4f us, ratio %.4f\n", c, d, d / c
    printf "load average: %s\n", load
}'

# Host collectives, with and without the library, alternating runs.
echo "preloaded,run,collective,us_per_call" >"$out/host_collectives.csv"
for i in $(seq "$runs"); do
    for p in no yes; do
        pre=()
        [ "$p" = yes ] && pre=(-x "LD_PRELOAD=$build/libtypejit.so")
        mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 "${pre[@]}" \
            "$build/bench/bench_pingpong" --coll --reps "$reps" | tail -2 |
            awk -F, -v p="$p" -v i="$i" '{ print p "," i "," $1 "," $3 }' |
            tee -a "$out/host_collectives.csv"
    done
done
for c in alltoall allreduce; do
    cstat() { # $1: yes|no -> "median min" of the runs' medians
        awk -F, -v p="$1" -v c="$c" 'NR > 1 && $1 == p && $3 == c { print $4 }' \
            "$out/host_collectives.csv" | sort -g |
            awk '{ v[NR] = $1 } END { printf "%s %s", v[int((NR + 1) / 2)], v[1] }'
    }
    read -r med_no min_no <<<"$(cstat no)"
    read -r med_yes min_yes <<<"$(cstat yes)"
    awk -v c="$c" -v a="$med_no" -v b="$med_yes" -v m="$min_no" -v n="$min_yes" 'BEGIN {
        name = c == "alltoall" ? "Alltoall" : "Allreduce"
        printf "host MPI_%s, median: system MPI alone %.4f us, with typejit %.4f us, ratio %.4f\n",
            name, a, b, b / a
        printf "host MPI_%s, minimum: system MPI alone %.4f us, with typejit %.4f us, ratio %.4f\n",
            name, m, n, n / m }'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
