#!/usr/bin/env bash
# tutorial_test.sh - keeps the documentation honest:
#
#  - every ```c block of docs/tutorial.md is a whole program: it is
#    compiled against the build tree ($BUILD/libtilec.a, -Iinclude, the
#    libraries the Makefile links with), run (in a scratch directory of
#    its own), and must exit 0; each `// expect: TEXT` comment in it names
#    a text that its output must contain (a fixed string, compared as is);
#  - every ```sh block with a line that starts with `tilec ` is a shell
#    session: it is run by bash -e in a scratch directory, `tilec` being
#    $TILEC (else $BUILD/tilec), and must exit 0; its `# expect: TEXT`
#    comments are checked against its output (stdout and stderr) the same
#    way;
#  - the tutorial's cc line for the build tree names the libraries the
#    Makefile links libtilec with;
#  - docs/api.md is what scripts/gen_api_docs.py makes from
#    include/tilec/tilec.h today (skipped without python3).
#
# The build directory is $BUILD, else the directory of $TILEC, else build;
# $SAN (set by `make asan`) is added to the compile and link flags.  Ends
# with "N passed, N failed, N skipped"; exits non-zero if any check failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-$(dirname "${TILEC:-build/tilec}")}
SAN=${SAN:-}
CC=${CC:-cc}
TUTORIAL=docs/tutorial.md
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILEC_CACHE_DIR="$tmp/cache"
# a program or session that uses the default perf DB never touches ~/.local
export TILEC_PERFDB="$tmp/perfdb.sqlite"

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/       /'; done; }
skip() { skipped=$((skipped + 1)); echo "  skip $1 ($2)"; }
finish() {
  echo
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit
}

if [ ! -f "$BUILD/libtilec.a" ]; then
  bad "$BUILD/libtilec.a exists (build it with make)"
  finish
fi

# The libraries libtilec needs, as the Makefile has them (LDLIBS_ALL),
# read by running make with one extra rule; the old list if that fails.
libs=$(printf 'tutorial-test-print-libs:\n\t@echo $(LDLIBS_ALL)\n' |
       env -u MAKEFLAGS -u MAKELEVEL "${MAKE:-make}" --no-print-directory -s -f Makefile -f - \
         BUILD="$BUILD" tutorial-test-print-libs 2>/dev/null)
if [ -z "$libs" ]; then
  libs="-lOpenCL -ldl -lm"
  echo "  (could not read LDLIBS_ALL from the Makefile; linking with $libs)"
fi

echo "-- the build line in $TUTORIAL"
line=$(grep -E '^cc .* build/libtilec\.a ' "$TUTORIAL" | head -n 1)
if [ -z "$line" ]; then
  bad "$TUTORIAL shows how to link against build/libtilec.a" "no line starting 'cc ... build/libtilec.a'"
else
  doc_libs=$(printf '%s\n' "$line" | sed -e 's/.*build\/libtilec\.a //' -e 's/ -o .*//')
  if [ "$doc_libs" = "$libs" ]; then ok "the tutorial links with the Makefile's libraries ($libs)"; else
    bad "the tutorial links with the Makefile's libraries" "tutorial: $doc_libs" "Makefile: $libs"
  fi
fi

echo "-- the C programs in $TUTORIAL"
# Split the ```c blocks into $tmp/prog_N.c; $tmp/prog_N.where says where
# each starts (line number and the section heading above it).
awk -v dir="$tmp" '
  /^## / { section = substr($0, 4) }
  /^```c[ \t]*$/ { n++; inside = 1; file = dir "/prog_" n ".c";
                   printf "line %d (%s)\n", NR + 1, section > (dir "/prog_" n ".where");
                   printf "" > file; next }
  /^```/ && inside { inside = 0; close(file); next }
  inside { print > file }
  END { print n + 0 > (dir "/count") }
' "$TUTORIAL"
count=$(cat "$tmp/count")
if [ "$count" -ge 6 ]; then ok "$TUTORIAL has $count C programs"; else
  bad "$TUTORIAL has at least 6 C programs" "found $count"
fi

runner=()
command -v timeout >/dev/null 2>&1 && runner=(timeout 300)
for i in $(seq 1 "$count"); do
  src=$tmp/prog_$i.c
  where=$(cat "$tmp/prog_$i.where")
  name="program $i at $where"
  # shellcheck disable=SC2086
  if ! "$CC" -std=c11 -Wall -Wextra -Werror $SAN -Iinclude -o "$tmp/prog_$i" "$src" \
       "$BUILD/libtilec.a" $libs >"$tmp/cc_$i.log" 2>&1; then
    bad "$name compiles" "$(head -n 30 "$tmp/cc_$i.log")"
    continue
  fi
  ok "$name compiles"
  mkdir -p "$tmp/run_$i"
  (cd "$tmp/run_$i" && "${runner[@]}" "$tmp/prog_$i") >"$tmp/out_$i" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then ok "$name exits 0"; else
    bad "$name exits 0" "exit status $rc; output:" "$(head -n 40 "$tmp/out_$i")"
  fi
  nexp=0
  while IFS= read -r want; do
    nexp=$((nexp + 1))
    if grep -Fq -- "$want" "$tmp/out_$i"; then ok "$name prints: $want"; else
      bad "$name prints: $want" "output:" "$(head -n 60 "$tmp/out_$i")"
    fi
  done < <(sed -n 's|.*// expect: \(.*\)$|\1|p' "$src" | sed 's/[[:space:]]*$//')
  [ $nexp -eq 0 ] && echo "       ($name has no // expect: lines)"
done

echo "-- the shell sessions in $TUTORIAL"
awk -v dir="$tmp" '
  /^## / { section = substr($0, 4) }
  /^```sh[ \t]*$/ { n++; inside = 1; file = dir "/sh_" n ".sh";
                    printf "line %d (%s)\n", NR + 1, section > (dir "/sh_" n ".where");
                    printf "" > file; next }
  /^```/ && inside { inside = 0; close(file); next }
  inside { print > file }
  END { print n + 0 > (dir "/sh_count") }
' "$TUTORIAL"
tilec_bin=${TILEC:-$BUILD/tilec}
case $tilec_bin in /*) ;; *) tilec_bin=$root/$tilec_bin ;; esac
sessions=0
for i in $(seq 1 "$(cat "$tmp/sh_count")"); do
  src=$tmp/sh_$i.sh
  grep -q '^tilec ' "$src" || continue
  sessions=$((sessions + 1))
  name="shell session at $(cat "$tmp/sh_$i.where")"
  if [ ! -x "$tilec_bin" ]; then skip "$name" "$tilec_bin is not built"; continue; fi
  mkdir -p "$tmp/sh_run_$i"
  # shellcheck disable=SC2016
  (cd "$tmp/sh_run_$i" && TILEC_BIN=$tilec_bin "${runner[@]}" bash -e -c \
     'tilec() { "$TILEC_BIN" "$@"; }; . "$1"' tutorial-session "$src") >"$tmp/sh_out_$i" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then ok "$name exits 0"; else
    bad "$name exits 0" "exit status $rc; output:" "$(head -n 40 "$tmp/sh_out_$i")"
  fi
  while IFS= read -r want; do
    if grep -Fq -- "$want" "$tmp/sh_out_$i"; then ok "$name prints: $want"; else
      bad "$name prints: $want" "output:" "$(head -n 60 "$tmp/sh_out_$i")"
    fi
  done < <(sed -n 's|^# expect: \(.*\)$|\1|p' "$src" | sed 's/[[:space:]]*$//')
done
if [ $sessions -ge 1 ]; then ok "$TUTORIAL has $sessions shell session(s) to run"; else
  bad "$TUTORIAL has a shell session (a \`\`\`sh block running tilec)" "found none"
fi

echo "-- docs/api.md"
if command -v python3 >/dev/null 2>&1; then
  if python3 scripts/gen_api_docs.py --check docs/api.md >"$tmp/api.diff" 2>&1; then
    ok "docs/api.md matches include/tilec/tilec.h"
  else
    bad "docs/api.md matches include/tilec/tilec.h (run: python3 scripts/gen_api_docs.py -o docs/api.md)" \
        "$(head -n 40 "$tmp/api.diff")"
  fi
else
  skip "docs/api.md matches include/tilec/tilec.h" "python3 not installed; scripts/deps.sh installs it"
fi

finish
