#!/usr/bin/env bash
# install_test.sh - tests `make install` and `make uninstall`:
#
#  1. a staged install (DESTDIR=$tmp/stage, PREFIX=$tmp/prefix): the files,
#     the soname symlinks, tilec.pc, the installed `tilec`, and nothing
#     written outside DESTDIR;
#  2. examples/out_of_tree, copied to a directory of its own and built with
#     `pkg-config --cflags --libs tilec`, linked dynamically and statically,
#     run, and checked for its result;
#  3. the man page renders with `man -l` (or groff) without warnings;
#  4. `make uninstall` leaves no file behind;
#  5. a plain install (PREFIX=$tmp/direct, no DESTDIR) that the example
#     builds against with only PKG_CONFIG_PATH set.
#
# How pkg-config finds a staged install: tilec.pc holds the final paths
# (prefix=$PREFIX), since that is where the files will live once the
# staged tree is copied to /.  PKG_CONFIG_SYSROOT_DIR=$DESTDIR tells
# pkg-config that this tree currently sits under $DESTDIR, and it prefixes
# the -I and -L paths with it; that is exactly what DESTDIR means.  The
# test also checks `pkg-config --define-prefix`, which instead takes the
# prefix from where the .pc file lies (libdir and includedir are written
# as ${prefix}/...), and gives the same paths.
#
# The build directory is $BUILD, else the directory of $TILEC, else build;
# $SAN (set by `make asan`) is added to the example's compile and link
# flags.  Ends with "N passed, N failed, N skipped"; exits non-zero if any
# check failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-$(dirname "${TILEC:-build/tilec}")}
SAN=${SAN:-}
MAKE=${MAKE:-make}
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the sub-makes are not part of the caller's make (no jobserver to share)
unset MAKEFLAGS MFLAGS MAKELEVEL
export TILEC_CACHE_DIR="$tmp/cache"

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/       /'; done; }
skip() { skipped=$((skipped + 1)); echo "  skip $1 ($2)"; }
have() { command -v "$1" >/dev/null 2>&1; }
finish() {
  echo
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit
}

# check NAME COMMAND...: runs the command; ok when it exits 0, else shows
# its output
check() {
  local name=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then ok "$name"; else
    bad "$name" "command: $*" "$(head -c 3000 "$tmp/out")"
  fi
}
# contains NAME TEXT REGEX: TEXT has a line matching REGEX
contains() {
  if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else
    bad "$1" "no line matches /$3/ in:" "$(printf '%s\n' "$2" | head -n 30)"
  fi
}
# same NAME GOT WANT
same() {
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got:  '$2'" "want: '$3'"; fi
}

for tool in "$MAKE" cc; do
  if ! have "$tool"; then
    echo "  FAIL $tool is not installed (run scripts/deps.sh)"
    failed=$((failed + 1))
    finish
  fi
done

# The libraries libtilec is linked with (the Makefile's LDLIBS_ALL), which
# tilec.pc must list in Libs.private for static links
libs=$(printf 'install-test-print-libs:\n\t@echo $(LDLIBS_ALL)\n' |
       "$MAKE" --no-print-directory -s -f Makefile -f - BUILD="$BUILD" install-test-print-libs 2>/dev/null)
[ -n "$libs" ] || libs="-lOpenCL -ldl -lm"

version=$(sed -n 's/^#define TILEC_VERSION "\(.*\)"/\1/p' include/tilec/tilec.h)
major=${version%%.*}
echo "-- tilec $version: soname libtilec.so.$major"

stage=$tmp/stage
prefix=$tmp/prefix
P=$stage$prefix # where the staged files are

echo "-- make install DESTDIR=\$tmp/stage PREFIX=\$tmp/prefix"
if ! "$MAKE" -s BUILD="$BUILD" DESTDIR="$stage" PREFIX="$prefix" install >"$tmp/install.log" 2>&1; then
  bad "make install (staged)" "$(tail -n 40 "$tmp/install.log")"
  finish
fi
ok "make install (staged)"

if [ -e "$prefix" ]; then bad "nothing is written to PREFIX itself when DESTDIR is set" "$prefix exists"; else
  ok "nothing is written to PREFIX itself when DESTDIR is set"
fi
outside=$(cd "$stage" && find . \( -type f -o -type l \) ! -path ".$prefix/*")
if [ -z "$outside" ]; then ok "every file is under DESTDIR/PREFIX"; else
  bad "every file is under DESTDIR/PREFIX" "$outside"
fi

for f in bin/tilec lib/libtilec.a "lib/libtilec.so.$version" include/tilec/tilec.h \
         share/man/man1/tilec.1 lib/pkgconfig/tilec.pc; do
  if [ -f "$P/$f" ] && [ ! -L "$P/$f" ]; then ok "installs $f"; else bad "installs $f" "missing or not a file"; fi
done
if [ -x "$P/bin/tilec" ]; then ok "bin/tilec is executable"; else bad "bin/tilec is executable"; fi
for h in include/tilec/*.h; do
  if cmp -s "$h" "$P/$h"; then ok "installed $h is the tree's"; else bad "installed $h is the tree's"; fi
done
same "lib/libtilec.so.$major -> libtilec.so.$version" "$(readlink "$P/lib/libtilec.so.$major")" "libtilec.so.$version"
same "lib/libtilec.so -> libtilec.so.$major" "$(readlink "$P/lib/libtilec.so")" "libtilec.so.$major"
if have readelf; then
  soname=$(readelf -d "$P/lib/libtilec.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
  same "the shared library's soname" "$soname" "libtilec.so.$major"
else
  skip "the shared library's soname" "readelf not found"
fi

run_out=$("$P/bin/tilec" version 2>&1)
contains "installed tilec runs: tilec version" "$run_out" "^tilec $version\$"

echo "-- tilec.pc"
pc=$(cat "$P/lib/pkgconfig/tilec.pc")
contains "tilec.pc: prefix is the final PREFIX (no DESTDIR)" "$pc" "^prefix=$prefix\$"
contains "tilec.pc: libdir under \${prefix}" "$pc" '^libdir=\$\{prefix\}/lib$'
contains "tilec.pc: Version $version" "$pc" "^Version: $version\$"
contains "tilec.pc: Libs" "$pc" '^Libs: -L\$\{libdir\} -ltilec$'
same "tilec.pc: Libs.private is what the Makefile links with" \
     "$(sed -n 's/^Libs.private: //p' "$P/lib/pkgconfig/tilec.pc")" "$libs"
contains "tilec.pc: Cflags" "$pc" '^Cflags: -I\$\{includedir\}$'

have_pc=1
if ! have pkg-config; then
  have_pc=0
  for c in "pkg-config queries" "out-of-tree example (dynamic)" "out-of-tree example (static)" \
           "plain install with PKG_CONFIG_PATH"; do
    skip "$c" "pkg-config not installed; scripts/deps.sh installs it"
  done
fi

if [ $have_pc = 1 ]; then
  export PKG_CONFIG_PATH="$P/lib/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$stage"
  check "pkg-config --validate tilec" pkg-config --validate tilec
  same "pkg-config --modversion tilec" "$(pkg-config --modversion tilec 2>&1)" "$version"
  same "pkg-config --cflags tilec (sysroot)" "$(pkg-config --cflags tilec 2>&1 | xargs)" "-I$P/include"
  same "pkg-config --libs tilec (sysroot)" "$(pkg-config --libs tilec 2>&1 | xargs)" "-L$P/lib -ltilec"
  same "pkg-config --static --libs tilec (sysroot)" "$(pkg-config --static --libs tilec 2>&1 | xargs)" \
       "-L$P/lib -ltilec $libs"
  same "pkg-config --define-prefix gives the same flags" \
       "$(PKG_CONFIG_SYSROOT_DIR='' pkg-config --define-prefix --cflags --libs tilec 2>&1 | xargs)" \
       "-I$P/include -L$P/lib -ltilec"

  echo "-- examples/out_of_tree, built in a directory of its own"
  oot=$tmp/oot
  mkdir -p "$oot" && cp examples/out_of_tree/* "$oot"/
  flags=(CFLAGS="-O2 -Wall -Wextra -Werror $SAN" LDFLAGS="$SAN")
  if "$MAKE" -C "$oot" "${flags[@]}" fma_relu fma_relu_static >"$tmp/oot.log" 2>&1; then
    ok "the example builds with pkg-config (dynamic and static)"
    contains "the example's compile line uses the staged include dir" "$(cat "$tmp/oot.log")" \
             "-I$P/include"
    if have readelf; then
      contains "dynamic: NEEDED libtilec.so.$major" "$(readelf -d "$oot/fma_relu")" \
               "NEEDED.*\\[libtilec\\.so\\.$major\\]"
      if readelf -d "$oot/fma_relu_static" | grep -q 'NEEDED.*libtilec'; then
        bad "static: no NEEDED libtilec" "$(readelf -d "$oot/fma_relu_static" | grep NEEDED)"
      else ok "static: no NEEDED libtilec"; fi
    else
      skip "dynamic/static NEEDED entries" "readelf not found"
    fi
    if have ldd; then
      contains "dynamic: libtilec.so.$major resolves to the staged copy" \
               "$(LD_LIBRARY_PATH="$P/lib" ldd "$oot/fma_relu" 2>&1)" \
               "libtilec\\.so\\.$major => $P/lib/libtilec\\.so\\.$major"
    fi
    for exe in fma_relu fma_relu_static; do
      out=$(cd "$oot" && LD_LIBRARY_PATH="$P/lib" "./$exe" 2>&1); rc=$?
      if [ $rc -eq 0 ]; then ok "$exe runs (exit 0)"; else bad "$exe runs (exit 0)" "exit $rc" "$out"; fi
      contains "$exe verifies the kernel" "$out" '^fma_relu: all 7500 elements match the reference$'
      contains "$exe prints its result" "$out" '^fma_relu: out\[1\] = 1\.375, sum of out = [0-9.]+$'
    done
  else
    bad "the example builds with pkg-config (dynamic and static)" "$(tail -n 40 "$tmp/oot.log")"
  fi
  unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
fi

echo "-- man page"
man_page=$P/share/man/man1/tilec.1
same "the man page's version is $version" "$(sed -n 's/^\.TH .*"tilec \([^"]*\)".*/\1/p' "$man_page")" "$version"
# everything `tilec --help` lists (commands, options, environment
# variables) must be in the man page
help_text=$("$P/bin/tilec" --help 2>&1)
page_text=$(sed 's/\\-/-/g' "$man_page")
missing=""
for word in $(printf '%s\n' "$help_text" | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 }
                                                 on && /^  [a-z]/ { print $1 }') \
            $(printf '%s\n' "$help_text" | grep -oE -- '--[a-zA-Z][a-zA-Z_-]*' | sort -u) \
            $(printf '%s\n' "$help_text" | awk '/^environment:/ { on = 1; next } /^$/ { on = 0 }
                                                 on && /^  [A-Z]/ { print $1 }'); do
  printf '%s\n' "$page_text" | grep -qF -- "$word" || missing="$missing $word"
done
if [ -z "$missing" ]; then ok "the man page covers every command, option and variable of tilec --help"; else
  bad "the man page covers every command, option and variable of tilec --help" \
      "docs/tilec.1 does not mention:$missing"
fi
if have man; then
  MANPAGER=cat PAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$man_page" >"$tmp/man.out" 2>"$tmp/man.err"
  rc=$?
  if [ $rc -eq 0 ] && [ ! -s "$tmp/man.err" ]; then ok "man -l renders tilec.1 without warnings"; else
    bad "man -l renders tilec.1 without warnings" "exit $rc" "$(head -n 20 "$tmp/man.err")"
  fi
  contains "man -l output has the title" "$(cat "$tmp/man.out")" '^TILEC\(1\)'
  contains "man -l output has EXIT STATUS" "$(cat "$tmp/man.out")" '^EXIT STATUS'
elif have groff; then
  echo "  (man not found: checking with groff)"
  groff -man -Tutf8 -ww "$man_page" >"$tmp/man.out" 2>"$tmp/man.err"
  rc=$?
  if [ $rc -eq 0 ] && [ ! -s "$tmp/man.err" ]; then ok "groff -man -ww renders tilec.1 without warnings"; else
    bad "groff -man -ww renders tilec.1 without warnings" "exit $rc" "$(head -n 20 "$tmp/man.err")"
  fi
else
  skip "man page renders without warnings" "neither man nor groff is installed (apt-get install man-db)"
fi

echo "-- make uninstall"
if "$MAKE" -s BUILD="$BUILD" DESTDIR="$stage" PREFIX="$prefix" uninstall >"$tmp/uninstall.log" 2>&1; then
  ok "make uninstall (staged)"
else
  bad "make uninstall (staged)" "$(tail -n 20 "$tmp/uninstall.log")"
fi
left=$(find "$stage" \( -type f -o -type l \) 2>/dev/null)
if [ -z "$left" ]; then ok "uninstall leaves no file"; else bad "uninstall leaves no file" "$left"; fi
if [ -e "$P/include/tilec" ]; then bad "uninstall removes include/tilec" "it is still there"; else
  ok "uninstall removes include/tilec"
fi

echo "-- plain install: PREFIX=\$tmp/direct, no DESTDIR"
direct=$tmp/direct
if "$MAKE" -s BUILD="$BUILD" PREFIX="$direct" install >"$tmp/direct.log" 2>&1; then
  ok "make install PREFIX=\$tmp/direct"
  if [ $have_pc = 1 ]; then
    oot=$tmp/oot2
    mkdir -p "$oot" && cp examples/out_of_tree/* "$oot"/
    if PKG_CONFIG_PATH="$direct/lib/pkgconfig" "$MAKE" -C "$oot" CFLAGS="-O2 -Wall -Wextra -Werror $SAN" \
         LDFLAGS="$SAN" fma_relu >"$tmp/oot2.log" 2>&1; then
      out=$(cd "$oot" && LD_LIBRARY_PATH="$direct/lib" ./fma_relu 2>&1); rc=$?
      if [ $rc -eq 0 ]; then ok "plain install with PKG_CONFIG_PATH: the example runs"; else
        bad "plain install with PKG_CONFIG_PATH: the example runs" "exit $rc" "$out"
      fi
    else
      bad "plain install with PKG_CONFIG_PATH: the example builds" "$(tail -n 30 "$tmp/oot2.log")"
    fi
  fi
  "$MAKE" -s BUILD="$BUILD" PREFIX="$direct" uninstall >/dev/null 2>&1
  left=$(find "$direct" \( -type f -o -type l \) 2>/dev/null)
  if [ -z "$left" ]; then ok "make uninstall PREFIX=\$tmp/direct leaves no file"; else
    bad "make uninstall PREFIX=\$tmp/direct leaves no file" "$left"
  fi
else
  bad "make install PREFIX=\$tmp/direct" "$(tail -n 40 "$tmp/direct.log")"
fi

finish
