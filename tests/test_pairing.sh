#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A libtypejit.so built for one MPI family preloaded in front of a program of another, both
# ways: one line says so, typejit passes every call to the system MPI, the program's output is its output without
# typejit and it exits 0.
#   test_pairing.sh MPIEXEC_SH  LIB_A HALO_A LAUNCHER_A  LIB_B HALO_B LAUNCHER_B
set -u
launch=$1
lib_a=$2 halo_a=$3 mpiexec_a=$4 lib_b=$5 halo_b=$6 mpiexec_b=$7
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0

check() { # LIB HALO LAUNCHER
    args="--collective alltoallv --n 10 --radius 2 --iters 2 --quiet"
    "$launch" "$3" -np 2 "$2" $args >"$dir/plain.out" 2>"$dir/plain.err"
    "$launch" "$3" -np 2 -x LD_PRELOAD="$1" -x TYPEJIT_STATS=1 "$2" $args \
        >"$dir/pre.out" 2>"$dir/pre.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: $1 in front of $2 exited $rc"; cat "$dir/pre.err"; status=1; return
    fi
    if ! cmp -s "$dir/plain.out" "$dir/pre.out"; then
        echo "FAIL: the output of $2 changed with $1 preloaded"
        diff "$dir/plain.out" "$dir/pre.out"; status=1
    fi
    n=$(grep -c "^typejit: warning: built for .*, running in front of .*: typejit passes every call to the system MPI" "$dir/pre.err")
    others=$(grep -v "^typejit: warning: built for" "$dir/pre.err" | grep -c -v -f "$dir/plain.err" -e '^$')
    if [ "$n" -ne 1 ] || [ "$others" -ne 0 ]; then
        echo "FAIL: $1 in front of $2: $n lines saying typejit passes every call to the system MPI, $others other lines:"
        cat "$dir/pre.err"; status=1
    fi
    grep -q "PASS: 0 wrong ghost cells" "$dir/pre.out" || { echo "FAIL: no PASS from $2"; status=1; }
    head -n 1 "$dir/pre.err"
}
check "$lib_b" "$halo_a" "$mpiexec_a"
check "$lib_a" "$halo_b" "$mpiexec_b"
[ $status -eq 0 ] && echo "ok: both pairings pass every call through"
exit $status
