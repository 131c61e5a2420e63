#!/bin/sh
# The cost of noticing process titles (bench/README.md, "Process titles"): title-cost
# run under two builds of libvigil, alternated (ABBA), recording into a temporary folder,
# and unrecorded; medians of ROUNDS runs per side.
#   bench/title_bench.sh TITLE_COST BASE_LIBVIGIL NEW_LIBVIGIL [ROUNDS] [N]
# BASE: libvigil without the comparison (e.g. built from the commit before it), NEW: with.
set -eu
prog=$1 base=$2 new=$3 rounds=${4:-7} n=${5:-200000}
d=$(mktemp -d /tmp/vigil-title-bench-XXXXXX)
trap 'rm -rf "$d"' EXIT
one() { # LIB|none -> one JSON line
	rm -rf "$d/t"
	if [ "$1" = none ]; then "$prog" "$n"; else VIGIL_OUT="$d/t" LD_PRELOAD="$1" "$prog" "$n"; fi
}
: >"$d/base" && : >"$d/new" && : >"$d/plain"
i=0
while [ $i -lt "$rounds" ]; do
	if [ $((i % 2)) -eq 0 ]; then one "$base" >>"$d/base"; one "$new" >>"$d/new"
	else one "$new" >>"$d/new"; one "$base" >>"$d/base"; fi
	one none >>"$d/plain"
	i=$((i + 1))
done
python3 - "$d" <<'PY'
import json, statistics, sys
d = sys.argv[1]
med = {}
for side in ("plain", "base", "new"):
    rows = [json.loads(l) for l in open(f"{d}/{side}") if l.strip()]
    med[side] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
for k, what in (("pair_ns", "write+read pair on a pipe (2 events)"), ("poll_ns", "poll(NULL, 0, 0)")):
    p, b, n = med["plain"][k], med["base"][k], med["new"][k]
    print(f"{what:40s} unrecorded {p:7.1f}  without {b:7.1f}  with {n:7.1f} ns  "
          f"(with/without {n / b:.3f}, +{n - b:.1f} ns)")
PY
