/*
 * schema.c - migrations of the results database.
 */
#include "store/schema.h"

#include <cjson/cJSON.h>
#include <stddef.h>

static const char *const migrations[] = {
    NULL,
    /* v1: the foundation schema. */
    "CREATE TABLE studies (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  status TEXT NOT NULL,\n"
    "  command TEXT NOT NULL,\n"
    "  strategy TEXT NOT NULL,\n"
    "  seed INTEGER,\n"
    "  batch INTEGER NOT NULL,\n"
    "  heads INTEGER NOT NULL,\n"
    "  seqlen INTEGER NOT NULL,\n"
    "  head_dim INTEGER NOT NULL,\n"
    "  causal INTEGER NOT NULL,\n"
    "  arch TEXT NOT NULL,\n"
    "  device TEXT,\n"
    "  device_json TEXT,\n"
    "  tool_version TEXT NOT NULL,\n"
    "  nvrtc_version TEXT NOT NULL,\n"
    "  driver_version TEXT,\n"
    "  sqlite_version TEXT NOT NULL,\n"
    "  cjson_version TEXT NOT NULL,\n"
    "  space_path TEXT,\n"
    "  space_hash TEXT NOT NULL,\n"
    "  space_json TEXT,\n"
    "  kernel_hash TEXT NOT NULL,\n"
    "  limits_json TEXT NOT NULL,\n"
    "  timing_method TEXT,\n"
    "  argv TEXT\n"
    ");\n"
    "CREATE TABLE compile_cache (\n"
    "  key TEXT PRIMARY KEY,\n"
    "  kernel_hash TEXT NOT NULL,\n"
    "  arch TEXT NOT NULL,\n"
    "  options TEXT NOT NULL,\n"
    "  nvrtc_version TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL,\n"
    "  ok INTEGER NOT NULL,\n"
    "  log TEXT,\n"
    "  cubin BLOB,\n"
    "  compile_ms REAL,\n"
    "  registers INTEGER,\n"
    "  spill_stores INTEGER,\n"
    "  spill_loads INTEGER,\n"
    "  stack_frame INTEGER,\n"
    "  smem_static INTEGER,\n"
    "  smem_dynamic INTEGER,\n"
    "  threads INTEGER\n"
    ");\n"
    "CREATE TABLE trials (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  study_id INTEGER NOT NULL REFERENCES studies(id),\n"
    "  seq INTEGER NOT NULL,\n"
    "  config_key TEXT NOT NULL,\n"
    "  block_m INTEGER NOT NULL,\n"
    "  block_n INTEGER NOT NULL,\n"
    "  block_k INTEGER NOT NULL,\n"
    "  num_warps INTEGER NOT NULL,\n"
    "  stages INTEGER NOT NULL,\n"
    "  unroll INTEGER NOT NULL,\n"
    "  cp_async INTEGER NOT NULL,\n"
    "  swizzle INTEGER NOT NULL,\n"
    "  half2 INTEGER NOT NULL,\n"
    "  pad_bytes INTEGER NOT NULL,\n"
    "  copy_colmajor INTEGER NOT NULL,\n"
    "  status TEXT NOT NULL,\n"
    "  reason TEXT,\n"
    "  detail TEXT,\n"
    "  created_at TEXT NOT NULL,\n"
    "  cache_key TEXT,\n"
    "  cache_hit INTEGER,\n"
    "  compile_ms REAL,\n"
    "  registers INTEGER,\n"
    "  spill_stores INTEGER,\n"
    "  spill_loads INTEGER,\n"
    "  stack_frame INTEGER,\n"
    "  smem_static INTEGER,\n"
    "  smem_dynamic INTEGER,\n"
    "  smem_model INTEGER,\n"
    "  occupancy REAL,\n"
    "  blocks_per_sm INTEGER,\n"
    "  occupancy_limiter TEXT,\n"
    "  median_us REAL,\n"
    "  p10_us REAL,\n"
    "  p90_us REAL,\n"
    "  tflops REAL,\n"
    "  gbps REAL,\n"
    "  max_abs_err REAL,\n"
    "  norm_err REAL,\n"
    "  n_bad INTEGER,\n"
    "  numerics_seed INTEGER,\n"
    "  UNIQUE (study_id, seq)\n"
    ");\n"
    "CREATE INDEX trials_by_status ON trials (study_id, status, reason);\n"
    "CREATE INDEX trials_by_time ON trials (study_id, median_us);\n"
    "CREATE TABLE samples (\n"
    "  trial_id INTEGER NOT NULL REFERENCES trials(id),\n"
    "  idx INTEGER NOT NULL,\n"
    "  us REAL NOT NULL,\n"
    "  PRIMARY KEY (trial_id, idx)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE confirmations (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  study_id INTEGER NOT NULL REFERENCES studies(id),\n"
    "  created_at TEXT NOT NULL,\n"
    "  config_key TEXT NOT NULL,\n"
    "  baseline TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL,\n"
    "  seed INTEGER,\n"
    "  device TEXT,\n"
    "  median_us REAL,\n"
    "  ci_lo_us REAL,\n"
    "  ci_hi_us REAL,\n"
    "  p90_us REAL,\n"
    "  base_median_us REAL,\n"
    "  base_ci_lo_us REAL,\n"
    "  base_ci_hi_us REAL,\n"
    "  base_p90_us REAL,\n"
    "  speedup REAL,\n"
    "  speedup_ci_lo REAL,\n"
    "  speedup_ci_hi REAL,\n"
    "  mwu_p REAL,\n"
    "  cliffs_delta REAL,\n"
    "  verdict TEXT\n"
    ");\n"
    "CREATE TABLE confirmation_samples (\n"
    "  confirmation_id INTEGER NOT NULL REFERENCES confirmations(id),\n"
    "  side TEXT NOT NULL CHECK (side IN ('candidate', 'baseline')),\n"
    "  idx INTEGER NOT NULL,\n"
    "  us REAL NOT NULL,\n"
    "  PRIMARY KEY (confirmation_id, side, idx)\n"
    ") WITHOUT ROWID;\n",
    /* v2: the GPU engine: time spent evaluating each trial, and the
     * evaluator of each study (gpu, or replay of a landscape). */
    "ALTER TABLE trials ADD COLUMN run_ms REAL;\n"
    "ALTER TABLE studies ADD COLUMN evaluator TEXT;\n",
    /* v3: resumable searches: the search's own arguments (a JSON array),
     * the search time spent so far, and how many runs the study took. */
    "ALTER TABLE studies ADD COLUMN args_json TEXT;\n"
    "ALTER TABLE studies ADD COLUMN search_ms REAL;\n"
    "ALTER TABLE studies ADD COLUMN runs INTEGER NOT NULL DEFAULT 1;\n",
    /* v4: confirm: what was compared (the candidate's trial, the baseline's
     * kind and key), how (resamples, level, target, timing), the rest of
     * the statistics, the numerics re-verified, the regression check. */
    "ALTER TABLE confirmations ADD COLUMN trial_id INTEGER REFERENCES trials(id);\n"
    "ALTER TABLE confirmations ADD COLUMN arch TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN base_kind TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN base_desc TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN resamples INTEGER;\n"
    "ALTER TABLE confirmations ADD COLUMN level REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN target REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN timing_method TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN p10_us REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN base_p10_us REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN mwu_u REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN significant INTEGER;\n"
    "ALTER TABLE confirmations ADD COLUMN p90_ok INTEGER;\n"
    "ALTER TABLE confirmations ADD COLUMN success INTEGER;\n"
    "ALTER TABLE confirmations ADD COLUMN max_abs_err REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN base_max_abs_err REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN detail TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN previous_id INTEGER REFERENCES confirmations(id);\n"
    "ALTER TABLE confirmations ADD COLUMN change_pct REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN regression INTEGER;\n"
    "CREATE INDEX confirmations_by_config ON confirmations (config_key, device);\n",
    /* v5: the extension tunables of tuned spaces (space/params.h): the key
     * range split across a cluster, Q held in registers. Earlier trials ran
     * without either, which the defaults say. */
    "ALTER TABLE trials ADD COLUMN split_kv INTEGER NOT NULL DEFAULT 1;\n"
    "ALTER TABLE trials ADD COLUMN q_regs INTEGER NOT NULL DEFAULT 0;\n",
    /* v6: the process running a study (util/proc.h's tag, NULL when none),
     * so that two searches never run one study at once. */
    "ALTER TABLE studies ADD COLUMN runner TEXT;\n",
    /* v7: the simulator (fattn-tune check): each run, and the verdict of
     * each configuration at each shape, keyed by the kernel source hash so
     * that search skips what failed for the same kernel. */
    "CREATE TABLE sim_runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  created_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  status TEXT NOT NULL,\n"
    "  mode TEXT NOT NULL,\n"
    "  command TEXT NOT NULL,\n"
    "  kernel_hash TEXT NOT NULL,\n"
    "  space_path TEXT,\n"
    "  space_hash TEXT,\n"
    "  arch TEXT,\n"
    "  seed INTEGER NOT NULL,\n"
    "  compiler TEXT,\n"
    "  tool_version TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE sim_checks (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES sim_runs(id),\n"
    "  seq INTEGER NOT NULL,\n"
    "  created_at TEXT NOT NULL,\n"
    "  kernel_hash TEXT NOT NULL,\n"
    "  config_key TEXT NOT NULL,\n"
    "  batch INTEGER NOT NULL,\n"
    "  heads INTEGER NOT NULL,\n"
    "  seqlen INTEGER NOT NULL,\n"
    "  head_dim INTEGER NOT NULL,\n"
    "  causal INTEGER NOT NULL,\n"
    "  verdict TEXT NOT NULL,\n"
    "  defect INTEGER NOT NULL,\n"
    "  detail TEXT,\n"
    "  fix TEXT,\n"
    "  block TEXT,\n"
    "  thread INTEGER,\n"
    "  other_thread INTEGER,\n"
    "  space TEXT,\n"
    "  address INTEGER,\n"
    "  access_bytes INTEGER,\n"
    "  insn TEXT,\n"
    "  file TEXT,\n"
    "  line INTEGER,\n"
    "  other_line INTEGER,\n"
    "  findings INTEGER,\n"
    "  max_abs_err REAL,\n"
    "  norm_err REAL,\n"
    "  n_bad INTEGER,\n"
    "  smem_wavefronts INTEGER,\n"
    "  smem_min_wavefronts INTEGER,\n"
    "  compile_ms REAL,\n"
    "  run_ms REAL,\n"
    "  cache_hit INTEGER,\n"
    "  UNIQUE (run_id, seq)\n"
    ");\n"
    "CREATE INDEX sim_checks_by_kernel ON sim_checks (kernel_hash, config_key, head_dim, causal);\n",
    /* v8: where a trial's time went, as Kernel Tuner's T4 writer splits it:
     * the worker's numerics check and timing (its own clock), and the
     * strategy's time since the trial before; and the kernel source a
     * confirmation measured, and whether it was the study's on the study's
     * arch (confirm --allow-kernel-change and --allow-arch-change measure
     * others). NULL for earlier rows. */
    "ALTER TABLE trials ADD COLUMN validation_ms REAL;\n"
    "ALTER TABLE trials ADD COLUMN benchmark_ms REAL;\n"
    "ALTER TABLE trials ADD COLUMN strategy_ms REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN kernel_hash TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN as_searched INTEGER;\n",
    /* v9: the norm-wise numerics gate (run/numerics.h): the relative L2
     * error of each check, and the input set (uniform, peaky) that gave a
     * trial's worse; for a confirmation the worse of the checks before and
     * after the timing, of each side. NULL for earlier rows. */
    "ALTER TABLE trials ADD COLUMN rel_l2 REAL;\n"
    "ALTER TABLE trials ADD COLUMN numerics_inputs TEXT;\n"
    "ALTER TABLE confirmations ADD COLUMN rel_l2 REAL;\n"
    "ALTER TABLE confirmations ADD COLUMN base_rel_l2 REAL;\n"
    "ALTER TABLE sim_checks ADD COLUMN rel_l2 REAL;\n"
    "ALTER TABLE sim_checks ADD COLUMN numerics_inputs TEXT;\n",
    /* v10: kernel families (space/family.h): the family of each study and
     * of each compile-cache entry ('mma' for earlier rows), and every
     * trial's parameters as one JSON object, params_json, in its family's
     * table order (earlier rows get theirs from their columns). The
     * per-parameter columns stay, the mma family's, NULL in another
     * family's trials: the table is rebuilt, column order kept, since
     * SQLite cannot drop a NOT NULL. */
    "ALTER TABLE studies ADD COLUMN family TEXT NOT NULL DEFAULT 'mma';\n"
    "ALTER TABLE compile_cache ADD COLUMN family TEXT NOT NULL DEFAULT 'mma';\n"
    "CREATE TABLE trials_v10 (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  study_id INTEGER NOT NULL REFERENCES studies(id),\n"
    "  seq INTEGER NOT NULL,\n"
    "  config_key TEXT NOT NULL,\n"
    "  block_m INTEGER,\n"
    "  block_n INTEGER,\n"
    "  block_k INTEGER,\n"
    "  num_warps INTEGER,\n"
    "  stages INTEGER,\n"
    "  unroll INTEGER,\n"
    "  cp_async INTEGER,\n"
    "  swizzle INTEGER,\n"
    "  half2 INTEGER,\n"
    "  pad_bytes INTEGER,\n"
    "  copy_colmajor INTEGER,\n"
    "  status TEXT NOT NULL,\n"
    "  reason TEXT,\n"
    "  detail TEXT,\n"
    "  created_at TEXT NOT NULL,\n"
    "  cache_key TEXT,\n"
    "  cache_hit INTEGER,\n"
    "  compile_ms REAL,\n"
    "  registers INTEGER,\n"
    "  spill_stores INTEGER,\n"
    "  spill_loads INTEGER,\n"
    "  stack_frame INTEGER,\n"
    "  smem_static INTEGER,\n"
    "  smem_dynamic INTEGER,\n"
    "  smem_model INTEGER,\n"
    "  occupancy REAL,\n"
    "  blocks_per_sm INTEGER,\n"
    "  occupancy_limiter TEXT,\n"
    "  median_us REAL,\n"
    "  p10_us REAL,\n"
    "  p90_us REAL,\n"
    "  tflops REAL,\n"
    "  gbps REAL,\n"
    "  max_abs_err REAL,\n"
    "  norm_err REAL,\n"
    "  n_bad INTEGER,\n"
    "  numerics_seed INTEGER,\n"
    "  run_ms REAL,\n"
    "  split_kv INTEGER DEFAULT 1,\n"
    "  q_regs INTEGER DEFAULT 0,\n"
    "  validation_ms REAL,\n"
    "  benchmark_ms REAL,\n"
    "  strategy_ms REAL,\n"
    "  rel_l2 REAL,\n"
    "  numerics_inputs TEXT,\n"
    "  params_json TEXT,\n"
    "  UNIQUE (study_id, seq)\n"
    ");\n"
    "INSERT INTO trials_v10 SELECT *, json_object('BLOCK_M', block_m, 'BLOCK_N', block_n, 'BLOCK_K', block_k,\n"
    "  'NUM_WARPS', num_warps, 'STAGES', stages, 'UNROLL', unroll, 'CP_ASYNC', cp_async, 'SWIZZLE', swizzle,\n"
    "  'HALF2', half2, 'SPLIT_KV', split_kv, 'Q_REGS', q_regs, 'PAD_BYTES', pad_bytes,\n"
    "  'COPY_COLMAJOR', copy_colmajor) FROM trials;\n"
    "DROP TABLE trials;\n"
    "ALTER TABLE trials_v10 RENAME TO trials;\n"
    "CREATE INDEX trials_by_status ON trials (study_id, status, reason);\n"
    "CREATE INDEX trials_by_time ON trials (study_id, median_us);\n",
    /* v11: where a search run's time went, and the compiles it gave up at
     * its end (tune/tune.h), as a JSON object: the study's last run. */
    "ALTER TABLE studies ADD COLUMN last_run_json TEXT;\n",
    /* v12: studies over several kernel families (search without --space):
     * each study's families in order (position 0 is the one the studies
     * row names, with its space, kernel and limits), each with its own
     * space, kernel source and gate limits; and each trial's family (its
     * key says it too, but a column serves queries). Earlier studies get
     * their one family from their own columns. */
    "CREATE TABLE study_families (\n"
    "  study_id INTEGER NOT NULL REFERENCES studies(id),\n"
    "  position INTEGER NOT NULL,\n"
    "  family TEXT NOT NULL,\n"
    "  space_path TEXT,\n"
    "  space_hash TEXT,\n"
    "  space_json TEXT,\n"
    "  kernel_hash TEXT,\n"
    "  limits_json TEXT,\n"
    "  PRIMARY KEY (study_id, position),\n"
    "  UNIQUE (study_id, family)\n"
    ");\n"
    "INSERT INTO study_families SELECT id, 0, family, space_path, space_hash, space_json, kernel_hash, limits_json\n"
    "  FROM studies;\n"
    "ALTER TABLE trials ADD COLUMN family TEXT;\n"
    "UPDATE trials SET family = (SELECT family FROM studies WHERE studies.id = trials.study_id);\n",
    /* v13: merging databases (fattn-tune merge, store/merge.h): every
     * study and simulator run has a stable identity, a UUID, so that a
     * study merged twice is copied once: a random one given on insert by
     * a trigger, and for earlier rows one derived from what they hold
     * (schema.h); a study merged from another database keeps where it
     * came from (that file's path and the study's id there; NULL for a
     * study that ran here). */
    "ALTER TABLE studies ADD COLUMN uuid TEXT;\n"
    "ALTER TABLE studies ADD COLUMN origin_db TEXT;\n"
    "ALTER TABLE studies ADD COLUMN origin_id INTEGER;\n"
    "ALTER TABLE sim_runs ADD COLUMN uuid TEXT;\n"
    "UPDATE studies SET uuid = " FATTN_SQL_STUDY_UUID_OF ";\n"
    "UPDATE sim_runs SET uuid = " FATTN_SQL_SIM_RUN_UUID_OF ";\n"
    "CREATE UNIQUE INDEX studies_by_uuid ON studies (uuid);\n"
    "CREATE UNIQUE INDEX sim_runs_by_uuid ON sim_runs (uuid);\n"
    "CREATE TRIGGER studies_uuid AFTER INSERT ON studies WHEN new.uuid IS NULL BEGIN\n"
    "  UPDATE studies SET uuid = " FATTN_SQL_RANDOM_UUID " WHERE id = new.id;\n"
    "END;\n"
    "CREATE TRIGGER sim_runs_uuid AFTER INSERT ON sim_runs WHEN new.uuid IS NULL BEGIN\n"
    "  UPDATE sim_runs SET uuid = " FATTN_SQL_RANDOM_UUID " WHERE id = new.id;\n"
    "END;\n",
    /* v14: campaigns (fattn-tune campaign, campaign/campaign.h): a file of
     * shapes, each row a study per GPU model. A study run for a campaign's
     * row says so (studies.campaign_uuid, campaign_row), so that a run
     * again, another process or a merged database finds the row's study
     * on each GPU model. search_args: the arguments every row's study was
     * given besides its own. */
    "CREATE TABLE campaigns (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  uuid TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL,\n"
    "  path TEXT,\n"
    "  file_sha256 TEXT NOT NULL,\n"
    "  file_text TEXT NOT NULL,\n"
    "  search_args TEXT NOT NULL,\n"
    "  argv TEXT\n"
    ");\n"
    "CREATE UNIQUE INDEX campaigns_by_uuid ON campaigns (uuid);\n"
    "CREATE TABLE campaign_rows (\n"
    "  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),\n"
    "  row INTEGER NOT NULL,\n"
    "  line INTEGER NOT NULL,\n"
    "  name TEXT,\n"
    "  batch INTEGER NOT NULL,\n"
    "  heads INTEGER NOT NULL,\n"
    "  seqlen INTEGER NOT NULL,\n"
    "  head_dim INTEGER NOT NULL,\n"
    "  causal INTEGER NOT NULL,\n"
    "  budget TEXT,\n"
    "  trials INTEGER,\n"
    "  evaluator TEXT,\n"
    "  PRIMARY KEY (campaign_id, row)\n"
    ");\n"
    "ALTER TABLE studies ADD COLUMN campaign_uuid TEXT;\n"
    "ALTER TABLE studies ADD COLUMN campaign_row INTEGER;\n"
    "CREATE INDEX studies_by_campaign ON studies (campaign_uuid, campaign_row);\n",
    /* v15: a search over several GPUs of one model (search --devices,
     * tune/tune.h): the GPU each trial ran on (its UUID; NULL for one not
     * run, or run before); the reference configuration timed on every GPU
     * in rounds (gpu_checks), and the largest spread of a round with the
     * study (NULL: never measured); and the trials running, each removed
     * with its trial's commit: what a search killed mid-trial had running,
     * for --resume to propose again. */
    "ALTER TABLE trials ADD COLUMN gpu_uuid TEXT;\n"
    "ALTER TABLE studies ADD COLUMN gpu_spread_pct REAL;\n"
    "CREATE TABLE gpu_checks (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  study_id INTEGER NOT NULL REFERENCES studies(id),\n"
    "  round INTEGER NOT NULL,\n"
    "  after_trials INTEGER NOT NULL,\n"
    "  device INTEGER NOT NULL,\n"
    "  gpu_uuid TEXT,\n"
    "  config_key TEXT NOT NULL,\n"
    "  status TEXT NOT NULL,\n"
    "  median_us REAL,\n"
    "  created_at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX gpu_checks_by_study ON gpu_checks (study_id, round);\n"
    "CREATE TABLE trials_running (\n"
    "  study_id INTEGER NOT NULL REFERENCES studies(id),\n"
    "  config_key TEXT NOT NULL,\n"
    "  seq INTEGER NOT NULL,\n"
    "  gpu_uuid TEXT,\n"
    "  started_at TEXT NOT NULL,\n"
    "  PRIMARY KEY (study_id, config_key)\n"
    ");\n",
};

int fattn_schema_latest(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]) - 1;
}

const char *fattn_schema_migration(int v)
{
    return v >= 1 && v <= fattn_schema_latest() ? migrations[v] : NULL;
}

const char *fattn_schema_cjson_version(void)
{
    return cJSON_Version();
}
