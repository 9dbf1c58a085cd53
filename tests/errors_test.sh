#!/usr/bin/env bash
# errors_test.sh - the one error convention of internal calls
# (scripts/check_errors.sh, `make check-errors`): the repository passes it,
# and small trees made here show that it catches a (char *err, size_t cap)
# parameter, on one line or split over two, while it lets through a
# tc_str *err, a buffer that is no message (char *buf, size_t cap) and the
# public API's own buffers.  Ends with "N passed, N failed, N skipped";
# exits non-zero if any check failed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
CHECK="$here/scripts/check_errors.sh"
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok()  { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }

# tree NAME FILE=TEXT...: a tree $tmp/NAME with each FILE holding a comment
# line and then TEXT (printf escapes: \n splits TEXT into lines 2, 3, ...)
tree() {
  local t="$tmp/$1"; shift
  rm -rf "$t"; mkdir -p "$t"
  for spec in "$@"; do
    local f=${spec%%=*}
    mkdir -p "$t/$(dirname "$f")"
    printf "/* a file */\n${spec#*=}\n" >"$t/$f"
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
  ok "$1: exit $2${3:+, prints the place}"
}

# the repository itself
out=$("$CHECK" "$here" 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then ok "the repository keeps one error convention"; else
  bad "the repository keeps one error convention" "$out"; fi

tree one_line 'src/tune/params.h=int tc_x(int a, char *err, size_t cap);'
expect one_line 1 '^src/tune/params\.h:2: a \(char \*, size_t\) error parameter'
tree split 'tools/op.c=static int x(int a, char *why,\n                 size_t whycap) {\n  return a;\n}'
expect split 1 '^tools/op\.c:2: '
tree other_names 'src/ops/a.c=void f(char *msg, size_t n);\nvoid g(char *reason_buf, size_t n);'
expect other_names 1 '^src/ops/a\.c:3: '
tree tc_str 'src/tune/params.h=int tc_x(int a, tc_str *err);\nvoid tc_y(char *buf, size_t cap);'
expect tc_str 0
tree public 'src/base/base.h=void tc_set_err(char *err, size_t cap, const char *fmt, ...);' \
  'src/layout/cute_api.c=int tc_cute_layout_parse(const char *t, void **o, char *err, size_t cap);'
expect public 0

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
