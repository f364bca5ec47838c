#!/usr/bin/env bash
# hpcsim compare on the quantum solver's JSON results: 1-, 2- and 4-rank runs agree bitwise, a changed
# number is found (and passes within its RTOL), bad keys and broken files are exact input errors.
set -u
. "$(dirname "$0")/lib.sh"
INPUTS=$ROOT/inputs
if ! "$HS_BIN" --version | grep -q '+cjson'; then
    echo "SKIP: built without cJSON: hpcsim compare cannot read JSON"
    exit 77
fi

# status NAME WANT_RC WANT_STDERR (exact, "" for none) COMMAND...
status() {
    local name=$1 want_rc=$2 want_err=$3
    shift 3
    "$@" >out.txt 2>err.txt
    local rc=$?
    if [ "$rc" != "$want_rc" ]; then bad "$name: exit $rc, expected $want_rc: $(cat out.txt err.txt)"; return; fi
    if [ "$(cat err.txt)" != "$want_err" ]; then bad "$name: stderr '$(cat err.txt)', expected '$want_err'"; return; fi
    ok "$name"
}

"$HS_BIN" run "$INPUTS/qc_ghz.ini" run.device="$DEVICE" output.path=r1 --quiet >/dev/null || bad "1-rank GHZ run"
for key in probabilities amplitudes expectation.value counts marginal; do
    status "compare a run with itself: $key" 0 "" "$HS_BIN" compare r1.json r1.json $key
done
if command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi'; then
    for np in 2 4; do
        mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n $np "$HS_BIN" run "$INPUTS/qc_ghz.ini" run.device="$DEVICE" run.allow_shared_gpu=true \
            output.path=r$np --quiet >/dev/null 2>&1 || bad "$np-rank GHZ run"
        for key in probabilities amplitudes expectation.value counts; do
            status "$np ranks against 1: $key bitwise" 0 "" "$HS_BIN" compare r$np.json r1.json $key
        done
    done
fi

# one probability changed in the last digits: found bitwise, accepted within 1e-12
python3 - <<'PY' || bad "edit the copy"
import json
r = json.load(open("r1.json"))
r["probabilities"][0] *= 1 + 4e-16
json.dump(r, open("edited.json", "w"), indent=2)
PY
"$HS_BIN" compare edited.json r1.json probabilities >out.txt 2>&1
rc=$?
if [ $rc = 1 ] && grep -q '^probabilities: 32 values, 1 not bitwise equal, .*: DIFFER$' out.txt; then ok "a changed probability is found"
else bad "changed probability: exit $rc, $(cat out.txt)"; fi
status "within RTOL 1e-12" 0 "" "$HS_BIN" compare edited.json r1.json probabilities 1e-12
status "the unchanged amplitudes still agree" 0 "" "$HS_BIN" compare edited.json r1.json amplitudes
"$HS_BIN" compare r1.json r1.json probabilities --last >out.txt
grep -q '^probabilities: 1 values, 0 not bitwise equal' out.txt && ok "--last: the last probability" || bad "--last: $(cat out.txt)"

status "no such key" 2 "hpcsim: error: r1.json: nosuch: no such key" "$HS_BIN" compare r1.json r1.json nosuch
status "a text value" 2 "hpcsim: error: r1.json: circuit: holds text, not numbers" "$HS_BIN" compare r1.json r1.json circuit
printf '{\n  "probabilities": [0.5,\n' >broken.json
status "a broken file" 2 "hpcsim: error: broken.json:3: not JSON: the text ends early" \
    "$HS_BIN" compare broken.json r1.json probabilities
echo '{"probabilities": [0.5, 0.5]}' >short.json
status "different counts" 2 "hpcsim: error: short.json: probabilities: 2 numbers here, 32 in r1.json" \
    "$HS_BIN" compare r1.json short.json probabilities

# counts of other outcomes under the same numbers: {"01": 100} and {"10": 100} agreed (compared in
# document order); now the keys must match
echo '{"counts": {"01": 100}}' >ca.json
echo '{"counts": {"10": 100}}' >cb.json
status "counts of other outcomes" 2 "hpcsim: error: cb.json: counts: not laid out as in ca.json: key '10' here where the other has '01'" \
    "$HS_BIN" compare ca.json cb.json counts
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
