#!/usr/bin/env python3
"""Counts the SASS of a kernel's consumer main loop per key tile.

usage: count_loop.py FILE.sass [--json] [-v]

FILE.sass is `nvdisasm -c` of a cubin. A loop is the span from the label a
backward branch targets to that branch. The main loop is the smallest loop
that holds an HGMMA and at least half the EX2 any loop holds, and no
smaller loop holding them (an mbarrier wait's retry, placed at the end of
the function, branches back over code that is no loop: it holds a real
loop, or is larger, or catches only the epilogue's few EX2) (a kernel whose masked
key tiles run in a loop of their own has two; the unmasked one, the steady
state, is the smaller). Per loop it counts every instruction once (an
mbarrier wait's spin loop inside it counts once), the opcodes that matter
for FlashAttention, and for the overlap: the EX2 issued between the loop's
`WARPGROUP.DEPBAR.LE gsb0, 0x1` and its `0x0`, against all of its EX2.

Written for issue 51; lab/sass/README.md holds FA3's reference counts made
with it.
"""
import collections
import json
import re
import signal
import sys

KEYS = ['HGMMA', 'MUFU.EX2', 'FMNMX', 'FMUL', 'FFMA', 'FADD', 'F2FP', 'SHFL', 'FSEL', 'ISETP', 'R2UR', 'SYNCS',
        'BAR', 'WARPGROUP.ARRIVE', 'WARPGROUP.DEPBAR', 'STS', 'LDS', 'LDL', 'STL']


def parse(path):
    ins, label_at, pending = [], {}, []
    for line in open(path):
        s = line.strip()
        m = re.match(r'^(\.L_x_\d+):', s)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
        if m:
            for lb in pending:
                label_at[lb] = len(ins)
            pending = []
            ins.append(m.group(2))
    return ins, label_at


def opcode(text):
    return re.sub(r'^@!?U?P\w+\s+', '', text).split()[0]


def loops(ins, label_at):
    out = []
    for i, text in enumerate(ins):
        m = re.search(r'BRA\s+(?:\S+\s+)?`\((\.L_x_\d+)\)', text)
        if m and m.group(1) in label_at and label_at[m.group(1)] <= i:
            lo = label_at[m.group(1)]
            body = ins[lo:i + 1]
            if any('HGMMA' in t for t in body) and any('MUFU.EX2' in t for t in body):
                out.append((lo, i))
    inner = [a for a in out if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in out)]
    # a retry's span may cross the end of the epilogue and catch one EX2 of
    # it: a key-tile loop holds a tile's exps, at least half the most any holds
    ex2 = {a: sum(1 for t in ins[a[0]:a[1] + 1] if 'MUFU.EX2' in t) for a in inner}
    most = max(ex2.values(), default=0)
    return sorted((a for a in inner if 2 * ex2[a] >= most), key=lambda a: a[1] - a[0])


def count(ins, lo, hi):
    c = collections.Counter(opcode(ins[k]) for k in range(lo, hi + 1))
    g = collections.OrderedDict(total=hi - lo + 1)
    for k in KEYS:
        g[k] = sum(v for o, v in c.items() if o == k or o.startswith(k + '.'))
    depbar = [k for k in range(lo, hi + 1) if 'WARPGROUP.DEPBAR' in ins[k]]
    wait1 = [k for k in depbar if ins[k].rstrip().endswith('0x1')]
    wait0 = [k for k in depbar if ins[k].rstrip().endswith('0x0')]
    g['wait_group_1'], g['wait_group_0'] = len(wait1), len(wait0)
    between = 0
    if wait1:
        end = next((k for k in wait0 if k > wait1[0]), hi)
        between = sum(1 for k in range(wait1[0], end) if opcode(ins[k]).startswith('MUFU.EX2'))
    g['ex2_between_waits'] = between
    g['ex2_fraction'] = round(between / g['MUFU.EX2'], 3) if g['MUFU.EX2'] else 0.0
    return g, c


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = [a for a in sys.argv[1:] if not a.startswith('-')]
    if len(args) != 1:
        sys.exit(__doc__.split('\n\n')[1])
    ins, label_at = parse(args[0])
    found = loops(ins, label_at)
    if not found:
        sys.exit('%s: no loop holds an HGMMA and an EX2' % args[0])
    result = []
    for lo, hi in found:
        g, c = count(ins, lo, hi)
        result.append(g)
        if '-v' in sys.argv:
            print('loop [%d, %d]:' % (lo, hi), ', '.join('%s %d' % kv for kv in sorted(c.items(), key=lambda x: -x[1])))
    if '--json' in sys.argv:
        print(json.dumps({'main': result[0], 'loops': result}))
    else:
        for n, g in enumerate(result):
            print('main' if n == 0 else 'other', ' '.join('%s=%s' % (k, v) for k, v in g.items()))


if __name__ == '__main__':
    main()
