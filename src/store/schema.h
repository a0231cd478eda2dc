/*
 * schema.h - the database schema as a list of migrations.
 *
 * Migration v turns a database of version v-1 into version v; version 0 is
 * an empty file. A schema change is a new migration appended to the list in
 * schema.c, never an edit of an old one. docs/schema.md documents the tables.
 */
#ifndef FATTN_STORE_SCHEMA_H
#define FATTN_STORE_SCHEMA_H

/* The identity (a UUID) schema version 13 gives a study, or a simulator
 * run, recorded before it: derived from what the row holds (its id, start
 * time, command line, shape, arch, seed, space and kernel hashes, GPU), so
 * that two copies of one older database give their studies the same
 * identities (fattn-tune merge copies such a study once). Rows recorded
 * since have a random one. SQL over the columns of studies, of sim_runs. */
#define FATTN_SQL_STUDY_UUID_OF                                                                                        \
    "fattn_uuid_of(json_array('study', id, created_at, command, argv, arch, batch, heads, seqlen, head_dim, causal, "  \
    "seed, space_hash, kernel_hash, device))"
#define FATTN_SQL_SIM_RUN_UUID_OF                                                                                      \
    "fattn_uuid_of(json_array('sim_run', id, created_at, command, mode, kernel_hash, space_hash, arch, seed))"

/* A random (version 4) UUID as SQL, e.g. 0b7c5e1a-3f2d-4c8e-9a41-6d2f0e7b9c13. */
#define FATTN_SQL_RANDOM_UUID                                                                                          \
    "(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || "                                       \
    "substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + abs(random() % 4), 1) || "                      \
    "substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))"

/* The latest version. */
int fattn_schema_latest(void);

/* The SQL of migration v (1 .. latest). */
const char *fattn_schema_migration(int v);

/* The cJSON library version, recorded in studies. */
const char *fattn_schema_cjson_version(void);

#endif
