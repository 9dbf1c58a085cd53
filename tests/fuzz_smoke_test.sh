#!/usr/bin/env bash
# fuzz_smoke_test.sh - builds the libFuzzer harnesses (`make fuzz`: clang
# with ASan and UBSan, docs/fuzzing.md) and replays each harness's seed
# inputs in fuzz/corpus/NAME once, without fuzzing (-runs=0), so the
# harnesses keep building as the library changes and the findings kept as
# seeds (regress_*) stay fixed.  New inputs go to a scratch folder, never
# into fuzz/corpus.  Leak checks are off here (make asan checks leaks in
# the unit tests).  Without clang or its libFuzzer runtime it reports one
# skip with the reason.  Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilec-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cc=${FUZZ_CC:-clang}
skip() {
  echo "  skip $1"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
}
command -v "$cc" >/dev/null 2>&1 || skip "$cc not found (make fuzz needs clang with libFuzzer)"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
  >"$tmp/probe.c"
"$cc" -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1 ||
  skip "$cc cannot link -fsanitize=fuzzer (no libFuzzer runtime, e.g. libclang-rt-dev)"

p=0 f=0
# a make of its own: not the variables of a `make asan` this runs under
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s fuzz FUZZ_CC="$cc" >"$tmp/build.log" 2>&1; then
  echo "  FAIL make fuzz:"
  tail -n 20 "$tmp/build.log" | sed 's/^/    /'
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
for src in fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  seeds=fuzz/corpus/$name
  n=$(find "$seeds" -type f 2>/dev/null | wc -l)
  if [ "$n" -eq 0 ]; then
    echo "  FAIL $name: no seed inputs in $seeds"
    f=$((f + 1))
    continue
  fi
  mkdir -p "$tmp/$name"
  if ASAN_OPTIONS=detect_leaks=0 timeout -k 5 120 "build/fuzz/$name" "$tmp/$name" "$seeds" -runs=0 \
       -artifact_prefix="$tmp/" >"$tmp/$name.log" 2>&1; then
    echo "  ok   $name: $n seed inputs replayed"
    p=$((p + 1))
  else
    echo "  FAIL $name: replaying $seeds failed:"
    grep -E 'ERROR|runtime error|SUMMARY|fuzz invariant' "$tmp/$name.log" | head -n 8 | sed 's/^/    /'
    f=$((f + 1))
  fi
done
echo "$p passed, $f failed, 0 skipped"
[ "$f" -eq 0 ]
