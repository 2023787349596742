#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs MPICH's own test suites (an MPICH source tree's test/mpi, not part of this repository)
# against one MPI three ways: the system MPI alone, typejit preloaded with its default settings
# (TYPEJIT_HOST=auto) and typejit with TYPEJIT_HOST=system, the three modes interleaved per
# program (their order rotated from one program to the next) for ROUNDS rounds. Builds a Release
# typejit against the MPI of MPICC (bench/release-build.sh) and the suites' programs with MPICC,
# then writes one CSV row per run (program,np,mode,round,seconds,status,stderr_bytes) to
# $OUT/mpi-suites-NAME.csv and a summary (passes and total time per mode and round, the programs
# whose median time differs most, any program that fails or writes to stderr only under typejit,
# the load average) to the terminal and $OUT/mpi-suites-NAME.txt; each run's line goes to stderr.
#   bash bench/run-mpi-suites.sh TESTMPI MPICC [--dirs "coll pt2pt"] [--rounds 3] [--timeout 180]
#        [--maxnp N] [--dtp] [--xfail] [--only REGEX]
# TESTMPI: MPICH's test/mpi folder (git clone https://github.com/pmodels/mpich); MPICC: the MPI's
# C compiler wrapper (mpicc.openmpi, mpicc.mpich, ...), whose mpiexec beside it launches.
# BUILD: typejit's release build (default build-suites-NAME, NAME the compiler's name);
# OUT: where the CSV and the summary go (default bench/results); the programs are built in
# $BUILD/mpi-suites, the output of failed runs and of runs that wrote to stderr kept in
# $BUILD/mpi-suites/logs.
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash bench/run-mpi-suites.sh TESTMPI MPICC [--dirs \"coll pt2pt\"] [--rounds N]"
usage+=" [--timeout S] [--maxnp N] [--dtp] [--xfail] [--only REGEX]"
[ $# -ge 2 ] || { echo "$usage"; exit 2; }
src=$1 cc=$2
shift 2
dirs="coll pt2pt" rounds=3 timeout=180 extra=() dtp=()
while [ $# -gt 0 ]; do
    case "$1" in
    --dirs) dirs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --maxnp) extra+=(--maxnp "$2"); shift 2 ;;
    --only) extra+=(--only "$2"); shift 2 ;;
    --xfail) extra+=(--xfail); shift ;;
    --dtp) dtp=(--dtp); shift ;;
    *) echo "$usage"; exit 2 ;;
    esac
done
[ -f "$src/util/mtest.c" ] || { echo "run-mpi-suites: $src is not MPICH's test/mpi"; exit 1; }
command -v "$cc" >/dev/null || { echo "run-mpi-suites: no compiler $cc"; exit 1; }
name=$(basename "$cc")
build=${BUILD:-build-suites-$name}
out=${OUT:-bench/results}
fc=${cc/mpicc/mpifort}
export RELEASE_CMAKE_ARGS="-DMPI_C_COMPILER=$cc${fc:+ -DMPI_Fortran_COMPILER=$fc}"
command -v "$fc" >/dev/null || export RELEASE_CMAKE_ARGS="-DMPI_C_COMPILER=$cc"
mkdir -p "$out"
. bench/release-build.sh
release_build suites typejit
# shellcheck disable=SC2086 # $dirs: a list of folders
python3 bench/mpi_suites.py build --src "$src" --cc "$cc" --build "$build/mpi-suites" \
    --dirs $dirs "${dtp[@]}" || echo "run-mpi-suites: some programs did not build"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
python3 bench/mpi_suites.py run --src "$src" --cc "$cc" --build "$build/mpi-suites" \
    --lib "$build/libtypejit.so" --dirs $dirs --rounds "$rounds" --timeout "$timeout" \
    --csv "$out/mpi-suites-$name.csv" --logs "$build/mpi-suites/logs" "${dtp[@]}" "${extra[@]}" |
    tee "$out/mpi-suites-$name.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/mpi-suites-$name.txt"
