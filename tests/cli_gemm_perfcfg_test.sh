#!/usr/bin/env bash
# cli_gemm_perfcfg_test.sh - perf-config strings and the perf DB for the
# fused GEMM (`tilec gemm --epilogue`) through the real binary: both forms
# (BS,MPB,NPB,KPB,MPT,NPT and mma:...) mapped onto the matmul schedule's
# tiles (the schedule line shows the tiles derived by hand from rocMLIR's
# rules) and verified on PoCL at ragged shapes; the "perf config:" line
# and the JSON's perf_config / perf_config_source for each source; the
# refusals (exit 2, the parser's messages); --tune storing the fastest in
# a temporary perf DB under a key with the epilogue, and a later run
# reading it.  Ends with "N passed, N failed, N skipped".
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmp_dir perfcfg
export TILEC_PERFDB="$tmp/perfdb.sqlite"
# json NAME CODE PYTHON CMD...: exit code CODE and the JSON on stdout passing the asserts
json() {
  local name=$1 code=$2 py=$3 out rc
  shift 3
  out=$("$T" "$@" --json 2>/dev/null); rc=$?
  if [ $rc -eq "$code" ] && printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin)
$py" 2>/dev/null; then pass "$name"; else fail "$name: exit $rc (want $code): $out"; fi
}

# refusals, exit 2, with the template parser's messages (no device needed)
expect "malformed" 2 "bad perf config '1,2,3': perf-config \"1,2,3\": expected 6 comma-separated fields \(BS,MPB,NPB,KPB,MPT,NPT\), got 3" \
  gemm -M 67 -N 97 -K 33 --epilogue relu --perf-config 1,2,3 --emit "$tmp/x.cl"
expect "NPB not a multiple of 2 NPT" 2 'perf config 64,32,32,4,2,3 breaks a rule for this GEMM \(G 1, M 67, N 97, K 33\): n_per_thread \* n_level0 \* n_level1 \* 2 must equal n_per_block: n_per_block 32 is not a multiple of n_per_thread\*2 = 6' \
  gemm -M 67 -N 97 -K 33 --epilogue relu --perf-config 64,32,32,4,2,3 --emit "$tmp/x.cl"
# BS must be (32 / (2*2)) * (32 / (2*2)) = 64
expect "BS not the thread count" 2 'block_size must equal .* = 8\*8 = 64 \(got 128\)' \
  gemm -M 67 -N 97 -K 33 --epilogue relu --perf-config 128,32,32,4,2,2 --emit "$tmp/x.cl"
expect "mma: warp tile not a multiple of 16" 2 'm_per_warp must be a multiple of the mma tile.s M \(16: m16n8k16\), got 24' \
  gemm -M 67 -N 97 -K 33 -t f16 --epilogue relu --perf-config mma:48,32,16,24,16 --emit "$tmp/x.cl"
expect "xdlops: no MFMA fits" 2 'no MFMA instruction fits xdlops tiles 48,48,16,24,24' \
  gemm -M 64 -N 64 -K 64 -t f16 --epilogue relu --perf-config xdlops:48,48,16,24,24 --emit "$tmp/x.cl"
expect "xdlops: on the fusion path (MFMA emulated)" 0 '^verify: PASS' \
  gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,relu --perf-config xdlops:64,64,16,32,32 -V 1
expect "xdlops: the perf config line" 0 '^perf config: xdlops:32,32,16,16,16,16 \(--perf-config\)' \
  gemm -M 40 -N 33 -K 20 -t bf16 --epilogue relu --perf-config xdlops:32,32,16,16,16 -V 1
expect "the HIP heuristic names MFMA tiles" 0 '^perf config: xdlops:64,64,16,32,32,32 \(heuristic, the matmul scheduler.s tiles 64,64,16,32,32 mfma' \
  gemm -M 128 -N 128 -K 64 -t f16 --epilogue bias,relu --target hip --emit "$tmp/x.hip"
expect "tmaws: not for the fusion path" 2 'the fused GEMM takes the perf configs .*the Hopper forms' \
  gemm -M 256 -N 256 -K 256 -t bf16 --epilogue relu --perf-config tmaws:128,256,4 --target cuda --emit "$tmp/x.cu"
expect "mma: with f32" 2 'multiplies f16 or bf16 operands, not f32' \
  gemm -M 64 -N 64 -K 32 --epilogue relu --perf-config mma:32,32,16,16,16 --emit "$tmp/x.cl"
expect "--perf-config with --tiles" 2 'does not combine with --perf-config and --tiles together' \
  gemm -M 8 -N 8 -K 8 --epilogue relu --perf-config 64,32,32,4,2,2 --tiles 8,8,8,4,4
expect "--perf-config with --macro" 2 'does not combine with --perf-config and --macro together' \
  gemm -M 8 -N 8 -K 8 -t f16 --epilogue relu --perf-config mma:32,32,16,16,16 --macro mma
expect "--perf-config with --tune" 2 'tune' \
  gemm -M 8 -N 8 -K 8 --epilogue relu --perf-config 64,32,32,4,2,2 --tune
json "--json of a malformed config: the short form" 2 'assert d["ok"] is False and d["kernels"]==[] and "bad perf config" in d["error"]' \
  gemm -M 8 -N 8 -K 8 --epilogue relu --perf-config 1,2,3
# mma: builds with NVRTC for sm_80 (the perf config's warp tiles)
expect "mma: cuda sm_80 builds" 0 '^compiled with NVRTC for sm_80|^not compiled' \
  gemm -M 64 -N 64 -K 32 -t f16 --epilogue bias,relu --perf-config mma:64,32,16,32,16 --target cuda --arch sm_80 --emit "$tmp/m.cu"
if grep -q 'mma.sync.aligned.m16n8k16' "$tmp/m.cu" 2>/dev/null; then pass "mma: perf config gives the mma.sync kernel"
else fail "mma: perf config: no mma.sync in the CUDA kernel"; fi

if ! "$T" devices 2>/dev/null | grep -q 'Portable Computing Language'; then
  echo "  skip the runs (no PoCL device)"; skipped=$((skipped + 1))
else
  # 64,32,32,4,2,2: BS 64, a 32 x 32 block tile, K tiles of 4, 2 x 2 sub-tiles of 2 x 2 per
  # thread = 4 x 4 accumulators, (32/4) x (32/4) = 64 threads
  expect "FMA form verifies at 67x97x33" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu --perf-config 64,32,32,4,2,2 -V 1
  expect "FMA form: the mapped tiles" 0 '^schedule: matmul: 67 x 97 x 33, 32x32 tiles on BIDy x BIDx, 8 x 8 threads \(TIDy x TIDx\) with 4x4 f32 accumulators each \(FMA outer products\), K in tiles of 4 ' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu --perf-config 64,32,32,4,2,2
  expect "FMA form: the launch (64 threads)" 0 '^kernel: gemm_fused \(fusion\), grid \[4, 3, 1\] of blocks \[8, 8, 1\]' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu --perf-config 64,32,32,4,2,2
  expect "FMA form: the perf config line" 0 '^perf config: 64,32,32,4,2,2 \(--perf-config\)$' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu --perf-config 64,32,32,4,2,2
  # 64,64,32,8,4,2: a 64 x 32 block tile, 8 x 4 accumulators, (64/8) x (32/4) = 64 threads
  expect "FMA form f16, batch, transposes, residual, cast" 0 '^verify: PASS' \
    gemm -M 45 -N 70 -K 29 -g 2 -t f16 --transA 1 --transB 1 --epilogue residual,gelu,cast:bf16 --perf-config 64,64,32,8,4,2 -V 1
  expect "... 8x4 accumulators, 8 x 8 threads" 0 '64x32 tiles on BIDy x BIDx, 8 x 8 threads .* with 8x4 f32 accumulators each' \
    gemm -M 45 -N 70 -K 29 -g 2 -t f16 --transA 1 --transB 1 --epilogue residual,gelu,cast:bf16 --perf-config 64,64,32,8,4,2
  # mma:64,32,16,32,16: 2 x 2 warps of 32 x 16 (OpenCL's emulation)
  expect "mma form verifies at 67x97x33 bf16" 0 '^verify: PASS \(max error .*; 6499 elements\)' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu --perf-config mma:64,32,16,32,16 -V 1
  expect "mma form: the mapped tiles" 0 '64x32 tiles on BIDy x BIDx, 4 warps \(TIDy\) of 32 lanes \(TIDx\) with 32x16 tiles each as mma.sync m16n8k16 \(bf16, f32 accumulators\), K in tiles of 16' \
    gemm -M 67 -N 97 -K 33 -t bf16 --epilogue bias,relu --perf-config mma:64,32,16,32,16
  json "--json: perf_config and its source (option)" 0 'assert d["perf_config"]=="mma:64,32,16,32,16" and d["perf_config_source"]=="option" and d["verify"]["result"]=="PASS"
assert d["kernels"][0]["block"]==[32,4,1] and d["tune"] is None' \
    gemm -M 31 -N 17 -K 61 -t f16 --epilogue scale:0.5,silu --perf-config mma:64,32,16,32,16 -V 1
  # the heuristic: the scheduler's 64x64x8 tiles with 4x4 per thread are 256,64,64,8,2,2
  expect "heuristic line" 0 "^perf config: 256,64,64,8,2,2 \(heuristic, the matmul scheduler's tiles 64,64,8,4,4\)$" \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu
  json "--json heuristic; tiles without a perf-config form give null" 0 'assert d["perf_config"] is None and d["perf_config_source"]=="heuristic"' \
    gemm -M 1 -N 1 -K 1 --epilogue relu -V 1
  expect "--tiles: source and form" 0 '^perf config: 64,32,32,4,2,2 \(--tiles\)$' \
    gemm -M 67 -N 97 -K 33 --epilogue bias,relu --tiles 32,32,4,4,4
  # --tune stores under the key with the epilogue; a later run reads it
  out=$("$T" gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,relu --tune --tune-max 3 -V 1 2>&1); rc=$?
  cfg=$(printf '%s\n' "$out" | sed -n 's/^perf config: \([^ ]*\) (tuned: fastest of 3 tried, .* ms; stored in the perf DB .*perfdb.sqlite)$/\1/p')
  if [ $rc -eq 0 ] && [ -n "$cfg" ] && printf '%s\n' "$out" | grep -q '^verify: PASS'; then pass "--tune stores ($cfg)"
  else fail "--tune: exit $rc: $(printf '%s' "$out" | tail -n 4)"; fi
  expect "a later run reads the perf DB" 0 "^perf config: $cfg \(from the perf DB .*perfdb.sqlite; tuned to [0-9.]+ ms by tilec " \
    gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,relu -V 1
  json "... its JSON source is perfdb" 0 "assert d['perf_config']=='$cfg' and d['perf_config_source']=='perfdb' and d['verify']['result']=='PASS'" \
    gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,relu -V 1
  expect "another epilogue is another key" 0 "^perf config: 256,64,64,16,2,2 \(heuristic" \
    gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,gelu
  expect "another shape is another key" 0 "^perf config: .*\(heuristic" \
    gemm -M 67 -N 97 -K 34 -t f16 --epilogue bias,relu
  if command -v sqlite3 >/dev/null 2>&1; then
    key=$(sqlite3 "$TILEC_PERFDB" 'select problem from perf_db')
    if [ "$key" = "gemm -g 1 -M 67 -N 97 -K 33 --transA 0 --transB 0 -t f16 --epilogue bias,relu" ]; then pass "the key"
    else fail "the key: '$key'"; fi
    # an entry that does not fit: a warning, then the heuristic
    sqlite3 "$TILEC_PERFDB" "update perf_db set perf_config = 'xdlops:48,48,16,24,24'"
    expect "a stored entry that does not fit" 0 'warning: the perf DB entry xdlops:48,48,16,24,24 does not fit: no MFMA instruction fits' \
      gemm -M 67 -N 97 -K 33 -t f16 --epilogue bias,relu
  else
    echo "  skip the key (no sqlite3)"; skipped=$((skipped + 1))
  fi
  # --tune --macro mma: the mma candidates (OpenCL's emulation), stored as mma:
  json "--tune --macro mma --json" 0 't=d["tune"]
assert t["tried"]==2 and t["stored"] is True and t["perfdb"].endswith("perfdb.sqlite") and d["perf_config"].startswith("mma:")
assert d["perf_config_source"]=="tuned" and "mma.sync m16n8k16" in d["schedule"] and d["verify"]["result"]=="PASS"' \
    gemm -M 45 -N 37 -K 40 -t bf16 --epilogue bias,relu --tune --tune-max 2 --macro mma -V 1
  expect "... read back without --macro" 0 '^perf config: mma:.* \(from the perf DB ' \
    gemm -M 45 -N 37 -K 40 -t bf16 --epilogue bias,relu -V 1
fi
finish
