# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the test scripts that run halo3d under typejit, after they set $mpiexec, $lib and
# $halo: a scratch folder $dir removed at exit, `fail MESSAGE` (prints it, exits 1), and
# `halo_run NP MPIEXEC_OPTIONS [HALO3D OPTIONS...]`, which runs a small halo3d
# (--quiet --n 4 --radius 1 --iters 1) on NP ranks with $lib preloaded and fails unless it
# passed. Its stderr is in $out, its stdout in $stdout, read apart: the launcher forwards each
# stream in chunks that need not end at a line's end, so a line of one stream can land inside a
# line of the other.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

halo_run() {
    np=$1 xs=$2
    shift 2
    # shellcheck disable=SC2086 # $xs: the launcher's options, split into words
    stdout=$($mpiexec -np "$np" -x LD_PRELOAD="$lib" $xs \
        "$halo" --quiet --n 4 --radius 1 --iters 1 "$@" 2>"$dir/log") ||
        fail "halo3d failed: $stdout $(cat "$dir/log")"
    out=$(cat "$dir/log")
    echo "$stdout" | grep -q "^PASS" || fail "halo3d did not pass: $stdout $out"
}
