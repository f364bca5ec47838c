#!/usr/bin/env bash
# docs/: the parameter reference blocks equal what the code declares (stale docs fail: run `make docs`),
# every declared section is documented on some page, the Markdown tables list exactly the keys of
# `hpcsim params`, the staleness check itself catches an edited default, and the pages' figures exist.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP  no python3 for scripts/gen_docs.py"; exit 77; }

# 1. the committed blocks are up to date
if python3 "$ROOT/scripts/gen_docs.py" --check --hpcsim "$HS_BIN" >"$WORK/check" 2>&1; then
    ok "docs/ parameter blocks up to date ($(tail -1 "$WORK/check"))"
else
    bad "stale parameter reference in docs/ (run 'make docs'):"
    head -40 "$WORK/check"
fi

# 2. the check catches a stale block: a default edited in a copy
cp -r "$ROOT/docs" "$WORK/docs"
sed -i 's/^| `heat.t_end` | real | `0.01` |/| `heat.t_end` | real | `0.02` |/' "$WORK/docs/heat.md"
if grep -q '`heat.t_end` | real | `0.02`' "$WORK/docs/heat.md" &&
    ! python3 "$ROOT/scripts/gen_docs.py" --check --hpcsim "$HS_BIN" "$WORK/docs/heat.md" >"$WORK/stale" 2>&1 &&
    grep -q "stale file(s): .*heat.md" "$WORK/stale"; then
    ok "an edited default in docs/heat.md is reported stale"
else
    bad "the staleness check missed an edited default: $(tail -3 "$WORK/stale")"
fi

# 3. every declared section has a block on some page
sections=$("$HS_BIN" params | sed -n 's/^\[\(.*\)\]$/\1/p')
documented=$(grep -ho '<!-- BEGIN PARAMETERS: [A-Za-z0-9_ ]* -->' "$ROOT"/docs/*.md | sed 's/<!-- BEGIN PARAMETERS: //; s/ -->//' | tr ' ' '\n')
missing=""
for s in $sections; do grep -qx "$s" <<<"$documented" || missing="$missing $s"; done
[ -z "$missing" ] && ok "every declared section ($(echo $sections | wc -w)) is documented in docs/" ||
    bad "sections without a page in docs/:$missing (add a page with <!-- BEGIN PARAMETERS: SECTION --> and run make docs)"

# 4. the Markdown tables list the keys `hpcsim params` lists, section by section
diffs=""
for s in $sections; do
    plain=$("$HS_BIN" params | awk -v s="[$s]" '/^\[/ { on = ($0 == s); next } on && /^  [a-z0-9_]+ / { print $1 }')
    md=$("$HS_BIN" params --markdown "$s" | sed -n "s/^| \`$s\.\([a-z0-9_]*\)\` |.*/\1/p")
    [ "$plain" = "$md" ] || diffs="$diffs $s"
done
[ -z "$diffs" ] && ok "params --markdown lists the same keys as params in every section" || bad "key lists differ in:$diffs"

# 5. every page has its parts, and its figures exist
for page in "$ROOT"/docs/*.md; do
    name=$(basename "$page")
    case "$name" in README.md|parameters.md) continue ;; esac
    for part in "## Verification" "## Running" "## Parameters"; do
        grep -q "^$part" "$page" || bad "$name has no '$part' section"
    done
    grep -q "sbatch" "$page" && grep -q "mpirun -n" "$page" || bad "$name does not say how to run on several GPUs and on Slurm"
    for img in $(sed -n 's/.*](\(img\/[^)]*\.png\)).*/\1/p' "$page"); do
        [ -s "$ROOT/docs/$img" ] || bad "$name: figure $img missing"
    done
done
[ $fail -eq 0 ] && ok "each solver page has Verification, Running (mpirun, sbatch) and Parameters, and its figures exist"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
