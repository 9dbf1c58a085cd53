#!/usr/bin/env bash
# cli_conv_fusion_test.sh - tests `tilec conv2d --path fusion` through the
# real binary ($TILEC, default build/tilec): each direction verified
# against the plain-C reference (`verify: PASS`), NCHW and NHWC, padding,
# stride, dilation, groups, f32 / f16 / bf16, the kernel count (backward
# data with stride 2: four filter phases, four kernels), --epilogue
# bias + relu / gelu / silu in the forward kernel, --emit, the CUDA build
# check, and the usage errors (one line, exit 2); the template path keeps
# its output.  Ends with "N passed, N failed, N skipped".
set -u
TILEC=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILEC_PERFDB="$tmp/db/perfdb.sqlite"

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }

run() {
  "$TILEC" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
expect_out() {
  if printf '%s\n' "$out" | grep -Eq -- "$2"; then ok "$1"; else
    bad "$1" "no line matches /$2/ (exit $rc):" "$(head -c 1500 "$tmp/out")" "$(head -c 800 "$tmp/err")"
  fi
}
expect_one_line() {
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] && printf '%s\n' "$err" | grep -Eq -- "$2"; then
    ok "$1: exit 2, one line"
  else
    bad "$1: exit 2, one line matching /$2/" "exit $rc, $lines stderr line(s)" "stdout: $(head -c 800 "$tmp/out")" "stderr: $(head -c 800 "$tmp/err")"
  fi
}
verify_pass() {
  local name=$1
  shift
  run conv2d "$@" --path fusion -V 1
  if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q '^verify: PASS'; then ok "$name: verify: PASS"; else
    bad "$name: verify: PASS, exit 0" "exit $rc" "stdout: $(head -c 1500 "$tmp/out")" "stderr: $(head -c 1500 "$tmp/err")"
  fi
}

NHWC="--in_layout NHWC --fil_layout KYXC --out_layout NHWK"

verify_pass "forward bias,relu pad stride" -n 2 -c 8 -H 9 -W 9 -k 12 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 --epilogue bias,relu
expect_out "forward bias,relu: one kernel" '^path: fusion, 1 kernel '
expect_out "forward bias,relu: the epilogue said" '^epilogue: bias \+ relu, in the kernel$'
expect_out "forward: the matmul schedule's note" '^kernel conv_gemm0: matmul: 12 x 50 x 72, '
verify_pass "forward gelu f16 NHWC groups 2" -n 2 -c 8 -H 7 -W 6 -k 6 -y 3 -x 2 -p 1 -q 0 -g 2 -t f16 $NHWC --epilogue bias,gelu
verify_pass "forward silu bf16 dilation 2" -n 1 -c 5 -H 9 -W 9 -k 7 -y 3 -x 3 -l 2 -j 2 -t bf16 --epilogue silu
verify_pass "forward f32 no epilogue" -n 3 -c 3 -H 5 -W 6 -k 5 -y 2 -x 2 -p 1 -q 1
verify_pass "backward data stride 2 bf16 NHWC" -F 2 -n 2 -c 8 -H 9 -W 9 -k 12 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -t bf16 $NHWC
expect_out "backward data stride 2: four kernels (filter phases)" '^path: fusion, 4 kernels '
verify_pass "backward data dilation 2 f16 groups 3" -F 2 -n 1 -c 6 -H 8 -W 7 -k 9 -y 3 -x 3 -p 2 -q 1 -l 2 -j 2 -g 3 -t f16
verify_pass "backward data 1x1 stride 2 (rows no GEMM writes: zeroed first)" -F 2 -n 2 -c 4 -H 7 -W 7 -k 6 -y 1 -x 1 -u 2 -v 2
verify_pass "backward weight groups 2 f16" -F 4 -n 2 -c 8 -H 9 -W 9 -k 12 -g 2 -t f16
verify_pass "backward weight stride 2 NHWC f32" -F 4 -n 2 -c 4 -H 9 -W 8 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 $NHWC

run conv2d -n 2 -c 4 -H 6 -W 6 -k 4 -p 1 -q 1 --path fusion --epilogue bias,relu -V 1 --time -i 3
expect_out "--time: the median of 3 timed runs" '^time: [0-9.]+ ms \(median of 3 runs\), [0-9.]+ GFLOP/s$'
expect_out "--time: then the verification" '^verify: PASS'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --epilogue bias,relu --emit "$tmp/k.cl"
if [ "$rc" -eq 0 ] && grep -q 'kernel 1 of 1: conv_gemm0' "$tmp/k.cl" && grep -q '__kernel' "$tmp/k.cl" &&
   grep -q 'arguments: filter, input, bias, output' "$tmp/k.cl"; then ok "--emit writes the kernel with its arguments"
else bad "--emit writes the kernel" "exit $rc" "$(head -c 600 "$tmp/k.cl" 2>/dev/null)"; fi

run conv2d -n 1 -c 8 -H 6 -W 6 -k 16 -t f16 $NHWC --path fusion --epilogue bias,relu --target cuda --arch sm_90a --emit "$tmp/k.cu"
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -Eq 'compiled with NVRTC|not compiled'; then ok "--target cuda: the NVRTC check"
else bad "--target cuda: the NVRTC check" "exit $rc" "$out" "$err"; fi

run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --epilogue bias
expect_one_line "--epilogue without --path fusion" 'epilogue needs --path fusion'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path bogus
expect_one_line "--path bogus" '--path must be template or fusion'
run conv2d -F 2 -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --epilogue bias,relu
expect_one_line "--epilogue on backward data" 'epilogue applies to forward convolutions'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --epilogue relu,bias
expect_one_line "--epilogue relu,bias" 'bias comes once, before the activation'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --epilogue tanh
expect_one_line "--epilogue tanh" "unknown op 'tanh'"
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --perf-config 64,16,16,4,2,2
expect_one_line "--path fusion --perf-config" 'takes no --perf-config'
run conv2d -F 2 -n 2 -c 4 -H 7 -W 7 -k 6 -u 2 -v 2 -p 1 -q 1 --path fusion -V 1 --json
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["path"] == "fusion" and j["ok"] is True and j["verify"]["result"] == "PASS", j
assert len(j["kernels"]) == 4 and j["kernels"][0]["args"] == ["filter", "output", "input"], j["kernels"]
assert j["kernels"][0]["schedule"].startswith("matmul: "), j["kernels"][0]
'; then ok "--json: one object, path fusion, four kernels with their arguments, PASS"
else bad "--json: one object" "exit $rc" "$out" "$err"; fi
# tiles by hand: wgmma (its emulation on OpenCL) and mma.sync in rings
verify_pass "forward bias,relu bf16 NHWC, wgmma tiles, 3 stages" -n 2 -c 32 -H 7 -W 6 -k 24 -y 3 -x 3 -p 1 -q 1 \
  -t bf16 $NHWC --epilogue bias,relu --tiles 64,64,64,64,64 --macro wgmma --stages 3
expect_out "wgmma tiles: the schedule" '^kernel conv_gemm0: matmul: 24 x 84 x 288, 64x64 tiles .* as wgmma m64n64k16 \(bf16, f32 accumulators\), K in tiles of 64 with A and B staged K-major \(128B swizzle\)'
verify_pass "backward data stride 2 f16, mma.sync tiles, 2 stages" -F 2 -n 2 -c 32 -H 9 -W 8 -k 24 -y 3 -x 3 \
  -p 1 -q 1 -u 2 -v 2 -t f16 --tiles 32,32,16,16,8 --macro mma --stages 2
expect_out "mma.sync tiles: each of the four GEMMs" '^kernel conv_gemm3: matmul: .* as mma.sync m16n8k16'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --tiles 16,16,8,4,4
expect_one_line "--tiles without --path fusion" '--tiles needs --path fusion'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --stages 2
expect_one_line "--stages without --tiles" '--stages needs --tiles \(and --path fusion\)'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --path fusion --tiles 16,16,8,3,4
expect_one_line "--tiles that do not nest" '--tiles 16,16,8,3,4: TM must divide BM and TN divide BN'

run conv2d --help
expect_out "--help names --path fusion" '--path template\|fusion'
expect_out "--help names --epilogue" '--epilogue LIST'
expect_out "--help names --tiles" '--tiles BM,BN,BK,TM,TN  with --path fusion'
# the template path as before
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 -V 1
expect_out "template path: its perf config line" '^perf config: '
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 -t bf16 -V 1
expect_one_line "template path: bf16 still refused" 'unsupported data type bf16 for a convolution'

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
