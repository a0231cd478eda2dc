#!/usr/bin/env bash
# t4-peer.sh - `export --format t4` writes what Kernel Tuner's own T4 writer
# writes: the same keys at the top, in each result and in its times
# (compilation, benchmark, framework, search_algorithm, validation,
# runtimes), and it validates against the T4 1.0.0 results schema Kernel
# Tuner ships. The schema alone cannot tell `compilation` from the
# `compilation_time` it lists (it allows extra keys), hence the peer: Kernel
# Tuner 1.5.0 (pip, into a virtual environment under the build folder)
# writes a two-configuration example through kernel_tuner.file_utils.
# store_output_file, and fattn-tune a two-configuration study on the fake
# engine. Skips (77) where PyPI cannot be reached.
#
#   t4-peer.sh BUILD_DIR SOURCE_ROOT
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
tool=$build/fattn-tune
venv=$build/kernel-tuner-venv
work=$(mktemp -d /tmp/fattn-t4-peer.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import kernel_tuner.file_utils, jsonschema" 2>/dev/null; then
    rm -rf "$venv"
    # Kernel Tuner's import needs these five; its other requirements (scipy,
    # pandas, scikit-learn, pymoo) serve strategies this test does not run.
    if ! { python3 -m venv "$venv" &&
        "$venv/bin/pip" install -q --disable-pip-version-check --no-deps kernel_tuner==1.5.0 &&
        "$venv/bin/pip" install -q --disable-pip-version-check numpy jsonschema xmltodict packaging python-constraint2; } \
        >pip.log 2>&1; then
        echo "skip: cannot install kernel_tuner from PyPI: $(tail -n 1 pip.log)"
        rm -rf "$venv"
        exit 77
    fi
fi

export FATTN_WORKER_HOOK=fake
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-search.json" \
    --filter BLOCK_N=64,BLOCK_K=32 --samples 4 --db fattn.db >/dev/null
"$tool" export --db fattn.db --format t4 -o ours.json

"$venv/bin/python" - ours.json <<'PY'
import json, sys
import jsonschema
from kernel_tuner import file_utils

# Kernel Tuner's writer, given results shaped as tune_kernel returns them.
params = {"block_size_x": [128, 256]}
results = [{"block_size_x": b, "timestamp": "2026-11-26 12:00:00.000000+00:00", "compile_time": 210.5 + i,
            "benchmark_time": 12.5, "framework_time": 1.25, "strategy_time": 0.5, "verification_time": 0.75,
            "times": [0.0105, 0.0107], "time": 0.0106} for i, b in enumerate(params["block_size_x"])]
file_utils.store_output_file("peer.json", results, params)
peer = json.load(open("peer.json"))
ours = json.load(open(sys.argv[1]))

assert len(peer["results"]) == 2 and len(ours["results"]) == 2, (len(peer["results"]), len(ours["results"]))
problems = []
for what, a, b in [("the top level", peer, ours)] + [
        (f"result {i}", p, o) for i, (p, o) in enumerate(zip(peer["results"], ours["results"]))] + [
        (f"result {i}'s times", p["times"], o["times"]) for i, (p, o) in enumerate(zip(peer["results"], ours["results"]))]:
    if set(a) != set(b):
        problems.append(f"{what}: Kernel Tuner writes {sorted(a)}, fattn-tune {sorted(b)}")
for i, o in enumerate(ours["results"]):
    t = o["times"]
    if not (t["compilation"] >= 0 and t["benchmark"] > 0 and t["validation"] > 0 and t["framework"] >= 0
            and t["search_algorithm"] >= 0 and len(t["runtimes"]) == 4):
        problems.append(f"result {i}'s times are not all measured: {t}")
    for m in o["measurements"]:
        if set(m) != {"name", "value", "unit"}:
            problems.append(f"result {i}: a measurement with keys {sorted(m)}")
_, schema = file_utils.output_file_schema("results")
for name, doc in (("Kernel Tuner's", peer), ("fattn-tune's", ours)):
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        problems.append(f"{name} output fails the T4 schema: {e.message}")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print("ok: T4 keys as Kernel Tuner 1.5.0 writes them (times: " + ", ".join(sorted(ours["results"][0]["times"]))
      + "), schema valid")
PY
