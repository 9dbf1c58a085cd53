#!/usr/bin/env bash
# run.sh - runs every test program given on the command line, shows their
# output, and closes with the list of skipped tests with their reasons (the
# "  skip NAME: reason" lines the programs print) and the suite total
# "N passed, N failed, N skipped", after the five programs that took longest.
# Exit status: 0 only if every program exited 0.
set -u
# Every program runs with a fresh kernel cache, never ~/.cache/tilec (an
# explicit TILEC_CACHE_DIR is kept).
if [ -z "${TILEC_CACHE_DIR:-}" ]; then
  TILEC_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tilec-suite-cache.XXXXXX") || exit 1
  export TILEC_CACHE_DIR
  trap 'rm -rf "$TILEC_CACHE_DIR"' EXIT
fi
passed=0 failed=0 skipped=0 status=0 skips="" times=""
for t in "$@"; do
  echo "== $(basename "$t")"
  t0=$(date +%s)
  out=$("$t" 2>&1); rc=$?
  secs=$(( $(date +%s) - t0 ))
  times="$times$secs $(basename "$t")
"
  printf '%s\n' "$out"
  echo "   ($secs s)"
  skip_lines=$(printf '%s\n' "$out" | grep -E '^  skip ' | sed "s|^  skip |  $(basename "$t"): |")
  if [ -n "$skip_lines" ]; then skips="$skips$skip_lines
"; fi
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
  fi
  if [ $rc -ne 0 ]; then
    status=1
    if [ -z "$line" ] || [ "$f" = 0 ]; then
      echo "  FAIL $(basename "$t") exited with status $rc"
      failed=$((failed + 1))
    fi
  fi
done
echo
if [ -n "$skips" ]; then
  echo "skipped, with their reasons:"
  printf '%s' "$skips"
fi
echo "longest:"
printf '%s' "$times" | sort -rn | head -n 5 | sed 's/^\([0-9]*\) \(.*\)/  \2: \1 s/'
echo "suite: $passed passed, $failed failed, $skipped skipped"
exit $status
