#!/bin/sh
# find_cuobjdump.sh - prints the path of a cuobjdump to use and exits 0, or
# exits 1 (printing nothing) when there is none.  Looks, in order, at
# $TILEC_CUOBJDUMP, cuobjdump on PATH, $CUDA_HOME/bin, /usr/local/cuda/bin,
# and the bin/ folders of the PyPI packages nvidia-cuda-cuobjdump (which
# scripts/deps.sh installs where nvcc exists without cuobjdump:
# site-packages/nvidia/cu13/bin/cuobjdump) for $PYTHON (default python3).
# Used by scripts/deps.sh and bench/sass_check.sh.
set -u

usable() { [ -n "$1" ] && [ -f "$1" ] && [ -x "$1" ]; }

if [ -n "${TILEC_CUOBJDUMP:-}" ]; then
  if usable "$TILEC_CUOBJDUMP"; then echo "$TILEC_CUOBJDUMP"; exit 0; fi
  echo "find_cuobjdump: TILEC_CUOBJDUMP=$TILEC_CUOBJDUMP is not an executable file" >&2
  exit 1
fi
p=$(command -v cuobjdump 2>/dev/null) && usable "$p" && { echo "$p"; exit 0; }
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
  [ -n "$d" ] && usable "$d/bin/cuobjdump" && { echo "$d/bin/cuobjdump"; exit 0; }
done
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || exit 1
"$py" - <<'EOF' 2>/dev/null
import glob, os, site, sys
dirs = []
try:
    dirs += site.getsitepackages()
except Exception:
    pass
try:
    dirs.append(site.getusersitepackages())
except Exception:
    pass
dirs += [p for p in sys.path if p.endswith("-packages")]
for d in dirs:
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "*", "bin", "cuobjdump")), reverse=True):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            print(p)
            sys.exit(0)
sys.exit(1)
EOF
