#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The typejit command and the JIT at commit, end to end without a GPU:
#   test_tool.sh TYPEJIT_BINARY LIBTYPEJIT HALO3D "MPIEXEC_SH LAUNCHER" NOMPI_SHIM
# warm fills an empty cache and a second warm compiles nothing; inspect shows the block and the
# source; cache stats/verify/clear; a corrupted entry is found by verify; bad options, files,
# settings and caches are refused with a reason (untrusted, another user's, full, read only);
# concurrent warms write each manifest line once; a preloaded run with TYPEJIT_JIT=always
# compiles every kernel once and a second run loads them all from disk.
set -eu
tool=$1 lib=$2 halo=$3 mpiexec=$4 nompi=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for c in warm inspect cache settings; do
    "$tool" $c --help | grep -q "^usage: typejit $c" || fail "$c --help"
done
"$tool" version | grep -Eq '^typejit [0-9]+\.[0-9]+\.[0-9]+$' || fail version

cat >"$dir/types.txt" <<'TYPES'
# a halo column, a face, and a struct with a hole (a layout: its parts kernels, docs/layouts.md)
vector(64, 8, 64, MPI_DOUBLE)
subarray({64,64,64}, {1,64,64}, {0,0,0}, C, MPI_FLOAT)
struct({1,1}, {0,8}, {MPI_INT, MPI_DOUBLE})
TYPES
out=$("$tool" warm --arch sm_90,sm_75 --jobs 2 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "36 kernels: 36 compiled, 0 already cached, 0 failed" || fail "first warm: $out"
echo "$out" | grep -q "^typejit warm: not compiled: [1-9][0-9]* kernels of launches on buffers or packed positions not aligned to their types' elements (--all-words compiles them)$" ||
    fail "first warm does not say what it left out: $out"
out=$("$tool" warm --arch sm_90,sm_75 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "36 kernels: 0 compiled, 36 already cached, 0 failed" || fail "second warm: $out"
out=$("$tool" warm --cache-dir "$dir/c")
echo "$out" | grep -q "36 kernels: 0 compiled, 36 already cached" || fail "manifest warm: $out"
"$tool" cache stats --cache-dir "$dir/c" | grep -q ": 36 entries, [0-9]* bytes, 0 invalid, 0 sources, 36 manifest lines" ||
    fail "stats"

# Word size per dimension: rows of 1001 floats padded by 16 bytes get a kernel
# with edges; a fused set moves each member with its own word (packed one after the other, each
# apart, several objects each), and the manifest's lines name them so that warming from it finds
# the same kernels.
cat >"$dir/words.txt" <<'TYPES'
vector(64, 1001, 1005, MPI_FLOAT)
fused(vector(8, 4, 8, MPI_INT), contiguous(3, MPI_INT), vector(8, 4, 8, MPI_INT))
TYPES
out=$("$tool" warm --cache-dir "$dir/w" "$dir/words.txt")
echo "$out" | grep -q "26 kernels: 26 compiled" || fail "words warm: $out"
grep -q "^sm_90 pack W=16 edge=4 start=0 extent=257264 counts=4004,64 strides=1,4020$" "$dir/w/manifest.txt" ||
    fail "no kernel with edges in the manifest: $(cat "$dir/w/manifest.txt")"
grep -q "^sm_90 unpack W=16 fused start=0 extent=240 counts=16,8 strides=1,32 | W=4 start=0 extent=12 counts=12 strides=1$" "$dir/w/manifest.txt" ||
    fail "no fused kernel of two words in the manifest: $(cat "$dir/w/manifest.txt")"
out=$("$tool" warm --cache-dir "$dir/w")
echo "$out" | grep -q "26 kernels: 0 compiled, 26 already cached, 0 failed" || fail "words manifest warm: $out"
out=$("$tool" inspect --no-source 'vector(64, 1001, 1005, MPI_FLOAT)')
echo "$out" | grep -q "^word: *W=4$" || fail "inspect word of the rows: $out"
echo "$out" | grep -q "^launch: *W=16 with edges of 4 bytes (aligned buffers)$" || fail "inspect launch: $out"
echo "$out" | grep -q "^manifest=sm_90 pack W=16 edge=4 " || fail "inspect kernel with edges: $out"
out=$("$tool" inspect --no-source 'resized(0, 32769, vector(64, 8, 64, MPI_DOUBLE))')
echo "$out" | grep -q "^launch: *W=16 for one object (aligned buffers)$" || fail "inspect one object: $out"
echo "$out" | grep -q "^ *W=1 for several (aligned buffers)$" || fail "inspect several: $out"

# The words of every element-aligned placement: a column of doubles from d + 8 moves words of 8.
out=$("$tool" inspect --no-source 'vector(64, 8, 64, MPI_DOUBLE)')
echo "$out" | grep -q "^alignment: *8 (of the elements)$" || fail "inspect alignment: $out"
echo "$out" | grep -q "^launch: *W=16 (aligned buffers)$" || fail "inspect aligned launch: $out"
echo "$out" | grep -q "^ *W=8 (typed buffer at 16n+8)$" || fail "inspect launch from d + 8: $out"
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
echo "$out" | grep -q "1 compiled, 35 already cached" || fail "rewarm: $out"
out=$(TYPEJIT_CACHE_SAVE_SOURCE=1 "$tool" warm --arch sm_86 --cache-dir "$dir/c" "$dir/types.txt")
echo "$out" | grep -q "18 kernels: 18 compiled" || fail "warm with sources: $out"
[ "$(find "$dir/c" -name '*.cu' | wc -l)" -eq 18 ] || fail "TYPEJIT_CACHE_SAVE_SOURCE kept no .cu"
grep -q '__global__' "$(find "$dir/c" -name '*.cu' | head -1)" || fail "saved source is not the kernel"
"$tool" cache clear --cache-dir "$dir/c" | grep -q cleared || fail clear
"$tool" cache stats --cache-dir "$dir/c" | grep -q ": 0 entries" || fail "stats after clear"

# --- what the command must refuse or report ---------------------------------------
# expect RC REGEX CMD...: CMD exits with RC and its output (stdout and stderr) matches REGEX.
expect() {
    want=$1 pat=$2
    shift 2
    set +e
    got=$("$@" 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq "$want" ] || fail "exit status $rc, not $want: $* -> $got"
    echo "$got" | grep -Eq -- "$pat" || fail "no /$pat/ in the output of $*: $got"
}
one="$dir/one.txt"
echo 'vector(64, 8, 64, MPI_DOUBLE)' >"$one"

# What warm leaves out is what --all-words adds, and --all-words leaves nothing out.
expect 0 "^typejit warm: not compiled: 8 kernels of launches" "$tool" warm --arch sm_90 --cache-dir "$dir/all" "$one"
expect 0 "^typejit warm: 12 kernels: 8 compiled, 4 already cached, 0 failed" \
    "$tool" warm --all-words --arch sm_90 --cache-dir "$dir/all" "$one"
echo "$got" | grep -q "not compiled" && fail "--all-words left something out: $got"

# Numbers are checked whole; an option without its value says so.
for bad in -1 0 abc '' 2x 99999999999999999999 ' 4' 1025; do
    expect 2 "--jobs wants a whole number from 1 to 1024" "$tool" warm --jobs "$bad" --cache-dir "$dir/n" "$one"
done
expect 2 "--jobs needs a value" "$tool" warm "$one" --jobs
expect 2 "--cache-dir needs a value" "$tool" warm --cache-dir
expect 2 "--word wants a whole number" "$tool" inspect --word abc 'contiguous(4, int)'
expect 2 "--word wants a whole number" "$tool" inspect --word 0 'contiguous(4, int)'
expect 2 "--word is 1, 2, 4, 8 or 16, not 3" "$tool" inspect --word 3 'contiguous(4, int)'
expect 2 '"foo" is not a target' "$tool" inspect --arch foo 'contiguous(4, int)'
expect 2 '"sm_90x" is not a target' "$tool" warm --arch sm_90x --cache-dir "$dir/n" "$one"
# A target this NVRTC dropped: one line that says so, no compiler log.
expect 2 "sm_35 is older than every arch NVRTC [0-9]+\.[0-9]+ compiles for" \
    "$tool" warm --arch sm_35 --cache-dir "$dir/n" "$one"
[ "$(echo "$got" | wc -l)" -eq 1 ] || fail "sm_35 takes more than one line: $got"
# A malformed TYPEJIT_ARCH: one warning, then the default target.
for bad in sm_ sm_90x compute_ sm_-5; do
    expect 0 "ignoring TYPEJIT_ARCH=\"$bad\"" env TYPEJIT_ARCH="$bad" "$tool" inspect --no-source 'contiguous(4, int)'
    echo "$got" | grep -q "^target=sm_90$" || fail "TYPEJIT_ARCH=$bad did not fall back to sm_90: $got"
    [ "$(echo "$got" | grep -c TYPEJIT_ARCH)" -eq 1 ] || fail "TYPEJIT_ARCH=$bad warned more than once"
done
expect 2 "one TYPE at a time: got \"contiguous\(4, int\)\" and \"vector\"" \
    "$tool" inspect 'contiguous(4, int)' vector
expect 0 "^usage: typejit version" "$tool" version --help
expect 2 "typejit version: unexpected extra" "$tool" version extra
expect 2 "typejit settings: unexpected extra" "$tool" settings extra
# The settings listing, whatever the environment says: every setting, with a default and values.
expect 0 "^    values:  1 to 64$" env TYPEJIT_JIT_THREADS=9 "$tool" settings
[ "$(echo "$got" | grep -c '^TYPEJIT_')" -ge 18 ] || fail "typejit settings: $got"
[ "$(echo "$got" | grep -c '^    default: ')" -eq "$(echo "$got" | grep -c '^TYPEJIT_')" ] ||
    fail "typejit settings: a setting without its default: $got"
expect 2 "unknown subcommand bogus" "$tool" cache bogus --cache-dir "$dir/n"

# --option=value is read as --option value (as getopt_long reads it); options that take no
# value refuse one; measure names a missing value.
expect 0 "4 kernels: 4 compiled" "$tool" warm --arch=sm_90 --jobs=2 --cache-dir="$dir/eq" "$one"
expect 0 "^manifest=sm_80 pack W=4 " "$tool" inspect --word=4 --arch=sm_80 --no-source 'vector(4, 2, 4, int)'
echo "$got" | grep -q "^target=sm_80$" || fail "inspect --arch=sm_80 not used: $got"
expect 0 ": 4 entries" "$tool" cache stats --cache-dir="$dir/eq"
expect 2 "--no-source takes no value" "$tool" inspect --no-source=yes 'contiguous(4, int)'
expect 2 "typejit measure: --output needs a value" "$tool" measure --output
expect 2 "typejit measure: --quick takes no value" "$tool" measure --quick=yes
# A --word that does not divide W is refused before anything is printed.
set +e
words=$("$tool" inspect --word 16 'contiguous(2, int)' 2>/dev/null)
rc=$?
set -e
[ "$rc" -eq 2 ] && [ -z "$words" ] || fail "inspect --word 16 of W=8: status $rc, printed: $words"
expect 2 "--word 16 does not divide W=8" "$tool" inspect --word 16 'contiguous(2, int)'
# halo3d: one placement of the grid, and --option=value.
expect 2 "halo3d: --host and --device exclude each other" "$halo" --host --device
expect 2 "halo3d: --n needs a value" "$halo" --n

# Why a type is not strided, in words (the log knew; the tool said "not a strided block"), and
# a type of 17 strided dimensions says so (it said "not strided (strided)").
deep=double k=8
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
    deep="hvector(2, 1, $((3 * k)), $deep)"
    k=$((4 * k))
done
# Both are layouts with parts kernels now; a type that packs no bytes needs none.
expect 0 "strided: *no \(more than 16 strided dimensions\): a layout of strided parts" \
    "$tool" inspect --no-source "$deep"
expect 0 "strided: *no \(mixed struct members\): a layout of strided parts" \
    "$tool" inspect 'struct({1,1}, {0,8}, {int, double})'
printf '%s\n%s\n%s\n' 'struct({1,1}, {0,8}, {int, double})' "$deep" 'contiguous(0, double)' \
    >"$dir/unstrided.txt"
expect 0 "unstrided.txt:3: neither strided nor a layout \(packs no bytes\): no kernel needed" \
    "$tool" warm --cache-dir "$dir/unstrided" "$dir/unstrided.txt"
echo "$got" | grep -q "4 kernels: 4 compiled, 0 already cached, 0 failed" ||
    fail "warm of a struct with a hole and a 17-dimension type: $got"

# Cache maintenance starts no MPI: it runs in an empty environment (where MPI_Init failed with
# 40 lines of Open MPI errors) and under a stand-in MPI_Init that exits.
expect 0 "^cache $dir/eq: 4 entries" env -i "$tool" cache stats --cache-dir "$dir/eq"
for sub in stats list verify "trim --max-size 1G" clear; do
    # shellcheck disable=SC2086
    expect 0 "^cache $dir/eq|^[0-9a-f]{32} " env LD_PRELOAD="$nompi" "$tool" cache $sub --cache-dir "$dir/eq"
done
expect 3 "nompi_shim: MPI was initialised" env LD_PRELOAD="$nompi" "$tool" inspect 'contiguous(4, int)'

# cache list: one line per entry, least recently used first, with the kernel it holds; an
# entry that fails validation is named, with why, by list, stats and verify.
"$tool" warm --arch sm_90 --cache-dir "$dir/ls" "$one" >/dev/null
expect 0 "" "$tool" cache list --cache-dir "$dir/ls"
[ "$(echo "$got" | wc -l)" -eq 4 ] || fail "cache list: not 4 lines: $got"
echo "$got" | grep -Eq "^[0-9a-f]{32} nvrtc-[^ ]*/sm_90 [0-9]+ [0-9T:-]+Z pack W=16 start=0 extent=32320 counts=64,64 strides=1,512$" ||
    fail "cache list: no pack line: $got"
echo "$got" | grep -q " unpack W=16 start=0 " || fail "cache list: no unpack line: $got"
# A column of doubles from d + 8 (a typed buffer at any double) moves words of 8.
echo "$got" | grep -q " pack W=8 start=0 extent=32320 " || fail "cache list: no kernel of d + 8: $got"
entry=$(find "$dir/ls" -name '*.bin' | head -1)
printf 'XXXX' | dd of="$entry" bs=1 seek=40 conv=notrunc 2>/dev/null
expect 0 "^$(basename "$entry" .bin) .* invalid: entry for another key$" "$tool" cache list --cache-dir "$dir/ls"
expect 0 "invalid entry $entry: entry for another key" "$tool" cache stats --cache-dir "$dir/ls"
expect 1 "invalid entry $entry: entry for another key" "$tool" cache verify --cache-dir "$dir/ls"
mkdir -p "$(dirname "$entry")/0123456789abcdef0123456789abcdef.bin/x"
expect 1 "not cleared: 0 entries, 1 invalid, 0 sources left" "$tool" cache clear --cache-dir "$dir/ls"
echo "$got" | grep -q "invalid entry $(dirname "$entry")/0123456789abcdef0123456789abcdef.bin: not a regular file" ||
    fail "clear does not name what is left: $got"

# A relative TYPEJIT_CACHE_DIR is refused as a relative TYPEJIT_CACHE_PATH folder is (each rank
# would make its own cache in its working directory): one warning, and the default is used.
expect 0 "ignoring TYPEJIT_CACHE_DIR=\"rel/cache\": not an absolute path .*; using $dir/home/.cache/typejit" \
    env -u XDG_CACHE_HOME HOME="$dir/home" TYPEJIT_CACHE_DIR=rel/cache "$tool" cache stats
echo "$got" | grep -q "^cache $dir/home/.cache/typejit: " || fail "relative TYPEJIT_CACHE_DIR: $got"

# Files: why one cannot be read, NUL bytes, binary files (errors capped, then a count).
expect 1 "cannot read $dir/missing.txt: No such file or directory" "$tool" warm --cache-dir "$dir/n" "$dir/missing.txt"
expect 1 "cannot read $dir: Is a directory" "$tool" warm --cache-dir "$dir/n" "$dir"
# A file that cannot be read does not stop the others (as a line that does not parse does not):
# the good file is warmed and the summary printed; the exit status still says something failed.
expect 1 "cannot read $dir/missing.txt: No such file or directory" \
    "$tool" warm --arch sm_90 --cache-dir "$dir/partial" "$one" "$dir/missing.txt"
echo "$got" | grep -q "typejit warm: 4 kernels: 4 compiled, 0 already cached, 0 failed" ||
    fail "a missing file stopped the warm of the good one: $got"
printf 'vector(64, 8, 64, MPI_DOUBLE)\nvector(4,\0001, 8, int)\n' >"$dir/nul.txt"
expect 1 "nul.txt:2: holds a NUL byte" "$tool" warm --cache-dir "$dir/n" "$dir/nul.txt"
i=0
while [ $i -lt 50 ]; do printf '\177ELF\001\002\003(\n'; i=$((i + 1)); done >"$dir/binary.txt"
expect 1 "binary.txt: [0-9]+ more lines with errors not shown" "$tool" warm --cache-dir "$dir/n" "$dir/binary.txt"
[ "$(echo "$got" | grep -c 'binary.txt:[0-9]*:')" -eq 10 ] || fail "binary file: not 10 errors shown: $got"

# Warming a cache that stores nothing is refused or fails, and says why.
expect 1 "TYPEJIT_CACHE=ro: the cache is read only" env TYPEJIT_CACHE=ro "$tool" warm --cache-dir "$dir/n" "$one"
expect 1 "TYPEJIT_CACHE=off: the cache is not used" env TYPEJIT_CACHE=off "$tool" warm --cache-dir "$dir/n" "$one"
mkdir -m 700 "$dir/open" && chmod 777 "$dir/open"
expect 1 "cannot store kernels in $dir/open: .*writable by group and others \(mode 777\).*chmod go-w" \
    "$tool" warm --cache-dir "$dir/open" "$one"
: >"$dir/file"
expect 1 "cannot store kernels in $dir/file" "$tool" warm --cache-dir "$dir/file" "$one"
# A cache whose arch level cannot be made (a file stands there; a full disk fails the same way,
# at the save): compiled, not stored, so failed, and the reason is said once.
"$tool" warm --cache-dir "$dir/tc" "$one" >/dev/null
toolchain=$(cd "$dir/tc" && ls -d nvrtc-*)
mkdir -p "$dir/full/$toolchain" && : >"$dir/full/$toolchain/sm_90"
expect 1 "4 compiled kernels were not stored: .*sm_90: not a directory" \
    "$tool" warm --arch sm_90 --cache-dir "$dir/full" "$one"
echo "$got" | grep -q "4 kernels: 0 compiled, 0 already cached, 4 failed" || fail "unstored summary: $got"

# Another user's folders (needs root to make them): named as such, and commands that could not
# do what they say exit 1.
if [ "$(id -u)" -eq 0 ] && nobody=$(id -u nobody 2>/dev/null); then
    mkdir -m 700 "$dir/theirs" && chown nobody "$dir/theirs"
    expect 1 "owned by uid $nobody, not by you" "$tool" warm --cache-dir "$dir/theirs" "$one"
    echo "$got" | grep -q "writable" && fail "a 0700 folder of another user called writable: $got"
    "$tool" warm --cache-dir "$dir/lvl" "$one" >/dev/null
    chown -R nobody "$dir/lvl"/nvrtc-*
    chown nobody "$dir/lvl"/nvrtc-*/*
    chown "$(id -u)" "$dir/lvl"
    expect 1 "1 folder not counted: .*owned by uid $nobody" "$tool" cache stats --cache-dir "$dir/lvl"
    echo "$got" | grep -q ": 0 entries" || fail "stats in a refused level: $got"
    expect 1 "not cleared" "$tool" cache clear --cache-dir "$dir/lvl"
    [ "$(find "$dir/lvl" -name '*.bin' | wc -l)" -eq 4 ] || fail "clear removed another user's entries"
    expect 1 "compiled kernels were not stored: .*owned by uid $nobody" \
        "$tool" warm --arch sm_90 --cache-dir "$dir/lvl" "$dir/types.txt"
else
    echo "note: not root, another user's folders not tested"
fi

# A directory where an entry should be: an empty one is removed, one that holds something named.
"$tool" warm --cache-dir "$dir/d" "$one" >/dev/null
arch_dir=$(dirname "$(find "$dir/d" -name '*.bin' | head -1)")
mkdir -p "$arch_dir/0123456789abcdef0123456789abcdef.bin/x"
expect 1 "a directory where an entry should be, and not empty" "$tool" cache verify --cache-dir "$dir/d"
echo "$got" | grep -q "4 entries, [0-9]* bytes, 1 invalid (0 deleted)" || fail "verify counts: $got"
rmdir "$arch_dir/0123456789abcdef0123456789abcdef.bin/x"
expect 1 "1 invalid \(1 deleted\)" "$tool" cache verify --cache-dir "$dir/d"
expect 0 "4 entries, [0-9]* bytes, 0 invalid \(0 deleted\)" "$tool" cache verify --cache-dir "$dir/d"

# Concurrent warms of one cache: each manifest line is written once (the two strided types).
grep -v struct "$dir/types.txt" >"$dir/strided.txt"
for i in 1 2 3; do
    "$tool" warm --arch sm_90,sm_75 --jobs 1 --cache-dir "$dir/con" "$dir/strided.txt" >/dev/null &
done
wait
[ "$(wc -l <"$dir/con/manifest.txt")" -eq 32 ] || fail "concurrent warms: $(wc -l <"$dir/con/manifest.txt") manifest lines, not 32"
expect 0 "32 manifest lines \(32 distinct\)" "$tool" cache stats --cache-dir "$dir/con"

# Trimming: sizes are checked; the least recently used entries go, with their manifest
# lines, so that the kernels left are exactly what a manifest warm finds cached; all verify.
for bad in -1 abc '' 2x 1.5G 2GB ' 1M' 99999999999999999999; do
    expect 2 "--max-size wants a size such as 500M or 2G" "$tool" cache trim --max-size "$bad" --cache-dir "$dir/con"
done
expect 2 "--max-size needs a value" "$tool" cache trim --cache-dir "$dir/con" --max-size
expect 2 "give --max-size SIZE" "$tool" cache trim --cache-dir "$dir/con"
expect 2 "--max-size is for trim only" "$tool" cache stats --max-size 1M --cache-dir "$dir/con"
expect 0 "ignoring TYPEJIT_CACHE_MAX_SIZE=\"lots\"" env TYPEJIT_CACHE_MAX_SIZE=lots "$tool" cache stats --cache-dir "$dir/con"
# Word settings list what they accept; a misspelt name is named with the closest setting, an
# unrelated one is named; each once.
expect 0 "ignoring TYPEJIT_CACHE=\"readonly\": not one of rw, ro or off; using rw" \
    env TYPEJIT_CACHE=readonly "$tool" cache stats --cache-dir "$dir/con"
expect 0 "ignoring TYPEJIT_STATS=\"maybe\": not one of 1, yes, true, on, 0, no, false or off; using 0" \
    env TYPEJIT_STATS=maybe "$tool" cache stats --cache-dir "$dir/con"
expect 0 "ignoring TYPEJIT_CAHCE_DIR: not a typejit setting; did you mean TYPEJIT_CACHE_DIR\?" \
    env TYPEJIT_CAHCE_DIR=/tmp TYPEJIT_LOGLEVEL=debug TYPEJIT_FROBNICATE=1 "$tool" cache stats --cache-dir "$dir/con"
echo "$got" | grep -q "ignoring TYPEJIT_LOGLEVEL: not a typejit setting; did you mean TYPEJIT_LOG?" ||
    fail "TYPEJIT_LOGLEVEL: $got"
echo "$got" | grep -q "ignoring TYPEJIT_FROBNICATE: not a typejit setting (docs/settings.md lists them)" ||
    fail "TYPEJIT_FROBNICATE: $got"
[ "$(echo "$got" | grep -c 'not a typejit setting')" -eq 3 ] || fail "misspelt names: $got"
for bad in -1 abc 2x 3601 ' 4'; do
    expect 0 "ignoring TYPEJIT_JIT_DRAIN=\"$bad\": expected a whole number of seconds from 0 to 3600, using 2" env TYPEJIT_JIT_DRAIN="$bad" "$tool" cache stats --cache-dir "$dir/con"
    expect 0 "ignoring TYPEJIT_JIT_THREADS=\"$bad\"" env TYPEJIT_JIT_THREADS="$bad" "$tool" cache stats --cache-dir "$dir/con"
done
expect 0 "removed 0 entries .* 32 entries left" "$tool" cache trim --max-size 1G --cache-dir "$dir/con"
# Entry i was last used 1000 - i seconds ago; room for the newest three.
now=$(date +%s) i=0
for f in $(ls "$dir"/con/nvrtc-*/*/*.bin); do
    touch -d "@$((now - 1000 + i))" "$f"
    i=$((i + 1))
done
newest=$(ls "$dir"/con/nvrtc-*/*/*.bin | tail -3)
room=$(cat $newest | wc -c)
expect 0 "removed 29 entries .*, 29 manifest lines; 3 entries left \($room bytes" \
    env TYPEJIT_CACHE_MAX_SIZE="$room" "$tool" cache trim --cache-dir "$dir/con"
for f in $newest; do [ -f "$f" ] || fail "trim removed a recently used entry $f"; done
expect 0 "3 entries, [0-9]* bytes, 0 invalid \(0 deleted\), 0 sources, 3 manifest lines" \
    "$tool" cache verify --cache-dir "$dir/con"
expect 0 "3 kernels: 0 compiled, 3 already cached, 0 failed" "$tool" warm --cache-dir "$dir/con"
expect 0 "removed 3 entries .* 0 entries left" "$tool" cache trim --max-size 0 --cache-dir "$dir/con"
expect 0 "0 entries, 0 bytes, 0 invalid, 0 sources, 0 manifest lines" "$tool" cache stats --cache-dir "$dir/con"

# A cache the command may not delete from (a read-only mount, made in a mount namespace of its
# own as root): trim keeps count of what is left and names the files it could not remove.
ro() { unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"' sh "$@"; }
if [ "$(id -u)" -eq 0 ] && ro "$dir" true 2>/dev/null; then
    "$tool" warm --cache-dir "$dir/ro" "$one" >/dev/null
    arch_dir=$(dirname "$(find "$dir/ro" -name '*.bin' | head -1)")
    expect 1 "removed 0 entries \(0 bytes\), 0 manifest lines; 4 entries left" \
        ro "$dir/ro" "$tool" cache trim --max-size 0 --cache-dir "$dir/ro"
    echo "$got" | grep -q "cannot remove $arch_dir/[0-9a-f]*\.bin: Read-only file system" ||
        fail "trim on a read-only cache does not name the entry it could not remove: $got"
    echo "$got" | grep -q "being compiled" && fail "trim blames running processes: $got"
    # warm refuses at once (it compiled every kernel, then failed to store each).
    expect 1 "cannot store kernels in $dir/ro: cannot create a file in $dir/ro/tmp: Read-only file system" \
        ro "$dir/ro" "$tool" warm --arch sm_80 --cache-dir "$dir/ro" "$one"
    echo "$got" | grep -q "kernels:" && fail "warm into a read-only cache compiled: $got"
else
    echo "note: not root or no mount namespace, a read-only cache not tested"
fi

# The JIT at commit: every kernel compiled once, then all from disk in a second run.
run() {
    $mpiexec -np 1 -x LD_PRELOAD="$lib" \
        -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1 -x TYPEJIT_ARCH=sm_90 -x TYPEJIT_STATS=1 \
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
