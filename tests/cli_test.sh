#!/usr/bin/env bash
# cli_test.sh - tests the real `tilec` binary ($TILEC, default build/tilec):
# help, version, devices (and their --json, which must parse with python3
# -m json.tool, as must conv2d/gemm/layout --json), demo (OpenCL, and CUDA
# and HIP compile-only without their GPUs; HIP without its runtime), and the
# usage errors.  Ends with "N passed, N failed, N
# skipped"; exits non-zero if any check failed.
set -u
TILEC=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the kernel cache of every tilec run here lives under $tmp (never ~/.cache)
export TILEC_CACHE_DIR="$tmp/cache"
# and the perf DB of conv2d/gemm too (never ~/.local/share)
export TILEC_PERFDB="$tmp/perfdb.sqlite"

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
for word in demo devices version help --target --device --only --list --arch TILEC_OPENCL_DEVICE \
            cache TILEC_CACHE_DIR TILEC_CACHE; do
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

echo "-- devices --json, version --json"
# json_check NAME PYTHON-ASSERTION: the last run's stdout is valid JSON
# (python3 -m json.tool) and the assertion holds for it as d
json_check() {
  if ! command -v python3 >/dev/null 2>&1; then skip "$1" "no python3"; return; fi
  if python3 -m json.tool "$tmp/out" >/dev/null 2>&1; then ok "$1: valid JSON"; else
    bad "$1: valid JSON" "$(head -c 2000 "$tmp/out")"; return
  fi
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2" "$tmp/out" 2>"$tmp/py.err"; then
    ok "$1: fields"; else bad "$1: fields" "$2" "$(head -c 2000 "$tmp/out")" "$(tail -n 3 "$tmp/py.err")"
  fi
}
run devices --json
expect_rc "devices --json" 0
json_check "devices --json" 'd["command"] == "devices" and len(d["opencl"]["devices"]) >= 1 and sum(x["default"] for x in d["opencl"]["devices"]) == 1 and all(set(x) >= {"index", "platform", "name", "type", "compute_units", "local_mem_bytes", "default"} for x in d["opencl"]["devices"]) and d["opencl"]["default"] is not None and set(d["cuda"]) >= {"nvrtc", "driver", "device"}'
json_check "devices --json: HIP state" 'set(d["hip"]) >= {"hipcc", "archs", "device"} and isinstance(d["hip"]["archs"], list) and (d["hip"]["hipcc"]["available"] or d["hip"]["hipcc"]["reason"]) and (d["hip"]["device"]["available"] or d["hip"]["device"]["reason"])'
json_check "devices --json: PoCL is there, indices as \`tilec devices\`" 'any("Portable Computing Language" == x["platform"] and x["index"] == "%d:%d" % (x["platform_index"], x["device_index"]) for x in d["opencl"]["devices"])'
json_check "devices --json: CUDA state agrees with the text" "(d['cuda']['nvrtc']['version'] is not None) == bool($have_nvrtc) and d['cuda']['device']['available'] == bool($have_cuda_device) and (d['cuda']['device']['available'] or d['cuda']['device']['reason'])"
TILEC_OPENCL_DEVICE=no-such-device run devices --json
expect_rc "devices --json, TILEC_OPENCL_DEVICE with no match" 0
json_check "devices --json: no default, and why" 'd["opencl"]["default"] is None and "no-such-device" in d["opencl"]["default_reason"] and d["opencl"]["TILEC_OPENCL_DEVICE"] == "no-such-device"'
run version --json
expect_rc "version --json" 0
json_check "version --json" 'd["tilec"] == "0.1.0" and "Portable Computing Language" in d["opencl"]["platforms"] and "nvrtc" in d["cuda"] and "hipcc" in d["hip"]'
run devices --json --frobnicate
expect_rc "devices --json --frobnicate" 2
run devices
if printf '%s\n' "$out" | grep -q '^{'; then bad "devices without --json prints text" "$out"; else ok "devices without --json prints text"; fi

echo "-- conv2d --json, gemm --json"
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -V 1 --json
expect_rc "conv2d --json" 0
json_check "conv2d --json" 'd["command"] == "conv2d" and d["verify"]["result"] == "PASS" and d["ok"] is True'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --emit "$tmp/conv.cl" --json
expect_rc "conv2d --emit --json (nothing runs)" 0
json_check "conv2d --emit --json" 'd["ran"] is False and len(d["kernels"]) == 1'
run gemm -M 8 -N 8 -K 8 -V 1 --json
expect_rc "gemm --json" 0
json_check "gemm --json" 'd["command"] == "gemm" and d["verify"]["result"] == "PASS"'
# past 2^30 multiply-adds the check is sampled: 256 * 256 * 20000 = 1.31e9;
# cells of side 2 (65536 single elements exceed max(4096, 2^30 / 20000 =
# 53687)): 128 * 128 = 16384 of the 65536 elements
run gemm -M 256 -N 256 -K 20000 -V 1
expect_rc "gemm -V 1 past 2^30 multiply-adds" 0
expect_out "gemm -V 1: a sampled check says so" '^verify: PASS \(.*; 16384 of 65536 elements, one in each 2x2 cell\)$'
run gemm -M 256 -N 256 -K 20000 -V 1 --json
json_check "gemm --json: checked_elements" 'd["verify"]["checked_elements"] == 16384'
# a failure still gives one JSON object, with the reason
run gemm -M 64 -N 64 -K 60 -t bf16 --perf-config tma:64,64,2 -V 1 --json
expect_rc "gemm --json with a tma config that breaks a rule" 2
json_check "gemm --json on a failure before the kernel" 'd["ok"] is False and d["kernels"] == [] and "row stride of A" in d["error"]'
run gemm -M 64 -N 64 -K 64 --target cuda -V 1 --json
if [ "$rc" -eq 1 ]; then
  json_check "gemm --target cuda --json without a CUDA device" 'd["ok"] is False and d["target"] == "cuda" and "CUDA" in d["error"]'
else
  expect_rc "gemm --target cuda --json on a CUDA device" 0
  json_check "gemm --target cuda --json on a CUDA device" 'd["ok"] is True'
fi
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --perf-config 64,100,32,4,2,2 --json
json_check "conv2d --json on a failure before the plan" 'd["ok"] is False and d["command"] == "conv2d" and d["error"]'
run conv2d -n 1 -c 4 -H 6 -W 6 -k 4 --perf-config 64,100,32,4,2,2 --json
expect_rc "conv2d --json with a perf config that breaks a rule" 2

echo "-- demo (OpenCL)"
run demo
expect_rc "tilec demo" 0
expect_out "demo names its device" '^tilec demo: 13 example kernels on OpenCL device '
for name in gsg_copy_1 gsg_copy_2 gsg_copy_3 gsg_copy_4 gsg_copy_5 gsg_copy_6 \
            pointwise_fma pointwise_relu cast_f16 cast_bf16 transpose transpose_xor matmul_bias_relu; do
  expect_out "demo verifies $name" "^$name +opencl +[0-9]+ +verified +[0-9.]+$"
done
expect_out "demo summary line" '^13 of 13 kernels verified on .+'
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

echo "-- cache"
unset TILEC_CACHE
# run_env ENV-ARGS... -- like run, through env(1): run_env -u HOME X=1 "$TILEC" cache path
run_env() {
  env "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
run cache path
expect_rc "cache path" 0
if [ "$out" = "$tmp/cache" ]; then ok "cache path is \$TILEC_CACHE_DIR"; else bad "cache path is \$TILEC_CACHE_DIR" "got '$out'"; fi
run cache stats
expect_rc "cache stats" 0
expect_out "cache stats: directory" "^directory: $tmp/cache\$"
expect_out "cache stats: enabled" '^enabled: yes$'
expect_out "cache stats: bytes" '^bytes: [0-9]+$'
entries=$(printf '%s\n' "$out" | sed -n 's/^entries: //p')
if [ "${entries:-0}" -ge 12 ]; then ok "cache stats: the demo runs left >= 12 entries ($entries)"; else
  bad "cache stats: the demo runs left >= 12 entries" "$out"; fi
run cache stats --json
expect_rc "cache stats --json" 0
expect_out "cache stats --json: one object" '^\{"directory": "[^"]+", "enabled": true, "entries": [0-9]+, "bytes": [0-9]+\}$'
if command -v python3 >/dev/null 2>&1; then
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["entries"] >= 12 else 1)'; then
    ok "cache stats --json parses"; else bad "cache stats --json parses" "$out"; fi
fi
# a second run of the same kernels reads them from the cache: nothing is written
touch "$tmp/marker"; sleep 1
run demo --only gsg_copy_3,transpose
expect_rc "demo with a warm cache" 0
expect_out "demo with a warm cache verifies" '^2 of 2 kernels verified on '
written=$(find "$tmp/cache" -newer "$tmp/marker" -name '*.tck' | wc -l)
if [ "$written" -eq 0 ]; then ok "warm cache: no entry rewritten"; else bad "warm cache: no entry rewritten" "$written written"; fi
# a rebuilt tilec (here: a copy, another file) does not read this build's kernels
cp "$TILEC" "$tmp/tilec-copy"
before=$(find "$tmp/cache" -name '*.tck' | wc -l)
"$tmp/tilec-copy" demo --only gsg_copy_3 >/dev/null 2>&1
after=$(find "$tmp/cache" -name '*.tck' | wc -l)
if [ "$after" -eq $((before + 1)) ]; then ok "another tilec build gets its own entries"; else
  bad "another tilec build gets its own entries" "$before entries before, $after after"; fi
entries=$after
echo "not mine" >"$tmp/cache/notes.txt"
run cache clear
expect_rc "cache clear" 0
expect_out "cache clear says how many" "^removed $entries entries from $tmp/cache\$"
run cache stats
expect_out "after clear: 0 entries" '^entries: 0$'
if [ -f "$tmp/cache/notes.txt" ]; then ok "cache clear leaves other files"; else bad "cache clear leaves other files"; fi
run cache clear
expect_rc "cache clear (empty)" 0
expect_out "cache clear (empty)" '^removed 0 entries from '
TILEC_CACHE=0 run demo --only gsg_copy_1
expect_rc "TILEC_CACHE=0 demo" 0
TILEC_CACHE=0 run cache stats
expect_out "TILEC_CACHE=0: nothing stored" '^entries: 0$'
expect_out "TILEC_CACHE=0: stats says off" '^enabled: no'
TILEC_CACHE=0 run cache stats --json
expect_out "TILEC_CACHE=0: --json says off" '"enabled": false'
run_env -u TILEC_CACHE_DIR XDG_CACHE_HOME="$tmp/xdg" "$TILEC" cache path
expect_rc "cache path from XDG_CACHE_HOME" 0
expect_out "cache path from XDG_CACHE_HOME" "^$tmp/xdg/tilec\$"
run_env -u TILEC_CACHE_DIR -u XDG_CACHE_HOME HOME="$tmp/home" "$TILEC" cache path
expect_out "cache path from HOME" "^$tmp/home/.cache/tilec\$"
run_env -u TILEC_CACHE_DIR -u XDG_CACHE_HOME -u HOME "$TILEC" cache stats
expect_rc "cache stats without any directory" 1
expect_out "no directory is explained" 'no cache directory' stderr
echo x >"$tmp/not-a-dir"
TILEC_CACHE_DIR="$tmp/not-a-dir" run cache stats
expect_rc "cache stats on a file" 1
expect_out "cache stats on a file: why" 'cannot read the cache directory' stderr
TILEC_CACHE_DIR="$tmp/not-a-dir" run cache clear
expect_rc "cache clear on a file" 1
TILEC_CACHE_DIR="$tmp/not-a-dir" run demo --only gsg_copy_1
expect_rc "demo with an unusable cache directory still works" 0
for h in "cache --help" "help cache" "cache stats --help"; do
  run $h
  expect_rc "tilec $h" 0
  expect_out "tilec $h: usage" '^usage: tilec cache stats'
done
run cache
expect_rc "cache without a command" 2
expect_out "cache without a command: one line" 'needs a command.*tilec --help' stderr
run cache frobnicate
expect_rc "cache frobnicate" 2
run cache --frobnicate
expect_rc "cache --frobnicate" 2
run cache clear --json
expect_rc "cache clear --json" 2
run cache stats extra
expect_rc "cache stats extra" 2
n=$(wc -l <"$tmp/err")
if [ "$n" -eq 1 ]; then ok "cache usage error: one line on stderr"; else bad "cache usage error: one line on stderr" "$(cat "$tmp/err")"; fi

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
run demo --target vulkan
expect_rc "demo --target vulkan" 2
run demo --target hip --device pocl
expect_rc "demo --target hip --device" 2
run demo --target hip --arch sm_90a
expect_rc "demo --target hip --arch sm_90a" 2
run demo --target hip --arch gfx1234zz
expect_rc "demo --target hip --arch gfx1234zz (the target model knows no such arch)" 2
run demo --device
expect_rc "demo --device without a value" 2
run version extra
expect_rc "version with an argument" 2

echo "-- layout"
run layout --help
expect_rc "layout --help" 0
expect_out "layout --help shows its usage" '^usage: tilec layout'
run help layout
expect_rc "tilec help layout" 0
run --help
expect_out "--help lists layout" '^  layout '
run layout --eval 'complement((2,2):(1,6), 24)'
expect_rc "layout --eval complement" 0
expect_out "complement((2,2):(1,6), 24) = (3,2):(2,12) (pycute)" '^\(3,2\):\(2,12\)$'
run layout --eval 'logical_divide(24:1, 4:2)'
expect_out "logical_divide(24:1, 4:2) = (4,(2,3)):(2,(1,8)) (pycute)" '^\(4,\(2,3\)\):\(2,\(1,8\)\)$'
run layout --eval 'Swizzle<3,4,3>(128)'
expect_out "Swizzle<3,4,3>(128) = 144" '^144$'
run layout --eval '(4,2):(1,16'
expect_rc "layout --eval parse error" 2
expect_out "parse error names the column" "^tilec layout: column 12: expected '\)'" stderr
expect_out "parse error shows a caret" '^             \^$' stderr
run layout --eval 'composition((4,4):(4,1), 6:1)'
expect_rc "layout --eval undefined composition" 1
expect_out "undefined composition says why" 'composition is not defined: shape divisibility' stderr
run layout --eval 'complement((2,2):(1,6), 24)' --json
expect_rc "layout --eval --json" 0
if printf '%s\n' "$out" | python3 -m json.tool >/dev/null 2>&1; then ok "--eval --json parses"; else bad "--eval --json parses" "$out"; fi
expect_out "--eval --json has the result" '"result": "\(3,2\):\(2,12\)"'
# the rest of CuTe's algebra: results derived by hand from the definitions
# (docs/layout.md), the 2-D divide of CuTe's layout-algebra documentation
run layout --eval 'zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))'
expect_rc "layout --eval zipped_divide" 0
expect_out "zipped_divide gathers tiles and rests" '^\(\(3,\(2,4\)\),\(3,\(2,2\)\)\):\(\(177,\(13,2\)\),\(59,\(26,1\)\)\)$'
run layout --eval 'tiled_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))'
expect_out "tiled_divide unpacks the rests" '^\(\(3,\(2,4\)\),3,\(2,2\)\):\(\(177,\(13,2\)\),59,\(26,1\)\)$'
run layout --eval 'flat_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))'
expect_out "flat_divide unpacks both" '^\(3,\(2,4\),3,\(2,2\)\):\(177,\(13,2\),59,\(26,1\)\)$'
run layout --eval 'zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))(0,(1,2))'
expect_out "the (1,2)th tile starts at 60" '^60$'
run layout --eval 'zipped_product((2,5):(5,1), (3,4))'
expect_out "zipped_product" '^\(\(2,5\),\(3,4\)\):\(\(5,1\),\(1,5\)\)$'
run layout --eval 'tiled_product((2,2):(4,1), 6:1)'
expect_out "tiled_product" '^\(\(2,2\),2,3\):\(\(4,1\),2,8\)$'
run layout --eval 'flat_product((2,2):(4,1), 6:1)'
expect_out "flat_product" '^\(2,2,2,3\):\(4,1,2,8\)$'
run layout --eval 'blocked_product((2,5):(5,1), (3,4):(1,3))'
expect_rc "layout --eval blocked_product" 0
expect_out "blocked_product: a 2x5 block in a 3x4 arrangement" '^\(6,\(5,4\)\):\(5,\(1,30\)\)$'
run layout --eval 'raked_product((2,5):(5,1), (3,4):(1,3))'
expect_out "raked_product interleaves" '^\(\(3,2\),\(4,5\)\):\(\(10,5\),\(30,1\)\)$'
run layout --eval 'filter((4,(1,3),2):(1,(7,0),4))'
expect_out "filter drops stride-0 modes" '^8:1$'
run layout --eval 'make_layout(make_layout(3:1, 4:3), make_layout(4:3, 3:1))'
expect_out "make_layout concatenates" '^\(\(3,4\),\(4,3\)\):\(\(1,3\),\(3,1\)\)$'
run layout --eval 'append(append(3:1, 4:3), append(3:1, 4:3))'
expect_out "append" '^\(3,4,\(3,4\)\):\(1,3,\(1,3\)\)$'
run layout --eval 'prepend(3:1, 4:3)'
expect_out "prepend" '^\(4,3\):\(3,1\)$'
for c in '16' '1,5' '1,(1,2)'; do
  run layout --eval "(3,(2,3)):(3,(12,1))($c)"
  expect_rc "L($c)" 0
  expect_out "(3,(2,3)):(3,(12,1))($c) = 17" '^17$'
done
run layout --eval '(3,(2,3)):(3,(12,1))(1,5)' --json
if printf '%s\n' "$out" | python3 -m json.tool >/dev/null 2>&1; then ok "L(coord) --json parses"; else bad "L(coord) --json parses" "$out"; fi
expect_out "L(coord) --json is an integer" '"kind": "integer", "result": "17", "value": 17'
run layout --eval '(3,(2,3)):(3,(12,1))(1,2,3)'
expect_rc "a coordinate of the wrong rank" 2
expect_out "wrong rank: the message names the layout's rank" '^tilec layout: column 22: the coordinate has 3 entries where the layout has rank 2' stderr
run layout --eval '(3,(2,3)):(3,(12,1))(0,(2,0))'
expect_rc "a coordinate entry outside its mode" 1
expect_out "outside: the message names mode 1.0" '^tilec layout: column 25: coordinate 2 is outside mode 1.0 \(shape 2: 0..1\)' stderr
run layout --eval 'blocked_product((2,5):(5,1), (3,4))'
expect_rc "blocked_product of a tiler" 2
expect_out "blocked_product of a tiler: argument 2" 'column 30: blocked_product: argument 2 must be a layout' stderr
run layout --eval 'zipped_divide((4,2):(1,4), (2,2,2))'
expect_rc "zipped_divide by a tiler of too many modes" 1
expect_out "too many modes: said" 'zipped_divide: the tiler has 3 modes but the layout only 2' stderr
run layout --eval 'tiled_divide((4,(4,4)):(1,(4,1)), (2:1, 6:1))' --json
expect_rc "tiled_divide undefined in mode 1" 1
expect_out "undefined divide names the mode (JSON)" '"error": "mode 1: composition is not defined: shape divisibility'
run layout --eval 'zipped_divid(24:1, 4:2)'
expect_rc "a misspelt function" 2
expect_out "misspelt function: named, with the known ones" "unknown function 'zipped_divid' \(known: .*zipped_divide" stderr
run layout --help
for f in filter zipped_divide tiled_divide flat_divide zipped_product tiled_product flat_product \
         blocked_product raked_product append prepend; do
  expect_out "layout --help lists $f" "$f"
done
expect_out "layout --help shows L(coord)" 'L\(1,\(1,2\)\)'
run layout '[8,64] split(1,8) xor(0,1) merge(1,2)' --elem-bytes 2 --access col --vec 8 --svg "$tmp/sw.svg"
expect_rc "layout: 128B swizzle in transforms" 0
expect_out "transform form prints its offset expression" '^offset\(r, c\) = '
expect_out "128B swizzle is bijective" '^bijective: yes$'
expect_out "128B swizzle: 16-byte chunk columns conflict-free" '^bank conflicts: 1-way max per access \(conflict-free\)$'
if python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$tmp/sw.svg" 2>/dev/null; then
  ok "--svg writes valid XML"; else bad "--svg writes valid XML" "$(head -c 300 "$tmp/sw.svg" 2>&1)"; fi
run layout '(8,64):(64,1)' --elem-bytes 2 --access col --vec 8 --view address --svg "$tmp/plain.svg" --json
expect_rc "layout --json" 0
if printf '%s\n' "$out" | python3 -m json.tool >/dev/null 2>&1; then ok "layout --json parses"; else bad "layout --json parses" "$out"; fi
expect_out "unswizzled chunk columns: 8-way" '"max_ways": 8'
expect_out "--json says bijective" '"bijective": true'
if python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$tmp/plain.svg" 2>/dev/null; then
  ok "--view address --svg writes valid XML"; else bad "--view address --svg writes valid XML" "$(head -c 300 "$tmp/plain.svg" 2>&1)"; fi
run layout '[32,32] pad(1,0,1)' --access col
expect_rc "layout: padded tile" 0
expect_out "padding is not bijective" '^bijective: no \(injective, but size 1024 < cosize 1055'
expect_out "padding removes the column conflicts" '^bank conflicts: 1-way'
run layout --tv 16x16 '((4,8),(2,2,2)):((32,1),(16,8,128))' --svg "$tmp/tv.svg"
expect_rc "layout --tv (mma A fragment)" 0
expect_out "TV layout owns each element once" '^each element owned once: yes$'
run layout '(8,64):(64,1' --json
expect_rc "layout: malformed layout" 2
expect_out "malformed layout: column on stderr" "^tilec layout: column 13: expected '\)'" stderr
expect_out "malformed layout: JSON error" '"column": 13'
run layout '[8,64] split(1,8' 
expect_rc "layout: malformed transforms" 2
run layout '[8,64] xor(1,0)'
expect_rc "layout: refused transform" 1
run layout '(8,64):(64,1)' --vec 3
expect_rc "layout --vec not dividing the columns" 2
run layout --frobnicate
expect_rc "layout: unknown option" 2
run layout
expect_rc "layout without a LAYOUT" 2

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
    expect_out "cuda summary" '^13 of 13 kernels compiled with NVRTC for sm_90a$'
  else
    expect_out "cuda summary" '^13 of 13 kernels verified on '
  fi
  # the PTX NVRTC made is in the cache; a second run writes nothing
  n=$(grep -l '^ptx nvrtc-' "$tmp"/cache/*.tck 2>/dev/null | wc -l)
  if [ "$n" -ge 13 ]; then ok "cache: PTX of the 13 CUDA kernels stored"; else bad "cache: PTX of the 13 CUDA kernels stored" "$n entries with PTX"; fi
  touch "$tmp/marker"; sleep 1
  run demo --target cuda
  expect_rc "demo --target cuda, warm cache" 0
  written=$(find "$tmp/cache" -newer "$tmp/marker" -name '*.tck' | wc -l)
  if [ "$written" -eq 0 ]; then ok "warm cache (CUDA): nothing rewritten"; else bad "warm cache (CUDA): nothing rewritten" "$written written"; fi
fi

echo "-- demo (HIP)"
have_hipcc=0
{ command -v hipcc >/dev/null 2>&1 || [ -x /opt/rocm/bin/hipcc ]; } && have_hipcc=1
have_libhip=0
for f in /usr/lib/*/libamdhip64.so* /usr/lib/libamdhip64.so* /opt/rocm/lib/libamdhip64.so*; do
  [ -e "$f" ] && have_libhip=1
done
have_amd=0
[ -e /dev/kfd ] && have_amd=1
run demo --target hip --only gsg_copy_6,transpose
if [ $have_hipcc = 0 ]; then
  expect_rc "demo --target hip without hipcc" 1
  expect_out "demo --target hip: hipcc missing" '^tilec demo: cannot compile for HIP: hipcc not found' stderr
elif [ $have_amd = 1 ]; then
  expect_rc "demo --target hip on the AMD GPU" 0
  expect_out "hip summary" '^2 of 2 kernels verified on '
else
  expect_rc "demo --target hip, no AMD GPU: compiled" 0
  expect_out "hip: gsg_copy_6 compiled" '^gsg_copy_6 +hip +8 +compiled \(hipcc gfx90a\)'
  expect_out "hip: transpose compiled" '^transpose +hip +[0-9]+ +compiled \(hipcc gfx90a\)'
  expect_out "hip summary" '^2 of 2 kernels compiled with hipcc for gfx90a$'
  if [ $have_libhip = 1 ]; then
    # the HIP runtime is there: hipGetDeviceCount is asked and its answer said
    expect_out "demo --target hip: hipGetDeviceCount reached" \
      '^not run: no AMD GPU: hipGetDeviceCount (failed: hipError[A-Za-z]+ \([0-9]+\)|reports 0 devices); '
  else
    expect_out "demo --target hip: no HIP runtime" '^not run: no AMD GPU: the HIP runtime \(libamdhip64\) cannot be loaded'
  fi
fi
# no HIP runtime at all (TILEC_HIP_RUNTIME names a library that is not there)
TILEC_HIP_RUNTIME=/nonexistent/libamdhip64.so run demo --target hip --only gsg_copy_6
if [ $have_hipcc = 1 ]; then
  expect_rc "demo --target hip, no HIP runtime: compiled" 0
  expect_out "demo --target hip, no HIP runtime: says so" \
    '^not run: no AMD GPU: the HIP runtime \(libamdhip64\) cannot be loaded \(tried /nonexistent/libamdhip64.so: .*TILEC_HIP_RUNTIME names it'
fi
TILEC_HIP_RUNTIME=/nonexistent/libamdhip64.so run devices
expect_out "devices, no HIP runtime" '^  HIP device: no AMD GPU: the HIP runtime \(libamdhip64\) cannot be loaded'
if printf '%s\n' "$out" | grep -q '^  HIP runtime: '; then bad "devices, no HIP runtime: no runtime line" "$out"; else ok "devices, no HIP runtime: no runtime line"; fi
if [ $have_libhip = 1 ]; then
  run devices
  expect_out "devices: the HIP runtime" '^  HIP runtime: [0-9]+\.[0-9]+\.[0-9]+ \(.*libamdhip64'
fi

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
