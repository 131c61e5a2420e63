#!/bin/sh
# vigil's reader against babeltrace2's (python3-bt2): for every thread of every process,
# the same events with the same field values in the same order, and times that differ
# at most by one constant per process (vigil gives all processes of one boot one clock
# offset; babeltrace2 uses each process's own).
# usage: reader_babeltrace.sh PATH/TO/reader_mktrace [TRACE]
#   without TRACE, compares on a hand-made trace (scenario READER_SCENARIO of
#   reader_mktrace, default basic); with TRACE, on that trace.
set -u
MK=$1
VIGIL=${VIGIL_BIN:?}/vigil
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
. "${VIGIL_SRC:?}/tests/deps/lib.sh"
/usr/bin/python3 -c 'import bt2' 2>/dev/null || vigil_missing "python3-bt2 (for /usr/bin/python3)"
if [ $# -ge 2 ]; then
	TRACE=$2
else
	TRACE=$T/trace
	"$MK" "$TRACE" "${READER_SCENARIO:-basic}" || fail "mktrace"
fi
"$VIGIL" dump --json "$TRACE" >"$T/vigil.json" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "vigil dump exit $rc"; }

/usr/bin/python3 - "$TRACE" "$T/vigil.json" <<'EOF' || fail "babeltrace2 and vigil differ"
import json, sys
import bt2

trace, vigil_json = sys.argv[1], sys.argv[2]

def plain(field):
    """A bt2 field as vigil's JSON shows it."""
    if isinstance(field, bt2._StructureFieldConst):
        d = {k: plain(v) for k, v in field.items()}
        if set(d) == {"id", "gen"}:
            return {"id": d["id"], "gen": d["gen"]}  # an entity reference
        # a byte sequence's length field is shown by the bytes themselves
        return {k: v for k, v in d.items()
                if not (k.endswith("_len") and isinstance(d.get(k[:-4]), str))}
    if isinstance(field, bt2._ArrayFieldConst):
        return bytes(int(x) for x in field).hex()
    if isinstance(field, bt2._StringFieldConst):
        return str(field)
    if isinstance(field, bt2._RealFieldConst):
        return float(field)
    v = int(field)
    return str(v) if v > 2**63 - 1 else v

bt = {}
for msg in bt2.TraceCollectionMessageIterator(trace):
    if type(msg) is not bt2._EventMessageConst:
        continue
    ev = msg.event
    env = ev.stream.trace.environment
    key = (int(env["vpid"]), int(ev.packet.context_field["tid"]))
    fields = plain(ev.payload_field) if ev.payload_field is not None else {}
    bt.setdefault(key, []).append((msg.default_clock_snapshot.ns_from_origin, ev.name, fields))

def vigil_fields(fields):
    out = {}
    for k, v in fields.items():
        if isinstance(v, dict) and "kind" in v:
            v = {"id": v["id"], "gen": v["gen"]}
        out[k.lstrip("_")] = v  # babeltrace2 drops a leading underscore
    return out

vg = {}
for line in open(vigil_json):
    e = json.loads(line)
    vg.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["name"], vigil_fields(e["fields"])))

assert set(bt) == set(vg), (sorted(bt), sorted(vg))
offsets = {}
total = 0
for key in sorted(bt):
    a, b = bt[key], vg[key]
    assert len(a) == len(b), (key, len(a), len(b))
    for (ta, na, fa), (tb, nb, fb) in zip(a, b):
        assert na == nb, (key, na, nb)
        assert fa == fb, (key, na, fa, fb)
        d = offsets.setdefault(key[0], tb - ta)
        assert tb - ta == d, (key, na, ta, tb, d)
    total += len(a)
print("reader_babeltrace: %d events in %d threads agree" % (total, len(bt)))
EOF
