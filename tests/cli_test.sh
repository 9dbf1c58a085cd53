#!/usr/bin/env bash
# cli_test.sh - tests the real `tilec` binary ($TILEC, default build/tilec):
# help, version, devices, demo (OpenCL and CUDA compile-only), and the
# usage errors.  Ends with "N passed, N failed, N skipped"; exits non-zero
# if any check failed.
set -u
TILEC=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

# expect_rc NAME CODE: checks the last run's status
expect_rc() {
  if [ "$rc" -eq "$2" ]; then ok "$1: exit $2"; else
    bad "$1: exit $2" "got exit $rc" "stdout: $(head -c 2000 "$tmp/out")" "stderr: $(head -c 2000 "$tmp/err")"
  fi
}
# expect_out NAME REGEX [stdout|stderr]: the last run's output matches REGEX
expect_out() {
  local text=$out
  [ "${3:-stdout}" = stderr ] && text=$err
  if printf '%s\n' "$text" | grep -Eq -- "$2"; then ok "$1"; else
    bad "$1" "no line matches /$2/ in ${3:-stdout}:" "$(printf '%s\n' "$text" | head -n 40)"
  fi
}

if [ ! -x "$TILEC" ]; then
  echo "  FAIL $TILEC is not an executable (build it with make)"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

echo "-- help"
for h in --help help -h; do
  run $h
  expect_rc "tilec $h" 0
done
for word in demo devices version help --target --device --only --list --arch TILEC_OPENCL_DEVICE; do
  expect_out "--help mentions $word" "$word"
done
run demo --help
expect_rc "tilec demo --help" 0
expect_out "demo --help shows its usage" '^usage: tilec demo'

echo "-- no arguments"
run
expect_rc "tilec (no arguments)" 2
expect_out "no arguments: usage on stderr" '^usage: tilec' stderr
if [ -z "$out" ]; then ok "no arguments: nothing on stdout"; else bad "no arguments: nothing on stdout" "$out"; fi

echo "-- version"
for v in version --version; do
  run $v
  expect_rc "tilec $v" 0
  expect_out "tilec $v prints the version" '^tilec 0\.1\.0$'
done
expect_out "version: OpenCL ICD line" '^OpenCL ICD: loaded, [0-9]+ platform'
expect_out "version: NVRTC line" '^NVRTC: '
expect_out "version: CUDA driver line" '^CUDA driver: '
have_nvrtc=1
printf '%s\n' "$out" | grep -q '^NVRTC: not found' && have_nvrtc=0
have_cuda_device=1
printf '%s\n' "$out" | grep -q '^CUDA driver: no CUDA device' && have_cuda_device=0

echo "-- devices"
run devices
expect_rc "tilec devices" 0
expect_out "devices lists PoCL" 'Portable Computing Language|pthread'
expect_out "devices marks the default device" '^\* [0-9]+:[0-9]+ .*\[default\]$'
expect_out "devices reports CUDA" '^  CUDA driver: '

echo "-- demo (OpenCL)"
run demo
expect_rc "tilec demo" 0
expect_out "demo names its device" '^tilec demo: 12 example kernels on OpenCL device '
for name in gsg_copy_1 gsg_copy_2 gsg_copy_3 gsg_copy_4 gsg_copy_5 gsg_copy_6 \
            pointwise_fma pointwise_relu cast_f16 cast_bf16 transpose transpose_xor; do
  expect_out "demo verifies $name" "^$name +opencl +[0-9]+ +verified +[0-9.]+$"
done
expect_out "demo summary line" '^12 of 12 kernels verified on .+'
if printf '%s\n' "$out" | grep -q FAILED; then bad "demo: no FAILED rows" "$out"; else ok "demo: no FAILED rows"; fi

run demo --only gsg_copy_3
expect_rc "demo --only gsg_copy_3" 0
expect_out "gsg_copy_3 allocates 16 bytes of shared memory" '^gsg_copy_3 +opencl +16 +verified '
expect_out "demo --only runs one example" '^1 of 1 kernel verified on '
n=$(printf '%s\n' "$out" | grep -cE '^(gsg|pointwise|cast|transpose)')
if [ "$n" = 1 ]; then ok "demo --only prints one row"; else bad "demo --only prints one row" "got $n rows"; fi

run demo --only=gsg_copy_1,transpose --device pocl
expect_rc "demo --only A,B --device pocl" 0
expect_out "demo --only A,B: summary" '^2 of 2 kernels verified on '

run demo --list
expect_rc "demo --list" 0
expect_out "demo --list names transpose_xor" '^transpose_xor +.+'

TILEC_OPENCL_DEVICE=pocl run demo --only gsg_copy_6
expect_rc "TILEC_OPENCL_DEVICE=pocl demo" 0
expect_out "TILEC_OPENCL_DEVICE is reported" 'TILEC_OPENCL_DEVICE=pocl'

TILEC_OPENCL_DEVICE=no-such-device run demo --only gsg_copy_1
expect_rc "TILEC_OPENCL_DEVICE with no match" 1
expect_out "no match is explained" "no OpenCL device matches 'no-such-device'" stderr

echo "-- usage errors"
run demo --only nosuch
expect_rc "demo --only nosuch" 2
expect_out "demo --only nosuch names it" "unknown example 'nosuch'" stderr
run frobnicate
expect_rc "unknown subcommand" 2
expect_out "unknown subcommand is named" "unknown command 'frobnicate'.*tilec --help" stderr
run --frobnicate
expect_rc "unknown top-level flag" 2
expect_out "unknown top-level flag is named" "unknown option '--frobnicate'.*tilec --help" stderr
run demo --frobnicate
expect_rc "unknown demo flag" 2
expect_out "unknown demo flag is named" "unknown option '--frobnicate'.*tilec --help" stderr
run demo --target hip
expect_rc "demo --target hip" 2
run demo --device
expect_rc "demo --device without a value" 2
run version extra
expect_rc "version with an argument" 2

echo "-- demo (CUDA)"
if [ $have_nvrtc = 0 ]; then
  skip "demo --target cuda" "NVRTC not found"
else
  run demo --target cuda
  expect_rc "demo --target cuda" 0
  for name in gsg_copy_1 gsg_copy_3 pointwise_fma cast_bf16 transpose_xor; do
    expect_out "cuda: $name compiled" "^$name +cuda +[0-9]+ +compiled \\(NVRTC sm_90a\\)"
  done
  if [ $have_cuda_device = 0 ]; then
    expect_out "demo --target cuda says no CUDA device" 'no CUDA device'
    expect_out "cuda summary" '^12 of 12 kernels compiled with NVRTC for sm_90a$'
  else
    expect_out "cuda summary" '^12 of 12 kernels verified on '
  fi
fi

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
