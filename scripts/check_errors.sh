#!/usr/bin/env bash
# check_errors.sh - internal functions report errors in one way: a
# `tc_str *err` parameter (src/base/base.h says how), never a caller's
# fixed buffer.  Flags every parameter pair `char *NAME, size_t CAP` whose
# NAME says it carries a message (err, why, msg, reason: errcap, why_buf
# and the like too) in src/ and tools/, also when the pair is split over two
# lines.
#
# Allowed: the public API's own (char *err, size_t cap) contract
# (include/tilec/tilec.h, where a user passes a buffer): src/base/base.[ch]
# (tc_set_err, which fills that buffer) and src/layout/cute_api.c (the
# tc_cute_layout_* calls and their helpers).
#
# Usage: scripts/check_errors.sh [ROOT]   (ROOT: the tree to check, default
# the repository).  Prints each offending parameter as FILE:LINE; exits 1 if
# there is one, 0 otherwise.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
all=$(ls src/*/*.c src/*/*.h tools/*.c tools/*.h 2>/dev/null)
[ -n "$all" ] || { echo "check_errors: no sources under $root/src" >&2; exit 2; }
files=$(printf '%s\n' "$all" | grep -v -e '^src/base/base\.[ch]$' -e '^src/layout/cute_api\.c$')
[ -n "$files" ] || exit 0
# shellcheck disable=SC2086
awk '
  function pair(s) {
    return s ~ /char[ \t]*\*[ \t]*[A-Za-z_0-9]*(err|why|msg|reason)[A-Za-z_0-9]*[ \t]*,[ \t]*size_t[ \t]/
  }
  FNR == 1 { prev = "" }
  {
    if (pair($0)) {
      printf "%s:%d: a (char *, size_t) error parameter; take tc_str *err (src/base/base.h)\n", FILENAME, FNR
      bad++
    } else if (prev != "" && !pair(prev) && pair(prev " " $0)) {
      printf "%s:%d: a (char *, size_t) error parameter; take tc_str *err (src/base/base.h)\n", FILENAME, FNR - 1
      bad++
    }
    prev = $0
  }
  END { exit bad > 0 }
' $files
