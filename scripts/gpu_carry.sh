#!/bin/sh
# gpu_carry.sh - run on the CPU machine (with apt) before a GPU session:
# downloads the Debian packages that tilec's build needs and that the GPU
# machine's image may lack (nothing can be installed there: it reaches no
# network) into .gpudeps/ (ignored by git), to be carried with the run
# (`run` with carry [".gpudeps"]):
#   make                      the build tool
#   libsqlite3-dev libsqlite3-0
#                             sqlite3.h and libsqlite3 (the perf database)
#   ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-c-headers opencl-clhpp-headers
#                             CL/cl.h and the OpenCL ICD loader (-lOpenCL)
# bench/hopper.sh unpacks them (dpkg -x, or ar + tar) into /tmp/gpudeps
# and puts them on PATH / CPATH / LIBRARY_PATH / LD_LIBRARY_PATH when the
# machine lacks make, sqlite3.h or CL/cl.h.  About 2.5 MB.
set -eu
cd "$(dirname "$0")/.."
mkdir -p .gpudeps
cd .gpudeps
# apt-get download writes into the current folder; -o silences the
# sandbox warning of running as root
apt-get download -o APT::Sandbox::User=root make libsqlite3-dev libsqlite3-0 \
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-c-headers opencl-clhpp-headers
echo "gpu_carry: $(ls ./*.deb | wc -l) packages in .gpudeps/; carry \".gpudeps\" with bench/hopper.sh"
