# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the bench/run-*.sh scripts: `release_build NAME TARGET...` configures $build in
# Release (with $RELEASE_CMAKE_ARGS, if set) without the tests and without -Werror (the benchmarks need neither, and a part under
# construction elsewhere in the tree must not stop them), builds only TARGETs, keeps the logs as
# $build/NAME-{configure,build}.log, exits on failure, and sets $build to its absolute path.
# Unless the script has set them: the results go to $out ($OUT, default bench/results, made
# here), the build to $build ($BUILD, default build-bench).
out=${out:-${OUT:-bench/results}}
build=${build:-${BUILD:-build-bench}}
mkdir -p "$out"
release_build() {
    local name=$1
    shift
    mkdir -p "$build"
    # shellcheck disable=SC2086 # RELEASE_CMAKE_ARGS: more options, e.g. the MPI's compiler
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTJ_BUILD_TESTS=OFF -DTJ_WERROR=OFF \
        ${RELEASE_CMAKE_ARGS:-} \
        >"$build/$name-configure.log" 2>&1 || { tail -20 "$build/$name-configure.log"; exit 1; }
    cmake --build "$build" -j "$(nproc)" --target "$@" >"$build/$name-build.log" 2>&1 ||
        { grep -m5 -i error "$build/$name-build.log"; exit 1; }
    build=$(cd "$build" && pwd)
}
