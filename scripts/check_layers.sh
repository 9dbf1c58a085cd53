#!/usr/bin/env bash
# check_layers.sh - the library's directories form layers, and a file may
# include headers only from its own layer and the layers below it, so that
# the structure stays a DAG (no include cycles between directories).
#
# The layers (src/<dir>), each followed by the layers it builds on directly;
# a layer may use everything below those as well:
#
#   base                   strings, arrays, errors, allocation
#   target    base         what a target is: arch, features, limits
#   expr      target       index expressions and their simplifier
#   layout    expr         axis graphs, swizzles, CuTe layouts (no tensors)
#   ir        layout       the fusion: tensors, ops, the axis graph they share
#   sched     ir           scheduling calls on tensors (tensor-level layouts too)
#   lower     sched        the kernel IR: allocation, statements, copies
#   codegen   lower        printing the kernel IR in each target's dialect
#   runtime   codegen      compiling, caching and running kernels on devices
#   tune      target       GEMM parameters, their rules and candidates, perf DB
#   ops       runtime tune GEMM and convolution generators, the tuner, the API
#   tile      ops          the tile IR and its GEMM
#   demo      runtime      the examples `tilec demo` runs
#
# tune sits below ops: the parameter space (tune/params.h) is what the
# generators take and what codegen's MFMA kinds are named in target.h; the
# tuner, which generates and times kernels, is part of ops.
#
# Also: device API headers (<CL/...>, <cuda.h>, <hip/...>, <nvrtc.h>) are
# included only in src/runtime/; everything else, the tilec command too,
# asks the runtime.
#
# Usage: scripts/check_layers.sh [ROOT]   (ROOT: the tree to check, default
# the repository).  Prints each offending include as FILE:LINE with the
# rule it breaks; exits 1 if there is one, 0 otherwise.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
LAYERS='
base
target: base
expr: target
layout: expr
ir: layout
sched: ir
lower: sched
codegen: lower
runtime: codegen
tune: target
ops: runtime tune
tile: ops
demo: runtime
'
cd "$root" || exit 2
files=$(ls src/*/*.c src/*/*.h tools/*.c tools/*.h 2>/dev/null)
[ -n "$files" ] || { echo "check_layers: no sources under $root/src" >&2; exit 2; }
# shellcheck disable=SC2086
awk -v layers="$LAYERS" '
  BEGIN {
    n = split(layers, lines, "\n")
    for (i = 1; i <= n; i++) {
      line = lines[i]; gsub(/:/, " ", line)
      k = split(line, w, " ")
      if (k == 0) continue
      name = w[1]; known[name] = 1; decl[++nd] = name
      for (j = 2; j <= k; j++) {
        if (!(w[j] in known)) { printf "check_layers: layer %s builds on %s, declared later\n", name, w[j]; exit 2 }
        below[name, w[j]] = 1
        for (key in below) { split(key, p, SUBSEP); if (p[1] == w[j]) below[name, p[2]] = 1 }
      }
    }
    bad = 0
  }
  FNR == 1 {
    split(FILENAME, parts, "/"); top = parts[1]; dir = parts[2]
    if (top == "src" && !(dir in known)) {
      printf "%s: src/%s is not a declared layer (add it to LAYERS in scripts/check_layers.sh)\n", FILENAME, dir
      bad++
    }
  }
  /^[ \t]*#[ \t]*include[ \t]*</ {
    if (top == "src" && dir == "runtime") next
    if (match($0, /<(CL\/[^>]*|cuda[^>]*|hip\/[^>]*|nvrtc[^>]*)>/)) {
      printf "%s:%d: includes %s: device APIs are included only in src/runtime (ask the runtime)\n",
             FILENAME, FNR, substr($0, RSTART, RLENGTH)
      bad++
    }
    next
  }
  top == "src" && /^[ \t]*#[ \t]*include[ \t]*"\.\.\/[^\/"]+\// {
    match($0, /"\.\.\/[^\/"]+\//); other = substr($0, RSTART + 4, RLENGTH - 5)
    if (other == dir || (dir, other) in below) next
    hdr = $0; sub(/^[^"]*"/, "", hdr); sub(/".*$/, "", hdr)
    if (!(other in known))
      printf "%s:%d: includes %s: %s is not a declared layer\n", FILENAME, FNR, hdr, other
    else
      printf "%s:%d: includes %s: layer %s may not use %s, which is not below it (%s builds on:%s)\n",
             FILENAME, FNR, hdr, dir, other, dir, uses(dir)
    bad++
  }
  function uses(d,   i, s) {
    for (i = nd; i >= 1; i--) if ((d, decl[i]) in below) s = s " " decl[i]
    return s == "" ? " nothing" : s
  }
  END {
    if (bad) { printf "check_layers: %d include(s) break the layering\n", bad; exit 1 }
  }' $files
