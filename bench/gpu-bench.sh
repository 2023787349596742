#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The GPU benchmark in one call, on a machine with a CUDA GPU:
#   bash bench/gpu-bench.sh [--quick]
# Builds the project in Release in $BUILD (default build-gpu-bench) against the MPI whose mpicc
# comes first on the PATH (any MPI of docs/mpis.md; its launcher must start 4 ranks here), runs
# the tests labelled gpu, then the pack/unpack sweep, the small-object MPI_Pack timings and the
# layout types', the system table (`typejit measure`), device ping-pong per send method, the host
# overhead of interposition (bench/run-overhead.sh), collectives per method and halo3d per
# --collective on 2 and 4 ranks, and the packing the send queue hides behind compute
# (bench/run-overlap.sh); writes CSV and PNG plots (python3 with matplotlib) to
# bench/results/gpu/ (or $OUT) and prints a short table. Without a GPU it says so and stops after
# the build and the (skipped) gpu tests.
#   bash bench/gpu-bench.sh --test-driver BUILD
# Checks this script without a GPU (CI does): every step once, on tiny sizes and 2 ranks, in the
# existing build folder BUILD (configured with the tests) on its CPU-only test driver; results in
# BUILD/gpu-bench-test-driver (or $OUT). The test driver's timings mean nothing: they are not
# results.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
usage="usage: bash bench/gpu-bench.sh [--quick] | bash bench/gpu-bench.sh --test-driver BUILD"
quick=""
driver=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick="--quick"; shift ;;
    --test-driver)
        [ $# -ge 2 ] || { echo "$usage"; exit 2; }
        driver="$2"; shift 2 ;;
    *) echo "$usage"; exit 2 ;;
    esac
done

export PATH=/usr/local/cuda/bin:$PATH
if [ -n "$driver" ]; then
    build=$(cd "$driver" && pwd) || exit 1
    [ -e "$build/tests/fakecuda/13.0/libcuda.so.1" ] ||
        { echo "gpu-bench: no test driver in $build (configure it with the tests)"; exit 1; }
    out=${OUT:-$build/gpu-bench-test-driver}
    mkdir -p "$out"
    echo "gpu-bench: on the CPU-only test driver of $build, to check this script: every step" \
        "once on tiny sizes; the times below are the test driver's and mean nothing"
    quick="--smoke"
    nps="2"
else
    command -v mpicc >/dev/null ||
        { echo "gpu-bench: needs an MPI: its mpicc and launcher on the PATH (docs/mpis.md)"
          exit 1; }
    out=${OUT:-bench/results/gpu}
    mkdir -p "$out"
    build=${BUILD:-build-gpu-bench}
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER="$(command -v mpicc)" \
        >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
    cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 ||
        { grep -m5 -i error "$out/build.log"; exit 1; }
    build=$(cd "$build" && pwd) # BUILD may be relative or absolute
    nps="2 4"
fi

# Every MPI job through tests/mpiexec.sh, with the launcher the build found: it speaks to Open
# MPI's mpirun and to Hydra (MPICH, Intel MPI) alike.
launcher=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
env=()
if [ -n "$driver" ]; then
    ld="$build/tests/fakecuda/13.0:$build/tests/fakecuda/nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$ld"
    env=(-x "LD_LIBRARY_PATH=$ld")
    for v in FAKECUDA_KERNEL_CACHE FAKECUDA_NVRTC_CACHE; do
        [ -n "${!v:-}" ] && env+=(-x "$v=${!v}")
    done
    device="the CPU-only test driver (no GPU)"
    echo "device: $device" | tee "$out/device.txt"
else
    device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)
    if [ -z "$device" ]; then
        echo "gpu-bench: no GPU found (nvidia-smi reports no device): built, gpu tests skipped, nothing measured"
        (cd "$build" && ctest -L gpu 2>&1 | tail -4)
        exit 0
    fi
    echo "device: $device" | tee "$out/device.txt"
fi
date -u +"date: %Y-%m-%dT%H:%MZ" | tee -a "$out/device.txt"

# The gpu tests: the emu tests' scenarios on the machine's driver. Not on the test driver: there
# they are the emu tests, and this script may be one of them (a ctest inside a ctest of the same
# build folder would overwrite its logs).
tests_rc=0
if [ -z "$driver" ]; then
    (cd "$build" && ctest -L gpu --output-on-failure --timeout 600) >"$out/gpu-ctest.log" 2>&1
    tests_rc=$?
    tail -6 "$out/gpu-ctest.log"
else
    echo "gpu-bench: the gpu tests are not run on the test driver (the suite runs them as emu tests)"
fi

# need FILE REGEX: a step's output must hold its table (a line matching REGEX), else the step
# counts as failed: a benchmark that printed nothing, or halo3d with wrong ghost cells, is no result.
need() {
    grep -q -E "$2" "$1" || { echo "gpu-bench: no line matching '$2' in $1"; bench_rc=1; }
}

export TYPEJIT_CACHE_DIR="$build/bench-cache"
LD_PRELOAD="$build/libtypejit.so" "$build/bench/bench_gpu_pack" $quick >"$out/gpu_pack.txt"
bench_rc=$?
need "$out/gpu_pack.txt" '^kind,object,run,count,bytes'
need "$out/gpu_pack.txt" '^3d,halo\(-1\+0-1\),.*pack-d2mapped,copy'
need "$out/gpu_pack.txt" '^small_bytes,'
need "$out/gpu_pack.txt" '^layout,count,bytes'
# Split the small-object table, the layouts (types that are not one strided block: irregular
# indexed with a baked and a device part table, a mixed struct, a darray, 17 dimensions; parts
# kernel against staging, docs/layouts.md) and the sweep into three CSV files.
awk '/^#/{next} /^small_bytes/{s=1} /^layout,/{s=3} /^kind,/{s=2}
     s==1 && NF{print > "'"$out"'/gpu_small.csv"} s==3 && NF{print > "'"$out"'/gpu_layouts.csv"}
     s==2 && NF{print > "'"$out"'/gpu_pack.csv"}' "$out/gpu_pack.txt"
grep '^#' "$out/gpu_pack.txt"
column -s, -t "$out/gpu_layouts.csv" 2>/dev/null || cat "$out/gpu_layouts.csv"
python3=/usr/bin/python3
[ -x "$python3" ] || python3=python3
# matplotlib's warnings (the test driver's tiny times cannot be log-scaled) go to plot.log.
if "$python3" -c "import matplotlib" 2>/dev/null; then
    "$python3" bench/plot_gpu.py "$out/gpu_pack.csv" "$out" 2>"$out/plot.log" ||
        { cat "$out/plot.log"; bench_rc=1; }
else
    echo "gpu-bench: no plots (python3 has no matplotlib)"
fi
"$python3" bench/plot_gpu.py --table "$out/gpu_pack.csv" "$out/gpu_small.csv" || bench_rc=1
# Point-to-point: the system table for this machine, then device ping-pong per method (figure 11
# of the TEMPI paper) and the host overhead of interposition.
mpi=(tests/mpiexec.sh "$launcher" -np 2 -x "LD_PRELOAD=$build/libtypejit.so"
     -x "TYPEJIT_CACHE_DIR=$TYPEJIT_CACHE_DIR" "${env[@]}")
measure=$quick
[ -n "$driver" ] && measure=--quick # measure has no --smoke
"${mpi[@]}" "$build/src/tools/typejit" measure $measure >"$out/measure.txt" 2>&1 || bench_rc=1
tail -3 "$out/measure.txt"
for m in oneshot staged device auto; do
    "${mpi[@]}" -x "TYPEJIT_METHOD=$m" "$build/bench/bench_pingpong" --device $quick \
        >"$out/pingpong_$m.csv" 2>"$out/pingpong_$m.log" ||
        { echo "gpu-bench: ping-pong $m failed (see $out/pingpong_$m.log)"; bench_rc=1; }
    need "$out/pingpong_$m.csv" '^3,[0-9]+,512,'
done
if [ -z "$driver" ]; then
    OUT="$out" bash bench/run-overhead.sh | tail -3
else
    echo "gpu-bench: host overhead (bench/run-overhead.sh) not run on the test driver: it builds a" \
        "Release tree of its own and uses no device"
fi
# Collectives on device datatypes per method, with the pack / communicate / unpack split, and the
# main job's halo exchange by each --collective (TEMPI's 3-D halo: radius 3, 8 doubles a point),
# on 2 and 4 ranks of this one GPU (the test driver: 2 ranks, a 12^3 grid, 2 exchanges).
halo=(--n 64 --iters 20)
[ -n "$driver" ] && halo=(--n 12 --iters 2)
for np in $nps; do
    mpin=(tests/mpiexec.sh "$launcher" -np "$np" -x "LD_PRELOAD=$build/libtypejit.so"
          -x "TYPEJIT_CACHE_DIR=$TYPEJIT_CACHE_DIR" "${env[@]}")
    "${mpin[@]}" "$build/bench/bench_coll" $quick >"$out/coll_np$np.csv" 2>"$out/coll_np$np.log" ||
        { echo "gpu-bench: collectives on $np ranks failed (see $out/coll_np$np.log)"; bench_rc=1; }
    need "$out/coll_np$np.csv" "^alltoallv,typejit,$np,"
    need "$out/coll_np$np.csv" "^bcast,host,$np,"
    for c in pack alltoallv neighbor isend; do
        "${mpin[@]}" "$build/halo3d" --device --collective "$c" "${halo[@]}" \
            >"$out/halo3d_${c}_np$np.txt" 2>&1 ||
            { echo "gpu-bench: halo3d --collective $c on $np ranks failed" \
                "(see $out/halo3d_${c}_np$np.txt)"; bench_rc=1; }
        need "$out/halo3d_${c}_np$np.txt" "^PASS: 0 wrong ghost cells"
        grep -h "per iteration" "$out/halo3d_${c}_np$np.txt" | sed "s/^/halo3d $c np=$np: /"
    done
done
# How much of the isend exchange's packing the send queue hides behind host compute, against
# the synchronous path (bench/run-overlap.sh; on the test driver its threaded mode, 1 rank).
if [ -n "$driver" ]; then
    OUT="$out" bash bench/run-overlap.sh --build "$build" --n 8 --iters 3 >"$out/overlap.txt" 2>&1
else
    OUT="$out" TEST_DRIVER=none bash bench/run-overlap.sh --build "$build" --n 64 --iters 20 \
        >"$out/overlap.txt" 2>&1
fi || { echo "gpu-bench: overlap (bench/run-overlap.sh) failed (see $out/overlap.txt)"; bench_rc=1; }
need "$out/overlap.csv" "^send_queue,"
grep -h "hidden behind" "$out/overlap.txt" | sed "s/^/overlap: /"
echo "gpu-bench: results in $out (tests rc=$tests_rc, bench rc=$bench_rc)"
[ -n "$driver" ] &&
    echo "gpu-bench: the test driver's times above mean nothing; run on a GPU to measure"
[ $tests_rc -eq 0 ] && [ $bench_rc -eq 0 ]
