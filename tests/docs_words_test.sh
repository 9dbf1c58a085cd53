#!/usr/bin/env bash
# docs_words_test.sh - the text a user reads names concepts, not the
# project's internal bookkeeping: no line of README.md, docs/*.md, the man
# page docs/tilec.1, the public headers include/tilec/*.h, the --help output
# of every command `tilec --help` lists, or `tilec demo --list` may mention
# an internal design document ("seed 0...") or a tracker number ("issue #N").
# One pattern over all of them, also across a line break ("seed" at the end
# of a line, "000" at the start of the next); each file is one check, and
# every offending line is printed as FILE:LINE:text.  Ends with "N passed,
# N failed, N skipped"; exits non-zero if any check failed.  $TILEC: the
# binary (default build/tilec).
set -u
TILEC=${TILEC:-build/tilec}
# case-insensitive: "Seed 002", "seed 000's", "issue #4", "issues #2-#4"
WORDS='seeds? ?0|issues? ?#'
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILEC_CACHE_DIR="$tmp/cache"

# offending FILE: prints "N:text" for each line N that matches $WORDS (any case),
# alone or joined with the next line (that line's leading comment marks,
# "*", "#", "//", ">", dropped); a match wholly inside line N+1 is N+1's.
offending() {
  awk -v re="$WORDS" '
    function hit(s) { return tolower(s) ~ re }
    NR > 1 {
      next_text = $0; sub(/^[ \t*#\/>.-]*/, "", next_text)
      if (hit(prev) || (hit(prev " " next_text) && !hit(next_text))) print NR - 1 ":" prev
    }
    { prev = $0 }
    END { if (NR > 0 && hit(prev)) print NR ":" prev }' "$1"
}

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }
skip() { skipped=$((skipped + 1)); echo "  skip $1 ($2)"; }

# The --help texts, each saved as a file named after the command line.
help_files=()
if [ -x "$TILEC" ]; then
  mkdir -p "$tmp/help"
  "$TILEC" --help >"$tmp/help/tilec --help" 2>&1
  help_files+=("$tmp/help/tilec --help")
  # the commands: the first word of each "  NAME  ..." line under "commands:"
  cmds=$(sed -n '/^commands:/,/^$/p' "$tmp/help/tilec --help" | sed -nE 's/^  ([a-z0-9]+) .*/\1/p')
  if [ -z "$cmds" ]; then
    bad "tilec --help lists its commands" "no \"commands:\" section in \`$TILEC --help\`"
  fi
  for c in $cmds; do
    "$TILEC" "$c" --help >"$tmp/help/tilec $c --help" 2>&1
    help_files+=("$tmp/help/tilec $c --help")
  done
  "$TILEC" demo --list >"$tmp/help/tilec demo --list" 2>&1
  help_files+=("$tmp/help/tilec demo --list")
else
  skip "the --help texts" "$TILEC is not built (make)"
fi

echo "-- no internal references ($WORDS, any case) in the user-facing text"
for f in README.md docs/*.md docs/tilec.1 include/tilec/*.h "${help_files[@]}"; do
  name=${f#"$tmp/help/"}
  if [ ! -f "$f" ]; then bad "$name" "missing"; continue; fi
  hits=$(offending "$f")
  if [ -z "$hits" ]; then ok "$name"; else
    lines=()
    while IFS= read -r l; do lines+=("$name:$l"); done <<<"$hits"
    bad "$name: name the concept (what the reference stands for), not its number" "${lines[@]}"
  fi
done

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
