#!/usr/bin/env bash
# sass_check.sh - compiles tilec's Hopper kernels to sm_90a cubins with nvcc
# and checks their SASS (cuobjdump -sass) for the Hopper instructions they
# must use (LDSM, STSM, HGMMA, UTMALDG, ...).  Needs no GPU.
#
#   TMA GEMM (tilec gemm ... -t bf16 --target cuda --emit): 8192^3 plain,
#     transA, transB, a ragged 1000^3, a skinny M=64 one and 8192^3 with
#     2-block clusters (tmaws:128,256,4,2; also UCGABAR, the cluster barrier)
#     and persistent (tmaws:128,256,4,1,132 and tmaws:128,256,4,2,132):
#       HGMMA, UTMALDG, UTMASTG, STSM and SYNCS (the mbarrier operations)
#       present; the HGMMA of the perf config's shape and type
#       (HGMMA.64xNx16.F32.BF16, N the config's n_per_block); no LDL / STL
#       (spills); a warp-specialised one (perf config tmaws:) also
#       USETMAXREG, and ptxas must not have dropped its setmaxnreg (info
#       C7508)
#   the fusion path's GEMM (tilec gemm -M 8192 -N 8192 -K 8192 -t bf16
#     --epilogue bias,relu,cast:bf16, the matmul scheduler's wgmma kernel):
#       HGMMA.64x256x16.F32.BF16 and LDGSTS (its cp.async rings: B is
#       [K, N], N-major) present; no LDL / STL
#   the same with --transB 1 (B [N, K]: K-major operands, whole boxes):
#       HGMMA.64x256x16.F32.BF16, UTMALDG and SYNCS (its rings of bulk
#       tensor copies on per-slot mbarriers) present, LDGSTS absent; no
#       LDL / STL
#   LdStMatrixSet (build/bench/ldst_bandwidth --no-run --emit, 8192x8192),
#     all 12 shmoo variants (swizzle 32/64/128B x cta_m 64/128 x cta_n 256/512):
#       LDSM, STSM, UTMALDG, UTMASTG present; no LDL / STL
#
# For each kernel it prints the count of every checked opcode, the
# registers (cuobjdump -res-usage: REG, STACK, LOCAL) and ptxas's spill
# bytes (-Xptxas -v), and writes the table as markdown to OUT/sass_check.md
# (the cubins, .sass listings and ptxas logs stay in OUT).  A missing
# instruction or a spill is a finding: it fails, naming the kernel, what is
# missing and how often the source asks for it.
#
# usage: bench/sass_check.sh [--out DIR] [--only gemm|ldst] [--require OP]
#   --out DIR      where the sources, cubins and listings go (default
#                  $OUT/sass if $OUT is set, else bench/out/sass)
#   --only KIND    check only the GEMMs or only the LdStMatrixSet variants
#   --require OP   also require opcode OP in every kernel (to test the check
#                  itself: `--only ldst --require HGMMA` must fail)
# Environment: TILEC (default build/tilec), LDST_BENCH (default
# build/bench/ldst_bandwidth), NVCC (default nvcc on PATH, $CUDA_HOME/bin,
# /usr/local/cuda/bin), TILEC_CUOBJDUMP (else scripts/find_cuobjdump.sh:
# PATH, /usr/local/cuda/bin, the pip package that scripts/deps.sh installs).
#
# Ends with "N passed, N failed, N skipped" (one per kernel).  Exit status:
# 0 every check passed; 1 a check failed (a finding); 2 a bad option or a
# kernel could not be generated or compiled; 3 nvcc or cuobjdump is missing
# (nothing checked: "0 passed, 0 failed, 1 skipped").
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD

out=${OUT:+$OUT/sass}
out=${out:-bench/out/sass}
only=all
extra=""
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "sass_check: --out needs a folder" >&2; exit 2; }; out=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || { echo "sass_check: --only needs gemm or ldst" >&2; exit 2; }
            case $2 in gemm|ldst) only=$2 ;; *) echo "sass_check: --only '$2': expected gemm or ldst" >&2; exit 2 ;; esac
            shift 2 ;;
    --require) [ $# -ge 2 ] || { echo "sass_check: --require needs an opcode" >&2; exit 2; }; extra="$extra $2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sass_check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

skip() {
  echo "  skip SASS check: $1"
  echo "0 passed, 0 failed, 1 skipped"
  exit 3
}

TILEC=${TILEC:-build/tilec}
LDST_BENCH=${LDST_BENCH:-build/bench/ldst_bandwidth}

# ---- the tools ----
nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  nvcc=$(command -v nvcc 2>/dev/null) || nvcc=""
  for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    [ -z "$nvcc" ] && [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && nvcc=$d/bin/nvcc
  done
fi
[ -n "$nvcc" ] && [ -x "$nvcc" ] || skip "nvcc not found (set NVCC, or put the CUDA toolkit on PATH or in /usr/local/cuda)"
cuobjdump=$(sh scripts/find_cuobjdump.sh) ||
  skip "cuobjdump not found (set TILEC_CUOBJDUMP; scripts/deps.sh pip-installs nvidia-cuda-cuobjdump where nvcc exists)"
# cuobjdump may call nvdisasm, which the pip package puts next to it
PATH=$(dirname "$cuobjdump"):$PATH
export PATH
[ "$only" = ldst ] || [ -x "$TILEC" ] || { echo "sass_check: $TILEC not found (run make)" >&2; exit 2; }
[ "$only" = gemm ] || [ -x "$LDST_BENCH" ] || { echo "sass_check: $LDST_BENCH not found (run make $LDST_BENCH)" >&2; exit 2; }

mkdir -p "$out" || exit 2
rm -f "$out"/*.cu "$out"/*.cubin "$out"/*.sass "$out"/*.log
echo "sass_check: nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $cuobjdump" \
     "($("$cuobjdump" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')), output in $out"

# ---- the kernels: NAME|SOURCE|REQUIRED OPCODES|what ----
kernels=()
gemm_shapes=(
  "gemm_8192_nn|-M 8192 -N 8192 -K 8192"
  "gemm_8192_tn|-M 8192 -N 8192 -K 8192 --transA 1"
  "gemm_8192_nt|-M 8192 -N 8192 -K 8192 --transB 1"
  "gemm_ragged_1000|-M 1000 -N 1000 -K 1000"
  "gemm_skinny_64|-M 64 -N 8192 -K 8192"
  "gemm_8192_cluster2|-M 8192 -N 8192 -K 8192 --perf-config tmaws:128,256,4,2"
  "gemm_8192_persist|-M 8192 -N 8192 -K 8192 --perf-config tmaws:128,256,4,1,132"
  "gemm_8192_persist_cluster2|-M 8192 -N 8192 -K 8192 --perf-config tmaws:128,256,4,2,132"
)
gen_fail=0
if [ "$only" != ldst ]; then
  for g in "${gemm_shapes[@]}"; do
    name=${g%%|*} args=${g#*|}
    # shellcheck disable=SC2086
    if ! js=$("$TILEC" gemm $args -t bf16 --target cuda --emit "$out/$name.cu" --json 2>"$out/$name.gen.log"); then
      echo "  FAIL $name: tilec gemm $args -t bf16 --target cuda --emit failed: $(tail -n 3 "$out/$name.gen.log")"
      gen_fail=1
      continue
    fi
    pc=$(printf '%s\n' "$js" | sed -n 's/.*"perf_config": "\([^"]*\)".*/\1/p')
    req="HGMMA UTMALDG UTMASTG STSM SYNCS"
    case $pc in tmaws:*) req="$req USETMAXREG" ;; esac
    case $pc in tmaws:*,*,*,2|tmaws:*,*,*,2,*) req="$req UCGABAR_ARV UCGABAR_WAIT" ;; esac
    # the wgmma shape: m64 n<n_per_block> k16, f32 += bf16 * bf16
    npb=$(printf '%s\n' "$pc" | sed -n 's/^tma[ws]*:[0-9]*,\([0-9]*\),.*/\1/p')
    [ -n "$npb" ] && req="$req HGMMA.64x${npb}x16.F32.BF16"
    kernels+=("$name|$out/$name.cu|$req$extra|tilec gemm $args -t bf16 (perf config $pc)")
  done
  # the fusion path's kernels: NAME, REQUIRED OPCODES, then the tilec
  # command line that emits it (into $out/NAME.cu)
  fusion_kernel() {
    local name=$1 req=$2
    shift 2
    if "$TILEC" "$@" --target cuda --emit "$out/$name.cu" >"$out/$name.gen.log" 2>&1; then
      kernels+=("$name|$out/$name.cu|$req$extra|tilec $*")
    else
      echo "  FAIL $name: tilec $* --target cuda --emit failed: $(tail -n 3 "$out/$name.gen.log")"
      gen_fail=1
    fi
  }
  # the matmul scheduler's wgmma GEMM with a bias + ReLU epilogue: its
  # HGMMA shape, its rings of bulk tensor copies (B [K, N] by N-major
  # boxes) on mbarriers, no cp.async, no LDL / STL; not yet stmatrix or
  # setmaxnreg
  fusion_kernel gemm_fusion_8192_bias_relu "HGMMA HGMMA.64x256x16.F32.BF16 UTMALDG SYNCS !LDGSTS" \
    gemm -M 8192 -N 8192 -K 8192 --epilogue bias,relu,cast:bf16 -t bf16 --arch sm_90a
  # with B [N, K] the operand tiles come by bulk tensor copies into the
  # rings' slots: no cp.async (an opcode written !OP must be absent)
  fusion_kernel gemm_fusion_8192_nt_tma_ring "HGMMA HGMMA.64x256x16.F32.BF16 UTMALDG SYNCS !LDGSTS" \
    gemm -M 8192 -N 8192 -K 8192 --transB 1 --epilogue cast:bf16 -t bf16 --arch sm_90a
  # the forward convolution, NHWC f16 3x3 pad 1 (a ResNet layer):
  # mma.sync, the image staged K-major (its channels innermost) by 16-byte
  # cp.async that zero-fill the padding, no LDL / STL
  fusion_kernel conv_fusion_nhwc_3x3 "HMMA LDSM LDGSTS.E.BYPASS.128.ZFILL" \
    conv2d -F 1 -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 --in_layout NHWC --fil_layout KYXC \
    --out_layout NHWK -t f16 --path fusion
fi
if [ "$only" != gemm ]; then
  if ! "$LDST_BENCH" --target cuda --size 8192x8192 --no-run --emit "$out" >"$out/ldst.gen.log" 2>&1; then
    echo "  FAIL $LDST_BENCH --no-run --emit $out failed:"
    sed 's/^/    /' "$out/ldst.gen.log" | tail -n 20
    gen_fail=1
  fi
  for sw in 32 64 128; do
    for m in 64 128; do
      for n in 256 512; do
        name=ldst_sw${sw}_m${m}_n${n}
        [ -f "$out/$name.cu" ] || continue
        kernels+=("$name|$out/$name.cu|LDSM STSM UTMALDG UTMASTG$extra|LdStMatrixSet 8192x8192, swizzle ${sw}B, CTA ${m}x${n}")
      done
    done
  done
fi

# Opcode counts of a SASS listing: "OPCODE COUNT" per line, the opcode
# without its modifiers or predicate (HGMMA.64x128x16.F32.BF16 -> HGMMA).
opcounts() {
  awk '/\/\*[0-9a-f]+\*\// {
         line = $0
         sub(/^.*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
         sub(/[ \t]*;.*/, "", line)
         n = split(line, w, /[ \t]+/)
         op = w[1]
         if (op ~ /^@/) op = w[2]
         sub(/\..*/, "", op)
         if (op != "") c[op]++
       }
       END { for (o in c) print o, c[o] }' "$1"
}
count_of() { awk -v op="$2" '$1 == op { print $2; found = 1 } END { if (!found) print 0 }' "$1"; }
# How often an instruction with exactly these modifiers is in a listing
# (HGMMA.64x256x16.F32.BF16).
count_full() {
  awk -v op="$2" '/\/\*[0-9a-f]+\*\// {
         line = $0
         sub(/^.*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
         n = split(line, w, /[ \t]+/)
         o = w[1]
         if (o ~ /^@/) o = w[2]
         sub(/[ \t]*;.*/, "", o)
         if (o == op) c++
       }
       END { print c + 0 }' "$1"
}
# How often the CUDA source asks for the PTX behind an opcode (evidence).
ptx_for() {
  case $1 in
    HGMMA) echo "wgmma.mma_async" ;; UTMALDG) echo "cp.async.bulk.tensor.2d.shared::cluster.global" ;;
    UTMASTG) echo "cp.async.bulk.tensor.2d.global.shared" ;; STSM) echo "stmatrix.sync" ;;
    USETMAXREG) echo "setmaxnreg" ;; SYNCS) echo "mbarrier." ;; HGMMA.*) echo "wgmma.mma_async" ;;
    LDSM) echo "ldmatrix.sync" ;; *) echo "" ;;
  esac
}

cols="HGMMA UTMALDG UTMASTG LDSM STSM SYNCS LDL STL"
md=$out/sass_check.md
{
  echo "| kernel | regs | stack | local | spill st/ld (B) | ${cols// / | } | SASS instructions | result |"
  echo "|---|---|---|---|---|$(for _ in $cols; do printf -- '---|'; done)---|---|"
} >"$md"
printf '%-20s %4s %5s %5s %9s' kernel regs stack local spill
for c in $cols; do printf ' %7s' "$c"; done
printf ' %6s  %s\n' instrs result

passed=0 failed=$gen_fail findings=0
for kk in "${kernels[@]}"; do
  IFS='|' read -r name src req what <<<"$kk"
  cubin=$out/$name.cubin sass=$out/$name.sass log=$out/$name.ptxas.log
  if ! "$nvcc" -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -x cu "$src" -o "$cubin" >"$log" 2>&1; then
    echo "  FAIL $name: nvcc -cubin -gencode=arch=compute_90a,code=sm_90a failed ($what):"
    tail -n 15 "$log" | sed 's/^/    /'
    failed=$((failed + 1)); gen_fail=1
    continue
  fi
  if ! "$cuobjdump" -sass "$cubin" >"$sass" 2>"$sass.err"; then
    echo "  FAIL $name: cuobjdump -sass failed: $(tail -n 3 "$sass.err")"
    failed=$((failed + 1)); gen_fail=1
    continue
  fi
  rm -f "$sass.err"
  counts=$out/$name.counts
  opcounts "$sass" >"$counts"
  total=$(awk '{ s += $2 } END { print s + 0 }' "$counts")
  res=$("$cuobjdump" -res-usage "$cubin" 2>/dev/null | grep -m1 -E 'REG:[0-9]+')
  reg=$(printf '%s\n' "$res" | sed -n 's/.*REG:\([0-9]*\).*/\1/p'); reg=${reg:-?}
  stack=$(printf '%s\n' "$res" | sed -n 's/.*STACK:\([0-9]*\).*/\1/p'); stack=${stack:-?}
  local_=$(printf '%s\n' "$res" | sed -n 's/.*LOCAL:\([0-9]*\).*/\1/p'); local_=${local_:-?}
  spill=$(sed -n 's/.* \([0-9]*\) bytes spill stores, \([0-9]*\) bytes spill loads.*/\1\/\2/p' "$log" | head -n 1)
  spill=${spill:-?}
  problems=""
  for op in $req; do
    case $op in
      '!'*) n=$(count_of "$counts" "${op#!}")
            [ "$n" -eq 0 ] || problems="$problems; $n ${op#!} (must be absent)"
            continue ;;
      *.*) n=$(count_full "$sass" "$op") ;;
      *) n=$(count_of "$counts" "$op") ;;
    esac
    if [ "$n" -eq 0 ]; then
      p=$(ptx_for "$op")
      if [ -n "$p" ]; then
        problems="$problems; no $op (the source has '$p' $(grep -c -F "$p" "$src") times)"
      else
        problems="$problems; no $op"
      fi
    fi
  done
  for op in LDL STL; do
    n=$(count_of "$counts" "$op")
    [ "$n" -eq 0 ] || problems="$problems; $n $op (local memory: spills)"
  done
  case $spill in 0/0|\?) ;; *) problems="$problems; ptxas reports spills $spill bytes" ;; esac
  if grep -q "setmaxnreg' ignored" "$log"; then
    problems="$problems; ptxas dropped setmaxnreg: $(grep -m1 "setmaxnreg' ignored" "$log" | sed 's/^ptxas info *: //')"
  fi
  printf '%-20s %4s %5s %5s %9s' "$name" "$reg" "$stack" "$local_" "$spill"
  row="| $name | $reg | $stack | $local_ | $spill |"
  for c in $cols; do
    n=$(count_of "$counts" "$c")
    printf ' %7s' "$n"
    row="$row $n |"
  done
  if [ -z "$problems" ]; then
    passed=$((passed + 1))
    printf ' %6s  %s\n' "$total" "PASS"
    echo "$row $total | PASS |" >>"$md"
  else
    failed=$((failed + 1)) findings=$((findings + 1))
    printf ' %6s  %s\n' "$total" "FAIL"
    echo "    $name ($what):${problems#;}"
    echo "$row $total | FAIL:${problems#;} |" >>"$md"
    # the evidence: grep the listing for each checked opcode; spill lines
    for op in $req LDL STL; do
      op=${op#!}
      echo "      grep -cE '\\b$op\\b' $sass -> $(grep -cE "\\b$op\\b" "$sass")"
    done
    grep -nE '\b(LDL|STL)\b' "$sass" | sed -e 's|/\* 0x[0-9a-f]* \*/||' -e 's/  */ /g' | head -n 4 |
      sed 's/^/      /'
    echo "      most frequent opcodes: $(sort -k2,2nr "$counts" | head -n 12 | tr '\n' ',' | sed 's/,$//')"
  fi
done
echo "(kernels: ${#kernels[@]}; the table is in $md)"
echo "$passed passed, $failed failed, 0 skipped"
[ "$findings" -gt 0 ] && exit 1
[ "$gen_fail" -ne 0 ] && exit 2
exit 0
