#!/usr/bin/env bash
# cuda_paths.sh - runs every CUDA path of the tilec command once on a CUDA
# device and verifies it (-V 1 against the plain C reference): the example
# fusion kernels, each GEMM kernel kind (FMA f32, mma.sync, TMA + wgmma in
# its pipelines, the tile-IR GEMM, grouped), shapes that do not divide the
# tiles, conv2d in its three directions and two layouts, and the fusion
# path (the matmul scheduler's GEMMs with epilogues, -M dyn, norms, and
# conv2d --path fusion: the commands named fusion_*).  For a GPU
# session (bench/hopper.sh runs it); on a machine without a CUDA device each
# command says so and the script exits 3.
#
#   bench/cuda_paths.sh [TILEC]     (default build/tilec)
#
# Prints one line per command (PASS / FAIL / TIMEOUT and the verify line),
# then "cuda_paths: P passed, F failed".  Each command runs under its own
# timeout (CUDA_PATHS_TIMEOUT, default 60 s); CUDA_PATHS_ONLY (an extended
# regular expression) runs only the commands whose name matches it.
# Exit status: 0 all passed, 1 one failed, 3 no CUDA device.
set -u
T=${1:-build/tilec}
lim=${CUDA_PATHS_TIMEOUT:-60}
pass=0 fail=0 nodev=0
run() {
  local name=$1 out rc
  shift
  [ -n "${CUDA_PATHS_ONLY:-}" ] && ! printf '%s' "$name" | grep -Eq "$CUDA_PATHS_ONLY" && return
  out=$(timeout -k 5 "$lim" "$T" "$@" 2>&1)
  rc=$?
  if printf '%s' "$out" | grep -q 'no CUDA device'; then
    nodev=$((nodev + 1))
    printf 'NODEV    %-28s\n' "$name"
    return
  fi
  local v
  v=$(printf '%s\n' "$out" | grep -E '^verify:|kernels? (verified|compiled)|^time:' | tr '\n' ' ')
  if [ $rc -eq 0 ] && ! printf '%s' "$out" | grep -q 'verify: FAIL'; then
    pass=$((pass + 1))
    printf 'PASS     %-28s %s\n' "$name" "$v"
  else
    fail=$((fail + 1))
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && v="timed out after ${lim}s; $v"
    printf 'FAIL     %-28s exit %d: %s\n' "$name" "$rc" "$v"
    printf '%s\n' "$out" | tail -n 15 | sed 's/^/         | /'
  fi
}
G="gemm --target cuda -V 1 --time -i 10"
C="conv2d --target cuda -V 1 --time -i 10"
run demo                       demo --target cuda
# shellcheck disable=SC2086
{
run gemm_f32_fma_513           $G -M 513 -N 257 -K 129 -t f32
run gemm_bf16_default_4096     $G -M 4096 -N 4096 -K 4096 -t bf16
run gemm_f16_default_1000      $G -M 1000 -N 1000 -K 1000 -t f16
run gemm_bf16_tA_tB_2048       $G -M 2048 -N 2048 -K 2048 -t bf16 --transA 1 --transB 1
run gemm_bf16_odd_999          $G -M 999 -N 1001 -K 997 -t bf16
run gemm_bf16_mma_sm80_2048    $G -M 2048 -N 2048 -K 2048 -t bf16 --arch sm_80
run gemm_f16_mma_sm80_odd      $G -M 333 -N 520 -K 264 -t f16 --arch sm_80
run gemm_bf16_tma_2048         $G -M 2048 -N 2048 -K 2048 -t bf16 --perf-config tma:128,128,4
run gemm_bf16_tmaws_cluster    $G -M 2048 -N 2048 -K 2048 -t bf16 --perf-config tmaws:128,256,4,2
run gemm_bf16_tmaws_persist    $G -M 2048 -N 4096 -K 1024 -t bf16 --perf-config tmaws:128,256,4,1,132
run gemm_bf16_grouped_g4       $G -M 512 -N 512 -K 512 -t bf16 -g 4
run gemm_tile_f16              $G -M 1024 -N 1024 -K 1024 -t f16 --kernel tile
run gemm_tile_moe              $G -M 256 -N 512 -K 256 -t f16 --kernel tile --moe --tokens 512 --valid 400
for lay in "NCHW KCYX NKHW" "NHWC KYXC NHWK"; do
  set -- $lay
  for F in 1 2 4; do
    run "conv_r50_3x3_F${F}_$1" $C -F $F -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -t f16 \
      --in_layout "$1" --fil_layout "$2" --out_layout "$3"
    run "conv_s2_F${F}_$1" $C -F $F -n 8 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 \
      -t f16 --in_layout "$1" --fil_layout "$2" --out_layout "$3"
  done
done
run conv_f32_grouped           $C -n 4 -c 32 -H 17 -W 19 -k 64 -y 3 -x 3 -p 1 -q 1 -g 4 -t f32
run conv_f16_1x1_s2            $C -n 16 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -u 2 -v 2 -t f16
# the fusion path: the matmul scheduler's kernels with their epilogues (the
# op type each picks: wgmma on sm_90a, mma.sync with --arch sm_80), the
# wgmma kernel fed by bulk tensor copies, cp.async rings, a row reduction,
# one kernel for every M, and convolutions as matmuls of views
run fusion_gemm_auto_bias_relu $G -M 2048 -N 2048 -K 2048 -t bf16 --epilogue bias,relu
run fusion_gemm_auto_odd_f16   $G -M 999 -N 1001 -K 997 -t f16 --epilogue bias_m,gelu,cast:f16
run fusion_gemm_auto_tA        $G -M 1024 -N 768 -K 512 -t bf16 --transA 1 --epilogue residual,silu
run fusion_gemm_wgmma_tma      $G -M 2048 -N 2048 -K 2048 -t bf16 --transB 1 --epilogue relu \
                                  --tiles 128,128,64,64,128 --macro wgmma --stages 1
run fusion_gemm_wgmma_ring2    $G -M 1000 -N 1000 -K 1000 -t f16 --epilogue scale:0.5,bias \
                                  --tiles 128,128,64,64,128 --macro wgmma --stages 2
run fusion_gemm_mma_sm80       $G -M 2048 -N 2048 -K 2048 -t bf16 --arch sm_80 --epilogue bias,silu
run fusion_gemm_mma_odd        $G -M 333 -N 520 -K 264 -t f16 --arch sm_80 --epilogue residual,relu \
                                  --tiles 64,64,32,32,32 --macro mma --stages 3
run fusion_gemm_fma_row_sum    $G -M 513 -N 257 -K 129 -t f32 --epilogue scale:0.5,bias,row_sum \
                                  --tiles 32,320,16,2,20 --stages 2
run fusion_gemm_batched        $G -g 3 -M 256 -N 384 -K 128 -t bf16 --epilogue col_max
run fusion_gemm_dyn_mma        $G -M dyn -N 256 -K 128 -t f16 --epilogue bias,relu \
                                  --tiles 64,64,16,32,32 --macro mma
run fusion_gemm_dyn_fma        $G -M dyn -N 100 -K 60 -t f32 --epilogue bias
run fusion_norm_layernorm      norm layernorm --target cuda -V 1 --time -i 10 -M 4096 -N 4096 -t bf16
run fusion_norm_softmax_dyn    norm softmax --target cuda -V 1 -M dyn -N 1024 -t f16
run fusion_conv_fwd_nhwc_bias  $C --path fusion --epilogue bias,relu -n 32 -c 64 -H 56 -W 56 -k 64 \
                                  -y 3 -x 3 -p 1 -q 1 -t f16 --in_layout NHWC --fil_layout KYXC --out_layout NHWK
run fusion_conv_fwd_wgmma      $C --path fusion --epilogue bias,relu -n 32 -c 64 -H 56 -W 56 -k 64 \
                                  -y 3 -x 3 -p 1 -q 1 -t f16 --in_layout NHWC --fil_layout KYXC --out_layout NHWK \
                                  --tiles 64,128,64,64,128 --macro wgmma --stages 3
run fusion_conv_bwd_data_nhwc  $C --path fusion -F 2 -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 \
                                  -t f16 --in_layout NHWC --fil_layout KYXC --out_layout NHWK
run fusion_conv_bwd_w_s2       $C --path fusion -F 4 -n 8 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 \
                                  -u 2 -v 2 -t f16
run fusion_conv_bwd_data_s2    $C --path fusion -F 2 -n 4 -c 32 -H 29 -W 31 -k 48 -y 3 -x 3 -p 1 -q 1 \
                                  -u 2 -v 2 -t f32
}
echo "cuda_paths: $pass passed, $fail failed$([ $nodev -gt 0 ] && echo ", $nodev without a CUDA device")"
[ $fail -gt 0 ] && exit 1
[ $pass -eq 0 ] && [ $nodev -gt 0 ] && exit 3
exit 0
