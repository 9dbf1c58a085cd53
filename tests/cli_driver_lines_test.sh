#!/usr/bin/env bash
# cli_driver_lines_test.sh - MIOpenDriver command lines copied from MIOpen's
# and rocMLIR's sources run as they are through the real binary ($TILEC,
# default build/tilec), `tilec driver` in place of `MIOpenDriver` (or of
# the path to it), on the default OpenCL device: each exits 0 and every
# direction it runs verifies against the CPU reference.  The lines are
# chosen among the small ones of their files (PoCL on two cores); none
# had to be scaled down.  Each line's source is in the comment above it.
# Ends with "N passed, N failed, N skipped"; exits non-zero if any check
# failed.
set -u
TILEC=${TILEC:-build/tilec}
case $TILEC in /*) ;; *) TILEC=$PWD/$TILEC ;; esac
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILEC_PERFDB="$tmp/perfdb.sqlite"

ok()  { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }

# line NAME DIRECTIONS WORDS...: `tilec driver WORDS` exits 0 with one
# "Verifies OK on CPU reference" line for each of DIRECTIONS (fwd, bwd,
# wrw) and no FAILED line
line() {
  local name=$1 dirs=$2 d want=0 re
  shift 2
  (cd "$tmp" && "$TILEC" driver "$@") >"$tmp/out" 2>"$tmp/err"
  local rc=$? problems=""
  [ $rc -eq 0 ] || problems="exit $rc"
  for d in $dirs; do
    want=$((want + 1))
    case $d in
      fwd) re='^Forward Convolution Verifies OK on CPU reference \(' ;;
      bwd) re='^Backward Convolution Data Verifies OK on CPU reference \(' ;;
      wrw) re='^Backward Convolution Weights Verifies OK on CPU reference \(' ;;
    esac
    grep -Eq "$re" "$tmp/out" || problems="$problems; no $d verification"
  done
  [ "$(grep -c 'Verifies OK on CPU reference' "$tmp/out")" -eq $want ] ||
    problems="$problems; not $want verification lines"
  ! grep -q 'FAILED' "$tmp/out" || problems="$problems; a FAILED line"
  if [ -z "$problems" ]; then ok "$name ($dirs)"; else
    bad "$name ($dirs)" "${problems#; }" "stdout: $(head -c 2500 "$tmp/out")" "stderr: $(head -c 800 "$tmp/err")"
  fi
}

if [ ! -x "$TILEC" ]; then
  echo "  FAIL $TILEC is not an executable (build it with make)"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

echo "-- MIOpen"
# MIOpen, test/gtest/miopendriver_regression_issue_2047.cpp: the 3-D
# regression line, run with MIOPENDRIVER_MODE_CONV = conv and = convfp16
# (-w 1: the wall-clock time, with -t 1)
line "MIOpen 3-D regression line (conv)" "fwd" \
  conv -n 1 -c 1 --in_d 2 -H 1 -W 2 -k 2 --fil_d 2 -y 1 -x 2 --pad_d 0 -p 0 -q 0 --conv_stride_d 1 -u 1 -v 1 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 -m conv -g 1 -F 1 -i 1 -t 1 -w 1
grep -Eq '^Wall-clock Time Forward Conv\. Elapsed: [0-9.]+ ms$' "$tmp/out" &&
  ok "MIOpen 3-D regression line: the wall-clock line" ||
  bad "MIOpen 3-D regression line: the wall-clock line" "$(cat "$tmp/out")"
line "MIOpen 3-D regression line (convfp16)" "fwd" \
  convfp16 -n 1 -c 1 --in_d 2 -H 1 -W 2 -k 2 --fil_d 2 -y 1 -x 2 --pad_d 0 -p 0 -q 0 --conv_stride_d 1 -u 1 -v 1 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 -m conv -g 1 -F 1 -i 1 -t 1 -w 1
# a MIOpen fork's test of its channel-last 3-D solver
# (qiangpan2/MIOpen_1, test/conv3d_channel_last_wmmaops.cpp, the comment
# "MIOpenDriver convfp16 ..."): NDHWC for every tensor
line "MIOpen 3-D NDHWC convfp16 line" "fwd" \
  convfp16 -n 1 -c 16 --in_d 5 -H 104 -W 60 -k 16 --fil_d 1 -y 1 -x 1 --pad_d 0 -p 0 -q 0 --conv_stride_d 1 -u 1 -v 1 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 --in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC -m conv -g 1 -F 1 -t 1
grep -q '^problem: conv3d -F 1 -n 1 -c 16 --in_d 5 -H 104 -W 60 .* -t f16 --in_layout NDHWC --fil_layout KZYXC --out_layout NDHWK$' "$tmp/out" &&
  ok "MIOpen 3-D NDHWC line: the 3-D problem" || bad "MIOpen 3-D NDHWC line: the 3-D problem" "$(grep problem "$tmp/out")"
# MIOpen, test/perf_models/Mobilenet_v1_FP32_BS4.txt (each line there
# starts with ./lib/miopen/MIOpenDriver)
line "MIOpen perf_models Mobilenet BS4 7x7 160 -> 960" "fwd" \
  conv --batchsize 4 --spatial_dim 2 --pad_h 0 --pad_w 0 --pad_d 0 --conv_stride_h 1 --conv_stride_w 1 --conv_stride_d 0 --dilation_h 1 --dilation_w 1 --dilation_d 0 --group_count 1 --mode conv --pad_mode default --trans_output_pad_h 0 --trans_output_pad_w 0 --trans_output_pad_d 0 --out_layout NCHW --in_d 1 --in_h 7 --in_w 7 --fil_d 1 --fil_h 1 --fil_w 1 --in_channels 160 --out_channels 960 --forw 1
line "MIOpen perf_models Mobilenet BS4 14x14 192 -> 64" "fwd" \
  conv --batchsize 4 --spatial_dim 2 --pad_h 0 --pad_w 0 --pad_d 0 --conv_stride_h 1 --conv_stride_w 1 --conv_stride_d 0 --dilation_h 1 --dilation_w 1 --dilation_d 0 --group_count 1 --mode conv --pad_mode default --trans_output_pad_h 0 --trans_output_pad_w 0 --trans_output_pad_d 0 --out_layout NCHW --in_d 1 --in_h 14 --in_w 14 --fil_d 1 --fil_h 1 --fil_w 1 --in_channels 192 --out_channels 64 --forw 1
line "MIOpen perf_models Mobilenet BS4 28x28 192 -> 32" "fwd" \
  conv --batchsize 4 --spatial_dim 2 --pad_h 0 --pad_w 0 --pad_d 0 --conv_stride_h 1 --conv_stride_w 1 --conv_stride_d 0 --dilation_h 1 --dilation_w 1 --dilation_d 0 --group_count 1 --mode conv --pad_mode default --trans_output_pad_h 0 --trans_output_pad_w 0 --trans_output_pad_d 0 --out_layout NCHW --in_d 1 --in_h 28 --in_w 28 --fil_d 1 --fil_h 1 --fil_w 1 --in_channels 192 --out_channels 32 --forw 1

echo "-- rocMLIR"
# rocMLIR, mlir/utils/performance/conv-configs (the Stable Diffusion UNet
# section): the line as it is there
line "rocMLIR conv-configs UNet 64x64 320 -> 4" "fwd" \
  conv -F 1 -f NCHW -I NCHW -O NCHW -n 2 -c 320 -H 64 -W 64 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1
# rocMLIR, mlir/utils/jenkins/miopen-tests/important-conv-configs: the
# config "-n 2 -c 320 -H 64 -W 64 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1
# -j 1 -m conv -g 1 -t 1" as rocMLIR's miopen_validate.sh (same directory)
# runs it: "conv" or "convfp16", then --forw DIR --in_layout L
# --out_layout L --fil_layout L, then the config, for DIR 1, 2, 4 and L
# NCHW, NHWC
line "rocMLIR important-conv-configs, miopen_validate.sh fp16 fwd NHWC" "fwd" \
  convfp16 --forw 1 --in_layout NHWC --out_layout NHWC --fil_layout NHWC -n 2 -c 320 -H 64 -W 64 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -t 1
line "rocMLIR important-conv-configs, miopen_validate.sh fp32 bwd NHWC" "bwd" \
  conv --forw 2 --in_layout NHWC --out_layout NHWC --fil_layout NHWC -n 2 -c 320 -H 64 -W 64 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -t 1
line "rocMLIR important-conv-configs, miopen_validate.sh fp32 wrw NCHW" "wrw" \
  conv --forw 4 --in_layout NCHW --out_layout NCHW --fil_layout NCHW -n 2 -c 320 -H 64 -W 64 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -t 1

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
