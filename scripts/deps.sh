#!/bin/sh
# deps.sh - installs the Debian packages tilec needs to build and run its
# demo and tests, only when one is missing:
#   build-essential     the C compiler and make
#   pocl-opencl-icd     PoCL: OpenCL on the CPU, the default device
#   ocl-icd-opencl-dev  the OpenCL headers and the ICD loader (-lOpenCL)
#   clinfo              to inspect OpenCL platforms by hand
#   libsqlite3-dev      SQLite (-lsqlite3) for the perf database (src/tune/perfdb.c)
#   pkg-config          pkg-config (pkgconf) for tests/install_test.sh and the
#                       out-of-tree example (examples/out_of_tree)
#   man-db              man -l, to check that docs/tilec.1 renders without warnings
#   python3             scripts/gen_api_docs.py, which checks that docs/api.md is
#                       up to date (tests/tutorial_test.sh)
#   hipcc libamdhip64-dev rocm-device-libs
#                       Debian's ROCm 5.2: hipcc compiles the HIP target's kernels
#                       for gfx90a and gfx940 (tests/test_hip.c; no AMD GPU needed)
# Idempotent: checks each package with `dpkg -s` first and does nothing when
# all are installed.  Runs apt-get update, then apt-get install -y the
# missing ones, with sudo unless already root.  On a system without dpkg it
# says so and changes nothing.  (The CUDA toolkit is optional: where NVRTC
# is found, `tilec demo --target cuda` compiles the examples with it.)
# Where nvcc exists but no cuobjdump is found (scripts/find_cuobjdump.sh:
# $TILEC_CUOBJDUMP, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, an earlier
# pip install), it also pip-installs NVIDIA's PyPI packages
#   nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
#                       cuobjdump and nvdisasm (into site-packages/nvidia/cu13/bin)
#                       for the SASS check (bench/sass_check.sh,
#                       tests/sass_check_test.sh); if pip fails the check skips
set -eu

PACKAGES="build-essential pocl-opencl-icd ocl-icd-opencl-dev clinfo libsqlite3-dev pkg-config man-db python3 hipcc libamdhip64-dev rocm-device-libs"

# The Python binding's tests (tests/python_test.sh) need numpy and pytest:
# installed with pip only when python3 exists and cannot import them; where
# pip cannot (no pip, or an externally managed system Python), Debian's
# python3-numpy and python3-pytest are added to the packages below.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import numpy, pytest" >/dev/null 2>&1; then
  echo "deps: installing numpy and pytest for $(command -v python3) with pip"
  if ! python3 -m pip install --quiet numpy pytest; then
    echo "deps: pip failed; trying Debian's python3-numpy python3-pytest"
    PACKAGES="$PACKAGES python3-numpy python3-pytest"
  fi
fi

# The SASS check needs cuobjdump (and nvdisasm) next to nvcc: from PyPI when
# the toolkit at hand lacks them.  A failure only warns (the check skips).
if command -v nvcc >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 &&
   ! sh "$(dirname "$0")/find_cuobjdump.sh" >/dev/null 2>&1; then
  echo "deps: nvcc without cuobjdump: installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm with pip"
  if ! python3 -m pip install --quiet nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm; then
    echo "deps: warning: pip could not install cuobjdump; the SASS check will skip" >&2
  fi
fi

if ! command -v dpkg >/dev/null 2>&1; then
  echo "deps: no dpkg here (not Debian/Ubuntu); install by hand: a C11 compiler," \
       "make, an OpenCL ICD loader with headers, and an OpenCL driver such as PoCL"
  exit 0
fi

missing=""
for p in $PACKAGES; do
  if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "deps: all installed ($PACKAGES)"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "deps: missing:$missing; run as root or install sudo:" >&2
  echo "  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi

echo "deps: installing:$missing"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y $missing
echo "deps: installed:$missing"
