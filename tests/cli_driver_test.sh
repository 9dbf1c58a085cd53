#!/usr/bin/env bash
# cli_driver_test.sh - tests `tilec driver` through the real binary ($TILEC,
# default build/tilec): MIOpenDriver conv lines in the styles of MIOpen's
# test/perf_models files, its CI and rocMLIR's config lists, run as they
# are on the default OpenCL device (small sizes) with every direction
# verified; MIOpenDriver's defaults (-F 0, -V 1, -t 0); every flag of
# MIOpenDriver's conv accepted by its long and its short name; what tilec
# refuses (exit 1, named, never "unknown option") and the malformed lines
# (exit 2); --pad_mode, -s 1 (the tuner and the perf DB, $TILEC_PERFDB in
# a temporary directory), --dump_output 1 and --out.  The tensor files'
# contents are checked against NumPy in python/tests/test_driver.py.
# Ends with "N passed, N failed, N skipped"; exits non-zero if any check
# failed.
set -u
TILEC=${TILEC:-build/tilec}
case $TILEC in /*) ;; *) TILEC=$PWD/$TILEC ;; esac
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILEC_PERFDB="$tmp/db/perfdb.sqlite"

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }

# run ARGS...: `tilec driver ARGS` in $tmp/work, leaving stdout in $out,
# stderr in $err, status in $rc
mkdir -p "$tmp/work"
run() {
  (cd "$tmp/work" && "$TILEC" driver "$@") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
expect_rc() {
  if [ "$rc" -eq "$2" ]; then ok "$1: exit $2"; else
    bad "$1: exit $2" "got exit $rc" "stdout: $(head -c 2000 "$tmp/out")" "stderr: $(head -c 1500 "$tmp/err")"
  fi
}
expect_out() {
  local text=$out
  [ "${3:-stdout}" = stderr ] && text=$err
  if printf '%s\n' "$text" | grep -Eq -- "$2"; then ok "$1"; else
    bad "$1" "no line matches /$2/ in ${3:-stdout}:" "$(printf '%s\n' "$text" | head -n 30)"
  fi
}
expect_no() {
  if printf '%s\n' "$out" | grep -Eq -- "$2"; then bad "$1" "a line matches /$2/:" "$out"; else ok "$1"; fi
}
# expect_count NAME N REGEX: exactly N lines of stdout match
expect_count() {
  local n
  n=$(printf '%s\n' "$out" | grep -Ec -- "$3")
  if [ "$n" -eq "$2" ]; then ok "$1"; else bad "$1" "$n lines match /$3/, not $2:" "$out"; fi
}
# fails KIND CODE NAME REGEX ARGS...: exit CODE, nothing on stdout, one
# line on stderr matching REGEX
fails() {
  local kind=$1 code=$2 name=$3 re=$4
  shift 4
  run "$@"
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] && printf '%s\n' "$err" | grep -Eq -- "$re"; then
    ok "$kind: $name"
  else
    bad "$kind: $name (exit $code, one line matching /$re/)" "exit $rc" "stdout: $(head -c 600 "$tmp/out")" "stderr: $err"
  fi
}
# refused NAME REGEX ARGS...: what MIOpenDriver runs and tilec does not:
# exit 1 (an unknown option is exit 2), named in the message
refused() { fails refused 1 "$@"; }
# usage NAME REGEX ARGS...: a malformed line, exit 2
usage() { fails "usage error" 2 "$@"; }
# runs_ok NAME DIRECTIONS ARGS...: exit 0 and one "Verifies OK on CPU
# reference" line for each of the DIRECTIONS (fwd, bwd, wrw, and bias:
# the bias gradient of -b 1), no FAILED
runs_ok() {
  local name=$1 dirs=$2
  shift 2
  run "$@"
  expect_rc "$name" 0
  local want=0 d
  for d in $dirs; do
    want=$((want + 1))
    case $d in
      fwd) expect_out "$name: fwd verifies" '^Forward Convolution Verifies OK on CPU reference \(' ;;
      bwd) expect_out "$name: bwd verifies" '^Backward Convolution Data Verifies OK on CPU reference \(' ;;
      wrw) expect_out "$name: wrw verifies" '^Backward Convolution Weights Verifies OK on CPU reference \(' ;;
      bias) expect_out "$name: the bias gradient verifies" '^Backward Convolution Bias Verifies OK on CPU reference \(' ;;
    esac
  done
  expect_count "$name: $want verification lines" "$want" 'Verifies OK on CPU reference'
  expect_no "$name: nothing FAILED" 'FAILED'
}

if [ ! -x "$TILEC" ]; then
  echo "  FAIL $TILEC is not an executable (build it with make)"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

echo "-- help"
"$TILEC" --help >"$tmp/out" 2>&1
if grep -q '^  driver ' "$tmp/out"; then ok "tilec --help lists driver"; else bad "tilec --help lists driver"; fi
"$TILEC" help driver >"$tmp/out" 2>&1 && grep -q '^usage: tilec driver' "$tmp/out" &&
  ok "tilec help driver" || bad "tilec help driver" "$(head -c 400 "$tmp/out")"
run --help
expect_rc "driver --help" 0
# MIOpenDriver's conv flags (driver/conv_driver.hpp, AddCmdLineArgs): long
# name and short name of each
miopen_flags="forw:F batchsize:n in_channels:c in_d:! in_h:H in_w:W out_channels:k fil_d:@
fil_h:y fil_w:x conv_stride_d:# conv_stride_h:u conv_stride_w:v pad_d:$ pad_h:p pad_w:q pad_val:r
trans_output_pad_d:% trans_output_pad_h:Y trans_output_pad_w:X iter:i verify:V
verification_cache:C time:t wall:w search:s printconv:P dump_output:o in_data:d weights:e
bias:b mode:m pad_mode:z tensor_vect:Z vector_length:L dilation_d:^ dilation_h:l dilation_w:j
in_bias:a group_count:g dout_data:D solution:S gpualloc:G in_cast_type:U out_cast_type:T
wei_cast_type:R in_layout:I out_layout:O fil_layout:f spatial_dim:_"
missing=""
for f in $miopen_flags; do
  long=${f%%:*} short=${f##*:}
  grep -qF -- "-$short, --$long " "$tmp/out" || missing="$missing $long"
done
if [ -z "$missing" ]; then ok "driver --help lists every MIOpenDriver conv flag with its short name"; else
  bad "driver --help lists every MIOpenDriver conv flag" "missing:$missing"; fi

echo "-- every MIOpenDriver conv flag is known, by both its names"
# each flag with a value of its kind, then -F 9: a known flag reaches the
# check of -F (exit 2 naming -F); an unknown one stops at itself
value_of() {
  case $1 in
    mode) echo conv ;; pad_mode) echo default ;; solution|in_cast_type|out_cast_type|wei_cast_type) echo -1 ;;
    in_layout|out_layout|fil_layout) echo NCHW ;; spatial_dim) echo 2 ;; vector_length|iter|verify|printconv) echo 1 ;;
    verification_cache|in_data|weights|in_bias|dout_data) echo "" ;; *) echo 0 ;;
  esac
}
unknown=""
for f in $miopen_flags; do
  long=${f%%:*} short=${f##*:} v=$(value_of "${f%%:*}")
  [ "$long" = forw ] && continue
  for spelled in "--$long" "-$short"; do
    run conv "$spelled" "$v" -F 9
    printf '%s\n' "$err" | grep -q -- '-F must be between 0 and 7' || unknown="$unknown $spelled"
  done
done
if [ -z "$unknown" ]; then ok "all $(echo $miopen_flags | wc -w) flags are read by their long and short names"; else
  bad "every MIOpenDriver flag is read" "not read:$unknown"; fi
run conv --conv_stride_0 1 --conv_stride_1 1 -F 9
expect_out "older MIOpenDriver spellings --conv_stride_0/1 are read" '-F must be between 0 and 7' stderr

echo "-- lines as they are (small sizes)"
# rocMLIR's config-list style, all three directions, timed
runs_ok "rocMLIR line -F 0 -t 1" "fwd bwd wrw" \
  conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 0 -t 1
expect_out "echoes the command line first" '^tilec driver conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 0 -t 1$'
expect_out "the device line" '^device: opencl '
for f in 1 2 4; do
  expect_out "problem string of -F $f" "^problem: conv2d -F $f -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -t f32 --in_layout NCHW --fil_layout KCYX --out_layout NKHW$"
done
expect_out "perf config line" '^perf config: [0-9]+(,[0-9]+){5} \(heuristic'
expect_out "fwd time" '^GPU Kernel Time Forward Conv\. Elapsed: [0-9]+\.[0-9]{6} ms \(median of 10\), [0-9.]+ GFLOP/s$'
expect_out "bwd time" '^GPU Kernel Time Backward Data Conv\. Elapsed: [0-9.]+ ms \(median of 10\), [0-9.]+ GFLOP/s$'
expect_out "wrw time" '^GPU Kernel Time Backward Weights Conv\. Elapsed: [0-9.]+ ms \(median of 10\), [0-9.]+ GFLOP/s$'
# 2 * N * K * C * Y * X * Ho * Wo = 2 * 2 * 8 * 8 * 3 * 3 * 9 * 9
expect_out "fwd stats: flopCnt 186624" '^stats: fwd-conv3x3u1, 2, 8, 9, 9, 3, 3, 8,  186624, '
expect_count "a stats header per direction" 3 '^stats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, timeMs$'
expect_out "fwd: every element checked (N*K*Ho*Wo = 1296)" '^Forward Convolution Verifies OK on CPU reference \(max error [0-9.e+-]+ of the bound; 1296 elements\)$'

# MIOpenDriver's defaults: -F 0 (all three), -V 1, -t 0
runs_ok "defaults: -F 0 -V 1" "fwd bwd wrw" conv -n 1 -c 4 -H 6 -W 6 -k 4
expect_no "defaults: -t 0 prints no time" 'GPU Kernel Time'

# MIOpen's test/perf_models style: long names, the 3-D flags at 0 / 1
runs_ok "perf_models line" "fwd" \
  conv --batchsize 2 --spatial_dim 2 --pad_h 1 --pad_w 1 --pad_d 0 --conv_stride_h 1 --conv_stride_w 1 --conv_stride_d 0 --dilation_h 1 --dilation_w 1 --dilation_d 0 --group_count 1 --mode conv --pad_mode default --trans_output_pad_h 0 --trans_output_pad_w 0 --trans_output_pad_d 0 --out_layout NCHW --in_d 1 --in_h 13 --in_w 13 --fil_d 1 --fil_h 3 --fil_w 3 --in_channels 12 --out_channels 16 --forw 1
runs_ok "perf_models line, stride 4, 11x11" "fwd" \
  conv --batchsize 1 --spatial_dim 2 --pad_h 2 --pad_w 2 --pad_d 0 --conv_stride_h 4 --conv_stride_w 4 --conv_stride_d 0 --dilation_h 1 --dilation_w 1 --dilation_d 0 --group_count 1 --mode conv --pad_mode default --trans_output_pad_h 0 --trans_output_pad_w 0 --trans_output_pad_d 0 --out_layout NCHW --in_d 1 --in_h 31 --in_w 31 --fil_d 1 --fil_h 11 --fil_w 11 --in_channels 3 --out_channels 8 --forw 1
# MIOpen's CI style: backward data alone, layouts by long name
runs_ok "CI line --forw 2" "bwd" \
  conv --forw 2 --in_layout NCHW --out_layout NCHW --fil_layout NCHW -n 2 -c 16 -H 7 -W 7 -k 8 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -t 1
# rocMLIR's f16 lines: NHWC by short names, lower case
runs_ok "rocMLIR convfp16 NHWC line" "fwd" \
  convfp16 -F 1 -f kyxc -I nhwc -O nhwk -n 2 -c 16 -H 7 -W 7 -k 32 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -t 1
expect_out "convfp16: f16 NHWC problem" '^problem: conv2d -F 1 -n 2 -c 16 -H 7 -W 7 -k 32 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -g 1 -t f16 --in_layout NHWC --fil_layout KYXC --out_layout NHWK$'
runs_ok "rocMLIR conv NCHW line -F 0" "fwd bwd wrw" \
  conv -F 0 -f NCHW -I NCHW -O NCHW -n 2 -c 16 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -t 1
runs_ok "convfp16 all directions, NHWC, groups" "fwd bwd wrw" \
  convfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 2 -F 0 --in_layout NHWC --fil_layout NHWC --out_layout NHWC
runs_ok "groups, stride, dilation, non-square filter" "fwd bwd wrw" \
  conv -n 1 -c 4 -H 9 -W 7 -k 6 -y 3 -x 2 -p 1 -q 0 -u 2 -v 1 -l 1 -j 2 -g 2 -F 0
runs_ok "-F 6: bwd and wrw only" "bwd wrw" conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 6
runs_ok "-F 5: fwd and wrw only" "fwd wrw" conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 5

echo "-- -m trans: the transposed convolution"
runs_ok "-m trans -F 0: stride 2, padding, groups, output padding" "fwd bwd wrw" \
  conv -m trans -n 2 -c 4 -H 5 -W 4 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 2 -Y 1 -X 1 -F 0
# Ho = (5 - 1) * 2 - 2 * 1 + 1 * (3 - 1) + 1 + 1 = 10, Wo = (4 - 1) * 2 - 2 + 2 + 1 + 1 = 8:
# fwd runs as the backward data of the convolution of a 10 x 8 input with
# C and K exchanged, bwd as its forward, wrw as its backward weights
expect_out "-m trans: fwd is the convolution's bwd" '^problem: conv2d -F 2 -n 2 -c 6 -H 10 -W 8 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -g 2 -t f32 --in_layout NCHW --fil_layout KCYX --out_layout NKHW$'
expect_out "-m trans: bwd is the convolution's fwd" '^problem: conv2d -F 1 -n 2 -c 6 -H 10 -W 8 -k 4 '
expect_out "-m trans: wrw is the convolution's wrw" '^problem: conv2d -F 4 -n 2 -c 6 -H 10 -W 8 -k 4 '
runs_ok "-m trans NHWC, dilation, one-sided padding, -F 1" "fwd" \
  conv --mode trans -n 1 -c 3 -H 4 -W 5 -k 2 -y 2 -x 3 -p 0 -q 1 -u 1 -v 2 -l 2 -j 1 -X 1 -F 1 -I NHWC -f NHWC -O NHWC
runs_ok "-m trans NHWC -F 6" "bwd wrw" \
  conv -m trans -n 1 -c 3 -H 4 -W 5 -k 2 -y 2 -x 3 -p 0 -q 1 -u 1 -v 2 -l 2 -j 1 -X 1 -F 6 -I NHWC -f NHWC -O NHWC
# output padding of a whole stride (1): run as 0 rows of bottom padding
runs_ok "-m trans: output padding >= stride, within the padding" "fwd bwd wrw" \
  conv -m trans -n 2 -c 2 -H 4 -W 4 -k 3 -y 3 -x 3 -p 1 -q 1 -Y 1
expect_out "-m trans: output padding as less bottom padding" '^problem: conv2d -F 2 -n 2 -c 3 -H 5 -W 4 -k 2 .* --pad_h_l 1 --pad_h_r 0 --pad_w_l 1 --pad_w_r 1 '
runs_ok "-m trans convfp16 depthwise, stride 3" "fwd bwd wrw" \
  convfp16 -m trans -n 1 -c 4 -H 3 -W 3 -k 4 -y 4 -x 2 -p 2 -q 0 -u 3 -v 2 -g 4 -Y 2 -X 1
# by hand: a 2 x 2 input of ones, a 2 x 2 filter of ones, stride 2: each
# input element covers its own 2 x 2 block of the 4 x 4 output with ones;
# output padding 1 adds a fifth row and column no element reaches: zeros
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
one='\000\000\200\077' zero='\000\000\000\000'
printf "$one$one$one$one" >"$tmp/work/ones.bin"
for r in 1 2 3 4 5; do for c in 1 2 3 4 5; do
  if [ $r -le 4 ] && [ $c -le 4 ]; then printf "$one"; else printf "$zero"; fi
done; done >"$tmp/work/want.bin"
run conv -m trans -n 1 -c 1 -H 2 -W 2 -k 1 -y 2 -x 2 -u 2 -v 2 -Y 1 -X 1 -F 1 -d ones.bin -e ones.bin --out y.bin
expect_rc "-m trans on ones" 0
if cmp -s "$tmp/work/y.bin" "$tmp/work/want.bin"; then ok "-m trans on ones: 4 x 4 ones, a zero fifth row and column"
else bad "-m trans on ones: 4 x 4 ones, a zero fifth row and column" "$(od -An -tf4 "$tmp/work/y.bin" | head -n 8)"; fi
# the gradient of x back through it: each x element sums its 2 x 2 block
# of dy; with dy all ones (the padding row and column included) 4 each
for i in $(seq 25); do printf "$one"; done >"$tmp/work/dy.bin"
printf '\000\000\200\100\000\000\200\100\000\000\200\100\000\000\200\100' >"$tmp/work/want.bin"
run conv -m trans -n 1 -c 1 -H 2 -W 2 -k 1 -y 2 -x 2 -u 2 -v 2 -Y 1 -X 1 -F 2 -e ones.bin -D dy.bin --out dx.bin
if cmp -s "$tmp/work/dx.bin" "$tmp/work/want.bin"; then ok "-m trans bwd on ones: 4 each"
else bad "-m trans bwd on ones: 4 each" "$(od -An -tf4 "$tmp/work/dx.bin")"; fi
# the weights [C, K/G, Y, X] = [6, 2, 3, 3] with -g 3, the output [N, K, Ho, Wo] = [1, 6, 5, 5]
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
run conv -m trans -n 1 -c 6 -H 3 -W 3 -k 6 -g 3 -u 2 -v 2 -p 1 -q 1 -F 0 -V 0 --out r.bin
for f in r.fwd.bin:600 r.bwd.bin:216 r.wrw.bin:432; do
  name=${f%%:*} size=${f##*:}
  got=$(stat -c %s "$tmp/work/$name" 2>/dev/null || echo none)
  if [ "$got" = "$size" ]; then ok "-m trans $name: $size bytes"; else bad "-m trans $name: $size bytes" "got $got"; fi
done

echo "-- --spatial_dim 3: 3-D convolution"
runs_ok "3-D -F 0: stride, padding, dilation, groups" "fwd bwd wrw" \
  conv --spatial_dim 3 -n 2 -c 4 --in_d 5 -H 6 -W 7 -k 6 --fil_d 3 -y 3 -x 2 --pad_d 1 -p 1 -q 0 --conv_stride_d 2 -u 1 -v 2 --dilation_d 1 -l 2 -j 1 -g 2 -F 0 -t 1
for f in 1 2 4; do
  expect_out "3-D problem string of -F $f" "^problem: conv3d -F $f -n 2 -c 4 --in_d 5 -H 6 -W 7 -k 6 --fil_d 3 -y 3 -x 2 --pad_d 1 -p 1 -q 0 --conv_stride_d 2 -u 1 -v 2 --dilation_d 1 -l 2 -j 1 -g 2 -t f32 --in_layout NCDHW --fil_layout KCZYX --out_layout NKDHW$"
done
# Do = (5 + 2 - 3) / 2 + 1 = 3, Ho = (6 + 2 - 5) / 1 + 1 = 4, Wo = (7 - 2) / 2 + 1 = 3;
# flopCnt = 2 N K (C/G) Z Y X Do Ho Wo = 2 * 2 * 6 * 2 * 3 * 3 * 2 * 3 * 4 * 3 = 31104
expect_out "3-D fwd: N*K*Do*Ho*Wo = 432 elements" '^Forward Convolution Verifies OK on CPU reference \(max error [0-9.e+-]+ of the bound; 432 elements\)$'
expect_out "3-D stats: flopCnt counts the depth" '^stats: fwd-conv3x2u1, 2, 4, 4, 3, 2, 3, 6,  31104, '
# stride 2 in depth and height: 2 x 2 x 1 filter phases, each its own GEMM
expect_out "3-D bwd: one GEMM per phase triple" '^plan: 4 kernels: tilec_conv_bwd_data_z0_y0_x0 .*tilec_conv_bwd_data_z1_y0_x0 '
runs_ok "3-D NDHWC f16, 4-letter layouts read as 3-D ones (NHWC -> NDHWC)" "fwd bwd wrw" \
  convfp16 -_ 3 -n 1 -c 6 -! 4 -H 5 -W 5 -k 4 -@ 2 -y 3 -x 1 -$ 1 -p 1 -q 0 -# 1 -u 2 -v 1 -^ 2 -l 1 -j 1 -I NHWC -f NHWC -O NHWC -F 0
expect_out "3-D NDHWC problem" '^problem: conv3d -F 1 .* -t f16 --in_layout NDHWC --fil_layout KZYXC --out_layout NDHWK$'
runs_ok "3-D -m trans: depth output padding, groups" "fwd bwd wrw" \
  conv -m trans --spatial_dim 3 -n 1 -c 4 --in_d 3 -H 4 -W 3 -k 6 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 --conv_stride_d 2 -u 2 -v 1 --trans_output_pad_d 1 -Y 1 -g 2 -F 0
# Do = (3 - 1) * 2 - 2 * 1 + 1 * (3 - 1) + 1 + 1 = 6, Ho = (4 - 1) * 2 - 2 + 2 + 1 + 1 = 8,
# Wo = (3 - 1) * 1 - 2 + 2 + 1 = 3: fwd runs as the convolution's bwd of a 6 x 8 x 3 input
expect_out "3-D -m trans: fwd is the convolution's bwd" '^problem: conv3d -F 2 -n 1 -c 6 --in_d 6 -H 8 -W 3 -k 4 --fil_d 3 '
# 5-D tensors in and out: x [1, 2, 2, 3, 3] NCDHW of ones, w [1, 2, 1, 1, 1] of ones: y = 2 everywhere
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
for i in $(seq 36); do printf "$one"; done >"$tmp/work/x.bin"
printf "$one$one" >"$tmp/work/w.bin"
run conv --spatial_dim 3 -n 1 -c 2 --in_d 2 -H 3 -W 3 -k 1 --fil_d 1 -y 1 -x 1 -F 1 -d x.bin -e w.bin --out y.bin
expect_rc "3-D tensors from files" 0
for i in $(seq 18); do printf '\000\000\000\100'; done >"$tmp/work/want.bin"
if cmp -s "$tmp/work/y.bin" "$tmp/work/want.bin"; then ok "3-D --out: 18 elements of 2"
else bad "3-D --out: 18 elements of 2" "$(od -An -tf4 "$tmp/work/y.bin" | head -n 4)"; fi
run conv --spatial_dim 3 -n 1 -c 2 --in_d 2 -H 3 -W 3 -k 1 --fil_d 1 -y 1 -x 1 -F 1 -d w.bin
expect_rc "3-D: an input file of the wrong size" 2

echo "-- -b 1: the bias, a second kernel"
runs_ok "-b 1 -F 1 -t 1" "fwd" conv -n 2 -c 4 -H 6 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -b 1 -F 1 -t 1
expect_out "-b 1: the bias kernel in the plan" '^plan: \+ 1 kernel: tilec_conv_bias '
expect_out "-b 1: the bias kernel's time" '^GPU Kernel Time Forward Conv\. Bias Elapsed: [0-9]+\.[0-9]{6} ms$'
runs_ok "-b 1 convfp16 3-D NDHWC -F 0: the bias and its gradient" "fwd bwd bias wrw" \
  convfp16 --spatial_dim 3 -n 2 -c 4 --in_d 3 -H 6 -W 5 -k 6 --fil_d 2 -y 3 -x 3 -p 1 -q 1 -I NDHWC -O NDHWC -f NDHWC -b 1 -F 0 -t 1
expect_count "-b 1: the bias kernel after the forward convolution" 1 '^plan: \+ 1 kernel: tilec_conv_bias'
expect_out "-b 1: the bias-gradient kernel with bwd" '^plan: 1 kernel: tilec_conv_bias_grad \(db\[k\]'
expect_out "-b 1: the bias gradient's time" '^GPU Kernel Time Backward Conv\. Bias Elapsed: [0-9.]+ ms$'
# the bias gradient in the order MIOpenDriver prints it: after the data gradient
if printf '%s\n' "$out" | grep -E 'Verifies OK' | sed -n 2,3p | tr '\n' '|' |
   grep -q '^Backward Convolution Data Verifies.*|Backward Convolution Bias Verifies'; then
  ok "-b 1: the bias gradient after the data gradient"
else bad "-b 1: the bias gradient after the data gradient" "$out"; fi
runs_ok "-b 1 -F 4: no bias kernel" "wrw" conv -n 1 -c 2 -H 4 -W 4 -k 3 -F 4 -b 1
expect_no "-b 1 -F 4: no bias kernel" 'tilec_conv_bias'
runs_ok "-b 1 -m trans NHWC -F 3 (the transposed output's channels)" "fwd bwd bias" \
  conv -m trans -n 2 -c 4 -H 5 -W 4 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 2 -Y 1 -X 1 -F 3 -b 1 -O NHWC -I NHWC
# the bias really added: y with --in_bias b (b[k] = k + 1) minus y without it, element by element
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<3f", 1, 2, 3))' >"$tmp/work/b.bin"
run conv -n 1 -c 2 -H 4 -W 4 -k 3 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 -a b.bin --out yb.bin -O NHWC
expect_rc "-b 1 --in_bias b.bin" 0
expect_out "--in_bias read" '^Read data from input file b.bin$'
run conv -n 1 -c 2 -H 4 -W 4 -k 3 -y 3 -x 3 -p 1 -q 1 -F 1 --out y0.bin -O NHWC
if python3 - "$tmp/work/yb.bin" "$tmp/work/y0.bin" <<'PY'
import struct, sys
yb = open(sys.argv[1], 'rb').read(); y0 = open(sys.argv[2], 'rb').read()
a = struct.unpack('<%df' % (len(yb) // 4), yb); b = struct.unpack('<%df' % (len(y0) // 4), y0)
# NHWK: the channel is the innermost dim; k + 1 added to each, one f32 rounding
ok = len(a) == 48 and all(abs(a[i] - b[i] - (i % 3 + 1)) <= 2 ** -22 * (abs(a[i]) + 4) for i in range(48))
sys.exit(0 if ok else 1)
PY
then ok "-b 1: y + b[k] in NHWK (b = 1, 2, 3)"; else bad "-b 1: y + b[k] in NHWK (b = 1, 2, 3)"; fi
run conv -n 1 -c 2 -H 4 -W 4 -k 3 -F 1 -a b.bin
expect_out "--in_bias without -b 1: a note" 'is not read without -b 1' stderr

echo "-- -w 1: wall-clock time"
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 3 -t 1 -w 1 -i 2
expect_rc "-w 1" 0
expect_out "-w 1: fwd wall-clock line" '^Wall-clock Time Forward Conv\. Elapsed: [0-9]+\.[0-9]{6} ms$'
expect_out "-w 1: bwd wall-clock line" '^Wall-clock Time Backward Data Conv\. Elapsed: [0-9.]+ ms$'

echo "-- -V, -P, -i, --pad_mode"
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 1 -V 0
expect_rc "-V 0" 0
expect_no "-V 0 verifies nothing" 'Verif'
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 1 -P 0
expect_rc "-P 0" 0
expect_no "-P 0: no problem line" '^problem:'
expect_out "-P 0: still verified" '^Forward Convolution Verifies OK'
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 1 -t 1 -i 3
expect_out "-i 3" 'Elapsed: [0-9.]+ ms \(median of 3\)'
# MIOpenDriver's rule: same pads (Y - S) / 2 where S divides H, else
# (Y - H % S) / 2; H 9, S 2, Y 3: (3 - 1) / 2 = 1; H 8, S 2: (3 - 2) / 2 = 0
run conv -n 1 -c 4 -H 9 -W 8 -k 4 -u 2 -v 2 --pad_mode same -F 1
expect_rc "--pad_mode same" 0
expect_out "--pad_mode same: -p 1 -q 0" '^problem: conv2d -F 1 -n 1 -c 4 -H 9 -W 8 -k 4 -y 3 -x 3 -p 1 -q 0 -u 2 -v 2 '
run conv -n 1 -c 4 -H 9 -W 8 -k 4 -p 2 -q 2 --pad_mode valid -F 1
expect_out "--pad_mode valid: -p 0 -q 0" '^problem: conv2d .* -p 0 -q 0 -u 1 -v 1 '
run conv -n 1 -c 4 -H 9 -W 9 -k 4 -p 2 -q 1 -l 2 -j 2 --pad_mode valid -F 1
expect_out "--pad_mode with dilation 2: the given padding (as MIOpenDriver)" '^problem: conv2d .* -p 2 -q 1 '

echo "-- -s 1: tilec's tuner and the perf DB"
run conv -n 1 -c 4 -H 6 -W 6 -k 8 -F 1 -s 1
expect_rc "-s 1" 0
expect_out "-s 1 tunes" '^perf config: .*\(tuned: fastest of [0-9]+ tried'
expect_out "-s 1 shows progress on stderr" '^tuning 1/[0-9]+ ' stderr
expect_out "-s 1 verifies the tuned kernel" '^Forward Convolution Verifies OK'
run conv -n 1 -c 4 -H 6 -W 6 -k 8 -F 1
expect_out "the next run uses the perf DB" '^perf config: .*\(from the perf DB '

echo "-- --dump_output 1 and --out"
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
run conv -n 2 -c 4 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -q 1 -F 0 -o 1 --out res.bin
expect_rc "-o 1 --out res.bin" 0
# elements: x 2*4*6*5 = 240, w 8*4*3*3 = 288, y 2*8*6*5 = 480; 4 bytes each
for f in dump_in.bin:960 dump_wei.bin:1152 dump_dout.bin:1920 dump_fwd_out_gpu.bin:1920 \
         dump_fwd_out_cpu.bin:1920 dump_bwd_din_gpu.bin:960 dump_bwd_din_cpu.bin:960 \
         dump_bwd_dwei_gpu.bin:1152 dump_bwd_dwei_cpu.bin:1152 res.fwd.bin:1920 res.bwd.bin:960 \
         res.wrw.bin:1152; do
  name=${f%%:*} size=${f##*:}
  got=$(stat -c %s "$tmp/work/$name" 2>/dev/null || echo none)
  if [ "$got" = "$size" ]; then ok "$name: $size bytes"; else bad "$name: $size bytes" "got $got"; fi
done
if cmp -s "$tmp/work/dump_fwd_out_gpu.bin" "$tmp/work/res.fwd.bin"; then ok "--out holds what dump_fwd_out_gpu.bin holds"; else bad "--out holds the fwd result"; fi
expect_out "says what it wrote" '^Wrote output to file res\.wrw\.bin$'
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 4 -V 0 --out dw
expect_rc "--out without an extension, one direction" 0
got=$(stat -c %s "$tmp/work/dw" 2>/dev/null || echo none)
if [ "$got" = 576 ]; then ok "--out dw: raw, 4*4*3*3*4 = 576 bytes"; else bad "--out dw: 576 bytes" "got $got"; fi
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 1 --dout_data nothing.bin
expect_rc "--dout_data with -F 1" 0
expect_out "--dout_data with -F 1: noted as not read" 'note: --dout_data is not read: no direction of -F 1 reads the output gradient' stderr

echo "-- a result that does not verify"
# x with a NaN (little-endian f32 0x7fc00000) and zeros: fwd cannot verify;
# bwd does not read x, runs after it and verifies (as in MIOpenDriver)
rm -rf "$tmp/work" && mkdir -p "$tmp/work"
{ printf '\000\000\300\177'; head -c $((1 * 4 * 6 * 6 * 4 - 4)) /dev/zero; } >"$tmp/work/xnan.bin"
run conv -n 1 -c 4 -H 6 -W 6 -k 4 -F 3 -d xnan.bin
expect_rc "a NaN in x: exit 1" 1
expect_out "fwd: FAILED, naming the first element" '^Forward Convolution FAILED: [0-9]+ of 64 elements out of bound; first at offset 0 \(n 0, k 0, ho 0, wo 0\)'
expect_out "bwd still runs and verifies" '^Backward Convolution Data Verifies OK on CPU reference'

echo "-- refused: MIOpenDriver runs them, tilec does not (yet)"
refused "-m trans: output padding of a whole stride beyond the padding" '^tilec driver: -Y 2 is not supported with --pad_h 0 and stride 2: .*output padding below the stride' conv -n 1 -c 4 -H 6 -W 6 -k 4 -u 2 -v 2 -m trans -Y 2
refused "convbfp16" '^tilec driver: convbfp16 is not supported: .*no bf16' convbfp16 -n 1 -c 4 -H 6 -W 6 -k 4
refused "convint8" '^tilec driver: convint8 is not supported: .*int8' convint8 -F 1 -f NCHW -I NCHW -O NCHW -n 1 -c 3 -H 8 -W 8 -k 4
refused "convfp8" '^tilec driver: convfp8 is not supported' convfp8 -n 1
refused "pool (another MIOpenDriver command)" "^tilec driver: 'pool' is an MIOpenDriver command tilec does not run" pool -n 1
refused "gemm points to tilec gemm" 'use `tilec gemm`' gemmfp16 -m 4
refused "-r 1" '^tilec driver: -r 1 is not supported: .*zeros' conv -r 1
refused "-w 2 (MIOpen's cache warm-up)" "^tilec driver: -w 2 is not supported: .*caches" conv -t 1 -w 2
refused "-C DIR" '^tilec driver: -C is not supported: .*reference' conv -C "$tmp"
refused "-S 3" '^tilec driver: -S 3 is not supported: .*one solution' conv -S 3
refused "-S by name" '^tilec driver: -S ConvHipImplicitGemmV4R1Fwd is not supported' conv -S ConvHipImplicitGemmV4R1Fwd
refused "-G 1" '^tilec driver: -G 1 is not supported' conv -G 1 -V 0
refused "-Z 1 -L 4" '^tilec driver: -Z 1 is not supported: .*int8' conv -Z 1 -L 4
refused "-U fp8" '^tilec driver: -U fp8 is not supported: .*cast' conv -U fp8
refused "--wei_cast_type bf16" '^tilec driver: --wei_cast_type bf16 is not supported' conv --wei_cast_type bf16
refused "--target hip" 'target hip is not supported by the driver' conv --target hip
usage "a malformed line is reported before a refused word" "unknown option '--frob'" convbfp16 --frob 1

echo "-- malformed lines (exit 2)"
usage "no command word" "the first word is the command" -n 1 -c 4
usage "unknown command word" "unknown command 'convx'" convx -n 1
usage "unknown long flag" "unknown option '--frob': not a flag of MIOpenDriver's conv" conv --frob 1
usage "unknown short flag" "unknown option '-K': not a flag of MIOpenDriver's conv" conv -K 1
usage "rocMLIR's -perf_priority is not MIOpenDriver's" "unknown option '-perf_priority'" conv -F 1 -n 1 -perf_priority 2
usage "missing value" '-n needs a value' conv -n
usage "-t f32 (the data type is the first word)" "-t is MIOpenDriver's --time, 0 or 1 .* the data type is the first word" conv -t f32
usage "-F 8" '-F must be between 0 and 7 \(got 8\)' conv -F 8
usage "-n two" "-n needs an integer, got 'two'" conv -n two
usage "-i 0" '-i must be between 1 and' conv -i 0
usage "-m foo" "-m must be conv or trans, got 'foo'" conv -m foo
usage "--pad_mode foo" "--pad_mode must be default, same or valid" conv --pad_mode foo
usage "-Z 1 alone" 'does not go with' conv -Z 1
usage "--in_layout NCDHW with --spatial_dim 2" '--in_layout NCDHW is a 3-D layout' conv --in_layout NCDHW
usage "--spatial_dim 4" '--spatial_dim must be between 2 and 3' conv --spatial_dim 4
usage "3-D: --in_d 0" '--in_d must be between 1 and' conv --spatial_dim 3 --in_d 0
usage "3-D: -# 0 (--conv_stride_d by its short name)" '-# must be between 1 and' conv -_ 3 -# 0
usage "3-D: --pad_d -1" '--pad_d must be between 0 and' conv --spatial_dim 3 --pad_d -1
usage "3-D: negative output depth" 'output depth would be' conv --spatial_dim 3 -n 1 -c 2 --in_d 2 -H 4 -W 4 -k 2 --fil_d 3
usage "3-D: a 5-letter layout that is no 3-D one" "bad input layout 'NCHWX'" conv --spatial_dim 3 -n 1 -c 2 --in_d 2 -H 4 -W 4 -k 2 --fil_d 1 -I NCHWX
usage "3-D -m trans: negative depth output padding" '--trans_output_pad_d must not be negative' conv -m trans --spatial_dim 3 --trans_output_pad_d -1
printf '\000\000\200\077\000\000\200\077\000\000\200\077\000\000\200\077' >"$tmp/bias4.bin"
run conv -n 1 -c 2 -H 4 -W 4 -k 3 -F 1 -b 1 -a "$tmp/bias4.bin"
expect_rc "--in_bias that does not fit (4 elements for K 3)" 2
expect_out "--in_bias that does not fit: named" '^tilec driver: -a: .*bias4.bin holds 16 bytes; a raw tensor of shape \(3,\) and type f32 takes 12$' stderr
usage "bad layout" "bad input layout 'NCXW'" conv -n 1 -c 4 -H 6 -W 6 -k 4 -I NCXW
usage "rocMLIR's own layout notation" "bad input layout '01NGC'" conv -F 1 -f N01GC -I 01NGC -O NGC01 -n 1 -c 3 -H 8 -W 8 -k 4
usage "c % g" 'not divisible by the group count' conv -n 1 -c 6 -H 6 -W 6 -k 4 -g 4
usage "negative output" 'output height would be' conv -n 1 -c 4 -H 2 -W 6 -k 4 -y 5
usage "--out ''" '--out needs a file name' conv --out ''
usage "-m trans: negative output padding" '--trans_output_pad_w must not be negative \(got -1\)' conv -m trans --trans_output_pad_w -1
# (1 - 1) * 1 - 2 * 1 + 1 * (1 - 1) + 1 + 0 = -1
usage "-m trans: the padding eats the output" "the transposed convolution's output height would be -1" conv -m trans -n 1 -c 4 -H 1 -W 6 -k 4 -y 1 -x 1 -p 1 -q 0

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
