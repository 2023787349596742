#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs halo3d --device once per allocation kind, each run checked: every ghost cell right
# (PASS), and on every rank kernels launched, fused launches made and no device call staged
# (gpu_fallbacks=0 in the stats line; the command sets TYPEJIT_STATS=1).
#   halo3d_allocs.sh RANKS KIND... -- COMMAND...
# COMMAND launches halo3d with its options; `--alloc KIND` is appended for each kind.
set -u
here=$(dirname "$0")
ranks=$1
shift
kinds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    kinds="$kinds $1"
    shift
done
shift
# One expectation per rank (dots stand for the blanks, so that the list splits on blanks only).
checks=""
r=0
while [ "$r" -lt "$ranks" ]; do
    checks="$checks --expect ^typejit\\[$r\\]:.stats.*.gpu_fallbacks=0.kernel_launches=[1-9][0-9]*.fused_launches=[1-9]"
    r=$((r + 1))
done
for kind in $kinds; do
    echo "halo3d --alloc $kind:"
    # shellcheck disable=SC2086
    "$here/run_checked.sh" $checks --stdout "PASS: 0 wrong ghost cells" -- "$@" --alloc "$kind" ||
        exit 1
done
