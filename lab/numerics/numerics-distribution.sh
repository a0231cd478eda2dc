#!/usr/bin/env bash
# numerics-distribution.sh - the relative L2 error of a correct kernel over
# the simulator's covering sample (fattn-tune check --covering) of each
# space, on uniform and peaky inputs: the measurement docs/numerics.md
# justifies the norm-wise gate's default (--max-rel-l2 0.004) with.
#
#     lab/numerics/numerics-distribution.sh [BUILD_DIR] > lab/numerics/numerics-rel-l2.csv
#
# Writes one CSV row per checked case (space, configuration, shape, mask,
# verdict, the worse input set's relative L2 error and which set it was) to
# standard output, and a summary (count, quantiles, maximum, the default's
# margin over the maximum) to standard error. No GPU; about two minutes
# with a warm simulator cache on two cores.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
tune=$(cd "$build" && pwd)/fattn-tune
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for space in space.json space-h100.json; do
    "$tune" check --covering --space "$root/search/$space" --arch sm_90 --db "$work/$space.db" --quiet >/dev/null ||
        { echo "numerics-distribution.sh: check --covering of $space found defects" >&2; exit 1; }
done
python3 - "$work" <<'PY'
import csv, sqlite3, sys
rows = []
for space in ("space.json", "space-h100.json"):
    db = sqlite3.connect(f"{sys.argv[1]}/{space}.db")
    for r in db.execute("SELECT config_key, batch || ',' || heads || ',' || seqlen || ',' || head_dim, causal, "
                        "verdict, rel_l2, numerics_inputs FROM sim_checks ORDER BY seq"):
        rows.append((space,) + r)
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["space", "config", "shape", "causal", "verdict", "rel_l2", "inputs"])
for r in rows:
    out.writerow(["" if x is None else (f"{x:.4g}" if isinstance(x, float) else x) for x in r])
vals = sorted(r[5] for r in rows if r[5] is not None and r[5] > 0)
zero = sum(1 for r in rows if r[5] == 0)
q = lambda p: vals[min(len(vals) - 1, int(p * len(vals)))]
print(f"{len(rows)} cases, {zero} exact (rel L2 0: S = 1, the output is V's row); of the rest: median {q(0.5):.3g}, "
      f"p90 {q(0.9):.3g}, max {vals[-1]:.3g}; peaky the worse set in "
      f"{sum(1 for r in rows if r[6] == 'peaky')}; the default 0.004 is {0.004 / vals[-1]:.1f}x the max",
      file=sys.stderr)
PY
