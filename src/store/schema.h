/*
 * schema.h - the database schema as a list of migrations.
 *
 * Migration v turns a database of version v-1 into version v; version 0 is
 * an empty file. A schema change is a new migration appended to the list in
 * schema.c, never an edit of an old one. docs/schema.md documents the tables.
 */
#ifndef FATTN_STORE_SCHEMA_H
#define FATTN_STORE_SCHEMA_H

/* The latest version. */
int fattn_schema_latest(void);

/* The SQL of migration v (1 .. latest). */
const char *fattn_schema_migration(int v);

/* The cJSON library version, recorded in studies. */
const char *fattn_schema_cjson_version(void);

#endif
