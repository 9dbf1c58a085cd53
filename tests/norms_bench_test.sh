#!/usr/bin/env bash
# norms_bench_test.sh - tests bench/norms (the normalizations' bandwidth as
# tc_schedule_auto schedules them) where it can run: on PoCL at a small
# total every kernel runs and verifies against tc_reference_run (softmax
# in bf16, RMSNorm and LayerNorm in f32), a bad option exits 2, and
# --target cuda exits 3 where there is no CUDA device (else it runs).
# Ends with "N passed, N failed, N skipped".
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=${NORMS_BENCH:-build/bench/norms}
[ -x "$B" ] || { echo "  FAIL $B not built (make $B)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

out=$("$B" --total 18 -i 1 -t bf16 --only softmax 2>&1); rc=$?
if [ $rc -eq 3 ]; then
  skipped=$((skipped + 1)); echo "  skip norms on OpenCL (no OpenCL device)"
elif [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '^norms: 6 kernels ran, 0 failed or differed'; then
  pass "softmax bf16, N = 256 .. 262144, verified"
else
  fail "softmax bf16 (exit $rc): $(printf '%s' "$out" | tail -n 3)"
fi
out=$("$B" --total 18 -i 1 --only rmsnorm 2>&1); rc=$?
[ $rc -eq 0 ] && printf '%s' "$out" | grep -q 'inner reduction' && pass "rmsnorm f32 with its schedule note" ||
  { [ $rc -eq 3 ] && skipped=$((skipped + 1)) || fail "rmsnorm (exit $rc): $(printf '%s' "$out" | tail -n 2)"; }
out=$("$B" --total 40 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" | grep -q -- '--total takes 18..30' && pass "bad --total: exit 2" ||
  fail "bad --total (exit $rc): $out"
out=$("$B" --target cuda --total 18 -i 1 --only layernorm 2>&1); rc=$?
if [ $rc -eq 3 ] && printf '%s' "$out" | grep -q 'no device for cuda'; then
  pass "--target cuda without a CUDA device: exit 3 with the reason"
elif [ $rc -eq 0 ]; then
  pass "--target cuda ran on a device"
else
  fail "--target cuda (exit $rc): $(printf '%s' "$out" | tail -n 2)"
fi
finish
