#!/usr/bin/env bash
# ldst_bench_test.sh - smoke test of bench/ldst_bandwidth (the LdStMatrixSet
# bandwidth benchmark of the Hopper work), so that it cannot rot:
#   1. every shmoo variant (swizzle 32/64/128B x cta_m 64/128 x cta_n
#      256/512) runs on OpenCL (PoCL) at 256x512 with output == input;
#   2. --json for one variant: ok, PASS, 0 mismatches, its launch shape;
#   3. --fault 1 / 2 (wrong ldmatrix row addresses) must FAIL with exit 1:
#      the bench's check does see a wrong copy;
#   4. bad options exit 2 with a message;
#   5. --no-run --emit DIR writes the 12 CUDA sources, each with one
#      ldmatrix.x4, one stmatrix.x4 and both bulk tensor copies;
#   6. --target cuda: exit 3 with "no CUDA device" where there is none,
#      else a small run with output == input and the d2d baseline.
# The binary is $LDST_BENCH (default build/bench/ldst_bandwidth).  Ends with
# "N passed, N failed, N skipped"; without an OpenCL device the PoCL checks
# are skipped.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=${LDST_BENCH:-build/bench/ldst_bandwidth}

if [ ! -x "$B" ]; then
  fail "$B not found (build it with make)"
  finish
fi
tmp_dir ldst-bench

# ---- 1. the shmoo on PoCL ----
out=$("$B" --target opencl --size 256x512 -i 1 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
pocl=1
if [ $rc -eq 3 ]; then
  pocl=0
  skip "no OpenCL device: $(printf '%s\n' "$out" | tail -n 1)"
else
  npass=$(printf '%s\n' "$out" | grep -cE '^sw(32|64|128) cta (64|128)x(256|512) .* PASS \(2 runs\)$')
  nvar=$(printf '%s\n' "$out" | grep -cE '^sw[0-9]+ cta ')
  if [ $rc -eq 0 ] && [ "$npass" -eq 12 ] && [ "$nvar" -eq 12 ] &&
     printf '%s\n' "$out" | grep -q '^ok: 12 of 12 variants ran with output == input$'; then
    pass "12 shmoo variants on PoCL at 256x512: output == input"
  else
    fail "shmoo on PoCL: exit $rc, $npass of $nvar variants PASS (expected 12 of 12, exit 0)"
  fi
  # every variant's launch: 256x512 in CTA tiles, 128 threads per 64 rows
  for v in "sw32 cta 64x256 +4x2x1 +128x1x1 +65536" "sw128 cta 128x512 +2x1x1 +128x2x1 +131072"; do
    if printf '%s\n' "$out" | grep -qE "^$v "; then
      pass "launch shape of ${v%% +*}"
    else
      fail "launch shape of ${v%% +*}: expected /$v/"
    fi
  done
fi

# ---- 2. --json ----
if [ $pocl -eq 1 ]; then
  js=$("$B" --target opencl --size 256x512 -i 1 --swizzle 64 --cta-m 128 --cta-n 256 --json 2>&1); rc=$?
  if [ $rc -eq 0 ] && command -v python3 >/dev/null 2>&1; then
    why=$(printf '%s' "$js" | python3 -c '
import json, sys
j = json.load(sys.stdin)
v = j["variants"]
assert j["ok"] is True and j["target"] == "opencl" and j["m"] == 256 and j["n"] == 512, j
assert j["bytes"] == 256 * 512 * 2 and j["runs"] == 1 and j["d2d"] is None, j
assert len(v) == 1 and v[0]["swizzle"] == 64 and v[0]["cta_m"] == 128 and v[0]["cta_n"] == 256, v
assert v[0]["ran"] is True and v[0]["verify"] == "PASS" and v[0]["mismatches"] == 0, v
assert v[0]["grid"] == [2, 2, 1] and v[0]["block"] == [128, 2, 1] and v[0]["smem_bytes"] == 131072, v
assert v[0]["ms"] > 0 and v[0]["gbps"] > 0 and v[0]["ratio"] is None and v[0]["error"] is None, v
' 2>&1) && pass "--json: one variant, PASS, its fields" || fail "--json: $why"
  elif [ $rc -eq 0 ]; then
    printf '%s' "$js" | grep -q '"ok": true' && pass "--json ok (no python3 to parse it)" ||
      fail "--json: no \"ok\": true in $js"
  else
    fail "--json: exit $rc: $js"
  fi
fi

# ---- 3. injected faults must be caught ----
if [ $pocl -eq 1 ]; then
  for f in 1 2; do
    out=$("$B" --target opencl --size 256x512 -i 1 --swizzle 128 --cta-m 128 --cta-n 256 --fault $f 2>&1); rc=$?
    if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qE '^sw128 cta 128x256 .* FAIL: [1-9][0-9]* element mismatches over 2 runs' &&
       printf '%s\n' "$out" | grep -q '^FAILED: 0 of 1 variants'; then
      pass "--fault $f: the wrong copy is reported (exit 1)"
    else
      fail "--fault $f: expected FAIL and exit 1, got exit $rc:"; printf '%s\n' "$out" | sed 's/^/    /'
    fi
  done
fi

# ---- 4. bad options ----
for args in "--swizzle 16|--swizzle '16': expected 32, 64, 128 or all" \
            "--target opencl --size 100x512|M = 100 is not a multiple of cta_m 64" \
            "--target opencl --size 256x512 --cta-n 512 --size 256x768|N = 768 is not a multiple of cta_n 512" \
            "--size 8192|--size '8192': expected MxN" \
            "-i 0|-i '0': expected 1 to 10000 runs" \
            "--frobnicate|unknown option '--frobnicate'"; do
  a=${args%%|*} want=${args#*|}
  # shellcheck disable=SC2086
  out=$("$B" $a 2>&1); rc=$?
  if [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qF -- "$want"; then
    pass "$a: exit 2"
  else
    fail "$a: expected exit 2 and \"$want\", got exit $rc: $out"
  fi
done

# ---- 5. --no-run --emit ----
out=$("$B" --no-run --emit "$tmp/src" 2>&1); rc=$?
n=0 good=0
for f in "$tmp"/src/ldst_sw*_m*_n*.cu; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  [ "$(grep -c 'ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, \[%4\];' "$f")" -eq 1 ] &&
    [ "$(grep -c 'stmatrix.sync.aligned.m8n8.x4.shared.b16 \[%0\], {%1, %2, %3, %4};' "$f")" -eq 1 ] &&
    grep -q 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes' "$f" &&
    grep -q 'cp.async.bulk.tensor.2d.global.shared::cta.bulk_group' "$f" &&
    grep -q '^ \* grid ' "$f" && good=$((good + 1))
done
if [ $rc -eq 0 ] && [ $n -eq 12 ] && [ $good -eq 12 ] && printf '%s\n' "$out" | grep -q '^ok: 12 of 12 variants generated$'; then
  pass "--no-run --emit: 12 CUDA sources with ldmatrix.x4, stmatrix.x4 and the bulk copies"
else
  fail "--no-run --emit: exit $rc, $n files, $good good (expected 12 and 12): $out"
fi
[ -f "$tmp/src/ldst_sw32_m64_n256.cu" ] && grep -q 'grid 128x32x1, block 128x1x1, 65536 bytes' "$tmp/src/ldst_sw32_m64_n256.cu" &&
  pass "--emit header: 8192x8192 at CTA 64x256 is grid 128x32x1" ||
  fail "--emit header of ldst_sw32_m64_n256.cu lacks 'grid 128x32x1, block 128x1x1, 65536 bytes'"

# ---- 6. CUDA ----
out=$("$B" --target cuda --size 256x512 -i 1 --swizzle 128 --cta-m 128 --cta-n 256 2>&1); rc=$?
if [ $rc -eq 3 ]; then
  printf '%s\n' "$out" | grep -q 'no CUDA device' && pass "--target cuda without a GPU: exit 3, \"no CUDA device\"" ||
    fail "--target cuda: exit 3 without \"no CUDA device\": $out"
elif [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -qE '^sw128 cta 128x256 .* PASS \(2 runs\)$' &&
     printf '%s\n' "$out" | grep -q '^device-to-device copy (cuMemcpyDtoD'; then
  pass "--target cuda on a GPU: output == input, d2d baseline"
else
  fail "--target cuda: exit $rc:"; printf '%s\n' "$out" | sed 's/^/    /'
fi
finish
