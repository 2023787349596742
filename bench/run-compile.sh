#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Compile costs, no GPU needed: commit latency with a cold cache, compile-at-commit
# (TYPEJIT_JIT_SYNC=1) against background compiles, and the kernels compiled per job at 1, 4
# and 16 ranks sharing one cold cache. Writes bench/results/compile.csv (or $OUT/compile.csv).
#   bash bench/run-compile.sh [--types T]
set -uo pipefail
cd "$(dirname "$0")/.."
types=20
while [ $# -gt 0 ]; do
    case "$1" in
    --types) types="$2"; shift 2 ;;
    *) echo "usage: bash bench/run-compile.sh [--types T]"; exit 2 ;;
    esac
done
. bench/release-build.sh
release_build compile typejit bench_cold_commit
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
echo "mode,ranks,types,cold_median_us,cold_max_us,warm_median_us,warm_max_us,cold_over_warm,compiles_in_job" >"$out/compile.csv"
for ranks in 1 4 16; do
    for sync in 1 0; do
        rm -rf "$cache/c"
        res=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
            -x "LD_PRELOAD=$build/libtypejit.so" -x TYPEJIT_JIT=always -x TYPEJIT_ARCH=sm_90 \
            -x TYPEJIT_JIT_SYNC=$sync -x TYPEJIT_STATS=1 -x "TYPEJIT_CACHE_DIR=$cache/c" \
            "$build/bench/bench_cold_commit" --types "$types" 2>"$cache/stats")
        compiles=$(sed -n 's/.* jit_compiles=\([0-9]*\).*/\1/p' "$cache/stats" | awk '{s += $1} END {print s + 0}')
        echo "$(echo "$res" | tail -1),$compiles" | tee -a "$out/compile.csv"
    done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
