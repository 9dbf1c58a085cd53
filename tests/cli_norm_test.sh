#!/usr/bin/env bash
# cli_norm_test.sh - `tilec norm` through the real binary: softmax, rmsnorm
# and layernorm at ragged shapes and three dtypes verified on PoCL (-V 1
# against tc_reference_run), the schedule line, --json, --emit without a
# run, --time, and the usage errors and refusals with their exit codes.
# Ends with "N passed, N failed, N skipped".
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp_dir norm

if ! "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  echo "  skip tilec norm runs (no PoCL device)"; skipped=$((skipped + 1))
else
  for k in softmax rmsnorm layernorm; do
    expect "$k 7 x 1000 f32" 0 '^verify: PASS' norm $k -M 7 -N 1000 -V 1
    expect "$k 3 x 1 bf16" 0 '^verify: PASS' norm $k -M 3 -N 1 -t bf16 -V 1
    expect "$k 2 x 65537 f16" 0 '^verify: PASS' norm $k -M 2 -N 65537 -t f16 -V 1
  done
  # -M dyn: one kernel, run and checked at M = 1, 7, 128 and 1000
  for k in softmax layernorm xent; do
    expect "$k -M dyn 1" 0 '^M = 1: verify: PASS' norm $k -M dyn -N 1000 -V 1
    expect "$k -M dyn 1000" 0 '^M = 1000: verify: PASS' norm $k -M dyn -N 1000 -V 1
  done
  expect "-M dyn schedule line" 0 '^schedule: .*: M \(at most 2147483\) rows of 1000' norm softmax -M dyn -N 1000
  # -N dyn: the row length a size variable (each pass reads the row from
  # global memory; the means divide by N's value), run at N = 1, 7, 128
  # and 1000; both: at (1, 1), (7, 128), (128, 7) and (1000, 1000)
  for k in softmax rmsnorm layernorm softmax_bwd rmsnorm_bwd xent; do
    expect "$k -N dyn 7" 0 '^N = 7: verify: PASS' norm $k -M 5 -N dyn -V 1
    expect "$k -M dyn -N dyn (1000, 1000)" 0 '^M = 1000, N = 1000: verify: PASS' norm $k -M dyn -N dyn -t bf16 -V 1
  done
  expect "-N dyn schedule line" 0 '^schedule: .*: 5 rows of N \(at most 429496729\), 1 row per block on BIDx, 1024 threads per row on TIDx, ceil\(N / 1024\) \(at most 419431\) serial steps each, two-pass: the row.s length depends on a size variable' \
    norm rmsnorm -M 5 -N dyn
  out=$("$T" norm layernorm -M dyn -N dyn --json -V 1 2>&1)
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin)
assert d["rows"] == "dyn" and d["cols"] == "dyn" and [v["name"] for v in d["size_variables"]] == ["M", "N"]
assert all(v["bound"] == 46340 for v in d["size_variables"]) and d["size_variable"]["name"] == "M"
assert [(r["m"], r["n"]) for r in d["runs"]] == [(1, 1), (7, 128), (128, 7), (1000, 1000)]
assert all(r["verify"]["result"] == "PASS" for r in d["runs"]) and d["ok"]'; then pass "-M dyn -N dyn --json"
  else fail "-M dyn -N dyn --json: $out"; fi
  expect "softmax_bwd 7 x 1000 f32" 0 '^verify: PASS' norm softmax_bwd -M 7 -N 1000 -V 1
  expect "rmsnorm_bwd 33 x 4099 bf16" 0 '^verify: PASS' norm rmsnorm_bwd -M 33 -N 4099 -t bf16 -V 1
  expect "xent 7 x 1000 f32" 0 '^verify: PASS \(max error .*; 7 elements\)' norm xent -M 7 -N 1000 -V 1
  expect "xent 2 x 65537 bf16" 0 '^verify: PASS' norm xent -M 2 -N 65537 -t bf16 -V 1
  expect "schedule line" 0 '^schedule: tc_schedule_auto: inner reduction \(normalization\): 33 rows of 4099, 1 row per block on BIDx, 512 threads per row' \
    norm softmax -M 33 -N 4099
  expect "softmax 1 x 262144 f32" 0 '^verify: PASS' norm softmax -M 1 -N 262144 -V 1
  expect "schedule line of a long row" 0 '^schedule: .*, two-pass: the row \(256 per thread\) is more than 64 bytes of registers' \
    norm softmax -M 1 -N 262144
  expect "schedule line of a long row on sm_90a" 0 '^schedule: .*, the row held in shared memory' \
    norm softmax -M 2 -N 20000 --target cuda --arch sm_90a --emit "$tmp/s.cu"
  expect "--time" 0 '^time: [0-9.]+ ms \(median of 2 runs\), [0-9.]+ GB/s' norm rmsnorm -M 4 -N 300 --time -i 2
  # eps is passed at launch: a second eps reuses the kernel (a cache hit in
  # a fresh cache) and still verifies; y depends on eps far beyond the
  # tolerance (x in [-4, 4): mean(x^2) ~ 5.3, so eps = 4 moves y by ~30%),
  # so a kernel that ignored the value would fail -V 1
  for k in rmsnorm layernorm rmsnorm_bwd; do
    cache=$(mktemp -d "$tmp/cache.XXXXXX")
    out1=$(TILEC_CACHE_DIR=$cache "$T" norm $k -M 7 -N 1000 -V 1 2>&1); rc1=$?
    out2=$(TILEC_CACHE_DIR=$cache "$T" norm $k -M 7 -N 1000 -V 1 --eps 4 2>&1); rc2=$?
    if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && printf '%s\n' "$out1" | grep -q '^cache: miss' &&
       printf '%s\n' "$out1" | grep -q '^verify: PASS' && printf '%s\n' "$out1" | grep -q -- '--eps 1e-05$' &&
       printf '%s\n' "$out2" | grep -q '^cache: hit' && printf '%s\n' "$out2" | grep -q '^verify: PASS' &&
       printf '%s\n' "$out2" | grep -q -- '--eps 4$'; then
      pass "$k: --eps 4 after the default eps reuses the cached kernel, both verified"
    else fail "$k --eps: $(printf '%s' "$out1" | tail -n 2) / $(printf '%s' "$out2" | tail -n 2)"; fi
  done
  out=$(TILEC_CACHE_DIR=$tmp/cache-json "$T" norm layernorm -M 5 -N 77 -V 1 --eps 0.5 --json 2>&1)
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["eps"]==0.5 and d["cached"] is False and d["verify"]["result"]=="PASS"' 2>/dev/null; then
    pass "--json has eps and cached"
  else fail "--json eps: $out"; fi
  out=$("$T" norm layernorm -M 5 -N 77 -V 1 --json 2>&1); rc=$?
  if [ $rc -eq 0 ] && printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["verify"]["result"]=="PASS" and d["rows"]==5 and d["cols"]==77 and d["ok"] and "inner reduction" in d["schedule"]' 2>/dev/null; then
    pass "--json"
  else fail "--json: $out"; fi
fi
expect "--emit only: nothing runs" 0 '^emitted: ' norm softmax -M 3 -N 5 --target cuda --emit "$tmp/n.cu"
grep -q 'tc_schedule_auto: inner reduction' "$tmp/n.cu" 2>/dev/null && pass "the kernel prints its schedule" ||
  fail "no schedule comment in $tmp/n.cu"
expect "unknown kind" 2 "unknown normalization 'mean'" norm mean -M 2 -N 3
expect "missing -N" 2 '-M and -N are required' norm softmax -M 2
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  out=$("$T" norm rmsnorm -M dyn -N 1000 --json -V 1 2>&1)
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["rows"] == "dyn" and d["size_variable"] == {"name": "M", "divisor": 1, "bound": 2147483} and [r["m"] for r in d["runs"]] == [1, 7, 128, 1000] and all(r["verify"]["result"] == "PASS" for r in d["runs"]) and d["ok"]'; then pass "-M dyn --json"
  else fail "-M dyn --json: $out"; fi
fi
expect "no perf config" 2 'no perf config' norm rmsnorm -M 2 -N 3 --perf-config 1,2
expect "bad dtype" 2 "unknown data type 'i32'" norm rmsnorm -M 2 -N 3 -t i32
expect "--eps of softmax" 2 'softmax has no eps' norm softmax -M 2 -N 3 --eps 0.1
expect "--eps below 0" 2 'finite number >= 0' norm rmsnorm -M 2 -N 3 --eps -1
expect "--eps nan" 2 'finite number >= 0' norm rmsnorm -M 2 -N 3 --eps nan
expect "--eps 1e39 (past f32)" 2 'finite number >= 0' norm rmsnorm -M 2 -N 3 --eps 1e39
expect "--eps missing" 2 'eps' norm rmsnorm -M 2 -N 3 --eps
expect "help" 0 'usage: tilec norm KIND' norm --help
expect "help names --eps" 0 '--eps X' norm --help
expect "tilec help norm" 0 'usage: tilec norm' help norm
finish
