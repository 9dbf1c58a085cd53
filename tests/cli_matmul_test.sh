#!/usr/bin/env bash
# cli_matmul_test.sh - `tilec gemm --epilogue` through the real binary: the
# GEMM made as a fusion (tc_matmul + the listed ops, one kernel from the
# matmul scheduler) verified on PoCL (-V 1 against a plain C loop that
# applies the epilogue) at ragged and prime shapes in three dtypes, with
# transposes and a batch, and with tiles given by --tiles; --emit with
# NVRTC / hipcc builds; shared memory over the arch's limit; the usage
# errors with their exit codes; and the plain gemm still on its gridwise
# kernel.  Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
T=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); echo "  ok   $1"; }
fail() { failed=$((failed + 1)); echo "  FAIL $1"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilec-matmul.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# expect NAME CODE PATTERN CMD...: exit code CODE and output matching PATTERN
expect() {
  local name=$1 code=$2 pat=$3 out rc
  shift 3
  out=$("$T" "$@" 2>&1); rc=$?
  if [ $rc -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then pass "$name"
  else fail "$name: exit $rc (want $code), output: $(printf '%s' "$out" | tail -n 3)"; fi
}

if ! "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  echo "  skip tilec gemm --epilogue runs (no PoCL device)"; skipped=$((skipped + 1))
else
  expect "bias,relu 67x97x33 f32" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu -V 1
  expect "one kernel from the fusion path" 0 '^kernel: gemm_fused \(fusion\), grid \[2, 2, 1\] of blocks \[16, 16, 1\], shared memory 4096 bytes' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu -V 1
  expect "schedule line" 0 '^schedule: matmul: 67 x 97 x 33, 64x64 tiles .* 2 epilogue ops before the store' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu
  expect "M=N=K=1 bf16 gelu" 0 '^verify: PASS' gemm -M 1 -N 1 -K 1 -t bf16 --epilogue gelu -V 1
  expect "primes f16 transposed, residual, silu, cast" 0 '^verify: PASS' \
    gemm -M 31 -N 17 -K 61 -t f16 --transA 1 --transB 1 --epilogue bias_m,scale:0.5,residual,silu,cast:bf16 -V 1
  expect "batch of 3" 0 '^verify: PASS \(max error .*; 3315 elements\)' \
    gemm -M 13 -N 85 -K 7 -g 3 --epilogue scale:-2,relu,cast:f16 -V 1
  expect "--tiles of any extent" 0 '^verify: PASS \(max error .*; 7700 elements\)' \
    gemm -M 100 -N 77 -K 45 --epilogue silu --tiles 48,24,5,3,2 -V 1
  expect "--tiles: the launch" 0 '^kernel: gemm_fused \(fusion\), grid \[4, 3, 1\] of blocks \[12, 16, 1\], shared memory 2304 bytes' \
    gemm -M 100 -N 77 -K 45 --epilogue silu --tiles 48,24,5,3,2
  expect "--time" 0 '^time: [0-9.]+ ms \(median of 2 runs\), [0-9.]+ GFLOP/s' \
    gemm -M 32 -N 32 -K 32 --epilogue relu --time -i 2
fi
# builds without a GPU: NVRTC and hipcc
expect "cuda --emit builds" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M 128 -N 128 -K 64 -t bf16 --epilogue bias,relu --target cuda --emit "$tmp/k.cu"
if grep -q '__shared__' "$tmp/k.cu" 2>/dev/null && grep -q 'fmaxf(' "$tmp/k.cu"; then pass "emitted CUDA kernel"
else fail "emitted CUDA kernel lacks shared tiles or the ReLU"; fi
expect "hip builds" 0 '^compiled for gfx90a \(hipcc\)|^not compiled' \
  gemm -M 128 -N 128 -K 64 -t f16 --epilogue bias,gelu --target hip --emit "$tmp/k.hip"
# tiles over the arch's shared memory: (256 + 256) x 128 f32 = 256 KiB > 227 KiB on sm_90a
expect "shared memory over the limit" 1 'needs 262144 bytes of shared memory per block but cuda allows at most 232448' \
  gemm -M 512 -N 512 -K 512 --epilogue relu --tiles 256,256,128,8,8 --target cuda --emit "$tmp/big.cu"
# usage errors: exit 2
expect "--tiles without --epilogue" 2 '--tiles applies to --epilogue' gemm -M 8 -N 8 -K 8 --tiles 4,4,4,4,4
expect "--tiles that do not nest" 2 'TM must divide BM' gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 4,4,4,3,4
expect "--tiles short" 2 'takes five extents' gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 4,4
expect "unknown op" 2 "unknown op 'foo'" gemm -M 8 -N 8 -K 8 --epilogue bias,foo
expect "cast not last" 2 "'relu' follows the cast" gemm -M 8 -N 8 -K 8 --epilogue cast:f16,relu
expect "scale without value" 2 'needs a value: scale:X' gemm -M 8 -N 8 -K 8 --epilogue scale
expect "bad scale" 2 "scale takes a number, got 'x'" gemm -M 8 -N 8 -K 8 --epilogue scale:x
expect "empty op" 2 "an empty op" gemm -M 8 -N 8 -K 8 --epilogue bias,,relu
expect "with --perf-config" 2 'does not combine with --perf-config' gemm -M 8 -N 8 -K 8 --epilogue relu --perf-config x
expect "with --kernel tile" 2 'does not combine with --kernel tile' gemm -M 8 -N 8 -K 8 --epilogue relu --kernel tile
expect "with -t i8" 2 "unknown data type 'i8'" gemm -M 8 -N 8 -K 8 -t i8 --epilogue relu
expect "--help lists it" 0 '--epilogue LIST' gemm --help
# --macro mma: the products as mma.sync m16n8k16 (emulated on PoCL, NVRTC for CUDA)
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  expect "--macro mma bf16 bias,relu" 0 '^verify: PASS \(max error .*; 6144 elements\)' \
    gemm -M 64 -N 96 -K 48 -t bf16 --epilogue bias,relu --tiles 32,32,16,16,16 --macro mma -V 1
  expect "--macro mma f16, batch of 3, A and B transposed, cast" 0 '^verify: PASS \(max error .*; 6144 elements\)' \
    gemm -M 64 -N 32 -K 64 -t f16 -g 3 --transA 1 --transB 1 --epilogue bias,relu,cast:bf16 --tiles 32,32,32,16,16 --macro mma -V 1
  expect "--macro mma at primes (edges as zeros in the fragments)" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu --tiles 32,32,16,16,16 --macro mma -V 1
  expect "--macro mma f16: the schedule and launch" 0 'as mma.sync m16n8k16 \(f16, f32 accumulators\)' \
    gemm -M 32 -N 16 -K 32 -t f16 --epilogue relu --tiles 32,16,32,16,8 --macro mma -V 1
fi
expect "--macro mma cuda --emit" 0 '^compiled with NVRTC for sm_80|^not compiled' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue bias,relu --tiles 32,32,16,16,16 --macro mma --target cuda --arch sm_80 --emit "$tmp/mma.cu"
if grep -q 'tc_mma_f16(tc_fc, tc_fa, tc_fb)' "$tmp/mma.cu" 2>/dev/null && grep -q 'mma.sync.aligned.m16n8k16' "$tmp/mma.cu"; then pass "emitted kernel calls mma.sync"
else fail "emitted kernel lacks the mma.sync call"; fi
expect "--macro mma on f32" 2 'multiplies f16 or bf16 operands, not f32' \
  gemm -M 64 -N 64 -K 32 --epilogue relu --tiles 32,32,16,16,16 --macro mma
expect "--macro mma on hip" 2 'an NVIDIA instruction' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --tiles 32,32,16,16,16 --macro mma --target hip
expect "--macro mma without --tiles" 2 '--macro mma needs --tiles' gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --macro mma
expect "--macro bad" 2 "--macro takes fma or mma, got 'x'" gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 8,8,8,8,8 --macro x
# without --epilogue, gemm keeps its gridwise kernel
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  expect "plain gemm unchanged" 0 '^perf config: ' gemm -M 64 -N 64 -K 64 -V 1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
