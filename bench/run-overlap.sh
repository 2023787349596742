#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How much of the packing of a halo exchange typejit hides behind the application's compute:
# halo3d --device --collective isend --overlap US (26 MPI_Isend and MPI_Irecv, US microseconds
# of host compute, MPI_Waitall), with the send queue (TYPEJIT_PROGRESS=calls) and without it
# (TYPEJIT_PROGRESS=off, the synchronous path) in one run of this script:
#   bash bench/run-overlap.sh [--build DIR] [--np N] [--n N] [--iters K] [--compute US]
# --build: a build with the tests (default build); the test driver of that build runs the device
# in its threaded mode (FAKECUDA_STREAM_THREAD=1: work runs beside the host), unless
# TEST_DRIVER=none: then the machine's own driver (a GPU). --compute: the host compute a step
# (default: 1.5 times the host time of the synchronous path's posting, which packs and waits for
# each region: longer than the packs; measured first).
# Prints a table and writes $OUT/overlap.csv (default bench/results). The test driver's times
# show the mechanism only; they are no GPU results.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build np="" n=16 iters=6 compute=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --n) n="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --compute) compute="$2"; shift 2 ;;
    *) echo "usage: bash bench/run-overlap.sh [--build DIR] [--np N] [--n N] [--iters K] [--compute US]" >&2
       exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
prog=$build/halo3d
lib=$build/libtypejit.so
[ -x "$prog" ] && [ -e "$lib" ] || { echo "run-overlap: build $prog and $lib first" >&2; exit 1; }
out=${OUT:-bench/results}
mkdir -p "$out"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
env=(-x "LD_PRELOAD=$lib" -x "TYPEJIT_CACHE_DIR=$cache")
. bench/test-driver.sh
if test_driver_env run-overlap; then
    env+=(-x FAKECUDA_STREAM_THREAD=1)
    np=${np:-1} # each rank's driver thread needs a core of its own to run beside the host
    where="the CPU-only test driver, threaded mode"
else
    np=${np:-2}
    where="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo "the machine's driver")"
fi
launcher=mpirun
command -v mpirun >/dev/null || launcher=mpiexec

# One run: the overlap line of halo3d, which must also pass its ghost-cell check.
run() { # PROGRESS COMPUTE
    local text
    text=$(tests/mpiexec.sh "$launcher" -np "$np" "${env[@]}" -x "TYPEJIT_PROGRESS=$1" "$prog" \
        --device --collective isend --n "$n" --iters "$iters" --overlap "$2" --quiet) ||
        { echo "$text" >&2; echo "run-overlap: halo3d failed" >&2; exit 1; }
    grep -q "^PASS: 0 wrong ghost cells" <<<"$text" || { echo "$text" >&2; exit 1; }
    grep "^overlap:" <<<"$text"
}
# "overlap: compute C us a step; in MPI calls M us a step (posting P, MPI_Waitall W); typejit's
# device waits N a step, D us a step (posting DP, MPI_Waitall DW), for queued packs Q us a step"
# -> "C M P W N D DP DW Q"
fields() {
    sed -E 's/^overlap: compute ([0-9.]+) us a step; in MPI calls ([0-9.]+) us a step \(posting ([0-9.]+), MPI_Waitall ([0-9.]+)\); typejit.s device waits ([0-9.]+) a step, ([0-9.]+) us a step \(posting ([0-9.]+), MPI_Waitall ([0-9.]+)\), for queued packs ([0-9.]+) us a step$/\1 \2 \3 \4 \5 \6 \7 \8 \9/'
}
# The run once, untimed: kernels compiled into the cache.
run off 0 >/dev/null
if [ -z "$compute" ]; then
    read -r _ _ sp0 _ < <(run off 0 | fields)
    compute=$(awk -v p="$sp0" 'BEGIN { c = int(1.5 * p + 0.5); print (c < 100 ? 100 : c) }')
fi
read -r sc sm sp sw sn sd sdp sdw sq < <(run off "$compute" | fields)
read -r qc qm qp qw qn qd qdp qdw qq < <(run calls "$compute" | fields)
{
    echo "path,compute_us,mpi_us,posting_us,waitall_us,device_waits,device_wait_us,device_wait_posting_us,device_wait_waitall_us,queued_pack_wait_us"
    echo "synchronous,$sc,$sm,$sp,$sw,$sn,$sd,$sdp,$sdw,$sq"
    echo "send_queue,$qc,$qm,$qp,$qw,$qn,$qd,$qdp,$qdw,$qq"
} >"$out/overlap.csv"
# The packs' waits: the synchronous path's, in its posting (each send waits for its pack); the
# queue's, its waits for queued packs (queue_wait_us).
awk -v sm="$sm" -v qm="$qm" -v sdp="$sdp" -v sdw="$sdw" -v qdp="$qdp" -v qdw="$qdw" -v qq="$qq" \
    -v sn="$sn" -v qn="$qn" -v c="$compute" -v np="$np" -v n="$n" -v where="$where" 'BEGIN {
    exposed = qq + qdp
    hidden = (sdp > 0 ? 1 - exposed / sdp : 0)
    printf "halo3d --device --collective isend, %d rank(s), n=%d, %d us of compute a step, on %s\n", np, n, c, where
    printf "%-12s %14s %14s %18s\n", "path", "MPI us/step", "waits/step", "device wait us/step"
    printf "%-12s %14.1f %14.2f %18.1f\n", "synchronous", sm, sn, sdp + sdw
    printf "%-12s %14.1f %14.2f %18.1f\n", "send queue", qm, qn, qdp + qdw
    printf "packs waited for: %.1f us a step synchronously, %.1f with the send queue: %.0f %% hidden behind the compute\n", sdp, exposed, 100 * hidden
    printf "host time in MPI calls: %.2f of the synchronous path\n", (sm > 0 ? qm / sm : 0)
}'
