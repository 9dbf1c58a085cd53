#!/usr/bin/env bash
# layers_test.sh - the layering of the library's directories
# (scripts/check_layers.sh, `make check-layers`): the repository passes it,
# and small trees made here show that it catches a wrong-way include, an
# include cycle, an undeclared directory and a device API header outside
# the runtime, while it lets through includes from a layer's own
# directory and from every layer below it.  Ends with "N passed, N failed,
# N skipped"; exits non-zero if any check failed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
CHECK="$here/scripts/check_layers.sh"
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok()  { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }

# tree NAME FILE=LINE...: a tree $tmp/NAME with each FILE holding a comment
# line and then LINE (so LINE is line 2)
tree() {
  local t="$tmp/$1"; shift
  rm -rf "$t"; mkdir -p "$t"
  for spec in "$@"; do
    local f=${spec%%=*}
    mkdir -p "$t/$(dirname "$f")"
    printf '/* a file */\n%s\n' "${spec#*=}" >"$t/$f"
  done
}
# expect NAME RC [REGEX]: the check of tree NAME exits RC and (if given)
# prints a line matching REGEX
expect() {
  out=$("$CHECK" "$tmp/$1" 2>&1); rc=$?
  if [ "$rc" -ne "$2" ]; then bad "$1: exit $2" "got exit $rc:" "$out"; return; fi
  if [ $# -ge 3 ] && ! printf '%s\n' "$out" | grep -Eq -- "$3"; then
    bad "$1: prints /$3/" "got:" "$out"; return
  fi
  ok "$1: exit $2${3:+, prints the rule}"
}

# the repository itself
out=$("$CHECK" "$here" 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then ok "the repository keeps its layers"; else
  bad "the repository keeps its layers" "$out"; fi

# layout is below ir: a layout file including the fusion is the wrong way
tree wrong_way 'src/layout/a.c=#include "../ir/fusion.h"' 'src/ir/fusion.h=int x;'
expect wrong_way 1 '^src/layout/a\.c:2: includes \.\./ir/fusion\.h: layer layout may not use ir'

# the same file, its header and a lower layer: fine; transitively lower too
tree downward 'src/ir/fusion.c=#include "fusion.h"' 'src/ir/fusion.h=#include "../layout/cute.h"' \
  'src/layout/cute.h=int y;' 'src/codegen/p.c=#include "../base/base.h"' 'src/base/base.h=int z;'
expect downward 0

# a cycle between two directories: one of its two edges is reported
tree cycle 'src/ops/gemm.h=#include "../tune/params.h"' 'src/tune/params.h=#include "../ops/gemm.h"'
expect cycle 1 '^src/tune/params\.h:2: includes \.\./ops/gemm\.h: layer tune may not use ops'

# a directory nobody placed in the layers
tree undeclared 'src/extra/x.c=int w;'
expect undeclared 1 'src/extra is not a declared layer'

# device API headers: only the runtime includes them (the command too asks it)
tree device_api 'tools/tilec.c=#include <CL/cl.h>' 'src/runtime/opencl.c=#include <CL/cl.h>'
expect device_api 1 '^tools/tilec\.c:2: includes <CL/cl\.h>: device APIs are included only in src/runtime'
tree device_api_runtime 'src/runtime/opencl.c=#include <CL/cl.h>' 'src/runtime/cuda.c=#include <cuda.h>'
expect device_api_runtime 0

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
