#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The CPU benchmarks in one call (no GPU needed):
#   bash bench/run-cpu.sh [--quick] [--cpu-time]
# Builds libtypejit.so, bench_commit and bench_pack_cpu in Release (in $BUILD, default
# build-bench, against the default mpicc: Debian's Open MPI) when needed, and bench_pack_cpu
# against MPICH too (in $BUILD_MPICH, default build-bench-mpich, with mpicc.mpich; skipped where
# there is none); runs bench_commit with the library preloaded (typejit and the system MPI timed
# in the same process) and bench_pack_cpu on each MPI (the CPU engine against
# PMPI_Pack/PMPI_Unpack, with the memcpy ceiling: cpu_pack_openmpi.{txt,csv,png},
# cpu_pack_mpich.{txt,csv,png}) and bench_pack_cpu --apps on each MPI with the library preloaded
# (application layouts: the engine, TYPEJIT_HOST=auto and MPI_Pack/MPI_Unpack through typejit
# against PMPI_Pack/PMPI_Unpack: cpu_apps_openmpi.{txt,csv}, cpu_apps_mpich.{txt,csv}), writes
# CSV files and PNG plots to bench/results/ (or $OUT when set) and prints the tables, both MPIs
# side by side. --cpu-time times bench_pack_cpu on the thread's CPU clock (a busy machine). bench_commit --huge times the commit of types with up to a million members
# (cpu_commit_huge.{txt,csv}) and, one fresh process per shape and mode, their peak memory
# (cpu_commit_huge_mem.csv); bench_commit --many times batches of small irregular types
# (cpu_commit_many.{txt,csv}).
set -uo pipefail
cd "$(dirname "$0")/.."
quick=""
clock=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick="--quick"; shift ;;
    --cpu-time) clock="--cpu-time"; shift ;;
    *) echo "usage: bash bench/run-cpu.sh [--quick] [--cpu-time]"; exit 2 ;;
    esac
done

. bench/release-build.sh
release_build cpu typejit bench_commit bench_pack_cpu
lib="$build/libtypejit.so"

{
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
    echo "memory: $(free -g | awk '/^Mem:/{print $2}') GiB, transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
    echo "mpi: Open MPI $(ompi_info 2>/dev/null | sed -n 's/^ *Open MPI: *//p' | head -1), MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version: *//p')"
    echo "compiler: $(cc --version | head -1)"
    echo "build: $(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
    date -u +"date: %Y-%m-%dT%H:%MZ"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/cpu-machine.txt"
# The benchmarks run on one core; other work on the machine shows up as noise in the absolute
# numbers (the interleaved ratios suffer less). Say so rather than report it silently.
if awk -v n="$(nproc)" '{exit !($1 > n / 2)}' /proc/loadavg; then
    echo "run-cpu: WARNING: the machine is busy (load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores); expect noisy numbers" |
        tee -a "$out/cpu-machine.txt"
fi

echo
echo "== bench_commit (LD_PRELOAD=$lib)"
LD_PRELOAD="$lib" "$build/bench/bench_commit" $quick >"$out/cpu_commit.txt"
commit_rc=$?
grep -v '^#' "$out/cpu_commit.txt" >"$out/cpu_commit.csv"
grep '^# typejit\|WARNING' "$out/cpu_commit.txt"

echo "== bench_commit --huge (indexed, hindexed, struct types of 65536 to 1,000,000 members)"
LD_PRELOAD="$lib" "$build/bench/bench_commit" --huge $quick >"$out/cpu_commit_huge.txt"
huge_rc=$?
# The peak memory of one create + commit needs a fresh process per shape and mode.
for shape in indexed_1M_int_stride3 indexed_1M_int_last_off indexed_1M_int_irregular dtp_struct_262144int; do
    for mode in native typejit; do
        LD_PRELOAD="$lib" "$build/bench/bench_commit" --huge --rounds 1 --shape "$shape" \
            --mode "$mode" | grep -v '^#' | tail -1 | sed "s/^/$mode,/"
    done
done >"$out/cpu_commit_huge_mem.csv" || huge_rc=1
sed -i '1i mode,shape,members,create_ms,native_commit_ms,typejit_commit_ms,commit_ratio,create_commit_ratio,peak_growth_mb,typejit_create_ms' \
    "$out/cpu_commit_huge_mem.csv"
grep -v '^#' "$out/cpu_commit_huge.txt" >"$out/cpu_commit_huge.csv"
column -s, -t "$out/cpu_commit_huge.csv" 2>/dev/null || cat "$out/cpu_commit_huge.csv"
cut -d, -f1,2,9 "$out/cpu_commit_huge_mem.csv"

echo "== bench_commit --many (batches of small irregular indexed types, host only)"
LD_PRELOAD="$lib" "$build/bench/bench_commit" --many $quick >"$out/cpu_commit_many.txt" || huge_rc=1
grep -v '^#' "$out/cpu_commit_many.txt" >"$out/cpu_commit_many.csv"
column -s, -t "$out/cpu_commit_many.csv" 2>/dev/null || cat "$out/cpu_commit_many.csv"

# The sweep, then the application layouts with the library preloaded (its wrappers timed too),
# of the build in $build against the MPI named $1.
pack_mpi() {
    "$build/bench/bench_pack_cpu" $quick $clock >"$out/cpu_pack_$1.txt" || pack_rc=1
    grep -v '^#' "$out/cpu_pack_$1.txt" >"$out/cpu_pack_$1.csv"
    LD_PRELOAD="$build/libtypejit.so" "$build/bench/bench_pack_cpu" --apps $quick $clock \
        >"$out/cpu_apps_$1.txt" || pack_rc=1
    grep -v '^#' "$out/cpu_apps_$1.txt" >"$out/cpu_apps_$1.csv"
    packs+=("$out/cpu_pack_$1.csv")
    apps+=("$out/cpu_apps_$1.csv")
}
pack_rc=0
packs=()
apps=()
echo "== bench_pack_cpu (Open MPI build; the full sweep takes about an hour, --quick a minute)"
pack_mpi openmpi
if command -v mpicc.mpich >/dev/null; then
    ompi_build=$build
    build=${BUILD_MPICH:-build-bench-mpich}
    RELEASE_CMAKE_ARGS="-DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpifort.mpich" \
        release_build cpu typejit bench_pack_cpu
    echo "== bench_pack_cpu (MPICH build)"
    pack_mpi mpich
    build=$ompi_build
else
    echo "run-cpu: no mpicc.mpich: bench_pack_cpu against Open MPI only"
fi

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/cpu-machine.txt"

# The first python3 that has matplotlib draws the plots; any prints the tables.
python3=""
for p in python3 /usr/bin/python3; do
    if "$p" -c "import matplotlib" 2>/dev/null; then
        python3=$p
        break
    fi
done
if [ -n "$python3" ]; then
    "$python3" bench/plot_cpu.py "${packs[@]}" "$out" --commit "$out/cpu_commit.csv"
else
    echo "run-cpu: no python3 with matplotlib (Debian: python3-matplotlib): no plots"
    python3=python3
fi
echo
"$python3" bench/plot_cpu.py --table "${packs[@]}" "${apps[@]}" --commit "$out/cpu_commit.csv"
echo
echo "run-cpu: results in $out (commit rc=$commit_rc, huge rc=$huge_rc, pack rc=$pack_rc)"
[ $commit_rc -eq 0 ] && [ $huge_rc -eq 0 ] && [ $pack_rc -eq 0 ]
