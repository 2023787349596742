#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Warnings about conditions every rank of a job meets alike are said once per job, not once per
# rank:
#   test_job_warnings.sh "MPIEXEC_SH LAUNCHER" LIBTYPEJIT HALO3D [FAKECUDA_LIBRARY_PATH]
# Host runs of halo3d on 3 ranks: a cache folder writable by others (own and shared), a missing
# TYPEJIT_CACHE_PATH folder, a cache level that cannot be made (what a full disk does to a save),
# a damaged entry (at TYPEJIT_LOG=info, one line for the file), a TYPEJIT_ARCH this NVRTC dropped
# (and what is used instead, with and without a device),
# TYPEJIT_CUDA_AWARE=yes on an MPI that says it is not. With the test driver's path, device runs:
# TYPEJIT_METHOD=device refused, a TYPEJIT_SYSTEM_TABLE that does not exist, and one that does not
# validate, a TYPEJIT_ARCH this NVRTC dropped.
set -eu
mpiexec=$1 lib=$2 halo=$3 fake=${4:-}
. "$(dirname "$0")/halo_run.sh"

# run NP [-x VAR=VALUE...] [-- HALO3D OPTIONS]: halo3d under typejit (tests/halo_run.sh); its
# stderr in $out.
run() {
    np=$1
    shift
    xs=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do xs="$xs $1"; shift; done
    [ $# -gt 0 ] && shift
    halo_run "$np" "-x TYPEJIT_CACHE_DIR=$dir/own$xs" "$@"
}

# once REGEX WHAT: exactly one line of $out matches.
once() {
    n=$(echo "$out" | grep -Ec -- "$1" || true)
    [ "$n" -eq 1 ] || fail "$2: $n lines match /$1/, not 1: $out"
}

# Folders writable by others are refused, the user's own cache and a shared one alike.
mkdir -p "$dir/open" "$dir/shared"
chmod 777 "$dir/open" "$dir/shared"
run 3 -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1 -x TYPEJIT_CACHE_DIR="$dir/open" \
    -x TYPEJIT_CACHE_PATH="$dir/shared:$dir/missing"
once "warning: cache: not using $dir/open: writable by group and others" "a cache writable by others"
once "warning: cache: not using $dir/shared: writable by group and others" "a shared cache writable by others"
once "warning: cache: TYPEJIT_CACHE_PATH names $dir/missing, which does not exist" "a missing shared cache"

# A level of the cache that cannot be made: every save fails, as on a full disk.
run 1 -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1
toolchain=$(cd "$dir/own" && ls -d nvrtc-*)
rm -rf "${dir:?}/own/$toolchain/sm_90"
: >"$dir/own/$toolchain/sm_90"
run 3 -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1 -x TYPEJIT_ARCH=sm_90
once "warning: cache: .*sm_90: not a directory" "a cache level that cannot be made"

# A damaged entry: one line for the file, at info level, however many ranks and lookups meet it.
rm -rf "$dir/own"
run 1 -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1
entry=$(find "$dir/own" -name '*.bin' | head -1)
printf 'XXXX' | dd of="$entry" bs=1 seek=40 conv=notrunc 2>/dev/null
run 3 -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1 -x TYPEJIT_LOG=info
once "info: cache: ignoring $entry: " "a damaged entry"

# A TYPEJIT_ARCH this NVRTC dropped: checked once, said once with the reason the typejit command
# gives, and the default target used (it was 14 failed compiles and their warnings per rank).
rm -rf "$dir/own"
run 3 -x TYPEJIT_JIT=always -x TYPEJIT_JIT_SYNC=1 -x TYPEJIT_ARCH=sm_70 -x TYPEJIT_STATS=1
once "warning: ignoring TYPEJIT_ARCH=sm_70: sm_70 is older than every arch NVRTC [0-9.]+ compiles for \(this NVRTC dropped it\).*; using sm_90, the target without a cuda device$" \
    "an unsupported TYPEJIT_ARCH, no device"
echo "$out" | grep -q "nvrtc" && fail "an unsupported TYPEJIT_ARCH still reaches NVRTC: $out"
[ "$(echo "$out" | grep -c 'stats .*jit_failures=0 ')" -eq 3 ] || fail "compiles failed: $out"

# (An MPI with no query function, such as MPICH's standard-ABI library, says nothing: then
# nothing contradicts the setting, and there is no warning.)
run 3 -x TYPEJIT_CUDA_AWARE=yes -x TYPEJIT_LOG=debug
if echo "$out" | grep -q "system mpi is not cuda-aware (no query function)"; then
    ! echo "$out" | grep -q "warning: TYPEJIT_CUDA_AWARE=yes" ||
        fail "TYPEJIT_CUDA_AWARE=yes on an MPI that cannot say: a warning: $out"
else
    once "warning: TYPEJIT_CUDA_AWARE=yes, but the system mpi says it is not cuda-aware" \
        "TYPEJIT_CUDA_AWARE=yes on an MPI that is not"
fi

if [ -n "$fake" ]; then
    dev="-x LD_LIBRARY_PATH=$fake -- --device --collective isend"
    # shellcheck disable=SC2086
    run 2 -x TYPEJIT_METHOD=device -x TYPEJIT_SYSTEM_TABLE="$dir/none.txt" $dev
    once "warning: TYPEJIT_METHOD=device needs a cuda-aware system mpi" "TYPEJIT_METHOD=device refused"
    once "warning: TYPEJIT_SYSTEM_TABLE names $dir/none.txt, which does not exist" "a missing system table"
    printf 'typejit-system-table 2\n' >"$dir/bad.txt"
    # shellcheck disable=SC2086
    run 2 -x TYPEJIT_SYSTEM_TABLE="$dir/bad.txt" $dev
    once "warning: ignoring the system table $dir/bad.txt" "a system table that does not validate"
    # With a device, the device's own arch is used instead of a TYPEJIT_ARCH this NVRTC dropped.
    # shellcheck disable=SC2086
    run 2 -x TYPEJIT_ARCH=sm_70 -x TYPEJIT_JIT_SYNC=1 $dev
    once "warning: ignoring TYPEJIT_ARCH=sm_70: .*; using each device's own arch$" \
        "an unsupported TYPEJIT_ARCH, with a device"
fi
echo ok
