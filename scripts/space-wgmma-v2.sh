#!/usr/bin/env bash
# space-wgmma-v2.sh - search/space-wgmma-v2.json, the wgmma stage's searched
# space (issue 51: the device command's pruned v2 space): the H200's searches
# of 4,16,2048,128 causal and not (2026-11-28, committed under docs/device/)
# prune search/space-wgmma.json (scripts/prune_space.py: a value stays when
# a configuration holding it measured within 10% of its search's best), and
# SCHED, which those searches predate, keeps every value; CLUSTER keeps its
# default, 1 (the ablation measures 2 beside the best: the device command's
# time does not hold a search of both). Prints the space;
# tests/scripts/space-speed.sh holds the committed file to it.
#
#   scripts/space-wgmma-v2.sh > search/space-wgmma-v2.json
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/prune_space.py --base search/space-wgmma.json --threshold 0.10 \
    --keep "SCHED=0,1,2:the persistent schedules, which those searches predate" \
    docs/device/h200-2026-11-28/wgmma/trials-4-16-2048-128.csv \
    docs/device/h200-2026-11-28/wgmma/trials-4-16-2048-128-causal.csv
