#!/usr/bin/env bash
# dynamic_bench_test.sh - tests bench/dynamic (one kernel for a sweep of M
# against one per M) where it can run: on PoCL a sweep of 3 values of M
# compiles 3 static kernels, 1 symbolic one and 1 of the family (none of
# 1, 42, 83 is a multiple of 16) for the RMSNorm and the GEMM, every
# output bitwise equal to the static kernel's; a bad --sweep exits 2.
# Ends with "N passed, N failed, N skipped".
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=${DYNAMIC_BENCH:-build/bench/dynamic}
[ -x "$B" ] || { echo "  FAIL $B not built (make $B)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

out=$("$B" --sweep 3 2>&1); rc=$?
if [ $rc -eq 3 ]; then
  skipped=$((skipped + 1)); echo "  skip the sweep (no OpenCL device)"
else
  for p in rmsnorm gemm; do
    for w in "static +3" "symbolic +1" "family +1"; do
      if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -Eq "^$p.* $w .*(yes|-)\$"; then pass "$p: $w compile(s)"
      else fail "$p $w (exit $rc): $(printf '%s' "$out" | tail -n 7)"; fi
    done
  done
fi
out=$("$B" --sweep 0 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" | grep -q -- '--sweep takes 1..1000' && pass "bad --sweep: exit 2" ||
  fail "bad --sweep (exit $rc): $out"
finish
