/*
 * sql.h - statement helpers shared by the store's own files (store.c,
 * confirmations.c, sim_checks.c, reads.c); not for the rest of the program. Each reports its
 * failure through fattn_store_fail().
 */
#ifndef FATTN_STORE_SQL_H
#define FATTN_STORE_SQL_H

#include <stddef.h>

#include "store/store.h"

/* Prepares sql on the store's connection. */
int fattn_store_prepare(fattn_store *s, const char *sql, sqlite3_stmt **st);

/* Steps a statement that returns no row, then finalizes it; `what` names
 * the failure. */
int fattn_store_step_done(fattn_store *s, sqlite3_stmt *st, const char *what);

/* Binds text, or NULL when v is NULL. */
void fattn_store_bind_text(sqlite3_stmt *st, int i, const char *v);

/* Binds a shape's batch, heads, seqlen, head_dim and causal to ?i .. ?i+4
 * (the column order of studies, sim_checks and campaign_rows). */
void fattn_store_bind_shape(sqlite3_stmt *st, int i, const fattn_shape *shape);

/* Runs `sql`, an UPDATE binding ?1 = status, ?2 = the time now, ?3 = id
 * (the end of a study or a simulator run). */
int fattn_store_set_ended(fattn_store *s, const char *sql, long long id, const char *status, const char *what);

/* Runs `sql`, an INSERT binding ?1 = owner, ?2 = index, ?3 = microseconds,
 * for each of us[0..n) (the raw samples of a trial or a confirmation). */
int fattn_store_insert_samples(fattn_store *s, const char *sql, long long owner, const double *us, size_t n,
                               const char *what);

/* Adds the SQL functions every connection has: fattn_what(REASON) and
 * fattn_fix(REASON [, FAMILY]), a gate code's text and fix,
 * fattn_uuid_of(TEXT), a text's name-based UUID, and fattn_gpu_model(DEVICE),
 * the GPU model a recorded device names (reads.c). */
void fattn_store_add_functions(sqlite3 *db);

#endif
