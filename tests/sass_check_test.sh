#!/usr/bin/env bash
# sass_check_test.sh - runs bench/sass_check.sh (the SASS of the TMA GEMM
# and of every LdStMatrixSet variant, compiled for sm_90a with nvcc and
# listed with cuobjdump: HGMMA of the config's shape / SYNCS / LDSM / STSM /
# UTMALDG / UTMASTG present, no LDL / STL) in a scratch folder, then checks
# the check itself: asking every LdStMatrixSet kernel for HGMMA (which a
# copy has none of) must fail with exit 1 and name what is missing, and so
# must asking every GEMM for an HGMMA of a shape none has (m64n8k16).
# Without nvcc or cuobjdump (scripts/deps.sh pip-installs cuobjdump where
# nvcc exists) it reports one skip with the reason.  Binaries: $TILEC
# (build/tilec), $LDST_BENCH (build/bench/ldst_bandwidth).  Ends with
# "N passed, N failed, N skipped".
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilec-sass.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

out=$(bench/sass_check.sh --out "$tmp/all" 2>&1); rc=$?
printf '%s\n' "$out"
if [ $rc -eq 3 ]; then
  exit 0   # sass_check.sh printed the skip and "0 passed, 0 failed, 1 skipped"
fi
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
p=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p'); p=${p:-0}
f=$(echo "$line" | sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p'); f=${f:-1}
if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
  echo "  FAIL bench/sass_check.sh exited with status $rc"
  f=1
fi
if [ $rc -eq 0 ] && [ "$p" -ne 23 ]; then
  echo "  FAIL bench/sass_check.sh checked $p kernels, expected 23 (10 GEMMs, 1 convolution, 12 LdStMatrixSet)"
  f=$((f + 1))
fi

# the negative control
neg=$(bench/sass_check.sh --out "$tmp/neg" --only ldst --require HGMMA 2>&1); nrc=$?
nfail=$(printf '%s\n' "$neg" | grep -cE '^ldst_sw[0-9]+_m[0-9]+_n[0-9]+ .* FAIL$')
nwhy=$(printf '%s\n' "$neg" | grep -c "no HGMMA (the source has 'wgmma.mma_async' 0 times)")
if [ $nrc -eq 1 ] && [ "$nfail" -eq 12 ] && [ "$nwhy" -eq 12 ] &&
   printf '%s\n' "$neg" | grep -q '^0 passed, 12 failed, 0 skipped$'; then
  echo "  ok   --require HGMMA on the 12 copies: 12 findings, exit 1"
  p=$((p + 1))
else
  echo "  FAIL --require HGMMA: expected 12 findings and exit 1, got exit $nrc, $nfail FAIL rows, $nwhy reasons:"
  printf '%s\n' "$neg" | tail -n 20 | sed 's/^/    /'
  f=$((f + 1))
fi
# the wgmma's shape is read with its modifiers: asking every GEMM for an
# m64n8k16 HGMMA (none has one) must fail the same way
neg=$(bench/sass_check.sh --out "$tmp/neg2" --only gemm --require HGMMA.64x8x16.F32.BF16 2>&1); nrc=$?
nfail=$(printf '%s\n' "$neg" | grep -cE '^gemm_[a-z0-9_]+ .* FAIL$')
nwhy=$(printf '%s\n' "$neg" | grep -c "no HGMMA.64x8x16.F32.BF16 (the source has 'wgmma.mma_async' [1-9][0-9]* times)")
if [ $nrc -eq 1 ] && [ "$nfail" -eq 10 ] && [ "$nwhy" -eq 10 ]; then
  echo "  ok   --require HGMMA.64x8x16.F32.BF16 on the 10 GEMMs: 10 findings, exit 1"
  p=$((p + 1))
else
  echo "  FAIL --require HGMMA.64x8x16.F32.BF16: expected 10 findings and exit 1, got exit $nrc, $nfail FAIL rows, $nwhy reasons:"
  printf '%s\n' "$neg" | tail -n 20 | sed 's/^/    /'
  f=$((f + 1))
fi
echo "$p passed, $f failed, 0 skipped"
[ "$f" -eq 0 ]
