#!/usr/bin/env bash
# docs_images_test.sh - the pictures under docs/img/ are reproducible: every
# `build/tilec ... --svg docs/img/NAME.svg` command line written in
# docs/*.md is run (with $TILEC for build/tilec, writing to a scratch
# folder) and must give exactly the committed file; every file in
# docs/img/ must be made by such a command, and every img/NAME referenced
# from docs/*.md must exist.  Ends with "N passed, N failed, N skipped";
# exits non-zero if any check failed.
set -u
TILEC=${TILEC:-build/tilec}
passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILEC_CACHE_DIR="$tmp/cache"

ok()   { passed=$((passed + 1)); echo "  ok   $1"; }
bad()  { failed=$((failed + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }
skip() { skipped=$((skipped + 1)); echo "  skip $1 ($2)"; }

echo "-- the commands in docs/*.md give the committed pictures"
made=""
if [ ! -x "$TILEC" ]; then
  skip "regenerating docs/img" "$TILEC is not built (make)"
else
  while IFS= read -r cmd; do
    name=$(printf '%s\n' "$cmd" | sed -nE 's|.*--svg docs/img/([A-Za-z0-9_.-]+\.svg).*|\1|p')
    made="$made $name"
    run=${cmd/build\/tilec/\"\$TILEC\"}
    run=${run//docs\/img\//$tmp/}
    if ! eval "$run" >"$tmp/out" 2>&1; then
      bad "$name: the command fails" "$cmd" "$(head -n 5 "$tmp/out")"
    elif [ ! -f "docs/img/$name" ]; then
      bad "$name: not committed" "run from the repository root: $cmd"
    elif cmp -s "$tmp/$name" "docs/img/$name"; then
      ok "$name: $cmd"
    else
      bad "$name differs from what its command makes now" "regenerate it: $cmd"
    fi
  done < <(grep -hE '^build/tilec .*--svg docs/img/' docs/*.md)
fi

echo "-- every picture has its command, every reference its picture"
for f in docs/img/*; do
  [ -e "$f" ] && [ -x "$TILEC" ] || continue
  n=${f#docs/img/}
  case " $made " in
    *" $n "*) ok "docs/img/$n has a command" ;;
    *) bad "docs/img/$n is made by no \`build/tilec ... --svg docs/img/$n\` line in docs/*.md" ;;
  esac
done
for r in $(grep -ohE '\]\(img/[A-Za-z0-9_.-]+\)' docs/*.md | sed -E 's/^\]\(img\/(.*)\)$/\1/' | sort -u); do
  if [ -f "docs/img/$r" ]; then ok "img/$r exists"; else bad "img/$r is referenced but missing"; fi
done

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
