# lib.sh - what the shell tests share.  A test sources it first thing:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# and then runs in the repository root with:
#   T                  the tilec binary ($TILEC, default build/tilec)
#   passed failed skipped, and pass / fail / skip NAME: count and print
#                      one line each ("  ok   NAME", "  FAIL NAME", "  skip NAME")
#   tmp_dir NAME       a scratch folder in $tmp (tilec-NAME.XXXXXX under
#                      $TMPDIR), removed when the test exits
#   expect NAME CODE PATTERN ARGS...
#                      runs tilec ARGS (stdout and stderr together) and
#                      passes when it exits CODE and a line matches the
#                      extended regular expression PATTERN
#   finish             prints "N passed, N failed, N skipped" and exits 0
#                      when nothing failed, else 1
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
T=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); echo "  ok   $1"; }
fail() { failed=$((failed + 1)); echo "  FAIL $1"; }
skip() { skipped=$((skipped + 1)); echo "  skip $1"; }
finish() {
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit $?
}
tmp_dir() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilec-$1.XXXXXX") || exit 1
  trap 'rm -rf "$tmp"' EXIT
}
expect() {
  local name=$1 code=$2 pat=$3 out rc
  shift 3
  out=$("$T" "$@" 2>&1); rc=$?
  if [ $rc -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then pass "$name"
  else fail "$name: exit $rc (want $code), output: $(printf '%s' "$out" | tail -n 3)"; fi
}
