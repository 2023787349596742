#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# typejit's own instructions per steady device call (bench_call_cost under callgrind, both ranks,
# on the CPU-only test driver or a real one), per scenario and rank, with the driver calls each
# made (bench/call_cost.py says what counts as typejit's own):
#   bash bench/run-call-cost.sh [--build DIR] [--iters N] [--check FILE] [--top N] [--mpi openmpi|mpich]
# --build: a build with the tests (default build; the test driver is DIR/tests/fakecuda/13.0,
# used unless TEST_DRIVER=none: then the machine's own driver); --check FILE: fail when a count
# exceeds its ceiling in FILE (lines `SCENARIO RANK MAX_OWN MAX_DRIVER_CALLS`, # comments);
# --top N: the N costliest functions of each. Writes $OUT/call-cost.csv (default
# bench/results) and keeps the dumps in $OUT/call-cost/. TYPEJIT_PROGRESS, when set, is passed to
# the ranks (off: non-blocking sends wait for their packs inside the call).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build iters=100 check="" top=0 mpi=openmpi
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --check) check="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    --mpi) mpi="$2"; shift 2 ;;
    *) echo "usage: bash bench/run-call-cost.sh [--build DIR] [--iters N] [--check FILE] [--top N] [--mpi openmpi|mpich]" >&2
       exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "SKIP: run-call-cost needs valgrind (apt-get install valgrind)"; exit 77; }
case "$mpi" in
openmpi) launcher=mpirun ;;
mpich) launcher=mpiexec.mpich ;;
*) echo "run-call-cost: --mpi openmpi or mpich, not $mpi" >&2; exit 2 ;;
esac
build=$(cd "$build" && pwd)
prog=$build/bench/bench_call_cost
lib=$build/libtypejit.so
[ -x "$prog" ] && [ -e "$lib" ] || { echo "run-call-cost: build $prog and $lib first" >&2; exit 1; }
out=${OUT:-bench/results}
dumps=$out/call-cost
rm -rf "$dumps"
mkdir -p "$dumps"
dumps=$(cd "$dumps" && pwd) # TYPEJIT_CACHE_DIR takes an absolute path only
env=(-x "LD_PRELOAD=$lib" -x "TYPEJIT_CACHE_DIR=$dumps/kernel-cache")
# TYPEJIT_PROGRESS=off in the environment: the synchronous path of non-blocking sends.
[ -n "${TYPEJIT_PROGRESS:-}" ] && env+=(-x "TYPEJIT_PROGRESS=$TYPEJIT_PROGRESS")
. bench/test-driver.sh
if test_driver_env run-call-cost; then
    env+=(-x FAKECUDA_ARENA_GIB=16)
fi
# Compiled kernels first, outside valgrind: the measured run then only reads the cache.
tests/mpiexec.sh "$launcher" -np 2 "${env[@]}" "$prog" --iters 1 --warmup 1 >/dev/null
tests/mpiexec.sh "$launcher" -np 2 "${env[@]}" valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$dumps/cg.%p" "$prog" --iters "$iters" >"$dumps/out.log" 2>"$dumps/err.log" ||
    { cat "$dumps/err.log" >&2; echo "run-call-cost: bench_call_cost failed" >&2; exit 1; }
python3 bench/call_cost.py --top "$top" "$dumps/out.log" "$dumps"/cg.*.* | tee "$dumps/summary.txt"
python3 bench/call_cost.py --csv "$dumps/out.log" "$dumps"/cg.*.* >"$out/call-cost.csv"
[ -z "$check" ] && exit 0
python3 - "$check" "$out/call-cost.csv" <<'EOF'
import csv, sys
limits = {}
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].split()
    if line:
        limits[(line[0], line[1])] = (float(line[2]), float(line[3]))
bad = 0
seen = set()
for row in csv.DictReader(open(sys.argv[2])):
    key = (row["scenario"], row["rank"])
    if key not in limits:
        continue
    seen.add(key)
    own, dc = float(row["own_per_call"]), float(row["driver_calls_per_call"])
    lo, ld = limits[key]
    ok = own <= lo and (dc < 0 or dc <= ld)
    print(f"{'ok  ' if ok else 'FAIL'} {key[0]} rank {key[1]}: own {own:.0f} (ceiling {lo:.0f}), "
          f"driver calls {dc:g} (ceiling {ld:g})")
    bad += not ok
for key in limits:
    if key not in seen:
        print(f"FAIL {key[0]} rank {key[1]}: not measured")
        bad += 1
sys.exit(1 if bad else 0)
EOF
