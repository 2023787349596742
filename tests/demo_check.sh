#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs the demo (bench/demo.sh and its arguments) and fails unless each of its three runs of
# halo3d printed "PASS: 0 wrong ghost cells": the demo itself stops at a run that fails, but
# says nothing when the device runs were left out.
#   demo_check.sh DEMO_SH ARGS...
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out"
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || exit "$rc"
passes=$(grep -c "^PASS: 0 wrong ghost cells" "$out")
if [ "$passes" -ne 3 ]; then
    echo "demo_check: $passes of 3 runs printed PASS: 0 wrong ghost cells"
    exit 1
fi
