#!/usr/bin/env bash
# slurm.sh - campaign --emit slurm on a real Slurm (issue 53, point 3): a
# single-node cluster started as root under a temporary folder (munged,
# slurmctld, slurmd; four fake GPUs as GRES), a 4-row campaign emitted and
# submitted on the fake engine (rows bounded by --trials, the random
# strategy: the result does not depend on timing), one task requeued mid-way
# (it goes on from its saved database), the merge job after the array; the
# merged database and its dispatch table are those of the same campaign run
# in one process, times aside. Without root, Slurm or munge it skips (77)
# saying why, except under CI=true, where it fails.
#
#   slurm.sh TOOL FIXTURE_DB
set -uo pipefail
tool=$(realpath "$1")
fixture=$(realpath "$2")
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
    [ "${CI:-}" = true ] && fail "$1 (CI=true: Slurm must run here)"
    echo "SKIP: $1" >&2
    exit 77
}
[ "$(id -u)" = 0 ] || skip "the single-node Slurm cluster is started as root"
for p in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
    command -v $p >/dev/null || skip "no $p (Debian's slurm-wlm and munge: scripts/test.sh installs them)"
done
work=$(mktemp -d /tmp/fattn-slurm.XXXXXX)
stop_cluster() {
    scancel --quiet --full --user=root 2>/dev/null # the jobs first (their searches), then the daemons
    for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    for d in slurmd slurmctld munge/munged; do
        [ -e "$work/$d.pid" ] && kill "$(cat "$work/$d.pid")" 2>/dev/null
    done
    sleep 0.5
    for d in slurmd slurmctld munge/munged; do
        [ -e "$work/$d.pid" ] && kill -9 "$(cat "$work/$d.pid")" 2>/dev/null
    done
}
trap 'stop_cluster; rm -rf "$work"' EXIT
cd "$work" || exit 99
sql() { "$tool" -q query --db "$1" --format csv --sql "$2" | tail -n +2; }

# The cluster: this host, four GPUs of GRES (files standing for devices),
# ports of its own.
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir -p state spool log munge dev node
touch dev/gpu0 dev/gpu1 dev/gpu2 dev/gpu3
head -c 1024 /dev/urandom >munge/munge.key && chmod 400 munge/munge.key
cat >slurm.conf <<EOF
ClusterName=fattntest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) Gres=gpu:4 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
echo "NodeName=$host Name=gpu File=$work/dev/gpu[0-3]" >gres.conf
export SLURM_CONF=$work/slurm.conf
started=$(date +%s)
munged --key-file="$work/munge/munge.key" --socket="$work/munge/socket" --pid-file="$work/munge/munged.pid" \
    --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" --force ||
    skip "munged does not start: $(tail -n 3 "$work/munge/munged.log" 2>/dev/null)"
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start: $(tail -n 3 log/slurmctld.log 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start: $(tail -n 3 log/slurmd.log 2>/dev/null)"
for _ in $(seq 300); do
    [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break
    sleep 0.1
done
[ "$(sinfo -h -o %t 2>/dev/null)" = idle ] ||
    skip "the node is not idle: $(sinfo -h 2>&1) $(grep -h error log/*.log | tail -n 3)"
echo "ok: a single-node Slurm cluster up in $(($(date +%s) - started)) s"

# The campaign: four rows, the second longer (it is requeued mid-way).
printf 'shape\tmask\ttrials\n1,2,256,64\tnone\t1\n1,2,256,64\tcausal\t4\n2,2,256,64\tnone\t1\n1,4,256,64\tnone\t1\n' >c.tsv
export FATTN_WORKER_HOOK=fake TMPDIR=$work/node
uuid=3f0c6a4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b
# shellcheck disable=SC2054 # commas inside values
search=(-- --arch sm_90 --family mma --filter BLOCK_N=64,STAGES=2 --strategy random --seed 3 --jobs 1)
"$tool" -q campaign c.tsv --db one.db --uuid $uuid "${search[@]}" >/dev/null || fail "the one-process campaign"
"$tool" campaign c.tsv --emit slurm out --uuid $uuid "${search[@]}" >emit.out || fail "--emit slurm"
# Tasks 1, 3 and 4 find a database on their node holding the compile cache
# alone (the 2 cores run the campaign, not NVRTC again); task 2 starts bare.
for k in 1 3 4; do
    mkdir -p "node/fattn-campaign-$uuid-$k"
    cp one.db "node/fattn-campaign-$uuid-$k/task.db"
    "$fixture" sql "node/fattn-campaign-$uuid-$k/task.db" "DELETE FROM campaign_rows; DELETE FROM campaigns;
        DELETE FROM samples; DELETE FROM trials; DELETE FROM study_families; DELETE FROM studies" || exit 99
done
grep -q "^submit with: sh $work/out/submit.sh$" emit.out || fail "emit: $(cat emit.out)"
if ! grep -q '^#SBATCH --array=1-4$' out/array.sbatch || ! grep -q '^#SBATCH --gres=gpu:1$' out/array.sbatch; then
    fail "the array script: $(grep SBATCH out/array.sbatch)"
fi
sh out/submit.sh >submit.out || fail "submit.sh: $(cat submit.out)"
job=$(sed -n 's/^array job \([0-9]*\), merge job \([0-9]*\):.*/\1/p' submit.out)
merge=$(sed -n 's/^array job \([0-9]*\), merge job \([0-9]*\):.*/\2/p' submit.out)
if [ -z "$job" ] || [ -z "$merge" ]; then fail "submit.sh: $(cat submit.out)"; fi

# Task 2 requeued once its study has run a trial: it saves its partial
# database (SIGTERM, the trap); its node's copy removed, it must go on from
# the saved one.
db2=$work/node/fattn-campaign-$uuid-2/task.db
ran=0
for _ in $(seq 600); do
    ran=$(sql "$db2" "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL" 2>/dev/null || echo 0)
    [ "$ran" -ge 1 ] && break
    sleep 0.1
done
[ "$ran" -ge 1 ] || fail "task 2 ran no trial in 60 s: $(cat out/logs/task-2.out 2>/dev/null)"
scontrol requeue "${job}_2" || fail "scontrol requeue ${job}_2"
for _ in $(seq 300); do
    [ "$(squeue -h -j "${job}_2" -o %T 2>/dev/null)" = PENDING ] && break
    sleep 0.1
done
[ "$(squeue -h -j "${job}_2" -o %T)" = PENDING ] || fail "task 2 not pending after the requeue"
if [ ! -s out/task-2.partial.db ] || ! grep -q "saved $work/out/task-2.partial.db" out/logs/task-2.out; then
    fail "task 2 saved no partial database: $(cat out/logs/task-2.out)"
fi
rm -rf "$work/node/fattn-campaign-$uuid-2"
scontrol update jobid="${job}_2" StartTime=now || fail "scontrol update StartTime" # it waits two minutes otherwise
for _ in $(seq 1800); do
    [ -z "$(squeue -h 2>/dev/null)" ] && break
    sleep 0.1
done
[ -z "$(squeue -h)" ] || fail "jobs left after 180 s: $(squeue -h)"
grep -q "restart 1" out/logs/task-2.out || fail "task 2 did not run again: $(cat out/logs/task-2.out)"
grep -q "merged 4 of 4 tasks" out/logs/merge.out || fail "the merge job: $(cat out/logs/merge.out)"
echo "ok: the array of 4 tasks ran, task 2 requeued mid-way, the merge job after it"

# The merged database is the one-process campaign's: each row's trials, and
# the study resumed after the requeue.
rows() {
    sql "$1" "SELECT r.row, s.status, t.seq, t.config_key, t.status FROM campaign_rows r JOIN campaigns c
              ON c.id = r.campaign_id JOIN studies s ON s.campaign_uuid = c.uuid AND s.campaign_row = r.row
              JOIN trials t ON t.study_id = s.id ORDER BY r.row, t.seq"
}
diff <(rows one.db) <(rows out/merged.db) >/dev/null || fail "merged.db's rows: $(diff <(rows one.db) <(rows out/merged.db) | head)"
[ "$(sql out/merged.db "SELECT runs FROM studies WHERE campaign_row = 2")" = 2 ] ||
    fail "row 2's study was not resumed after the requeue"
"$tool" -q export --db one.db --campaign -o one.h
# Times aside: the fake engine's are its own each run.
entries() { grep -v "Generated by" "$1" | sed -E 's/[0-9]+\.[0-9]+ us|, [0-9.e+-]+, [0-9.e+-]+, "bm/ TIMES/g'; }
diff <(entries one.h) <(entries out/dispatch.h) || fail "dispatch.h is not the one-process campaign's"
echo "ok: merged.db and dispatch.h are the one-process campaign's, times aside"
