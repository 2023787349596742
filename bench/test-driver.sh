# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the bench/run-*.sh scripts that run on the CPU-only test driver of a build with the
# tests: `test_driver_env NAME` appends to the array `env` the mpiexec options (-x) that load
# $build's test driver and its NVRTC shim with that build's host-compiled kernels, and returns 0;
# with TEST_DRIVER=none it appends nothing and returns 1 (the machine's own driver, a GPU).
# TEST_DRIVER may also name another folder holding a libcuda.so.1. NAME prefixes its errors.
test_driver_env() {
    local name=$1 driver=${TEST_DRIVER:-$build/tests/fakecuda/13.0} kernels k
    [ "$driver" != none ] || return 1
    [ -e "$driver/libcuda.so.1" ] || { echo "$name: no test driver in $driver" >&2; exit 1; }
    kernels=$build/tests/fakecuda-kernels
    [ -e "$build/CMakeCache.txt" ] &&
        k=$(sed -n 's/^TJ_FAKECUDA_KERNEL_CACHE:PATH=\(..*\)$/\1/p' "$build/CMakeCache.txt") &&
        [ -n "$k" ] && kernels=$k
    env+=(-x "LD_LIBRARY_PATH=$driver:$build/tests/fakecuda/nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
          -x "FAKECUDA_KERNEL_CACHE=$kernels" -x "FAKECUDA_NVRTC_CACHE=$kernels/nvrtc")
}
