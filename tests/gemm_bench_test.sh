#!/usr/bin/env bash
# gemm_bench_test.sh - tests bench/gemm_vs_cublas.py (tilec's bf16 GEMM
# against cuBLAS on an H100) where it can run:
#   1. --dry-run lists the 10 default shapes (8192^3 in all four layouts,
#      M = 64/128/256 with N = K = 8192, squares 1024..4096);
#   2. --target opencl (tilec on PoCL, no torch) on three small shapes:
#      tilec's real --json fields are read (time, verify, perf config), one
#      shape past 2^30 multiply-adds verified on a sample (16384 of 65536
#      elements), the markdown and JSON written;
#   3. --target cuda: exit 3 with a clear reason where torch or a GPU is
#      missing (else a small shape runs against cuBLAS);
#   4. a bad --shape exits 2.
# Ends with "N passed, N failed, N skipped"; skips without python3.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "  skip gemm_vs_cublas.py tests ($PY not found)"; skipped=1; finish
fi
tmp_dir gemm-bench
S=bench/gemm_vs_cublas.py

# ---- 1. the default shapes ----
out=$("$PY" $S --tilec "$T" --dry-run 2>&1); rc=$?
n=$(printf '%s\n' "$out" | grep -c -- '-t bf16 .* --target cuda --time -i 20 --json')
if [ $rc -eq 0 ] && [ "$n" -eq 10 ] &&
   printf '%s\n' "$out" | grep -q -- '-M 8192 -N 8192 -K 8192 -t bf16 --transA 1 --transB 1 ' &&
   [ "$(printf '%s\n' "$out" | grep -c -- ' --json -V 1$')" -eq 10 ]; then
  pass "--dry-run: 10 default shapes, each with -V 1"
else
  fail "--dry-run: exit $rc, $n commands:"; printf '%s\n' "$out" | sed 's/^/    /'
fi

# ---- 2. on PoCL ----
out=$("$PY" $S --tilec "$T" --target opencl --shape 128,128,64 --shape 256,256,20000,1,0 \
      --shape 64,128,128,0,1 -i 2 --out "$tmp/g.md" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
if [ $rc -eq 3 ]; then
  echo "  skip the PoCL run: no OpenCL device"; skipped=$((skipped + 1))
elif [ $rc -eq 0 ] && [ -f "$tmp/g.md" ] && why=$("$PY" - "$tmp/g.json" <<'PYEOF' 2>&1
import json, sys
j = json.load(open(sys.argv[1]))
r = j["rows"]
assert [x["shape"] for x in r] == ["128x128x64 nn", "256x256x20000 tn", "64x128x128 nt"], r
assert [x["verify"] for x in r] == ["PASS", "PASS (16384 of 65536 elements)", "PASS"], r
for x in r:
    assert x["tilec_ms"] > 0 and x["tilec_tflops"] > 0 and x["error"] is None, x
    assert x["perf_config"] and x["cublas_ms"] is None and x["ratio"] is None, x
    assert abs(x["tilec_tflops"] - 2 * x["m"] * x["n"] * x["k"] / (x["tilec_ms"] * 1e9)) < 1e-9, x
assert j["runs"] == 2
PYEOF
); then
  grep -q '^| 256x256x20000 tn | [0-9.]* | [0-9.]* | - | - | - | PASS (16384 of 65536 elements) | ' "$tmp/g.md" &&
    pass "--target opencl: 3 shapes timed and verified (one on a sample), table and JSON written" ||
    fail "--target opencl: the markdown row of 256x256x20000 tn is not as expected: $(cat "$tmp/g.md")"
else
  fail "--target opencl: exit $rc; ${why:-no $tmp/g.md}"
fi

# ---- 3. cuda without torch or a GPU ----
out=$(timeout 300 "$PY" $S --tilec "$T" --shape 64,64,64 -i 2 --out "$tmp/c.md" 2>&1); rc=$?
if [ $rc -eq 3 ] && printf '%s\n' "$out" | grep -qE 'cannot import torch|sees no CUDA device|no CUDA device'; then
  pass "--target cuda here: exit 3 ($(printf '%s\n' "$out" | tail -n 1 | cut -c1-90)...)"
elif [ $rc -eq 0 ] && grep -q '^| 64x64x64 nn | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | PASS |' "$tmp/c.md"; then
  pass "--target cuda on a GPU with torch: 64x64x64 against cuBLAS, PASS"
else
  fail "--target cuda: exit $rc:"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
fi

# ---- 4. a bad shape ----
out=$("$PY" $S --tilec "$T" --shape 64,64 --dry-run 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s\n' "$out" | grep -q "expected M,N,K or M,N,K,transA,transB" &&
  pass "--shape 64,64: exit 2" || fail "--shape 64,64: exit $rc: $out"
finish
