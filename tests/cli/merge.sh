#!/usr/bin/env bash
# merge.sh - fattn-tune merge (issue 53): three databases (a replayed search
# with confirmations on the fake engine, one against a trial baseline and one
# against the previous; a compile study with a simulator run; an older
# schema's database, version 12) merge into a new one that holds each
# study's rows, with new ids and every reference mapped, each study once;
# merging the result with one of its inputs again adds nothing; copies of a
# study that differ give the furthest one, with a note; the inputs are
# byte-identical afterwards; every reading command takes the merged file.
# The bad inputs (an output that exists, a file named twice, damaged, newer,
# foreign) are tests/cli/cases/bad-merge-*.case.
#
#   merge.sh TOOL SOURCE_ROOT FIXTURE_DB
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
fixture=$(realpath "$3")
work=$(mktemp -d /tmp/fattn-merge.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
sql() { "$tool" -q query --db "$1" --format csv --sql "$2" | tail -n +2; }

# a.db: a replayed search, two confirmations on the fake engine.
land=$src/tests/data/landscape-h100-2-8-512-64.csv
"$tool" -q search --evaluator "replay:$land" --trials 3 --seed 2 --jobs 2 --filter BLOCK_M=64 --db a.db >/dev/null
slow=$(sql a.db "SELECT id FROM trials WHERE status = 'ok' ORDER BY median_us DESC LIMIT 1")
FATTN_WORKER_HOOK=fake "$tool" -q confirm --db a.db --n 5 --baseline "trial:$slow" >/dev/null
cp a.db a-early.db # a copy of a.db before the second confirmation
FATTN_WORKER_HOOK=fake "$tool" -q confirm --db a.db --n 5 --against previous >/dev/null || [ $? = 3 ]
[ "$(sql a.db "SELECT count(*) FROM confirmations WHERE previous_id IS NOT NULL")" = 1 ] ||
    fail "a.db: no confirmation against the previous"
# b.db: a compile study and a simulator run.
"$fixture" compiled b.db >/dev/null
"$tool" -q check --config bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 --shape 1,2,130,64 --db b.db >/dev/null
# old.db: a study as fattn-tune of schema version 12 left it (versions 13 to 15 only added these).
"$fixture" timed old.db >/dev/null
"$fixture" sql old.db "INSERT INTO confirmations (study_id, created_at, config_key, baseline, n, trial_id)
    VALUES (1, '2026-01-01T00:00:00Z', 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1', 'cudnn', 5, 1)" # shifts a.db's ids
"$fixture" sql old.db "DROP TABLE gpu_checks; DROP TABLE trials_running; ALTER TABLE trials DROP COLUMN gpu_uuid;
    ALTER TABLE studies DROP COLUMN gpu_spread_pct; DROP TABLE campaign_rows; DROP TABLE campaigns; DROP INDEX studies_by_campaign;
    ALTER TABLE studies DROP COLUMN campaign_uuid; ALTER TABLE studies DROP COLUMN campaign_row;
    DROP TRIGGER studies_uuid; DROP TRIGGER sim_runs_uuid; DROP INDEX studies_by_uuid;
    DROP INDEX sim_runs_by_uuid; ALTER TABLE studies DROP COLUMN uuid; ALTER TABLE studies DROP COLUMN origin_db;
    ALTER TABLE studies DROP COLUMN origin_id; ALTER TABLE sim_runs DROP COLUMN uuid; PRAGMA user_version = 12"
cp old.db old-migrated.db
"$fixture" migrate old-migrated.db

# What a database holds, without its ids: each study's rows under its UUID
# (a confirmation's trial baseline and previous confirmation by what they
# name), the simulator's checks under their run's, the cache's keys.
dump() {
    sql "$1" "SELECT 'study', uuid, command, strategy, arch, device, kernel_hash, status, batch, seqlen, family
              FROM studies
              UNION ALL SELECT 'family', s.uuid, f.position, f.family, f.kernel_hash, f.space_hash, '', '', '', '', ''
              FROM study_families f JOIN studies s ON s.id = f.study_id
              UNION ALL SELECT 'trial', s.uuid, t.seq, t.config_key, t.status, t.reason, t.median_us, t.family,
                     t.params_json, t.cache_key, t.registers FROM trials t JOIN studies s ON s.id = t.study_id
              UNION ALL SELECT 'sample', s.uuid, t.seq, x.idx, x.us, '', '', '', '', '', ''
              FROM samples x JOIN trials t ON t.id = x.trial_id JOIN studies s ON s.id = t.study_id
              UNION ALL SELECT 'confirmation', s.uuid, c.created_at, c.config_key, c.median_us, c.verdict,
                     (SELECT t.seq || ' of ' || s3.uuid FROM trials t JOIN studies s3 ON s3.id = t.study_id
                      WHERE t.id = c.trial_id),
                     CASE WHEN c.baseline GLOB 'trial:*' THEN 'trial seq ' || (SELECT t.seq || ' of ' || s2.uuid
                          FROM trials t JOIN studies s2 ON s2.id = t.study_id
                          WHERE t.id = CAST(substr(c.baseline, 7) AS INTEGER)) ELSE c.baseline END,
                     (SELECT p.created_at FROM confirmations p WHERE p.id = c.previous_id),
                     (SELECT count(*) FROM confirmation_samples y WHERE y.confirmation_id = c.id), c.base_kind
              FROM confirmations c JOIN studies s ON s.id = c.study_id
              UNION ALL SELECT 'sim_run', r.uuid, r.mode, r.kernel_hash, r.status, '', '', '', '', '', ''
              FROM sim_runs r
              UNION ALL SELECT 'sim_check', r.uuid, k.seq, k.config_key, k.verdict, k.defect, k.max_abs_err, '', '',
                     '', '' FROM sim_checks k JOIN sim_runs r ON r.id = k.run_id
              UNION ALL SELECT 'cache', key, ok, length(cubin), '', '', '', '', '', '', '' FROM compile_cache" |
        sort -u
}
sums() { sha256sum a.db a-early.db b.db old.db; }
before=$(sums)

# a.db last: its ids shift (references are mapped, not kept).
"$tool" merge b.db old.db a.db -o m1.db >m1.out 2>m1.err || { cat m1.out m1.err >&2; fail "merge b old a"; }
grep -q "^old.db (schema 12): 1 study copied" m1.out || fail "the summary: $(cat m1.out)"
[ "$(sums)" = "$before" ] || fail "an input changed"
ls -d ./*.merge-* 2>/dev/null && fail "a working folder left behind"
union() { { dump a.db; dump b.db; dump old-migrated.db; } | sort -u; }
diff <(union) <(dump m1.db) >/dev/null || fail "m1.db is not the union of its inputs: $(diff <(union) <(dump m1.db) | head)"
# No row twice (the dump's sort -u would hide it): the rows of each table add up.
for table in studies trials samples confirmations confirmation_samples sim_runs sim_checks; do
    sum=0
    for db in a.db b.db old-migrated.db; do sum=$((sum + $(sql $db "SELECT count(*) FROM $table"))); done
    [ "$(sql m1.db "SELECT count(*) FROM $table")" = $sum ] || fail "m1.db's $table: not the inputs' $sum rows"
done
[ "$(sql m1.db "PRAGMA foreign_key_check" | wc -l)" = 0 ] || fail "a reference dangles in m1.db"
[ "$(sql m1.db "SELECT group_concat(id || ':' || origin_id || ':' || replace(origin_db, '$(pwd -P)/', ''), ' ')
                FROM studies")" = "1:1:b.db 2:1:old.db 3:1:a.db" ] ||
    fail "ids or origins: $(sql m1.db "SELECT id, origin_db, origin_id FROM studies")"
echo "ok: merge b old a: the union of the inputs, ids new and references mapped, inputs unchanged"

# Again with one of its inputs: nothing added (the same content, the same ids).
"$tool" merge m1.db a.db -o m2.db >m2.out 2>m2.err || { cat m2.out m2.err >&2; fail "merge m1 a"; }
grep -q "^a.db (schema [0-9]*): 0 studies copied (1 already from another copy)" m2.out || fail "m2: $(cat m2.out)"
diff <(dump m1.db) <(dump m2.db) >/dev/null || fail "m2.db differs from m1.db: $(diff <(dump m1.db) <(dump m2.db))"
[ "$(sql m1.db "SELECT group_concat(id || uuid || ifnull(origin_db, ''), ' ') FROM studies")" = \
  "$(sql m2.db "SELECT group_concat(id || uuid || ifnull(origin_db, ''), ' ') FROM studies")" ] ||
    fail "m2.db's studies are not m1.db's"
echo "ok: merged again with an input, nothing added"

# Two copies of one study that differ: the one with more confirmations,
# whichever is named first, with a note.
"$tool" merge a-early.db a.db -o m3.db >m3.out 2>m3.err || { cat m3.out m3.err >&2; fail "merge a-early a"; }
grep -Eq "^fattn-tune: note: study [-0-9a-f]{36} has copies that differ: a-early.db's study 1 \(([0-9]+) trials, 1 \
confirmations\); a.db's study 1 \(\1 trials, 2 confirmations\); copied a.db's" m3.err || fail "the note: $(cat m3.err)"
diff <(dump a.db) <(dump m3.db) >/dev/null || fail "m3.db is not a.db"
echo "ok: copies that differ: the furthest copied, with a note"

# A database whose writer was killed (-9): its -wal holds trials not yet in
# the file. Merged, both stay byte for byte, and the copy holds those trials.
"$tool" -q search --evaluator "replay:$land" --trials 40 --seed 5 --jobs 2 --filter BLOCK_M=64 --db k.db >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
    [ "$(sql k.db "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL" 2>/dev/null || echo 0)" -ge 2 ] && break
    sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null || true
[ -s k.db-wal ] || fail "the killed search left no -wal"
before=$(sha256sum k.db k.db-wal)
"$tool" -q merge k.db -o mk.db || fail "merge of the killed search's database"
[ "$(sha256sum k.db k.db-wal)" = "$before" ] || fail "merge changed k.db or its -wal"
ran=$(sql mk.db "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")
if [ "$ran" -lt 2 ] || [ "$ran" != "$(sql k.db "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")" ]; then
    fail "mk.db holds $ran of the killed search's trials"
fi
[ "$(sql mk.db "SELECT status || ' ' || ifnull(runner, 'none') FROM studies")" = "running none" ] ||
    fail "the killed study's copy: $(sql mk.db "SELECT status, runner FROM studies")"
echo "ok: a killed writer's database and its -wal unchanged, its trials merged"

# Every reading command takes the merged database.
"$tool" -q query --db m1.db >/dev/null
"$tool" -q query top --db m1.db --study 3 >/dev/null
"$tool" -q query confirmations --db m1.db >/dev/null
"$tool" -q query sim --db m1.db >/dev/null
"$tool" -q query landscape --db m1.db --study 3 -o land.csv
grep -q "^# device: NVIDIA H100 80GB HBM3" land.csv || fail "the landscape of a merged study"
"$tool" -q report --db m1.db --study 3 -o report.html
grep -q "<svg" report.html || fail "the report has no plot"
"$tool" -q export --db m1.db --study 3 -o tuned.h
grep -q "FATTN_BLOCK_M" tuned.h || fail "the header"
"$tool" -q export --db m1.db --study 3 --format t4 -o t4.json
"$tool" -q export --db m1.db --study 2 --format json -o old.json
echo "ok: query, report and export read the merged database"
