#!/bin/sh
# The typejit command and the JIT at commit, end to end without a GPU:
#   test_tool.sh TYPEJIT_BINARY LIBTYPEJIT HALO3D MPIEXEC
# warm fills an empty cache and a second warm compiles nothing; inspect shows the block and the
# source; cache stats/verify/clear; a corrupted entry is found by verify; a preloaded run with
# TYPEJIT_JIT=always compiles every kernel once and a second run loads them all from disk.
set -eu
tool=$1 lib=$2 halo=$3 mpiexec=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for c in warm inspect cache; do
    "$tool" $c --help | grep -q "^usage: typejit $c" || fail "$c --help"
done
"$tool" version | grep -Eq '^typejit [0-9]+\.[0-9]+\.[0-9]+$' || fail version

cat >"$dir/types.txt" <<'TYPES'
# a halo column, a face, and a type the system MPI keeps
vector(64, 8, 64, MPI_DOUBLE)
subarray({64,64,64}, {1,64,64}, {0,0,0}, C, MPI_FLOAT)
struct({1,1}, {0,8}, {MPI_INT, MPI_DOUBLE})
TYPES
out=$("$tool" warm --arch sm_90,sm_75 --jobs 2 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "8 kernels: 8 compiled, 0 already cached, 0 failed" || fail "first warm: $out"
out=$("$tool" warm --arch sm_90,sm_75 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "8 kernels: 0 compiled, 8 already cached, 0 failed" || fail "second warm: $out"
out=$("$tool" warm --cache-dir "$dir/c")
echo "$out" | grep -q "8 kernels: 0 compiled, 8 already cached" || fail "manifest warm: $out"
"$tool" cache stats --cache-dir "$dir/c" | grep -q ": 8 entries, [0-9]* bytes, 0 invalid, 0 sources, 8 manifest lines" ||
    fail "stats"

out=$("$tool" inspect 'vector(64, 8, 64, MPI_DOUBLE)')
echo "$out" | grep -q "^block: *start=0 extent=32320 counts=64,64 strides=1,512" || fail "inspect block: $out"
echo "$out" | grep -q "W=16" || fail "inspect word"
echo "$out" | grep -q '__global__ void tj_pack' || fail "inspect source"
"$tool" inspect 'vector(1,2' 2>&1 | grep -q "column" || fail "inspect error without a column"
"$tool" inspect 'vector(1,2' >/dev/null 2>&1 && fail "inspect exit status on bad syntax" || true

# A damaged entry is invalid for verify (which deletes it) and recompiled by the next warm.
entry=$(find "$dir/c" -name '*.bin' | head -1)
printf 'XXXX' | dd of="$entry" bs=1 seek=40 conv=notrunc 2>/dev/null
"$tool" cache verify --cache-dir "$dir/c" >/dev/null && fail "verify missed a damaged entry"
out=$("$tool" warm --arch sm_90,sm_75 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "1 compiled, 7 already cached" || fail "rewarm: $out"
out=$(TYPEJIT_CACHE_SAVE_SOURCE=1 "$tool" warm --arch sm_86 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "4 kernels: 4 compiled" || fail "warm with sources: $out"
[ "$(find "$dir/c" -name '*.cu' | wc -l)" -eq 4 ] || fail "TYPEJIT_CACHE_SAVE_SOURCE kept no .cu"
grep -q '__global__' "$(find "$dir/c" -name '*.cu' | head -1)" || fail "saved source is not the kernel"
"$tool" cache clear --cache-dir "$dir/c" | grep -q cleared || fail clear
"$tool" cache stats --cache-dir "$dir/c" | grep -q ": 0 entries" || fail "stats after clear"

# The JIT at commit: every kernel compiled once, then all from disk in a second run.
run() {
    $mpiexec --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_PRELOAD="$lib" \
        -x TYPEJIT_JIT=always -x TYPEJIT_ARCH=sm_90 -x TYPEJIT_STATS=1 \
        -x TYPEJIT_CACHE_DIR="$dir/run" "$halo" --quiet --n 8 --iters 2 2>&1
}
# halo3d commits 52 types: 26 boxes sent and 26 received, of 7 shapes (each side n or radius
# cells long, but not n on all three). Kernels are built for a layout moved to start at byte 0,
# so the boxes of one shape share theirs: 7 layouts, a pack and an unpack kernel each.
out=$(run)
echo "$out" | grep -q "typejit\[0\]: stats .* jit_compiles=14 jit_failures=0 .*cache_misses=14" ||
    fail "first run: $out"
out=$(run)
echo "$out" | grep -q "typejit\[0\]: stats .* jit_compiles=0 .*cache_hits_disk=14 cache_misses=0" ||
    fail "second run: $out"
echo ok
