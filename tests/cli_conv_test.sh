#!/usr/bin/env bash
# cli_conv_test.sh - tests `tilec conv2d` and `tilec gemm` through the real
# binary ($TILEC, default build/tilec): -V 1 verification in every
# direction, layouts, groups, f16; gemm with transposes and groups; the
# usage and problem errors (one line, non-zero exit); --emit, --json,
# --time; --tune storing its winner in the perf DB ($TILEC_PERFDB in a
# temporary directory) and the next run using it.  Ends with
# "N passed, N failed, N skipped"; exits non-zero if any check failed.
set -u
TILEC=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# keep the user's perf DB out of it
export TILEC_PERFDB="$tmp/db/perfdb.sqlite"

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }
skip() { skipped=$((skipped + 1)); echo "  skip $1 ($2)"; }

# run ARGS...: runs tilec, leaving stdout in $out, stderr in $err, status in $rc
run() {
  "$TILEC" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
show() { echo "stdout: $(head -c 1500 "$tmp/out")" "stderr: $(head -c 1500 "$tmp/err")"; }

expect_rc() {
  if [ "$rc" -eq "$2" ]; then ok "$1: exit $2"; else
    bad "$1: exit $2" "got exit $rc" "stdout: $(head -c 1500 "$tmp/out")" "stderr: $(head -c 1500 "$tmp/err")"
  fi
}
expect_out() {
  local text=$out
  [ "${3:-stdout}" = stderr ] && text=$err
  if printf '%s\n' "$text" | grep -Eq -- "$2"; then ok "$1"; else
    bad "$1" "no line matches /$2/ in ${3:-stdout}:" "$(printf '%s\n' "$text" | head -n 30)"
  fi
}
# expect_one_line NAME REGEX: the last run failed (exit != 0) with exactly
# one line on stderr matching REGEX, and nothing on stdout
expect_one_line() {
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] && printf '%s\n' "$err" | grep -Eq -- "$2"; then
    ok "$1: exit $rc, one line"
  else
    bad "$1: non-zero exit, one line matching /$2/" "exit $rc, $lines stderr line(s)" "stdout: $(head -c 800 "$tmp/out")" "stderr: $(head -c 800 "$tmp/err")"
  fi
}
# verify_pass NAME ARGS...: the command with -V 1 prints verify: PASS, exits 0
verify_pass() {
  local name=$1
  shift
  run "$@" -V 1
  if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q '^verify: PASS'; then ok "$name: verify: PASS"; else
    bad "$name: verify: PASS, exit 0" "exit $rc" "stdout: $(head -c 1500 "$tmp/out")" "stderr: $(head -c 1500 "$tmp/err")"
  fi
}

if [ ! -x "$TILEC" ]; then
  echo "  FAIL $TILEC is not an executable (build it with make)"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

echo "-- help"
run --help
expect_out "tilec --help lists conv2d" '^  conv2d '
expect_out "tilec --help lists gemm" '^  gemm '
expect_out "tilec --help names TILEC_PERFDB" 'TILEC_PERFDB'
for c in conv2d gemm; do
  run $c --help
  expect_rc "$c --help" 0
  expect_out "$c --help shows its usage" "^usage: tilec $c"
  for w in --perf-config --tune --time --emit --json --target -V; do
    expect_out "$c --help mentions $w" "$w"
  done
  run help $c
  expect_rc "tilec help $c" 0
done
run conv2d --help
for w in -F -n -c -H -W -k -y -x -p -q -u -v -l -j -g --in_layout --fil_layout --out_layout --pad_h_l; do
  expect_out "conv2d --help mentions $w" "^  $w[ ,]"
done
expect_out "conv2d --help mentions --pad_w_r" '--pad_w_r'


echo "-- conv2d -V 1, forward"
verify_pass "fwd 3x3 pad 1" conv2d -n 2 -c 4 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1
expect_out "fwd: names the heuristic" '^perf config: [0-9]+(,[0-9]+){5} \(heuristic'
expect_out "fwd: prints the problem string" '^problem: conv2d -F 1 -n 2 -c 4 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -t f32'
verify_pass "fwd stride 2, dilation 2, groups 2" conv2d -n 1 -c 4 -H 11 -W 9 -k 6 -y 3 -x 2 -u 2 -v 1 -l 2 -j 1 -g 2
verify_pass "fwd asymmetric padding" conv2d -n 1 -c 3 -H 7 -W 6 -k 5 -y 3 -x 3 --pad_h_l 2 --pad_h_r 0 --pad_w_l 0 --pad_w_r 1
expect_out "asymmetric padding in the problem string" '--pad_h_l 2 --pad_h_r 0 --pad_w_l 0 --pad_w_r 1'
verify_pass "fwd NHWC/KYXC/NHWK f16" conv2d -n 2 -c 8 -H 6 -W 5 -k 4 -y 3 -x 3 -p 1 -q 1 -t f16 --in_layout NHWC --fil_layout KYXC --out_layout NHWK
verify_pass "fwd 1x1" conv2d -F 1 -n 3 -c 16 -H 4 -W 4 -k 8 -y 1 -x 1

echo "-- conv2d -V 1, backward data"
verify_pass "bwd-data 3x3 pad 1" conv2d -F 2 -n 2 -c 4 -H 8 -W 8 -k 6 -y 3 -x 3 -p 1 -q 1
verify_pass "bwd-data stride 2 (several GEMMs)" conv2d -F 2 -n 1 -c 4 -H 9 -W 7 -k 6 -y 3 -x 2 -u 2 -v 2 -p 1
verify_pass "bwd-data 1x1 stride 2 (zero-init)" conv2d -F 2 -n 1 -c 4 -H 6 -W 6 -k 4 -y 1 -x 1 -u 2 -v 2
expect_out "bwd-data 1x1 stride 2 plans a zero-init kernel" '^plan: 2 kernels: tilec_conv_zero'
verify_pass "bwd-data groups, NHWC f16" conv2d -F 2 -n 1 -c 4 -H 5 -W 5 -k 4 -g 2 -t f16 --in_layout NHWC --out_layout NHWK

echo "-- conv2d -V 1, backward weight"
verify_pass "bwd-weight 3x3 pad 1" conv2d -F 4 -n 2 -c 4 -H 8 -W 8 -k 6 -y 3 -x 3 -p 1 -q 1
verify_pass "bwd-weight stride 2 dilation 2" conv2d -F 4 -n 2 -c 3 -H 9 -W 9 -k 4 -y 2 -x 3 -u 2 -v 2 -l 2 -j 1
verify_pass "bwd-weight groups KYXC" conv2d -F 4 -n 1 -c 6 -H 5 -W 5 -k 6 -g 3 --fil_layout KYXC

echo "-- gemm -V 1"
verify_pass "gemm 33x20x17" gemm -M 33 -N 20 -K 17
expect_out "gemm: problem string" '^problem: gemm -g 1 -M 33 -N 20 -K 17 --transA 0 --transB 0 -t f32$'
verify_pass "gemm transA" gemm -M 40 -N 24 -K 16 --transA 1
verify_pass "gemm transB" gemm -M 40 -N 24 -K 16 --transB 1
verify_pass "gemm transA transB, 3 groups" gemm -M 16 -N 36 -K 20 --transA 1 --transB 1 -g 3
verify_pass "gemm f16" gemm -M 64 -N 64 -K 48 -t f16
verify_pass "gemm --perf-config" gemm -M 64 -N 64 -K 32 --perf-config 64,32,32,8,2,2
expect_out "gemm --perf-config is named as the source" '^perf config: 64,32,32,8,2,2 \(--perf-config\)'

echo "-- usage errors (exit 2, one line)"
run conv2d --frobnicate
expect_rc "conv2d unknown flag" 2
expect_one_line "conv2d unknown flag" "unknown option '--frobnicate'"
run gemm -M 4 -N 4 -K 4 --bogus
expect_rc "gemm unknown flag" 2
expect_one_line "gemm unknown flag" "unknown option '--bogus'"
run conv2d -n
expect_rc "conv2d -n without a value" 2
expect_one_line "conv2d -n without a value" 'needs a value'
run conv2d -n two
expect_rc "conv2d -n two" 2
expect_one_line "conv2d -n two" "integer"
run conv2d -F 3
expect_rc "conv2d -F 3" 2
expect_one_line "conv2d -F 3" '-F must be 1'
run conv2d -t f64
expect_rc "conv2d -t f64" 2
expect_one_line "conv2d -t f64" "unknown data type 'f64'"
run conv2d --in_layout NCXW
expect_rc "conv2d bad layout" 2
expect_one_line "conv2d bad layout" "bad input layout 'NCXW'"
run gemm -M 4 -N 4
expect_rc "gemm without -K" 2
expect_one_line "gemm without -K" '-K'
run gemm -M 0 -N 4 -K 4
expect_rc "gemm -M 0" 2
expect_one_line "gemm -M 0" '-M must be'
run gemm -M 4 -N 4 -K 4 --transA 2
expect_rc "gemm --transA 2" 2
expect_one_line "gemm --transA 2" 'transA'
run conv2d --tune --perf-config 64,32,32,4,2,2
expect_rc "--tune with --perf-config" 2
expect_one_line "--tune with --perf-config" 'exclude'
run conv2d --target cuda --device pocl
expect_rc "--device with --target cuda" 2
expect_one_line "--device with --target cuda" 'OpenCL device; --target cuda uses CUDA device 0; run'
run gemm -M 4 -N 4 -K 4 --arch sm_80
expect_rc "--arch with --target opencl" 2
expect_one_line "--arch with --target opencl" '^tilec gemm: --arch applies to --target cuda and hip only; run'

echo "-- impossible problems (non-zero, one line)"
run conv2d -n 1 -c 4 -H 2 -W 8 -k 4 -y 5 -x 3
expect_rc "negative output height" 2
expect_one_line "negative output height" 'output height would be -2'
run conv2d -n 1 -c 6 -H 8 -W 8 -k 8 -g 4
expect_rc "c % g != 0" 2
expect_one_line "c % g != 0" 'not divisible by the group count'
run conv2d -n 1 -c 4 -H 8 -W 8 -k 6 -g 4
expect_rc "k % g != 0" 2
expect_one_line "k % g != 0" 'output channels'
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 -p -1
expect_rc "negative padding" 2
expect_one_line "negative padding" '-p must not be negative'
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 -u 0
expect_rc "stride 0" 2
expect_one_line "stride 0" 'stride'

echo "-- --perf-config"
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --perf-config 64,32,32
expect_rc "perf config with 3 fields" 2
expect_one_line "perf config with 3 fields" '6 comma-separated fields'
run gemm -M 32 -N 32 -K 32 --perf-config 64,32,32,4,2,3 -V 1
expect_rc "gemm perf config breaking a rule" 2
expect_out "gemm: the rule is named" 'n_per_thread .* must equal n_per_block' stderr
n=$(wc -l <"$tmp/err")
if [ "$n" -eq 1 ]; then ok "gemm rule: one line"; else bad "gemm rule: one line" "$n lines: $err"; fi
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --perf-config 64,32,32,4,2,3
expect_rc "conv perf config breaking a rule" 2
expect_out "conv: the rule is named" 'n_per_thread .* must equal n_per_block' stderr
n=$(wc -l <"$tmp/err")
if [ "$n" -eq 1 ]; then ok "conv rule: one line"; else bad "conv rule: one line" "$n lines: $err"; fi
verify_pass "conv with a valid --perf-config" conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --perf-config 64,32,32,8,2,2
expect_out "conv --perf-config is named as the source" '^perf config: 64,32,32,8,2,2 \(--perf-config\)'

echo "-- --target"
run conv2d --target vulkan
expect_rc "--target vulkan" 2

echo "-- --target hip (compiled with hipcc where it exists; run where there is an AMD GPU)"
have_hipcc=0
{ command -v hipcc >/dev/null 2>&1 || [ -x /opt/rocm/bin/hipcc ]; } && have_hipcc=1
have_amd=0
[ -e /dev/kfd ] && have_amd=1
have_libhip=0
for f in /usr/lib/*/libamdhip64.so* /usr/lib/libamdhip64.so* /opt/rocm/lib/libamdhip64.so*; do
  [ -e "$f" ] && have_libhip=1
done
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --target hip --emit "$tmp/fwd.hip"
expect_rc "conv2d --target hip --emit" 0
if grep -q 'extern "C" __global__' "$tmp/fwd.hip" 2>/dev/null; then ok "--emit file is HIP"; else bad "--emit file is HIP" "$(head -c 400 "$tmp/fwd.hip" 2>&1)"; fi
if [ $have_amd = 0 ]; then
  expect_out "conv2d --target hip: the device line" '^device: hip, none \(no AMD GPU: '
else
  expect_out "conv2d --target hip: the device line" '^device: hip [^,]'
fi
if [ $have_hipcc = 1 ] && [ $have_amd = 0 ]; then
  expect_out "conv2d --target hip: compiled, cannot run" '^compiled for gfx90a \(hipcc\); no AMD GPU: cannot run$'
elif [ $have_hipcc = 0 ]; then
  expect_out "conv2d --target hip: hipcc missing" '^not compiled: hipcc not found'
else
  expect_out "conv2d --target hip --emit: compiled for the GPU" '^compiled for gfx[0-9a-f]+ \(hipcc\)$'
fi
run gemm -M 64 -N 64 -K 64 -t f16 --target hip --arch gfx940 --emit "$tmp/g.hip"
expect_rc "gemm -t f16 --target hip --arch gfx940" 0
expect_out "gemm -t f16 --target hip: XDLOPS by default" '^perf config: xdlops:.*\(heuristic, XDLOPS \(MFMA\)\)'
if grep -q '__builtin_amdgcn_mfma_f32_' "$tmp/g.hip" 2>/dev/null; then ok "gemm --target hip: MFMA builtins"; else bad "gemm --target hip: MFMA builtins" "$(head -c 400 "$tmp/g.hip" 2>&1)"; fi
[ $have_hipcc = 1 ] && expect_out "gemm --target hip: compiled for gfx940" '^compiled for gfx940 \(hipcc\)'
run gemm -M 4 -N 4 -K 4 --target hip --arch gfx942 --emit "$tmp/g942.hip"
expect_rc "gemm --target hip --arch gfx942 (emitted; Debian's hipcc cannot compile it)" 0
expect_out "gemm --target hip --arch gfx942: says so" '^(not compiled: .*gfx942.*ROCm 6\.0 or newer|compiled for gfx942)'
run gemm -M 4 -N 4 -K 4 --target hip --device pocl
expect_rc "gemm --target hip --device" 2
expect_one_line "gemm --target hip --device" 'OpenCL device; --target hip uses HIP device 0; run'
run gemm -M 4 -N 4 -K 4 --target hip --arch sm_90a
expect_rc "gemm --target hip --arch sm_90a" 2
expect_one_line "gemm --target hip --arch sm_90a" "AMD GPU architecture \(gfx90a, .*\), got 'sm_90a'; run"
# an arch that starts like an AMD one but is none (the target model's
# parser, not a prefix, decides): refused before any kernel is made
for a in gfx gfxz 'gfx90a:bad_x'; do
  run gemm -M 4 -N 4 -K 4 --target hip --arch "$a" --emit "$tmp/bad_arch.hip"
  expect_rc "gemm --target hip --arch $a" 2
  expect_one_line "gemm --target hip --arch $a" "AMD GPU architecture \(gfx90a, .*\), got '$a'; run"
  if [ -e "$tmp/bad_arch.hip" ]; then bad "--arch $a: nothing emitted" "$tmp/bad_arch.hip exists"; else ok "--arch $a: nothing emitted"; fi
done
if [ $have_amd = 0 ]; then
  run gemm -M 4 -N 4 -K 4 --target hip -V 1
  expect_rc "gemm --target hip -V 1" 1
  expect_out "gemm --target hip -V 1: cannot run" '^tilec gemm: -V 1 needs the kernels to run: --target hip cannot run them here \(no AMD GPU: ' stderr
  if [ $have_libhip = 1 ]; then
    expect_out "gemm --target hip -V 1: hipGetDeviceCount reached" \
      'no AMD GPU: hipGetDeviceCount (failed: hipError[A-Za-z]+ \([0-9]+\)|reports 0 devices); ' stderr
  fi
  run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --target hip --time
  expect_rc "conv2d --target hip --time" 1
  run gemm -M 4 -N 4 -K 4 --target hip --tune
  expect_rc "gemm --target hip --tune" 1
  expect_out "gemm --target hip --tune: says why" '^tilec gemm: --tune times the kernels on the device; --target hip cannot run them: no AMD GPU: ' stderr
  run gemm --kernel tile -M 32 -N 32 -K 64 --target hip -V 1
  expect_rc "tile gemm --target hip -V 1" 1
  expect_out "tile gemm --target hip -V 1: cannot run" '^tilec gemm: -V 1 needs the kernels to run: --target hip cannot run them here \(no AMD GPU: ' stderr
  run gemm --kernel tile -M 64 -N 32 -K 64 --moe --tokens 40 --valid 29 --target hip --time
  expect_rc "tile MoE --target hip --time" 1
  expect_out "tile MoE --target hip --time: cannot run" '^tilec gemm: --time needs the kernels to run' stderr
  run gemm -M 4 -N 4 -K 4 --target hip --json
  expect_rc "gemm --target hip --json" 0
  expect_out "gemm --target hip --json: one object" '^\{"command": "gemm".*"target": "hip", "device": null.*"ran": false'
  # no HIP runtime at all: the same contract, and the message says what is missing
  TILEC_HIP_RUNTIME=/nonexistent/libamdhip64.so run gemm -M 4 -N 4 -K 4 --target hip -V 1
  expect_rc "gemm --target hip -V 1, no HIP runtime" 1
  expect_out "gemm --target hip -V 1, no HIP runtime: says so" \
    '^tilec gemm: -V 1 needs the kernels to run: --target hip cannot run them here \(no AMD GPU: the HIP runtime \(libamdhip64\) cannot be loaded \(tried /nonexistent/libamdhip64.so' stderr
  TILEC_HIP_RUNTIME=/nonexistent/libamdhip64.so run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --target hip --tune
  expect_rc "conv2d --target hip --tune, no HIP runtime" 1
  expect_out "conv2d --target hip --tune, no HIP runtime: says so" \
    '^tilec conv2d: --tune times the kernels on the device; --target hip cannot run them: no AMD GPU: the HIP runtime \(libamdhip64\) cannot be loaded' stderr
  TILEC_HIP_RUNTIME=/nonexistent/libamdhip64.so run gemm -M 4 -N 4 -K 4 --target hip
  expect_rc "gemm --target hip, no HIP runtime: compiled" 0
  [ $have_hipcc = 1 ] && expect_out "gemm --target hip, no HIP runtime: compiled, cannot run" '^compiled for gfx90a \(hipcc\); no AMD GPU: cannot run$'
else
  # on the AMD GPU: the kernels run, verify and time as on CUDA
  verify_pass "gemm --target hip (FMA)" gemm -M 70 -N 50 -K 40 --target hip
  verify_pass "gemm -t f16 --target hip (XDLOPS)" gemm -M 100 -N 70 -K 50 -t f16 --target hip
  verify_pass "conv2d --target hip" conv2d -n 2 -c 8 -H 10 -W 10 -k 16 -y 3 -x 3 -p 1 -q 1 --target hip
  verify_pass "conv2d bwd-data stride 2 --target hip" conv2d -F 2 -n 1 -c 8 -H 9 -W 9 -k 8 -y 1 -x 1 -u 2 -v 2 --target hip
  verify_pass "tile gemm --target hip" gemm --kernel tile -M 64 -N 48 -K 128 --target hip
  verify_pass "tile MoE --target hip" gemm --kernel tile -M 64 -N 32 -K 64 --moe --tokens 40 --valid 29 --tile-block 16,32,16 --target hip
  run gemm -M 256 -N 256 -K 256 -t f16 --target hip --time -i 3 -V 1
  expect_rc "gemm --target hip --time -V 1" 0
  expect_out "gemm --target hip --time: time" '^time: [0-9.]+ ms \(median of 3 runs\), [0-9.]+ GFLOP/s$'
  run gemm -M 128 -N 128 -K 64 -t f16 --target hip --tune --tune-max 3
  expect_rc "gemm --target hip --tune" 0
  expect_out "gemm --target hip --tune: stored" '^perf config: .*\(tuned: fastest of [0-9]+ tried'
fi
verify_pass "gemm XDLOPS (MFMA emulated on OpenCL)" gemm -M 70 -N 50 -K 40 -t f16 --perf-config xdlops:64,64,16,32,32
expect_out "gemm XDLOPS: the perf config" '^perf config: xdlops:64,64,16,32,32,32 \(--perf-config\)'
verify_pass "conv2d XDLOPS (MFMA emulated on OpenCL)" conv2d -n 2 -c 8 -H 6 -W 6 -k 16 -t f16 --perf-config xdlops:32,32,16,16,16

echo "-- --emit"
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --emit "$tmp/fwd.cl"
expect_rc "conv2d --emit" 0
if grep -q '__kernel' "$tmp/fwd.cl" 2>/dev/null; then ok "--emit file has __kernel"; else bad "--emit file has __kernel" "$(head -c 400 "$tmp/fwd.cl" 2>&1)"; fi
if grep -q 'kernel 1 of 1: tilec_conv_fwd' "$tmp/fwd.cl"; then ok "--emit header names the kernel"; else bad "--emit header names the kernel"; fi
if printf '%s\n' "$out" | grep -q '^ran:'; then bad "--emit alone runs nothing" "$out"; else ok "--emit alone runs nothing"; fi
run conv2d -F 2 -n 1 -c 4 -H 9 -W 7 -k 6 -y 3 -x 2 -u 2 -v 2 -p 1 --emit "$tmp/bwd.cl" -V 1
expect_rc "bwd-data --emit -V 1" 0
n=$(grep -c '^__kernel' "$tmp/bwd.cl")
k=$(grep -c '^/\* ---- kernel [0-9]* of ' "$tmp/bwd.cl")
if [ "$n" -ge 2 ] && [ "$n" = "$k" ]; then ok "--emit: $n kernels, each with a header"; else bad "--emit: several kernels with headers" "$n kernels, $k headers"; fi
run gemm -M 8 -N 8 -K 8 --emit "$tmp/gemm.cl"
expect_rc "gemm --emit" 0
if grep -q '__kernel' "$tmp/gemm.cl"; then ok "gemm --emit file has __kernel"; else bad "gemm --emit file has __kernel"; fi
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --emit "$tmp/no/such/dir/k.cl"
expect_rc "--emit into a missing directory" 1

echo "-- --json"
if command -v python3 >/dev/null 2>&1; then
  run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 -V 1 --time --json
  expect_rc "conv2d --json" 0
  if python3 -m json.tool "$tmp/out" >/dev/null 2>&1; then ok "conv2d --json parses"; else bad "conv2d --json parses" "$out"; fi
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verify"]["result"]=="PASS" and d["time"]["ms"]>0 and d["problem"]["ho"]==6 and d["perf_config"]' "$tmp/out" 2>/dev/null; then
    ok "conv2d --json fields"; else bad "conv2d --json fields" "$out"; fi
  run gemm -M 16 -N 16 -K 16 -V 1 --json
  expect_rc "gemm --json" 0
  if python3 -m json.tool "$tmp/out" >/dev/null 2>&1; then ok "gemm --json parses"; else bad "gemm --json parses" "$out"; fi
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verify"]["result"]=="PASS" and d["problem"]["m"]==16' "$tmp/out" 2>/dev/null; then
    ok "gemm --json fields"; else bad "gemm --json fields" "$out"; fi
else
  skip "--json" "no python3"
fi

echo "-- --time"
run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --time -i 3
expect_rc "conv2d --time" 0
expect_out "conv2d --time prints ms and GFLOP/s" '^time: [0-9.]+ ms \(median of 3 runs\), [0-9.]+ GFLOP/s$'
run gemm -M 32 -N 32 -K 32 --time
expect_out "gemm --time prints ms and GFLOP/s" '^time: [0-9.]+ ms \(median of 5 runs\), [0-9.]+ GFLOP/s$'
# the timed launches run in the same call as the verified first one, after
# its copy back: the result checked is that of one run
run gemm -M 40 -N 24 -K 56 --time -i 3 -V 1
expect_rc "gemm --time -i 3 -V 1" 0
expect_out "gemm --time -i 3 -V 1: time" '^time: [0-9.]+ ms \(median of 3 runs\), [0-9.]+ GFLOP/s$'
expect_out "gemm --time -i 3 -V 1: verify" '^verify: PASS '
run gemm --kernel tile -M 40 -N 24 -K 56 --time -i 3 -V 1
expect_rc "gemm --kernel tile --time -i 3 -V 1" 0
expect_out "gemm --kernel tile --time -i 3 -V 1: time" '^time: [0-9.]+ ms \(median of 3 runs\), [0-9.]+ GFLOP/s$'
expect_out "gemm --kernel tile --time -i 3 -V 1: verify" '^verify: PASS '
# a plan of 4 kernels (backward data, stride 2), each timed back to back
run conv2d -F 2 -n 1 -c 4 -H 8 -W 8 -k 8 -u 2 -v 2 --time -i 3 -V 1
expect_rc "conv2d -F 2 -u 2 -v 2 --time -i 3 -V 1" 0
expect_out "conv2d of 4 kernels --time: time" '^time: [0-9.]+ ms \(median of 3 runs\), [0-9.]+ GFLOP/s$'
expect_out "conv2d of 4 kernels --time: verify" '^verify: PASS '

echo "-- --tune and the perf DB"
problem="-n 1 -c 4 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1"
run conv2d $problem -V 1
expect_out "before tuning: the heuristic" '^perf config: .*\(heuristic'
if [ -e "$TILEC_PERFDB" ]; then bad "a run without --tune creates no perf DB"; else ok "a run without --tune creates no perf DB"; fi
run conv2d $problem --tune --tune-max 3 -V 1
expect_rc "conv2d --tune" 0
expect_out "--tune shows progress" '^tuning 1/[0-9]+ [0-9,]+: ' stderr
expect_out "--tune shows progress 3/3" '^tuning 3/3 ' stderr
expect_out "--tune prints the winner" '^perf config: [0-9,]+ \(tuned: fastest of 3 tried, .* stored in the perf DB '
expect_out "--tune result verifies" '^verify: PASS'
tuned=$(printf '%s\n' "$out" | sed -nE 's/^perf config: ([0-9,]+) .*/\1/p')
if [ -s "$TILEC_PERFDB" ]; then ok "the perf DB file exists"; else bad "the perf DB file exists" "$TILEC_PERFDB"; fi
run conv2d $problem -V 1
expect_rc "second run" 0
expect_out "second run uses the perf DB" "^perf config: $tuned \(from the perf DB "
expect_out "second run verifies" '^verify: PASS'
run conv2d $problem -F 2 -V 1
expect_out "another problem: still the heuristic" '^perf config: .*\(heuristic'
run gemm -M 48 -N 40 -K 24 --tune --tune-max 2
expect_rc "gemm --tune" 0
gtuned=$(printf '%s\n' "$out" | sed -nE 's/^perf config: ([0-9,]+) .*/\1/p')
run gemm -M 48 -N 40 -K 24 -V 1
expect_out "gemm second run uses the perf DB" "^perf config: $gtuned \(from the perf DB "
expect_out "gemm second run verifies" '^verify: PASS'
TILEC_PERFDB="$tmp/none/perfdb.sqlite" run conv2d $problem -V 1
expect_rc "a perf DB that does not exist yet" 0
expect_out "no perf DB: the heuristic" '^perf config: .*\(heuristic'
if [ -z "$err" ] && [ ! -e "$tmp/none" ]; then ok "no perf DB: no warning, nothing created"; else bad "no perf DB: no warning, nothing created" "$err"; fi
touch "$tmp/blocker"
TILEC_PERFDB="$tmp/blocker/perfdb.sqlite" run conv2d $problem --tune --tune-max 2 -V 1
expect_rc "--tune with an unopenable perf DB still tunes" 0
n=$(grep -c 'warning' "$tmp/err")
if [ "$n" = 1 ]; then ok "unopenable perf DB: one warning"; else bad "unopenable perf DB: one warning" "$n warnings: $err"; fi
expect_out "unopenable perf DB: named" "cannot create the perf DB directory $tmp/blocker" stderr
expect_out "unopenable perf DB: not stored" 'not stored'

echo "-- gemm --kernel tile (the tile IR and its passes)"
run gemm --help
for w in --kernel --passes --no-aggregate --moe --tokens --valid --smem-limit; do
  expect_out "gemm --help mentions $w" "$w"
done
verify_pass "tile gemm" gemm --kernel tile -M 64 -N 48 -K 128 --passes
expect_out "tile: the kernel line" '^kernel: tilec_tile_gemm \(tile IR\), grid \[4, 1, 1\] of blocks \[256, 1, 1\], shared memory 18432 bytes'
expect_out "--passes: aggregate-load applied, chunks=1" '^  aggregate-load: applied: hoisted the loads of A \(32x128 f32.*chunks=1'
expect_out "--passes: dce applied" '^  dce: applied: removed'
verify_pass "tile gemm --no-aggregate" gemm --kernel tile -M 64 -N 48 -K 128 --passes --no-aggregate
expect_out "--no-aggregate: not applied, says why" '^  aggregate-load: not applied: disabled \(--no-aggregate\)'
expect_out "--no-aggregate: dce has nothing to do" '^  dce: not applied: nothing to remove'
verify_pass "tile MoE gather" gemm --kernel tile -M 64 -N 32 -K 64 --moe --tokens 40 --valid 29 --tile-block 16,32,16 --passes
expect_out "MoE: the problem names the gather" '^problem: gemm --kernel tile .* --moe --tokens 40 --valid 29'
expect_out "MoE: masked rows read zero" '^  aggregate-load: applied: .*rows masked by the M mask read 0'
verify_pass "tile gemm chunked" gemm --kernel tile -M 32 -N 32 -K 256 --smem-limit 12288 --passes
expect_out "chunked: chunks=4" '^  aggregate-load: applied: A \(32x256 f32, 32768 bytes\) does not fit .*chunks=4'
verify_pass "tile gemm, dynamic K" gemm --kernel tile -M 32 -N 32 -K 64 --dynamic-k --passes
expect_out "dynamic K: not applied, why" '^  aggregate-load: not applied: K is not a compile-time constant'
verify_pass "tile gemm, K % BK != 0" gemm --kernel tile -M 32 -N 32 -K 40 --passes
expect_out "mask on K: not applied, why" '^  aggregate-load: not applied: the load of A is masked along K'
verify_pass "tile gemm, k-first address" gemm --kernel tile -M 32 -N 32 -K 64 --a-form k-first --passes
expect_out "k-first: not applied, why" '^  aggregate-load: not applied: A.s address adds the K offsets before the M offsets'
verify_pass "tile gemm, f16, transposed" gemm --kernel tile -M 40 -N 24 -K 48 -t f16 --transA 1 --transB 1 --tile-block 16,8,16
run gemm --kernel tile -M 32 -N 32 -K 64 --passes --emit "$tmp/tile.cl"
expect_rc "tile --emit" 0
if grep -q 'aggregate-load: applied' "$tmp/tile.cl" && grep -q '^__kernel void tilec_tile_gemm' "$tmp/tile.cl"; then
  ok "tile --emit: the kernel with its pass reports"; else bad "tile --emit: the kernel with its pass reports" "$(head -c 600 "$tmp/tile.cl")"; fi
run gemm --kernel tile -M 32 -N 32 -K 64 --print-ir
expect_out "--print-ir shows the shared buffer" 'ttg.local_alloc .* -> !ttg.memdesc<32x64xf32, #shared>'
if command -v python3 >/dev/null 2>&1; then
  run gemm --kernel tile -M 32 -N 32 -K 64 -V 1 --json --no-aggregate
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p={x["name"]: x for x in d["passes"]}; assert d["kernel"]=="tile" and d["verify"]["result"]=="PASS" and not p["aggregate-load"]["applied"] and "no-aggregate" in p["aggregate-load"]["detail"]' "$tmp/out" 2>/dev/null; then
    ok "tile --json: passes"; else bad "tile --json: passes" "$out"; fi
else
  skip "tile --json" "no python3"
fi
run gemm -M 16 -N 16 -K 16 --passes
expect_rc "--passes without --kernel tile" 2
expect_one_line "--passes without --kernel tile" '--passes applies to --kernel tile'
run gemm --kernel tile -M 16 -N 16 -K 16 --tokens 8
expect_rc "--tokens without --moe" 2
expect_one_line "--tokens without --moe" '--tokens applies to --moe only'
run gemm --kernel tile -M 16 -N 16 -K 16 --moe --tokens 8 --valid 9
expect_rc "--valid > --tokens" 2
expect_one_line "--valid > --tokens" 'valid <= tokens'
run gemm --kernel warp -M 16 -N 16 -K 16
expect_rc "--kernel warp" 2
expect_one_line "--kernel warp" "unknown kernel 'warp'"
if "$TILEC" version | grep -q '^NVRTC: not found'; then
  skip "tile --target cuda --emit" "NVRTC not found"
else
  run gemm --kernel tile -M 64 -N 32 -K 64 --moe --tokens 40 --valid 29 --target cuda --emit "$tmp/tile.cu" --passes
  expect_rc "tile MoE --target cuda --emit" 0
  expect_out "tile MoE: compiled with NVRTC" '^compiled with NVRTC for sm_90a'
fi

echo "-- CUDA (compile only)"
if "$TILEC" version | grep -q '^NVRTC: not found'; then
  skip "conv2d --target cuda --emit" "NVRTC not found"
else
  run conv2d -n 1 -c 4 -H 8 -W 8 -k 8 --target cuda --emit "$tmp/k.cu"
  expect_rc "conv2d --target cuda --emit" 0
  expect_out "compiled with NVRTC" '^compiled with NVRTC for sm_90a'
  if grep -q '__global__' "$tmp/k.cu"; then ok "cuda --emit has __global__"; else bad "cuda --emit has __global__"; fi
  expect_out "conv2d f32 --target cuda: the FMA kernel" '^perf config: [0-9]+(,[0-9]+){5} \(heuristic, FMA\)'
fi
# f16 on CUDA: the mma.sync kernel by default (tc_gemm_default_for), the
# same perf config verified on OpenCL (the mma.sync emulation)
conv16="-n 2 -c 16 -H 8 -W 8 -k 16 -p 1 -q 1 -t f16"
run conv2d $conv16 --target cuda --arch sm_80 --emit "$tmp/k16.cu"
expect_rc "conv2d -t f16 --target cuda --emit" 0
expect_out "conv2d -t f16 --target cuda: mma.sync by default" '^perf config: mma:[0-9]+(,[0-9]+){4} \(heuristic, mma\.sync\)'
if grep -q 'mma.sync.aligned.m16n8k16' "$tmp/k16.cu" 2>/dev/null; then ok "conv2d -t f16 --target cuda: the kernel has mma.sync"; else bad "conv2d -t f16 --target cuda: the kernel has mma.sync" "$(head -c 400 "$tmp/k16.cu" 2>&1)"; fi
if "$TILEC" version | grep -q '^NVRTC: not found'; then
  skip "conv2d -t f16 --target cuda: NVRTC" "NVRTC not found"
else
  expect_out "conv2d -t f16 --target cuda: compiled with NVRTC" '^compiled with NVRTC for sm_80'
fi
cfg16=$(printf '%s\n' "$out" | sed -n 's/^perf config: \(mma:[0-9,]*\) .*/\1/p')
if [ -n "$cfg16" ]; then
  verify_pass "conv2d -t f16 --perf-config $cfg16 (opencl, emulated)" conv2d $conv16 --perf-config "$cfg16"
else
  bad "conv2d -t f16: the CUDA perf config" "none in: $out"
fi
run conv2d $conv16 -V 1
expect_out "conv2d -t f16 on opencl: still the FMA kernel" '^perf config: [0-9]+(,[0-9]+){5} \(heuristic, FMA\)'
run gemm -M 64 -N 48 -K 32 -t bf16 --target cuda --arch sm_80 --emit "$tmp/g16.cu"
expect_out "gemm -t bf16 --target cuda --arch sm_80: mma.sync by default" '^perf config: mma:.*\(heuristic, mma\.sync\)'
# sm_90a (the default arch) and plain matrices: the TMA + wgmma kernel
run gemm -M 200 -N 136 -K 72 -t bf16 --target cuda --emit "$tmp/gtma.cu"
expect_out "gemm -t bf16 --target cuda: TMA + wgmma by default" '^perf config: tmaws:[0-9]+,[0-9]+,[0-9]+ \(heuristic, TMA \+ wgmma\)'
if grep -q 'cp.async.bulk.tensor' "$tmp/gtma.cu" 2>/dev/null && grep -q 'wgmma.mma_async' "$tmp/gtma.cu" &&
   grep -q 'stmatrix.sync.aligned' "$tmp/gtma.cu"; then
  ok "gemm TMA kernel: bulk tensor copies, wgmma, stmatrix"
else
  bad "gemm TMA kernel: bulk tensor copies, wgmma, stmatrix" "$(head -c 400 "$tmp/gtma.cu" 2>&1)"
fi
cfgtma=$(printf '%s\n' "$out" | sed -nE 's/^perf config: (tmaws:[0-9,]+) .*/\1/p')
verify_pass "gemm -t bf16 --perf-config $cfgtma (opencl, emulated)" gemm -M 200 -N 136 -K 72 -t bf16 --perf-config "$cfgtma"
# persistent: 3 blocks walk the 16 tiles of 256 x 256 (64 x 64 tiles)
verify_pass "gemm --perf-config tmaws:64,64,2,1,3 (persistent, emulated)" gemm -M 256 -N 256 -K 128 -t bf16 --perf-config tmaws:64,64,2,1,3
expect_out "gemm persistent: a grid of 3 blocks" '^kernel: tilec_gemm, grid \[3, 1, 1\] of blocks \[128, 1, 1\]'
run gemm -M 256 -N 256 -K 128 -t bf16 --perf-config tmaws:128,192,5,1,132 -V 1
expect_rc "gemm persistent: 5 stages of 128 x 192 and the C buffers do not fit" 2
expect_out "gemm persistent: the shared-memory rule" 'the persistent kernel.s two C buffers\) \+ 1024 = 238592 bytes exceeds' stderr
run gemm -M 64 -N 64 -K 60 -t bf16 --perf-config tma:64,64,2 -V 1
expect_rc "gemm tma: K = 60 (rows of 120 bytes)" 2
expect_out "gemm tma: K = 60 (rows of 120 bytes): the rule" 'row stride of A must be a multiple of 16 bytes' stderr

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
