#!/usr/bin/env bash
# The GPU benchmark in one call, on any machine with a CUDA GPU:
#   bash bench/gpu-bench.sh [--quick] [--kit DIR]
# Builds the project in Release (using the Open MPI kit in DIR, default .device/ or
# ../shared/device/, when there is no mpicc), runs the tests labelled gpu, then the pack/unpack
# sweep, the small-object MPI_Pack timings and the layout types' (then ping-pong, collectives and halo3d per method), writes CSV and PNG plots to bench/results/gpu/
# (or $OUT when set) and prints a short table. Without a GPU it says so and stops after the
# build and the (skipped) gpu tests.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=""
kit=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick="--quick"; shift ;;
    --kit) kit="$2"; shift 2 ;;
    *) echo "usage: bash bench/gpu-bench.sh [--quick] [--kit DIR]"; exit 2 ;;
    esac
done

if ! command -v mpicc >/dev/null; then
    for k in "$kit" .device ../shared/device; do
        if [ -n "$k" ] && [ -f "$k/setup-mpi.sh" ]; then
            bash "$k/setup-mpi.sh" /opt/mpi-kit >/dev/null && . /opt/mpi-kit/env.sh && break
        fi
    done
fi
command -v mpicc >/dev/null || { echo "gpu-bench: no MPI and no kit to install one"; exit 1; }
export PATH=/usr/local/cuda/bin:$PATH

out=${OUT:-bench/results/gpu}
mkdir -p "$out"
build=${BUILD:-build-gpu-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 ||
    { tail -20 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -m5 -i error "$out/build.log"; exit 1; }
build=$(cd "$build" && pwd) # BUILD may be relative or absolute

device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)
if [ -z "$device" ]; then
    echo "gpu-bench: no GPU found (nvidia-smi reports no device): built, gpu tests skipped, nothing measured"
    (cd "$build" && ctest -L gpu 2>&1 | tail -4)
    exit 0
fi
echo "device: $device" | tee "$out/device.txt"
date -u +"date: %Y-%m-%dT%H:%MZ" | tee -a "$out/device.txt"

(cd "$build" && ctest -L gpu --output-on-failure --timeout 600) >"$out/gpu-ctest.log" 2>&1
tests_rc=$?
tail -6 "$out/gpu-ctest.log"

export TYPEJIT_CACHE_DIR="$build/bench-cache"
LD_PRELOAD="$build/libtypejit.so" "$build/bench/bench_gpu_pack" $quick >"$out/gpu_pack.txt"
bench_rc=$?
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
$python3 bench/plot_gpu.py "$out/gpu_pack.csv" "$out" || echo "gpu-bench: plotting failed (matplotlib missing?)"
$python3 bench/plot_gpu.py --table "$out/gpu_pack.csv" "$out/gpu_small.csv" || true
# Point-to-point: the system table for this machine, then device ping-pong per method (figure 11
# of the TEMPI paper) and the host overhead of interposition.
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x "LD_PRELOAD=$build/libtypejit.so"
     -x TYPEJIT_CACHE_DIR)
"${mpi[@]}" "$build/src/tools/typejit" measure $quick >"$out/measure.txt" 2>&1 || bench_rc=1
tail -3 "$out/measure.txt"
for m in oneshot staged device auto; do
    "${mpi[@]}" -x "TYPEJIT_METHOD=$m" "$build/bench/bench_pingpong" --device $quick \
        >"$out/pingpong_$m.csv" 2>"$out/pingpong_$m.log" || echo "gpu-bench: ping-pong $m failed (see $out/pingpong_$m.log)"
done
OUT="$out" bash bench/run-overhead.sh | tail -3
# Collectives on device datatypes per method, with the pack / communicate / unpack split, and the
# main job's halo exchange by each --collective (TEMPI's 3-D halo: radius 3, 8 doubles a point),
# on 2 and 4 ranks of this one GPU.
for np in 2 4; do
    mpin=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np"
          -x "LD_PRELOAD=$build/libtypejit.so" -x TYPEJIT_CACHE_DIR)
    "${mpin[@]}" "$build/bench/bench_coll" $quick >"$out/coll_np$np.csv" 2>"$out/coll_np$np.log" ||
        echo "gpu-bench: collectives on $np ranks failed (see $out/coll_np$np.log)"
    for c in pack alltoallv neighbor isend; do
        "${mpin[@]}" "$build/halo3d" --device --collective "$c" --n 64 --iters 20 \
            >"$out/halo3d_${c}_np$np.txt" 2>&1 ||
            echo "gpu-bench: halo3d --collective $c on $np ranks failed (see $out/halo3d_${c}_np$np.txt)"
        grep -h "per iteration" "$out/halo3d_${c}_np$np.txt" | sed "s/^/halo3d $c np=$np: /"
    done
done
echo "gpu-bench: results in $out (tests rc=$tests_rc, bench rc=$bench_rc)"
[ $tests_rc -eq 0 ] && [ $bench_rc -eq 0 ]
