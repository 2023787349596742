#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The installed tree: `cmake --install` into a temporary prefix, then programs built against it.
#   test_install.sh BUILD_DIR SOURCE_DIR VERSION cmake|pkg-config
# Both: the files, the licence and the SONAME links are there. cmake: a consumer project finds
# typejit with find_package(typejit) and links typejit::typejit; pkg-config: `pkg-config typejit`
# gives the flags to build the same program by hand, and it runs without LD_LIBRARY_PATH. Each
# consumer prints tj_version().
set -eu
build=$1 src=$2 version=$3 how=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$dir/p" >"$dir/install.log" || { cat "$dir/install.log"; fail "cmake --install"; }
libdir=$(cd "$dir/p" && ls -d lib* | head -1)
major=${version%%.*}
for f in "$libdir/libtypejit.so.$version" bin/typejit include/typejit.h \
         "$libdir/pkgconfig/typejit.pc" "$libdir/cmake/typejit/typejitConfig.cmake" \
         "$libdir/cmake/typejit/typejitConfigVersion.cmake" "$libdir/cmake/typejit/typejitTargets.cmake"; do
    [ -e "$dir/p/$f" ] || fail "not installed: $f"
done
cmp -s "$src/LICENSE" "$dir/p/share/doc/typejit/LICENSE" || fail "licence not installed as share/doc/typejit/LICENSE"
[ "$(readlink "$dir/p/$libdir/libtypejit.so")" = "libtypejit.so.$major" ] || fail "libtypejit.so link"
[ "$(readlink "$dir/p/$libdir/libtypejit.so.$major")" = "libtypejit.so.$version" ] || fail "SONAME link"
"$dir/p/bin/typejit" version | grep -qx "typejit $version" || fail "installed typejit version"

case $how in
cmake)
    cmake -S "$src/tests/install-consumer" -B "$dir/b" -DCMAKE_PREFIX_PATH="$dir/p" \
        >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; fail "find_package(typejit)"; }
    cmake --build "$dir/b" >"$dir/build.log" 2>&1 || { cat "$dir/build.log"; fail "consumer build"; }
    out=$("$dir/b/consumer") ;;
pkg-config)
    export PKG_CONFIG_PATH="$dir/p/$libdir/pkgconfig"
    [ "$(pkg-config --modversion typejit)" = "$version" ] || fail "pkg-config --modversion"
    pkg-config --cflags typejit | grep -q -- "-I$dir/p/include" || fail "pkg-config --cflags: $(pkg-config --cflags typejit)"
    # The flags alone must make a program that runs: the .pc carries the rpath to a libdir the
    # linker does not search by itself (no LD_LIBRARY_PATH here).
    pkg-config --libs typejit | grep -q -- "-Wl,-rpath,$dir/p/$libdir" ||
        fail "pkg-config --libs has no rpath: $(pkg-config --libs typejit)"
    # shellcheck disable=SC2046
    cc -o "$dir/consumer" "$src/tests/install-consumer/main.c" $(pkg-config --cflags --libs typejit) ||
        fail "build with pkg-config flags"
    out=$(env -u LD_LIBRARY_PATH "$dir/consumer" 2>&1) || fail "consumer built with pkg-config flags does not run: $out" ;;
*) fail "unknown mode $how" ;;
esac
[ "$out" = "typejit $version" ] || fail "consumer printed: $out"
echo ok
