#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every function the runtime stand-in exports is one the real library of its soname exports, in
# the same version node, so that a program built against the toolkit resolves against it; none of
# its own helpers leaks out. Usage: check_exports.sh STAND_IN REAL_LIBRARY
set -eu
exports() { # LIBRARY: "VERSION NAME" of each function it defines
    objdump -T "$1" | grep -v '\*UND\*' | grep ' DF ' | awk '{print $(NF-1), $NF}' | sort -u
}
ours=$(mktemp)
real=$(mktemp)
trap 'rm -f "$ours" "$real"' EXIT
exports "$1" >"$ours"
exports "$2" >"$real"
extra=$(comm -23 "$ours" "$real")
if [ -n "$extra" ]; then
    echo "exported by $1 but not by $2:"
    echo "$extra"
    exit 1
fi
echo "$(wc -l <"$ours") functions, each one of $(wc -l <"$real") of the real library"
