#!/usr/bin/env bash
# space-speed.sh - search/space-speed.json, the speed stage's space: the
# H100 landscapes committed under tests/data/ prune search/space-h100.json
# (scripts/prune_space.py: a value stays when a configuration holding it
# measured within 15% of its landscape's best), and the extension tunables,
# which those landscapes predate, keep the values below, for the reasons
# given. Prints the space; tests/scripts/space-speed.sh holds the committed
# file to it.
#
#   scripts/space-speed.sh > search/space-speed.json
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/prune_space.py --base search/space-h100.json \
    --keep "SPLIT_KV=1:never measured; 2 would double the space and its compile cache past what the device tool carries" \
    --keep "Q_REGS=0,1:the H200 speed session's best at 2,8,512,64 held Q_REGS=1" \
    tests/data/landscape-h100-2-8-512-64.csv tests/data/landscape-h100-2-8-512-64-causal.csv \
    tests/data/landscape-h100-4-16-2048-128.csv
