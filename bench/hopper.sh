#!/usr/bin/env bash
# hopper.sh - every H100 measurement of the Hopper work (the LdStMatrixSet
# copy's bandwidth, the GEMM against cuBLAS, the SASS), as one command for a GPU
# session (at most 10 minutes per command there).  From the repository root:
#
#   bench/hopper.sh            (writes under $OUT if set, else bench/out/)
#
# Steps, each under its own timeout and all under one deadline
# ($HOPPER_BUDGET seconds, default 540), so that a hang costs one step, not
# the slot; the measurements come first, the tests (which re-check on PoCL
# what the CPU machine checks too, and launch the TMA kernels for real)
# after them:
#   1. preflight   the tools (cc, make, nvcc, cuobjdump, python3, torch),
#                  git revision, nvidia-smi
#   2. build       make -j16 all tests (the library, tilec, the tests and
#                  the benchmarks)
#   2b. paths      bench/cuda_paths.sh: every CUDA path of the tilec command
#                  (demo, each GEMM kind, conv2d fwd/bwd-data/bwd-weight in
#                  NCHW and NHWC) verified with -V 1
#   3. ldst        build/bench/ldst_bandwidth: the LdStMatrixSet copy at
#                  8192x8192 bf16, all 12 shmoo variants, output == input,
#                  GB/s against cuMemcpyDtoD (goal >= 90%)
#   4. gemm        bench/gemm_vs_cublas.py: tilec's bf16 GEMM vs cuBLAS
#                  (torch.matmul) at 8192^3 (4 layouts), M = 64/128/256 with
#                  N = K = 8192, 1024^2..4096^2 squares
#   4b. pipelines  tilec gemm 8192^3 with tmaws:128,256,4 (the default),
#                  tmaws:128,256,4,2 (2-block clusters, B multicast),
#                  tmaws:128,256,4,1,132 and tmaws:128,256,4,2,132
#                  (persistent, 132 blocks) and tma:256,128,4
#                  (block-synchronous), each -V 1 --time
#   4e. fusion     the fusion path's GEMMs (tilec gemm --epilogue) at
#                  8192^3 bf16 beside the template and cuBLAS, and conv2d
#                  --path fusion beside the template on three 3x3 layers
#                  (HOPPER_FUSION_ONLY, a regular expression, picks runs by
#                  their label)
#   4d. norms      build/bench/norms: softmax / RMSNorm / LayerNorm in bf16
#                  over N = 256 .. 262144 (GB/s, verified)
#   4c. conv       bench/conv_vs_cudnn.py: f16 conv2d forward on 14
#                  ResNet-50 layers (N = 32, NCHW and NHWC) vs cuDNN
#   5. tests       build/tests/test_gemm_tma, test_ldst, test_tmap, test_nvcc,
#                  test_cache, test_wgmma, test_mma, test_runtime (fresh
#                  kernel cache); on a GPU these launch the TMA kernels and
#                  the device-to-device copy for real
#   6. sass        bench/sass_check.sh: HGMMA / UTMALDG / UTMASTG / STSM in the
#                  TMA GEMM, LDSM / STSM / UTMALDG / UTMASTG in every
#                  LdStMatrixSet variant, no LDL / STL (needs nvcc + cuobjdump)
#   7. nvidia-smi  clocks and temperature after the runs
# Each step's full output goes to OUT/NN_step.log; the summary (one line per
# step, the bandwidth and GEMM tables) is printed last and written to
# OUT/summary.md.  Estimated time on an H100 with 16 cores: build ~1 min,
# ldst ~1 min, gemm ~3-4 min, tests ~2 min (PoCL compiles their kernels
# cold: 2.3 min on the 2-core CPU machine), sass ~20 s: 7-8 minutes, never
# more than the deadline.
#
# The GPU machine's image has gcc and nvcc but reaches no network, and may
# lack make or the SQLite / OpenCL headers: run scripts/gpu_carry.sh on the
# CPU machine first (it downloads those Debian packages into .gpudeps/) and
# carry ".gpudeps" with the run; this script unpacks them into
# /tmp/gpudeps when make, sqlite3.h or CL/cl.h is missing.  Failing that,
# build on the CPU machine and carry build/ (about 42 MiB); the build step
# then says what failed and the rest runs with the binaries at hand.  Where NVRTC
# is not on the library path (PyTorch's pip wheels bring libnvrtc.so.12 in
# site-packages/nvidia/cuda_nvrtc/lib), that folder is added to
# LD_LIBRARY_PATH.
#
# With HOPPER_PACK=1 the logs end up in one OUT/logs.tar.gz beside
# summary.md and gemm_vs_cublas.md (for the device tool, which brings back
# at most 8 files).  In a session with the device tool, after
# scripts/gpu_carry.sh: run with command "HOPPER_PACK=1 bench/hopper.sh"
# and carry [".gpudeps"], timeout 600.
#
# Exit status: 0 every step passed or was skipped for a missing tool or
# device (said in the summary); 1 a step failed or timed out.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
OUT=${OUT:-bench/out}
mkdir -p "$OUT" || exit 1
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
export OUT
BUDGET=${HOPPER_BUDGET:-540}
T0=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilec-hopper.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# a fresh kernel cache and perf DB: nothing from an earlier run is reused
export TILEC_CACHE_DIR=$tmp/cache TILEC_PERFDB=$tmp/perfdb.sqlite
# modules load eagerly, so that no lazy loading falls between a launch's
# timing events (every timed tilec launch loads its module first)
export CUDA_MODULE_LOADING=EAGER
mkdir -p "$TILEC_CACHE_DIR"

summary=()
status=0
left() { echo $((BUDGET - ($(date +%s) - T0))); }

# step NUM NAME TIMEOUT CMD...: runs CMD under `timeout` (at most what is
# left of the budget, less 20 s for the steps after), output to the log;
# sets $rc (124: timed out) and $log.  Exit 3 from CMD means "no device /
# tool": SKIP.
step() {
  local num=$1 name=$2 limit=$3
  shift 3
  log=$OUT/${num}_$name.log
  local l
  l=$(left)
  [ "$limit" -gt $((l - 20)) ] && limit=$((l - 20))
  if [ "$limit" -lt 10 ]; then
    rc=125
    echo "== $num $name: not run, the ${BUDGET}s budget is spent" | tee "$log"
    return
  fi
  echo "== $num $name (timeout ${limit}s): $*"
  local s
  s=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$log" 2>&1
  rc=$?
  echo "   exit $rc after $(($(date +%s) - s)) s; log: $log"
  [ $rc -eq 3 ] && tail -n 1 "$log" | cut -c1-300 | sed 's/^/   skipped: /'
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "   TIMED OUT after ${limit}s"
  return 0
}
# verdict NAME DETAIL: records the step's result from $rc
verdict() {
  local v
  case $rc in
    0) v=PASS ;; 3) v=SKIP ;; 124|137) v=TIMEOUT; status=1 ;; 125) v="NOT RUN"; status=1 ;;
    *) v=FAIL; status=1 ;;
  esac
  summary+=("$(printf '%-8s %-28s %s' "$v" "$1" "$2")")
}

# want NAME: whether HOPPER_STEPS (a space-separated list of step names:
# build paths ldst gemm pipelines fusion norms conv tests sass; default all of them)
# names the step.  A later session reruns only what it fixed this way.
want() {
  case " ${HOPPER_STEPS:-build paths ldst gemm pipelines fusion norms conv tests sass} " in
    *" $1 "*) return 0 ;;
  esac
  return 1
}

# ---- 1. preflight ----
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(git status --porcelain 2>/dev/null | wc -l) changed files"
  for t in cc make nvcc python3 nvidia-smi timeout; do
    printf '%-11s %s\n' "$t:" "$(command -v $t || echo MISSING)"
  done
  echo "cuobjdump:  $(sh scripts/find_cuobjdump.sh || echo MISSING)"
  python3 -c 'import torch; print("torch:      %s, CUDA %s, available %s" % (torch.__version__, torch.version.cuda, torch.cuda.is_available()))' 2>&1 | tail -n 1
  echo "cores: $(nproc 2>/dev/null)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu,clocks.sm --format=csv 2>&1
    echo
    nvidia-smi 2>&1
  else
    echo "nvidia-smi: not found (no NVIDIA driver here?)"
  fi
} >"$OUT/01_preflight.log" 2>&1
sed -n '1,12p' "$OUT/01_preflight.log"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
rc=0
verdict "preflight" "GPU: ${gpu:-none found by nvidia-smi}"

# ---- what the GPU image may lack: the Debian packages that
#      scripts/gpu_carry.sh put in .gpudeps/ on the CPU machine (carried
#      with the run), unpacked when make, sqlite3.h or CL/cl.h is missing
#      (HOPPER_FORCE_GPUDEPS=1 unpacks them anyway, to test this here) ----
need_deps=${HOPPER_FORCE_GPUDEPS:-0}
command -v make >/dev/null 2>&1 || need_deps=1
for h in sqlite3.h CL/cl.h; do
  printf '#include <%s>\n' "$h" | cc -E -x c - >/dev/null 2>&1 || need_deps=1
done
if [ "$need_deps" != 0 ]; then
  if ls .gpudeps/*.deb >/dev/null 2>&1; then
    gd=${TMPDIR:-/tmp}/gpudeps
    mkdir -p "$gd"
    for f in .gpudeps/*.deb; do
      if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$f" "$gd"
      else # a .deb is an ar archive holding data.tar.*
        x=$(mktemp -d) && (cd "$x" && ar x "$OLDPWD/$f" && tar -xf data.tar.* -C "$gd") && rm -rf "$x"
      fi
    done
    lib=$gd/usr/lib/x86_64-linux-gnu
    export PATH=$gd/usr/bin:$PATH CPATH=$gd/usr/include${CPATH:+:$CPATH}
    export LIBRARY_PATH=$lib${LIBRARY_PATH:+:$LIBRARY_PATH}
    export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "   deps: unpacked $(ls .gpudeps/*.deb | wc -l) packages from .gpudeps/ into $gd" \
         "(make: $(command -v make), sqlite3.h: $([ -f "$gd/usr/include/sqlite3.h" ] && echo yes || echo no))"
  else
    echo "   deps: make, sqlite3.h or CL/cl.h is missing and no .gpudeps/ was carried: run" \
         "scripts/gpu_carry.sh on the CPU machine and carry .gpudeps with the run"
  fi
fi

# ---- 2. build ----
# CFLAGS=-Wno-error: the machine's compiler may be newer than the CPU
# machine's and warn where it did not; a warning must not cost the slot
if want build; then
# shellcheck disable=SC2086
step 02 build 240 make -j16 ${HOPPER_MAKE:-all tests} CFLAGS=-Wno-error
tail -n 5 "$log" | sed 's/^/   /'
verdict "build (make -j16 all tests)" "$([ $rc -eq 0 ] && echo ok || tail -n 1 "$log")"
fi

# NVRTC from PyTorch's wheels when none is on the library path
if [ -x build/tilec ] && ! build/tilec devices 2>/dev/null | grep -q 'CUDA compiler: NVRTC'; then
  d=$(python3 - <<'EOF' 2>/dev/null
import glob, os, site, sys
dirs = site.getsitepackages() + [p for p in sys.path if p.endswith("-packages")]
for d in dirs:
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib", "libnvrtc.so*"))):
        print(os.path.dirname(p)); sys.exit(0)
EOF
  )
  if [ -n "$d" ]; then
    export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "   NVRTC: using $d (LD_LIBRARY_PATH)"
  fi
fi
build/tilec devices >"$OUT/02_devices.log" 2>&1
grep -E 'CUDA (compiler|driver|device)' "$OUT/02_devices.log" | sed 's/^ */   /'

# ---- 2b. every CUDA path of the tilec command, verified ----
if want paths; then
step 02 cuda_paths 200 bench/cuda_paths.sh build/tilec
grep -E '^(FAIL|TIMEOUT)|^         \||^cuda_paths:' "$log" | head -n 60 | sed 's/^/   /'
verdict "cuda_paths" "$(grep -E '^cuda_paths:' "$log" | tail -n 1)"
fi

# ---- 3. LdStMatrixSet bandwidth ----
if want ldst; then
step 03 ldst_bandwidth 150 build/bench/ldst_bandwidth --target cuda --size 8192x8192 -i 10
cat "$log" | head -n 40 | sed 's/^/   /'
goal=$(grep -E '^goal >=' "$log" | tail -n 1)
okl=$(grep -E '^(ok|FAILED):' "$log" | tail -n 1)
verdict "ldst_bandwidth 8192x8192" "${goal:+$goal; }${okl:-$(tail -n 1 "$log")}"
ldst_table=$(grep -E '^(variant|sw[0-9]+ cta|device-to-device|  error)' "$log")
fi

# ---- 4. GEMM vs cuBLAS ----
# no new shape after gbudget s (one shape takes up to ~40 s), leaving ~3.5
# minutes of the deadline for the tests and the SASS check; the table is
# rewritten after every shape, so a timeout keeps what ran
# HOPPER_GEMM_SHAPES: --shape arguments replacing the default list
if want gemm; then
gbudget=$(($(left) - 250)); [ $gbudget -gt 200 ] && gbudget=200; [ $gbudget -lt 30 ] && gbudget=30
[ -n "${HOPPER_GEMM_BUDGET:-}" ] && gbudget=$HOPPER_GEMM_BUDGET
# shellcheck disable=SC2086
step 04 gemm_vs_cublas 300 python3 bench/gemm_vs_cublas.py --tilec build/tilec --budget $gbudget \
  --timeout 100 --out "$OUT/gemm_vs_cublas.md" ${HOPPER_GEMM_SHAPES:-}
grep -E '^[0-9]+x[0-9]+x[0-9]+ ' "$log" | sed 's/^/   /'
n=$(grep -cE '^\| [0-9]+x' "$OUT/gemm_vs_cublas.md" 2>/dev/null)
verdict "gemm_vs_cublas" "${n:-0} shapes in gemm_vs_cublas.md$([ $rc -eq 0 ] || echo "; $(tail -n 1 "$log")")"
fi

# ---- 4b. the Hopper GEMM's pipelines at 8192^3: warp-specialised (the
#      default), the same in 2-block clusters (opt-in), block-synchronous ----
if want pipelines; then
step 04 gemm_pipelines 200 bash -c '
  for pc in tmaws:128,256,4 tmaws:128,256,4,1,132 tmaws:128,256,4,2 tmaws:128,256,4,2,132 \
            tma:256,128,4; do
    echo "== $pc"
    timeout -k 5 40 build/tilec gemm -M 8192 -N 8192 -K 8192 -t bf16 --target cuda \
      --perf-config "$pc" -V 1 --time -i 20 2>&1 || echo "exit $?"
  done | tee /dev/stderr | grep -q "no CUDA device" && exit 3
  exit 0' 2>&1
pipelines=$(grep -E '^== |^time:|^verify:|^exit|tilec gemm:' "$log")
printf '%s\n' "$pipelines" | sed 's/^/   /'
verdict "gemm_pipelines (8192^3)" "$(grep -c '^verify: PASS' "$log") of 5 verified"
fi

# ---- 4e. the fusion path against the templates: the matmul scheduler's
#      kernels (tilec gemm --epilogue ...) and the template GEMM at 8192^3
#      bf16 beside cuBLAS (torch.matmul), and conv2d --path fusion against
#      the template convolution on three ResNet-50 3x3 layers (NHWC f16) ----
if want fusion; then
step 04 fusion_vs_template 300 bash -c '
  g="build/tilec gemm -M 8192 -N 8192 -K 8192 -t bf16 --target cuda -V 1 --time -i 20"
  c="build/tilec conv2d --target cuda --time -i 10 -n 32 -t f16 --in_layout NHWC --fil_layout KYXC --out_layout NHWK"
  want() { [ -z "${HOPPER_FUSION_ONLY:-}" ] || printf "%s" "$1" | grep -Eq "$HOPPER_FUSION_ONLY"; }
  one() { want "$1" || return 0; echo "== $1"; shift; timeout -k 5 90 "$@" 2>&1 | grep -E "^(perf config|schedule|kernel|time|verify|path)|tilec|rror" | cut -c1-400 || true; }
  want "cuBLAS" && echo "== cuBLAS (torch.matmul) 8192^3 bf16" &&
  timeout -k 5 60 python3 -c "
import torch
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
a = torch.randn(8192, 8192, device=\"cuda\", dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(5): torch.matmul(a, b)
ts = []
for _ in range(20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); ms = ts[len(ts) // 2]
print(\"time: %.4f ms (median of 20 runs), %.2f GFLOP/s\" % (ms, 2 * 8192**3 / ms / 1e6))
" 2>&1 | tail -n 2
  one "template (tmaws default)" $g
  one "fusion cast:bf16 (auto)" $g --epilogue cast:bf16
  one "fusion bias,relu,cast:bf16 (auto)" $g --epilogue bias,relu,cast:bf16
  one "fusion cast:bf16 wgmma 128x128 4 stages" $g --epilogue cast:bf16 --tiles 128,128,64,64,128 --macro wgmma --stages 4
  one "fusion cast:bf16 wgmma 128x256 3 stages" $g --epilogue cast:bf16 --tiles 128,256,64,64,256 --macro wgmma --stages 3
  one "fusion cast:bf16 wgmma 128x256 4 stages (wait depth 1: 2 K tiles ahead)" $g --epilogue cast:bf16 --tiles 128,256,64,64,256 --macro wgmma --stages 4
  one "fusion cast:bf16 (auto) B^T: 3-stage rings of bulk tensor copies (TMA, an mbarrier per slot)" $g --transB 1 --epilogue cast:bf16
  one "fusion cast:bf16 wgmma 128x256 B^T, 4-stage rings of bulk tensor copies (2 K tiles ahead)" $g --transB 1 --epilogue cast:bf16 --tiles 128,256,64,64,256 --macro wgmma --stages 4
  one "fusion cast:bf16 wgmma 128x256 B^T by TMA, 1 stage" $g --transB 1 --epilogue cast:bf16 --tiles 128,256,64,64,256 --macro wgmma --stages 1
  one "template mma.sync (sm_80)" $g --arch sm_80
  one "fusion cast:bf16 mma.sync (sm_80, auto)" $g --arch sm_80 --epilogue cast:bf16
  for L in "64 56 64 1 1" "128 56 128 2 1" "256 14 256 1 1"; do
    set -- $L
    a="-c $1 -H $2 -W $2 -k $3 -y 3 -x 3 -p 1 -q 1 -u $4 -v $4"
    one "conv $a template" $c $a
    one "conv $a fusion" $c $a --path fusion
    one "conv $a fusion bias,relu" $c $a --path fusion --epilogue bias,relu
    one "conv $a fusion wgmma 64x128x64, 3 stages" $c $a --path fusion --tiles 64,128,64,64,128 --macro wgmma --stages 3
  done
  exit 0' 2>&1
fusion_lines=$(grep -E '^== |^time:|^verify:|^perf config|tilec' "$log")
printf '%s\n' "$fusion_lines" | sed 's/^/   /'
verdict "fusion_vs_template" "$(grep -c '^verify: PASS' "$log") of $(grep '^== ' "$log" | grep -vc 'cuBLAS') runs verified, $(grep -c '^time:' "$log") timed"
fi

# ---- 4d. the normalizations (softmax, RMSNorm, LayerNorm), bf16, 2^27
#      elements, N = 256 .. 262144, as tc_schedule_auto schedules them ----
if want norms; then
step 04 norms 150 build/bench/norms --target cuda -t bf16 --total 27 -i 20
grep -E '^(kernel|softmax|rmsnorm|layernorm|norms:)' "$log" | cut -c1-60 | sed 's/^/   /'
verdict "norms (bf16, 2^27)" "$(grep -E '^norms:' "$log" | tail -n 1)"
fi

# ---- 4c. conv2d forward vs cuDNN on ResNet-50's layers ----
if want conv; then
cbudget=$(($(left) - 200)); [ $cbudget -gt 150 ] && cbudget=150; [ $cbudget -lt 20 ] && cbudget=20
[ -n "${HOPPER_CONV_BUDGET:-}" ] && cbudget=$HOPPER_CONV_BUDGET
# shellcheck disable=SC2086
step 04 conv_vs_cudnn 240 python3 bench/conv_vs_cudnn.py --tilec build/tilec --budget $cbudget \
  --out "$OUT/conv_vs_cudnn.md" ${HOPPER_CONV_ARGS:-}
grep -E '^- geomean' "$OUT/conv_vs_cudnn.md" 2>/dev/null | sed 's/^/   /'
verdict "conv_vs_cudnn" "$(grep -E '^- geomean' "$OUT/conv_vs_cudnn.md" 2>/dev/null | tr '\n' ' ')$([ $rc -eq 0 ] || echo "; $(tail -n 1 "$log")")"
fi

# ---- 5. the GPU-relevant tests ----
tests_deadline=$(($(date +%s) + ${HOPPER_TESTS_S:-220}))
want tests || tests_deadline=0
for t in test_gemm_tma test_ldst test_tmap test_nvcc test_cache test_wgmma test_mma test_runtime \
         test_gemm test_tmem test_ldmatrix_index test_swizzle_swap test_abstract_tensor; do
  want tests || break
  lim=$((tests_deadline - $(date +%s)))
  [ $lim -gt 120 ] && lim=120
  [ $lim -lt 10 ] && lim=10
  if [ ! -x build/tests/$t ]; then
    rc=1
    verdict "$t" "build/tests/$t not built"
    continue
  fi
  step 05 "$t" "$lim" build/tests/$t
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  grep -E 'FAIL|skip' "$log" | head -n 6 | sed 's/^/   /'
  verdict "$t" "${line:-no summary line (exit $rc)}"
done

# ---- 6. SASS ----
if want sass; then
step 06 sass_check 120 bench/sass_check.sh --out "$OUT/sass"
tail -n 3 "$log" | sed 's/^/   /'
verdict "sass_check (sm_90a cubins)" "$(grep -E '^[0-9]+ passed' "$log" | tail -n 1)$(grep -m1 'skip SASS' "$log" | sed 's/^ */; /')"
fi

# ---- 7. nvidia-smi after the runs ----
command -v nvidia-smi >/dev/null 2>&1 &&
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_throttle_reasons.active \
    --format=csv >"$OUT/07_nvidia_smi_after.log" 2>&1

# ---- summary ----
{
  echo "# bench/hopper.sh summary"
  echo
  echo "- $(sed -n 1p "$OUT/01_preflight.log"); $(sed -n 2p "$OUT/01_preflight.log"); GPU: ${gpu:-none}"
  echo "- total $(($(date +%s) - T0)) s of a ${BUDGET} s budget; logs in $OUT"
  echo
  echo '```'
  printf '%s\n' "${summary[@]}"
  echo '```'
  echo
  echo "## LdStMatrixSet 8192x8192 bf16 (build/bench/ldst_bandwidth)"
  echo
  echo '```'
  printf '%s\n' "${ldst_table:-(no table: see 04_ldst_bandwidth.log)}"
  echo '```'
  echo
  echo "## The GEMM's pipelines at 8192^3 (tmaws; in 2-block clusters; persistent, alone and in clusters; tma)"
  echo
  echo '```'
  printf '%s\n' "${pipelines:-(none: see 04_gemm_pipelines.log)}"
  echo '```'
  echo
  echo "## The fusion path against the templates (8192^3 bf16 GEMMs; conv2d NHWC f16)"
  echo
  echo '```'
  printf '%s\n' "${fusion_lines:-(none: see 04_fusion_vs_template.log)}"
  echo '```'
  echo
  echo "## conv2d forward vs cuDNN"
  echo
  if [ -f "$OUT/conv_vs_cudnn.md" ]; then grep -E '^\||^- geomean' "$OUT/conv_vs_cudnn.md"; else echo "(not run)"; fi
  echo
  echo "## GEMM vs cuBLAS"
  echo
  if [ -f "$OUT/gemm_vs_cublas.md" ]; then grep -E '^\|' "$OUT/gemm_vs_cublas.md"; else echo "(none: see 04_gemm_vs_cublas.log)"; fi
  echo
  echo "## SASS"
  echo
  if [ -f "$OUT/sass/sass_check.md" ]; then cat "$OUT/sass/sass_check.md"; else echo "(none: see 06_sass_check.log)"; fi
} >"$OUT/summary.md"
# HOPPER_PACK=1: OUT keeps summary.md, gemm_vs_cublas.md and one
# logs.tar.gz of everything else (the device tool brings back at most 8
# files from $OUT)
if [ "${HOPPER_PACK:-0}" = 1 ]; then
  (cd "$OUT" && find . -mindepth 1 -maxdepth 1 ! -name summary.md ! -name gemm_vs_cublas.md \
     ! -name conv_vs_cudnn.md ! -name logs.tar.gz -print0 | tar -czf logs.tar.gz --null -T - &&
   find . -mindepth 1 -maxdepth 1 ! -name summary.md ! -name gemm_vs_cublas.md \
     ! -name conv_vs_cudnn.md ! -name logs.tar.gz -exec rm -rf {} +)
fi
echo
echo "================ summary ================"
cat "$OUT/summary.md"
exit $status
