#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# TYPEJIT_LOG=debug tells a user what happened to each of their types and calls:
#   test_debug_log.sh "MPIEXEC_SH LAUNCHER" LIBTYPEJIT HALO3D FAKECUDA_13_PATH FAKECUDA_12_PATH
# halo3d --device names its types (MPI_Type_set_name). On the test driver: each commit line names
# the type (handle and name) and the layout its kernels are made for, which the kernel lines
# repeat; each device send and receive says which method moves it; on the 12.4 driver (which
# cannot load NVRTC 13's kernels) each staged call says why.
set -eu
mpiexec=$1 lib=$2 halo=$3 fake13=$4 fake12=$5
. "$(dirname "$0")/halo_run.sh"

run() {
    fake=$1
    shift
    halo_run 2 "-x LD_LIBRARY_PATH=$fake -x TYPEJIT_LOG=debug -x TYPEJIT_CACHE_DIR=$dir/cache $*" \
        --device --collective isend
}

run "$fake13" -x TYPEJIT_JIT_SYNC=1
commit=$(echo "$out" | grep -E '^typejit\[0\]: debug: commit of type -?[0-9]+ "halo send \(-1,-1,-1\)": strided .* kernels=jit; its kernels: W=[0-9]+ start=0 ' | head -1)
[ -n "$commit" ] || fail "no commit line naming the type and its kernels' layout: $out"
layout=$(echo "$commit" | sed -e 's/.*; its kernels: W=[0-9]* //' -e 's/ ([a-z]*\.c:[0-9]*)$//')
echo "$out" | grep -qF "typejit[0]: debug: kernel pack sm_90 W=" || fail "no kernel line: $out"
echo "$out" | grep "typejit\[0\]: debug: kernel pack sm_90 " | grep -qF " $layout: " ||
    fail "no kernel line for the layout '$layout' of $commit: $out"
echo "$out" | grep -Eq '^typejit\[0\]: debug: device send of 1 objects of type -?[0-9]+ "halo send \([-+][01],[-+][01],[-+][01]\)" \([0-9]+ packed bytes\) to rank 1: method (oneshot|staged)' ||
    fail "no line for the method of a device send: $out"
echo "$out" | grep -Eq '^typejit\[0\]: debug: device receive of 1 objects of type -?[0-9]+ "[^"]*halo receive [^"]*" \([0-9]+ packed bytes\) from rank 1: method (oneshot|staged)' ||
    fail "no line for the method of a device receive: $out"

run "$fake12"
echo "$out" | grep -Eq '^typejit\[[01]\]: debug: device pack of 1 objects of type -?[0-9]+ "halo send \([-+][01],[-+][01],[-+][01]\)": staged through host memory: the CUDA driver cannot load what this NVRTC compiles' ||
    fail "no line saying why a device call was staged: $out"
echo ok
