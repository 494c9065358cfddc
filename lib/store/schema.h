/*
 * schema.h — a file's schema, moved forward by PRAGMA user_version.
 *
 * Promises: a file's version only goes up, each migration in the write
 * transaction that bumps it; a file newer than this bakery, or older than
 * any release wrote (schema_def.oldest), is refused (EX_CONFIG), never
 * written.
 */
#ifndef BAKERY_SCHEMA_H
#define BAKERY_SCHEMA_H

#include <sqlite3.h>

/* A file's schema: migrations[v] takes user_version v to v + 1. A file
 * of read_from or later is read by db_open_readonly as it is: the
 * migrations after read_from add only what the read-only tools do not
 * read. */
typedef struct schema_def {
	const char *name;
	const char *const *migrations;
	int count;
	int read_from;
	/* The oldest version a released bakery wrote (0.1.0 was the first
	 * release). Only the migrations from it on are kept: migrations[v]
	 * for 0 < v < oldest is NULL, and a file of such a version, made by
	 * a bakery before 0.1.0, is refused (EX_CONFIG), never written.
	 * read_from is oldest or later. */
	int oldest;
	/* The newest schema in one go, for a new file (version 0), so that
	 * it is not built by replaying every migration; NULL: replay them,
	 * from migrations[0] (then oldest is 1: every one is kept). A schema
	 * whose oldest is above 1 has one. tests/unit/schemas.c checks
	 * both, and that a file of every version a release wrote reaches
	 * through the kept migrations the schema create makes. */
	const char *create;
} schema_def;

/* A schema kept whole since its first version: its migrations replay
 * from migrations[0] (oldest 1, no create), and its version is the
 * number of its migrations, counted here rather than written twice. */
#define SCHEMA_REPLAYED(NAME, MIGRATIONS, READ_FROM)                     \
	{ .name = (NAME), .migrations = (MIGRATIONS),                   \
	  .count = (int)(sizeof(MIGRATIONS) / sizeof *(MIGRATIONS)),     \
	  .read_from = (READ_FROM), .oldest = 1 }

/* Brings db, the file at path, to schema->count. A file of version 0
 * gets its schema only when create (else EX_NOINPUT: a creation that
 * failed or is under way). keep_open: when the schema was written, the
 * write transaction is left open for the caller's first change. */
int schema_migrate(sqlite3 *db, const schema_def *schema, const char *path,
    int create, int keep_open);
/* Runs sql (NULL: nothing) and sets user_version to version, in the
 * caller's transaction. */
int schema_upgrade(sqlite3 *db, const char *sql, int version);
/* EX_CONFIG, naming path, when version is one no release wrote (from 1
 * to schema->oldest - 1: made by a bakery before 0.1.0); else 0. */
int schema_refuse_unreleased(const schema_def *schema, const char *path,
    int version);
/* PRAGMA user_version, 0 when it cannot be read (migrate says why). */
int schema_version(sqlite3 *db);

#endif
