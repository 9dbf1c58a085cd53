#!/usr/bin/env bash
# cli_matmul_test.sh - `tilec gemm --epilogue` through the real binary: the
# GEMM made as a fusion (tc_matmul + the listed ops, one kernel from the
# matmul scheduler; a row / column reduction as a second output; A and B
# stored in another type and cast as they are staged) verified on PoCL
# (-V 1 against a plain C loop that applies the epilogue) at ragged and prime shapes in three dtypes, with
# transposes and a batch, and with tiles given by --tiles; --emit with
# NVRTC / hipcc builds; shared memory over the arch's limit; the usage
# errors with their exit codes; and the plain gemm still on its gridwise
# kernel; --macro mma and mfma (mfma16) run emulated on PoCL, their CUDA / HIP
# kernels built.  Ends with "N passed, N failed, N skipped".
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp_dir matmul
export TILEC_PERFDB="$tmp/perfdb.sqlite" # (--tune stores its result)

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
  # past 2^30 multiply-adds C is checked on a sample, as the template GEMM's
  # check: 1100x1024x1024 gives 2^30 / 1024 = 1048576 cells at most, so
  # cells of 2x2 and 550 * 512 = 281600 of them
  expect "sampled check past 2^30 multiply-adds" 0 \
    '^verify: PASS \(max error .*; 281600 of 1126400 elements, one in each 2x2 cell\)' \
    gemm -M 1100 -N 1024 -K 1024 -t bf16 --epilogue bias,relu -V 1
  expect "--tiles of any extent" 0 '^verify: PASS \(max error .*; 7700 elements\)' \
    gemm -M 100 -N 77 -K 45 --epilogue silu --tiles 48,24,5,3,2 -V 1
  expect "--tiles: the launch" 0 '^kernel: gemm_fused \(fusion\), grid \[4, 3, 1\] of blocks \[12, 16, 1\], shared memory 2304 bytes' \
    gemm -M 100 -N 77 -K 45 --epilogue silu --tiles 48,24,5,3,2
  # a row or column reduction as a second output R, verified against the plain C loop's sums
  expect "bias,relu,row_sum bf16: C and R" 0 '^verify: PASS \(max error .*; 6566 elements\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu,row_sum -V 1
  expect "row_sum: one block along N" 0 '^kernel: gemm_fused \(fusion\), grid \[1, 2, 1\] of blocks \[32, 16, 1\]' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu,row_sum
  expect "row_sum: the schedule line" 0 'then T[0-9]+, a second output: the sum of each row, reduced in its block \(32 threads on TIDx, 4 values each\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu,row_sum
  expect "col_max batched, A^T, before the cast" 0 '^verify: PASS \(max error .*; 3570 elements\)' \
    gemm -M 13 -N 85 -K 7 -g 3 --transA 1 --epilogue scale:-2,relu,col_max,cast:f16 -V 1
  expect "row_max with --tiles covering N" 0 '^verify: PASS \(max error .*; 7800 elements\)' \
    gemm -M 100 -N 77 -K 45 --epilogue silu,row_max --tiles 48,80,5,3,5 -V 1
  # -M dyn: one kernel for every M, run and checked at M = 1, 7, 64, 129 and 1000
  expect "-M dyn bias,relu: M = 1" 0 '^verify: PASS \(max error .*; 48 elements\)' \
    gemm -M dyn -N 48 -K 40 --epilogue bias,relu -V 1
  expect "-M dyn bias,relu: M = 1000" 0 '^verify: PASS \(max error .*; 48000 elements\)' \
    gemm -M dyn -N 48 -K 40 --epilogue bias,relu -V 1
  expect "-M dyn: the problem line" 0 '^problem: gemm Mx48x40 \(M a size variable, at most 44739242: one kernel for every M\)' \
    gemm -M dyn -N 48 -K 40 --epilogue bias,relu
  expect "-M dyn: the grid along M" 0 '^kernel: gemm_fused \(fusion\), grid \[one block per 32 rows of M \(at most 932068\), 3, 1\]' \
    gemm -M dyn -N 72 -K 19 --tiles 32,32,8,4,4
  # -M dyn with the mma.sync and MFMA op types (emulated on OpenCL): Mo on BIDx, rows guarded
  expect "-M dyn --macro mma: M = 1000" 0 '^verify: PASS \(max error .*; 64000 elements\)' \
    gemm -M dyn -N 64 -K 64 -t f16 --epilogue bias,relu --tiles 64,32,32,32,16 --macro mma -V 1
  expect "-M dyn --macro mma: M = 7" 0 '^verify: PASS \(max error .*; 448 elements\)' \
    gemm -M dyn -N 64 -K 64 -t f16 --epilogue bias,relu --tiles 64,32,32,32,16 --macro mma -V 1
  expect "-M dyn --macro mma: the schedule" 0 '^schedule: matmul: M \(at most 33554431\) x 64 x 64, 64x32 tiles on BIDx x BIDy, 4 warps .* as mma.sync m16n8k16' \
    gemm -M dyn -N 64 -K 64 -t f16 --tiles 64,32,32,32,16 --macro mma
  expect "-M dyn --macro mfma: M = 129" 0 '^verify: PASS \(max error .*; 8256 elements\)' \
    gemm -M dyn -N 64 -K 64 -t f16 --tiles 64,64,16,32,32 --macro mfma -V 1
  expect "-M dyn M-rows inputs, row_sum, cast" 0 '^verify: PASS \(max error .*; 34000 elements\)' \
    gemm -M dyn -N 33 -K 17 -t bf16 --epilogue bias_m,residual,gelu,row_sum,cast:f16 -V 1
  out=$("$T" gemm -M dyn -N 33 -K 17 --json -V 1 2>&1)
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["problem"]["m"] == "dyn" and d["problem"]["size_variable"]["bound"] == 65075262 and [r["m"] for r in d["runs"]] == [1, 7, 64, 129, 1000] and all(r["verify"]["result"] == "PASS" for r in d["runs"]) and d["kernels"][0]["rows_per_block_x"] == 64 and d["ok"]'; then pass "-M dyn --json"
  else fail "-M dyn --json: $out"; fi
  # -N dyn: one kernel for every N (B [K, N], bias [N]); the bound keeps C
  # and B under 2^31 elements: 2147483647 / max(M, K) = 2147483647 / 48
  expect "-N dyn bias,relu: N = 1000" 0 '^verify: PASS \(max error .*; 48000 elements\)' \
    gemm -M 48 -N dyn -K 40 --epilogue bias,relu -V 1
  expect "-N dyn: the problem line" 0 '^problem: gemm 48xNx40 \(N a size variable, at most 44739242: one kernel for every N\)' \
    gemm -M 48 -N dyn -K 40 --epilogue bias,relu
  # N's blocks on BIDx where M is fixed: ceil(2147483647 / 72 / 32) = 932068
  expect "-N dyn: the grid along N" 0 '^kernel: gemm_fused \(fusion\), grid \[one block per 32 columns of N \(at most 932068\), 3, 1\]' \
    gemm -M 72 -N dyn -K 19 --tiles 32,32,8,4,4
  expect "-N dyn --macro mma: N = 1000" 0 '^verify: PASS \(max error .*; 64000 elements\)' \
    gemm -M 64 -N dyn -K 64 -t f16 --epilogue bias --tiles 64,32,32,32,16 --macro mma -V 1
  # -M dyn -N dyn: both at (1, 1), (7, 64), (64, 129), (129, 7), (1000, 1000),
  # with bounds of 46340 each (46340^2 < 2^31), or 2^31 / K past K 46341
  expect "-M dyn -N dyn: M = 129, N = 7" 0 '^verify: PASS \(max error .*; 903 elements\)' \
    gemm -M dyn -N dyn -K 40 -t f16 --epilogue bias,bias_m,residual,gelu,cast:bf16 -V 1
  expect "-M dyn -N dyn: the problem line" 0 '^problem: gemm MxNx40 \(M and N size variables, at most 46340 and 46340: one kernel for every M and N\)' \
    gemm -M dyn -N dyn -K 40 --epilogue relu
  expect "-M dyn -N dyn, K 100000: the bounds" 0 'at most 21474 and 21474: one kernel for every M and N' \
    gemm -M dyn -N dyn -K 100000 --epilogue relu --emit "$tmp/mn_dyn.cl"
  expect "-M dyn -N dyn --macro mfma: M = 1000, N = 1000" 0 '^verify: PASS \(max error .*; 1000000 elements\)' \
    gemm -M dyn -N dyn -K 64 -t f16 --tiles 64,64,16,32,32 --macro mfma -V 1
  out=$("$T" gemm -M dyn -N dyn -K 40 --epilogue bias -V 1 --json 2>&1)
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["problem"]; k=d["kernels"][0]
assert p["m"] == "dyn" and p["n"] == "dyn" and p["size_variable"] == {"name": "M", "divisor": 1, "bound": 46340}
assert [v["name"] for v in p["size_variables"]] == ["M", "N"] and p["size_variables"][1]["bound"] == 46340
assert [(r["m"], r["n"]) for r in d["runs"]] == [(1, 1), (7, 64), (64, 129), (129, 7), (1000, 1000)]
assert all(r["verify"]["result"] == "PASS" for r in d["runs"]) and k["rows_per_block_x"] == 64 and k["columns_per_block_y"] == 64 and d["ok"]'; then pass "-M dyn -N dyn --json"
  else fail "-M dyn -N dyn --json: $out"; fi
  # -K dyn: the K tiles' loop runs to ceil(K / BK) over the parameter, the
  # tile past K reads zeros (A [M, K] and B [K, N] row-major); the bound
  # keeps A and B under 2^31 elements: 2^31 / max(M, N)
  expect "-K dyn bias,relu: K = 129" 0 '^verify: PASS \(max error .*; 7000 elements\)' \
    gemm -M 100 -N 70 -K dyn --epilogue bias,relu -V 1
  expect "-K dyn: the problem line" 0 '^problem: gemm 100x70xK \(K a size variable, at most 21474836: one kernel for every K\)' \
    gemm -M 100 -N 70 -K dyn --epilogue bias,relu
  expect "-K dyn: the schedule" 0 '^schedule: matmul: 100 x 70 x K \(at most 21474836\), ' \
    gemm -M 100 -N 70 -K dyn --epilogue relu
  expect "-K dyn --macro mma, ring of 2: K = 7" 0 '^verify: PASS \(max error .*; 4096 elements\)' \
    gemm -M 64 -N 64 -K dyn -t f16 --epilogue bias,relu --tiles 64,32,32,32,16 --macro mma --stages 2 -V 1
  expect "-M dyn -K dyn: M = 129, K = 7" 0 '^M = 129, K = 7:$' \
    gemm -M dyn -N 70 -K dyn --epilogue bias_m,gelu -V 1
  out=$("$T" gemm -M dyn -N dyn -K dyn -t f16 --epilogue relu,cast:f16 -V 1 --json 2>&1)
  if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["problem"]
assert (p["m"], p["n"], p["k"]) == ("dyn", "dyn", "dyn") and [v["name"] for v in p["size_variables"]] == ["M", "K", "N"]
assert all(v["bound"] == 46340 for v in p["size_variables"])
assert [(r["m"], r["n"], r["k"]) for r in d["runs"]] == [(1, 1, 1), (7, 64, 129), (64, 129, 7), (129, 7, 64), (1000, 129, 1000)]
assert all(r["verify"]["result"] == "PASS" for r in d["runs"]) and d["ok"]'; then pass "-M dyn -N dyn -K dyn --json"
  else fail "-M dyn -N dyn -K dyn --json: $out"; fi
  expect "col_sum, M of 1000" 0 '^verify: PASS' gemm -M 1000 -N 3 -K 5 -t f16 --epilogue col_sum -V 1
  # --ab-type: A and B stored as f32 (or bf16), cast to -t's type as the tiles are staged
  expect "--ab-type f32 -t bf16, A^T, row_sum" 0 '^verify: PASS \(max error .*; 6566 elements\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --ab-type f32 --transA 1 --epilogue bias,relu,row_sum -V 1
  expect "--ab-type: the casts staged" 0 'shared memory \(4096 bytes\) \(computing 1 op on A and 1 on B as they are staged\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --ab-type f32 --epilogue relu
  expect "--ab-type bf16 -t f16, B^T, batch" 0 '^verify: PASS' \
    gemm -M 31 -N 17 -K 61 -g 2 -t f16 --ab-type bf16 --transB 1 --epilogue gelu --tiles 16,8,7,2,2 -V 1
  # --tune: a few tile choices of tc_schedule_matmul, each verified and timed; the fastest runs
  expect "--tune --tune-max 3" 0 '^tune: tiles [0-9]+,[0-9]+,(8|16),[48],[48] the fastest of 3 candidates \(0 failed\)' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu --tune --tune-max 3 -V 1
  out=$("$T" gemm -M 40 -N 70 -K 9 -t bf16 --epilogue gelu,row_sum --tune --tune-max 2 -V 1 --json 2>/dev/null); rc=$?
  if [ $rc -eq 0 ] && printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["tune"]
assert t["tried"]==2 and t["skipped"]==0 and t["best_ms"]>0 and t["stored"] is True and d["verify"]["result"]=="PASS"
assert "128 tiles on BIDy x 1" in d["schedule"]' 2>/dev/null
  then pass "--tune --json with a row reduction (BN kept at 128)"; else fail "--tune --json: exit $rc: $out"; fi
  # --json: the gemm command's object, with the fusion's kernel and the scheduler's note
  out=$("$T" gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,scale:0.5,relu,cast:bf16 -V 1 --json 2>/dev/null); rc=$?
  if [ $rc -eq 0 ] && printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["problem"]; k=d["kernels"][0]
assert d["command"]=="gemm" and d["kernel"]=="fusion" and d["ok"] is True and d["ran"] is True
assert (p["m"],p["n"],p["k"],p["g"],p["dtype"])==(67,97,33,1,"f16") and p["epilogue"]=="bias,scale:0.5,relu,cast:bf16"
assert p["string"]=="gemm -g 1 -M 67 -N 97 -K 33 --transA 0 --transB 0 -t f16 --epilogue bias,scale:0.5,relu,cast:bf16"
assert (k["name"],k["grid"],k["block"],k["smem_bytes"])==("gemm_fused",[2,2,1],[16,16,1],(64+64)*16*2)
assert d["verify"]["result"]=="PASS" and d["verify"]["bad_elements"]==0 and d["schedule"].startswith("matmul: 67 x 97 x 33")' 2>/dev/null
  then pass "--json with --epilogue"; else fail "--json with --epilogue: exit $rc: $out"; fi
  expect "--time" 0 '^time: [0-9.]+ ms \(median of 2 runs\), [0-9.]+ GFLOP/s' \
    gemm -M 32 -N 32 -K 32 --epilogue relu --time -i 2
fi
# builds without a GPU: NVRTC and hipcc
expect "-M dyn --macro mma: the CUDA kernel builds" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M dyn -N 64 -K 64 -t f16 --tiles 64,32,32,32,16 --macro mma --target cuda --emit "$tmp/dyn_mma.cu"
if grep -q 'mma.sync.aligned.m16n8k16' "$tmp/dyn_mma.cu" 2>/dev/null; then pass "-M dyn --macro mma: mma.sync in the CUDA kernel"
else fail "-M dyn --macro mma: no mma.sync in the emitted CUDA kernel"; fi
# without --tiles the scheduler picks wgmma for the symbolic GEMM on
# sm_90a (its tiles from the bound: 128 x 256 blocks, K tiles of 64, 2
# stages for K 128) and MFMA on hip
expect "-M dyn, the scheduler's wgmma on sm_90a" 0 \
  'matmul: M \(at most 8388607\) x 256 x 128, 128x256 tiles on BIDx x BIDy, 2 warp groups .* as wgmma m64n256k16 .*in rings of 2 stages' \
  gemm -M dyn -N 256 -K 128 -t f16 --epilogue bias,relu --target cuda --arch sm_90a --emit "$tmp/dyn_auto.cu"
if grep -q 'wgmma.mma_async' "$tmp/dyn_auto.cu" 2>/dev/null; then pass "-M dyn: wgmma in the sm_90a kernel"
else fail "-M dyn: no wgmma in $tmp/dyn_auto.cu"; fi
expect "-M dyn, the scheduler's MFMA on hip" 0 'as MFMA 32x32x8 .*the scheduler.s op type for f16/bf16 on HIP' \
  gemm -M dyn -N 256 -K 128 -t f16 --epilogue bias,relu --target hip --emit "$tmp/dyn_auto.hip"
expect "-N dyn with --transB 1 refused" 2 '^tilec gemm: -N dyn does not combine with --transB 1 \(one fused kernel for every N of a row-major B \[K, N\]\)' \
  gemm -M 8 -N dyn -K 8 --transB 1 --epilogue relu
expect "-K dyn with --transA 1 refused" 2 '^tilec gemm: -K dyn does not combine with --transA 1 \(one fused kernel for every K of a row-major A \[M, K\] and B \[K, N\]\)' \
  gemm -M 8 -N 8 -K dyn --transA 1 --epilogue relu
expect "-K dyn, the scheduler's wgmma on sm_90a" 0 \
  'matmul: 300 x 200 x K \(at most 7158278\), 128x256 tiles .* as wgmma m64n256k16 .*K in tiles of 64 .*in rings of 3 stages' \
  gemm -M 300 -N 200 -K dyn -t bf16 --epilogue bias,relu --target cuda --arch sm_90a --emit "$tmp/k_dyn.cu"
expect "-K dyn, the scheduler's mma.sync on sm_80" 0 'as mma\.sync m16n8k16 .*K in tiles of 32' \
  gemm -M 300 -N 200 -K dyn -t bf16 --epilogue bias,relu --target cuda --arch sm_80 --emit "$tmp/k_dyn80.cu"
if grep -q 'wgmma.mma_async' "$tmp/k_dyn.cu" 2>/dev/null && grep -Eq 'for \(int i[0-9]+ = 0; i[0-9]+ < \(T[0-9]+ \+ 63\) / 64;' "$tmp/k_dyn.cu" &&
   grep -q 'mma.sync.aligned.m16n8k16' "$tmp/k_dyn80.cu" && grep -Eq 'for \(int i[0-9]+ = 0; i[0-9]+ < \(T[0-9]+ \+ 31\) / 32;' "$tmp/k_dyn80.cu"
then pass "-K dyn: the K tiles' loop over the parameter in the CUDA kernels"
else fail "-K dyn: no wgmma / mma.sync or no K loop over the parameter in $tmp/k_dyn.cu, $tmp/k_dyn80.cu"; fi
expect "-N dyn row_sum refused" 2 'reduces each row of the result over the size variable N; the matmul schedule reduces a row of the result within one block' \
  gemm -M 8 -N dyn -K 8 --epilogue row_sum
expect "cuda --emit builds" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M 128 -N 128 -K 64 -t bf16 --epilogue bias,relu --target cuda --emit "$tmp/k.cu"
if grep -q '__shared__' "$tmp/k.cu" 2>/dev/null && grep -q 'fmaxf(' "$tmp/k.cu"; then pass "emitted CUDA kernel"
else fail "emitted CUDA kernel lacks shared tiles or the ReLU"; fi
expect "hip builds" 0 '^compiled for gfx90a \(hipcc\)|^not compiled' \
  gemm -M 128 -N 128 -K 64 -t f16 --epilogue bias,gelu --target hip --emit "$tmp/k.hip"
# tiles over the arch's shared memory: (256 + 256) x 128 f32 = 256 KiB > 227 KiB on sm_90a
expect "shared memory over the limit" 1 'needs 262144 bytes of shared memory per block but cuda sm_90a allows at most 232448' \
  gemm -M 512 -N 512 -K 512 --epilogue relu --tiles 256,256,128,8,8 --target cuda --emit "$tmp/big.cu"
# --json of a failure: the short form, the message in "error", exit 1
out=$("$T" gemm -M 512 -N 512 -K 512 --epilogue relu --tiles 256,256,128,8,8 --target cuda --json 2>/dev/null); rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin)
assert d["ok"] is False and d["kernels"]==[] and d["ran"] is False and "232448" in d["error"]
assert d["problem"]["string"].endswith("--epilogue relu")' 2>/dev/null
then pass "--json of a refused fused GEMM"; else fail "--json of a refused fused GEMM: exit $rc: $out"; fi
# a usage error prints no JSON
out=$("$T" gemm -M 8 -N 8 -K 8 --epilogue foo --json 2>/dev/null); rc=$?
if [ $rc -eq 2 ] && [ -z "$out" ]; then pass "--json usage error: nothing on stdout"
else fail "--json usage error: exit $rc, stdout '$out'"; fi
# a reduction the matmul schedule does not cover: exit 2 with the reason
expect "row_sum with BN < N" 2 'each row of the result, of 77 elements, but the block tile covers 24 \(bn 24\).*give bn >= 77' \
  gemm -M 100 -N 77 -K 45 --epilogue silu,row_sum --tiles 48,24,5,3,2
expect "row_sum over 1024 columns" 2 'each row of the result, of 2000 elements; the matmul schedule reduces one in one block, of at most 1024' \
  gemm -M 10 -N 2000 -K 45 --epilogue row_sum
expect "an op after the reduction" 2 "'relu' follows row_sum; the reduction comes after the pointwise ops" \
  gemm -M 8 -N 8 -K 8 --epilogue row_sum,relu
expect "two reductions" 2 "'col_sum' follows row_sum" gemm -M 8 -N 8 -K 8 --epilogue row_sum,col_sum
expect "--ab-type without --epilogue" 2 '--ab-type applies to --epilogue' gemm -M 8 -N 8 -K 8 --ab-type f32
expect "--ab-type f64" 2 "--ab-type takes f32, f16 or bf16, got 'f64'" gemm -M 8 -N 8 -K 8 --epilogue relu --ab-type f64
# usage errors: exit 2
expect "--tiles without --epilogue" 2 '--tiles applies to --epilogue' gemm -M 8 -N 8 -K 8 --tiles 4,4,4,4,4
expect "--tiles that do not nest" 2 'TM must divide BM' gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 4,4,4,3,4
expect "--tiles short" 2 'takes five extents' gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 4,4
expect "unknown op" 2 "unknown op 'foo'" gemm -M 8 -N 8 -K 8 --epilogue bias,foo
expect "cast not last" 2 "'relu' follows the cast" gemm -M 8 -N 8 -K 8 --epilogue cast:f16,relu
expect "scale without value" 2 'needs a value: scale:X' gemm -M 8 -N 8 -K 8 --epilogue scale
expect "bad scale" 2 "scale takes a number, got 'x'" gemm -M 8 -N 8 -K 8 --epilogue scale:x
expect "empty op" 2 "an empty op" gemm -M 8 -N 8 -K 8 --epilogue bias,,relu
expect "with a malformed --perf-config" 2 "bad perf config 'x'" gemm -M 8 -N 8 -K 8 --epilogue relu --perf-config x
expect "--tune with --tiles" 2 'does not combine with --tune and --tiles together' gemm -M 8 -N 8 -K 8 --epilogue relu --tune --tiles 8,8,8,4,4
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
expect "--macro mma with a row reduction" 2 'the mma.sync op type .*a reduction of the result is not part of it' \
  gemm -M 32 -N 32 -K 32 -t f16 --epilogue bias,row_sum --tiles 32,32,16,16,8 --macro mma
expect "--macro mma with ops before the matmul" 2 'the mma.sync op type .*ops before the matmul on an operand are not part of it' \
  gemm -M 32 -N 32 -K 32 -t f16 --epilogue bias --ab-type f32 --tiles 32,32,16,16,8 --macro mma
expect "--macro mma without --tiles" 2 '--macro mma needs --tiles' gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --macro mma
expect "--macro bad" 2 "--macro takes fma, mma, mfma, mfma16 or wgmma, got 'x'" gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 8,8,8,8,8 --macro x
# --macro mfma / mfma16: the products as AMD's MFMA (emulated on PoCL, hipcc for HIP)
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  expect "--macro mfma bf16 bias,relu at primes" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu --tiles 64,64,16,32,32 --macro mfma -V 1
  expect "--macro mfma16 f16, batch of 2, B transposed, cast" 0 '^verify: PASS \(max error .*; 4096 elements\)' \
    gemm -M 64 -N 32 -K 48 -t f16 -g 2 --transB 1 --epilogue bias,relu,cast:f16 --tiles 32,32,16,16,16 --macro mfma16 -V 1
  expect "--macro mfma16: the schedule" 0 'as MFMA 16x16x16 \(f16, f32 accumulators\)' \
    gemm -M 16 -N 16 -K 16 -t f16 --epilogue relu --tiles 16,16,16,16,16 --macro mfma16 -V 1
fi
for arch in gfx90a gfx940; do
  expect "--macro mfma hip $arch --emit" 0 "^compiled for $arch \\(hipcc\\)|^not compiled" \
    gemm -M 64 -N 64 -K 32 -t bf16 --epilogue bias,relu --tiles 64,64,16,32,32 --macro mfma --target hip --arch $arch --emit "$tmp/mfma_$arch.hip"
  if grep -q '__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a_frag\[0\], b_frag\[0\], c_acc\[0\]' "$tmp/mfma_$arch.hip" 2>/dev/null &&
     ! grep -q tc_mfma_emu "$tmp/mfma_$arch.hip"; then pass "emitted $arch kernel calls the MFMA builtin"
  else fail "emitted $arch kernel lacks the MFMA builtin"; fi
done
expect "--macro mfma16 hip --emit" 0 '^compiled for gfx90a \(hipcc\)|^not compiled' \
  gemm -M 67 -N 97 -K 33 -t f16 --epilogue relu --tiles 32,32,16,16,16 --macro mfma16 --target hip --emit "$tmp/mfma16.hip"
if grep -q '__builtin_amdgcn_mfma_f32_16x16x16f16(' "$tmp/mfma16.hip" 2>/dev/null; then pass "emitted kernel calls MFMA 16x16x16"
else fail "emitted kernel lacks MFMA 16x16x16"; fi
expect "--macro mfma on cuda" 2 'MFMA 32x32x8 is an AMD instruction' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --tiles 64,64,16,32,32 --macro mfma --target cuda
expect "--macro mfma on f32" 2 'MFMA 32x32x8 multiplies f16 or bf16 operands, not f32' \
  gemm -M 64 -N 64 -K 32 --epilogue relu --tiles 64,64,16,32,32 --macro mfma --target hip
expect "--macro mfma16 tiles not multiples" 2 'must be a multiple of 16 x 16 and the K tile \(bk = 8\) of 16' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --tiles 32,32,8,16,16 --macro mfma16
expect "--macro mfma without --tiles" 2 '--macro mfma needs --tiles' gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --macro mfma
# --stages N: the A and B tiles in rings of N slots (cp.async on CUDA sm_80+)
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  for st in 1 2 3 4; do
    expect "--stages $st f32 at primes" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
      gemm -M 67 -N 97 -K 33 --epilogue bias,relu --tiles 32,32,8,4,4 --stages $st -V 1
  done
  expect "--stages 4 bf16, K shorter than the ring" 0 '^verify: PASS \(max error .*; 91 elements\)' \
    gemm -M 13 -N 7 -K 5 -t bf16 --epilogue relu --tiles 16,16,8,4,4 --stages 4 -V 1
  expect "--stages 3 --macro mma f16 at primes" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 131 -t f16 --epilogue bias,relu --tiles 32,32,16,16,16 --macro mma --stages 3 -V 1
  expect "--stages 2 with a prologue cast" 0 '^verify: PASS' \
    gemm -M 31 -N 17 -K 61 -t f16 --ab-type f32 --epilogue bias --tiles 16,16,16,4,4 --stages 2 -V 1
  expect "--stages: 3 x (32 + 32) x 8 x 4 bytes of shared memory" 0 'shared memory 6144 bytes' \
    gemm -M 64 -N 64 -K 64 --epilogue relu --tiles 32,32,8,4,4 --stages 3 -V 1
  expect "--stages: the schedule note" 0 'in rings of 3 stages \(2 K tiles copied ahead' \
    gemm -M 64 -N 64 -K 64 --epilogue relu --tiles 32,32,8,4,4 --stages 3
fi
expect "--stages 3 cuda --emit" 0 '^compiled with NVRTC for sm_80|^not compiled' \
  gemm -M 128 -N 128 -K 64 -t f16 --epilogue bias,relu --tiles 64,64,16,32,32 --macro mma --stages 3 --target cuda --arch sm_80 --emit "$tmp/ring.cu"
if grep -q 'tc_cpa16(&T' "$tmp/ring.cu" 2>/dev/null && grep -q 'cp.async.wait_group 1;' "$tmp/ring.cu" &&
   grep -q 'cp.async.cg.shared.global' "$tmp/ring.cu"; then pass "emitted ring kernel copies by cp.async"
else fail "emitted ring kernel lacks cp.async / wait_group 1"; fi
expect "--stages over the arch's shared memory" 1 'a ring of 4 stages' \
  gemm -M 256 -N 256 -K 256 --epilogue relu --tiles 128,128,64,8,8 --stages 4 --target cuda --arch sm_80
expect "--stages 0" 2 "--stages takes a number of slots from 1 to 8, got '0'" \
  gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 8,8,8,4,4 --stages 0
expect "--stages 9" 2 "--stages takes a number of slots from 1 to 8, got '9'" \
  gemm -M 8 -N 8 -K 8 --epilogue relu --tiles 8,8,8,4,4 --stages 9
expect "--stages without --tiles" 2 '--stages needs --tiles' gemm -M 8 -N 8 -K 8 --epilogue relu --stages 2
expect "--help lists --stages" 0 '--stages N' gemm --help
expect "-M dyn with -g" 2 '-M dyn does not combine with -g' gemm -M dyn -N 8 -K 8 -g 2
expect "-M dyn with --transA 1" 2 '-M dyn does not combine with --transA 1' gemm -M dyn -N 8 -K 8 --transA 1
expect "-M dyn with a column reduction" 2 'reduces each column of the result over the size variable M' \
  gemm -M dyn -N 8 -K 8 --epilogue col_sum
expect "-M bad" 2 "-M" gemm -M dy -N 8 -K 8
# --macro wgmma: the products as wgmma m64nNk16 (emulated on PoCL, NVRTC for CUDA sm_90a)
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  expect "--macro wgmma f16 bias,relu" 0 '^verify: PASS \(max error .*; 16384 elements\)' \
    gemm -M 128 -N 128 -K 64 -t f16 --epilogue bias,relu --tiles 128,128,32,64,64 --macro wgmma -V 1
  expect "--macro wgmma bf16 at primes (zeros past the edges in shared memory)" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu --tiles 128,96,32,64,48 --macro wgmma -V 1
  expect "--macro wgmma f16, batch of 2, A and B transposed, cast" 0 '^verify: PASS \(max error .*; 4096 elements\)' \
    gemm -M 64 -N 32 -K 48 -t f16 -g 2 --transA 1 --transB 1 --epilogue bias,relu,cast:bf16 --tiles 64,32,16,64,32 --macro wgmma -V 1
  expect "--macro wgmma f16 with the 128B swizzle (K tiles of 64) at primes" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 131 -t f16 --epilogue bias,relu --tiles 128,96,64,64,48 --macro wgmma -V 1
  expect "--macro wgmma: the schedule and launch" 0 '4 warp groups \(TIDy\) of 128 threads \(TIDx\) with 64x48 tiles each as wgmma m64n48k16 \(bf16' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue relu --tiles 128,96,32,64,48 --macro wgmma -V 1
  for st in 2 4; do
    expect "--macro wgmma --stages $st bf16 at primes" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
      gemm -M 67 -N 97 -K 133 -t bf16 --epilogue bias,relu --tiles 128,96,32,64,48 --macro wgmma --stages $st -V 1
  done
  # with size variables (the tile past M, N or K reads zeros)
  expect "-M dyn --macro wgmma: M = 1000" 0 '^verify: PASS \(max error .*; 64000 elements\)' \
    gemm -M dyn -N 64 -K 64 -t f16 --tiles 64,64,32,64,64 --macro wgmma -V 1
  expect "-N dyn -K dyn --macro wgmma --stages 3: N = 129, K = 7" 0 '^N = 129, K = 7:$' \
    gemm -M 70 -N dyn -K dyn -t bf16 --epilogue bias,relu --tiles 64,64,64,64,64 --macro wgmma --stages 3 -V 1
  expect "--macro wgmma --stages 3 f16, 128B swizzle, B [N, K]" 0 '^verify: PASS \(max error .*; 16384 elements\)' \
    gemm -M 128 -N 128 -K 320 -t f16 --transB 1 --epilogue relu --tiles 128,128,64,64,64 --macro wgmma --stages 3 -V 1
fi
expect "--macro wgmma cuda --emit" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M 128 -N 128 -K 64 -t bf16 --epilogue bias,relu --tiles 128,128,32,64,128 --macro wgmma --target cuda --arch sm_90a --emit "$tmp/wgmma.cu"
if grep -q 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16' "$tmp/wgmma.cu" 2>/dev/null && ! grep -q 'tc_wgmma_emu' "$tmp/wgmma.cu"; then pass "emitted kernel holds wgmma"
else fail "emitted kernel lacks wgmma (or holds its emulation)"; fi
expect "--macro wgmma cuda, B given [N, K], K tiles of 64: bulk tensor copies" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M 256 -N 256 -K 128 -t bf16 --transB 1 --epilogue bias,relu --tiles 128,128,64,64,128 --macro wgmma --target cuda --arch sm_90a --emit "$tmp/wgmma_tma.cu"
if grep -q 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier' "$tmp/wgmma_tma.cu" 2>/dev/null && grep -q 'mbarrier.try_wait.parity' "$tmp/wgmma_tma.cu" && grep -q 'wgmma.mma_async' "$tmp/wgmma_tma.cu"; then pass "emitted kernel loads the wgmma tiles by TMA"
else fail "emitted kernel lacks the bulk copies of the wgmma tiles"; fi
expect "--macro wgmma --stages 4 cuda --emit" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M 250 -N 256 -K 512 -t bf16 --epilogue bias,relu --tiles 128,128,64,64,128 --macro wgmma --stages 4 --target cuda --arch sm_90a --emit "$tmp/wgmma_ring.cu"
# (M 250: an edge no box covers, so element copies, not bulk ones; wait
# depth 1: the copies go stages - 2 = 2 tiles ahead, so cp.async waits
# with 1 group pending, and each K tile's wgmma group is left running)
if grep -q 'cp.async.wait_group 1;' "$tmp/wgmma_ring.cu" 2>/dev/null && grep -q 'tc_cpa16(&' "$tmp/wgmma_ring.cu" && grep -q 'wgmma.mma_async' "$tmp/wgmma_ring.cu" &&
   grep -q 'wgmma.wait_group.sync.aligned 1;' "$tmp/wgmma_ring.cu"; then pass "emitted wgmma kernel copies its tiles into rings by cp.async, wgmma wait depth 1"
else fail "emitted wgmma ring kernel lacks cp.async / wait_group 1 / wgmma.wait_group 1"; fi
expect "--macro wgmma --stages 4 --transB 1 cuda --emit: a ring of bulk tensor copies" 0 '^compiled with NVRTC for sm_90a|^not compiled' \
  gemm -M 256 -N 256 -K 512 -t bf16 --transB 1 --epilogue bias,relu --tiles 128,128,64,64,128 --macro wgmma --stages 4 --target cuda --arch sm_90a --emit "$tmp/wgmma_tma_ring.cu"
# (B [N, K]: whole boxes of K-major operands: the ring's copies are bulk
# tensor copies, 4 mbarriers (one per slot), one wait by parity per K
# tile, no cp.async)
if [ "$(grep -cF 'mbarrier.init.shared' "$tmp/wgmma_tma_ring.cu" 2>/dev/null)" = 4 ] &&
   grep -q 'mbarrier.try_wait.parity' "$tmp/wgmma_tma_ring.cu" && grep -q 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier' "$tmp/wgmma_tma_ring.cu" &&
   ! grep -q 'tc_cpa\|cp.async.commit_group' "$tmp/wgmma_tma_ring.cu" && grep -q 'wgmma.wait_group.sync.aligned 1;' "$tmp/wgmma_tma_ring.cu"; then
  pass "emitted wgmma kernel fills its rings by bulk tensor copies on per-slot mbarriers, wgmma wait depth 1"
else fail "emitted wgmma kernel with B [N, K] lacks its ring of bulk tensor copies"; fi
expect "tc_schedule_auto on sm_90a: wgmma in rings of 3 stages" 0 'wgmma m64n256k16 \(bf16.* staged K- and N-major \(128B swizzle, by bulk tensor copies\) in shared memory \(147456 bytes\), in rings of 3 stages.*wgmma m64nNk16: the scheduler.s op type for f16/bf16 on CUDA sm_90a' \
  gemm -M 8192 -N 8192 -K 8192 -t bf16 --epilogue bias,relu --target cuda --arch sm_90a --emit "$tmp/wgmma_auto.cu"
# B [K, N] staged N-major: its tiles come by bulk tensor copies too (N-major
# boxes of 128-byte rows), no cp.async, and the K tile's four wgmma go
# between one fence and one wait
if grep -q 'cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier' "$tmp/wgmma_auto.cu" 2>/dev/null &&
   ! grep -q 'tc_cpa' "$tmp/wgmma_auto.cu" && grep -q 'p, 1, 1, 0, 1;' "$tmp/wgmma_auto.cu" &&
   [ "$(grep -c 'wgmma.fence.sync.aligned' "$tmp/wgmma_auto.cu")" = 1 ]; then pass "auto wgmma kernel: N-major B by bulk tensor copies, one fence per K tile"
else fail "auto wgmma kernel: B not N-major by bulk tensor copies, or a fence per K step"; fi
# B [N, K]: both operands K-major in whole boxes: the scheduler's rings
# are filled by bulk tensor copies
expect "tc_schedule_auto on sm_90a, B [N, K]: rings of bulk tensor copies" 0 'staged K-major \(128B swizzle, by bulk tensor copies\) in shared memory \(147456 bytes\), in rings of 3 stages \(1 K tile copied ahead.*by bulk tensor copies on CUDA sm_90\+, one thread arming each slot.s mbarrier' \
  gemm -M 8192 -N 8192 -K 8192 -t bf16 --transB 1 --epilogue cast:bf16 --target cuda --arch sm_90a --emit "$tmp/wgmma_auto_nt.cu"
expect "--macro wgmma for sm_80" 1 'wgmma m64nNk16 needs arch sm_90a, but the arch is sm_80' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --tiles 64,64,16,64,64 --macro wgmma --target cuda --arch sm_80 --emit "$tmp/wgmma80.cu"
expect "--macro wgmma on f32" 2 'multiplies f16 or bf16 operands, not f32' \
  gemm -M 64 -N 64 -K 32 --epilogue relu --tiles 64,64,16,64,64 --macro wgmma
expect "--macro wgmma on hip" 2 'NVIDIA sm_90a instruction' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --tiles 64,64,16,64,64 --macro wgmma --target hip
expect "--macro wgmma with N 12" 2 'must be 64 x N with N a multiple of 8 up to 256' \
  gemm -M 64 -N 24 -K 32 -t f16 --epilogue relu --tiles 64,24,16,64,12 --macro wgmma
expect "--macro wgmma without --tiles" 2 '--macro wgmma needs --tiles' gemm -M 64 -N 64 -K 32 -t f16 --epilogue relu --macro wgmma
# without --epilogue, gemm keeps its gridwise kernel
if "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  expect "plain gemm unchanged" 0 '^perf config: ' gemm -M 64 -N 64 -K 64 -V 1
fi
finish
