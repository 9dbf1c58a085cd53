#!/usr/bin/env bash
# python_test.sh - runs the Python binding's tests (python/tests, pytest)
# against the shared library ($TILEC_LIB, default build/libtilec.so), and
# the tests of `tilec driver`'s tensor files against the command ($TILEC,
# default build/tilec).  Ends
# with "N passed, N failed, N skipped" taken from pytest's summary; exits
# non-zero if a test failed.  Without python3 (or without numpy and pytest,
# which scripts/deps.sh installs) it reports one skip and exits 0.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
PY=${PYTHON:-python3}

skip_all() {
  echo "  skip python binding tests ($1)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
}
fail_all() {
  echo "  FAIL $1"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
}

command -v "$PY" >/dev/null 2>&1 || skip_all "$PY not found"
if ! why=$("$PY" -c "import numpy, pytest" 2>&1); then
  skip_all "numpy or pytest missing: $(printf '%s\n' "$why" | tail -n 1); run scripts/deps.sh"
fi

lib=${TILEC_LIB:-build/libtilec.so}
[ -f "$lib" ] || fail_all "$lib not found (build it with make)"
case $lib in /*) ;; *) lib=$PWD/$lib ;; esac
export TILEC_LIB=$lib
bin=${TILEC:-build/tilec}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
export TILEC=$bin

# A library built with AddressSanitizer (make asan) needs the ASan runtime
# loaded first; Python itself is not instrumented, so leak checks are off.
if command -v ldd >/dev/null 2>&1 && ldd "$lib" 2>/dev/null | grep -q 'libasan'; then
  asan=$(ldd "$lib" | awk '/libasan/ { print $3; exit }')
  [ -f "$asan" ] || fail_all "$lib needs libasan, but it was not found"
  export LD_PRELOAD="$asan${LD_PRELOAD:+ $LD_PRELOAD}"
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi

out=$(PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -rs -p no:cacheprovider python/tests 2>&1)
rc=$?
printf '%s\n' "$out"
# pytest's skip reasons ("SKIPPED [n] file:line: reason") as this suite's
# "  skip NAME (reason)" lines, so that run.sh lists them
printf '%s\n' "$out" | sed -nE 's/^SKIPPED \[([0-9]+)\] ([^:]+):[0-9]+: (.*)$/  skip \2 x\1 (\3)/p'

summary=$(printf '%s\n' "$out" | grep -E '(passed|failed|skipped|error|no tests ran).* in [0-9.]+s' | tail -n 1)
count() { printf '%s\n' "$summary" | grep -oE "[0-9]+ $1" | head -n 1 | grep -oE '^[0-9]+' || echo 0; }
passed=$(( $(count passed) + $(count xpassed) ))
failed=$(( $(count failed) + $(count 'errors?') ))
skipped=$(( $(count skipped) + $(count xfailed) ))
if [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
  echo "  FAIL pytest exited with status $rc"
  failed=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $rc -eq 0 ] && [ $failed -eq 0 ]
