/*
 * schema.c — a file's schema version (PRAGMA user_version) and the
 * migrations that move it forward.
 */
#include "schema.h"
#include "sql.h"
#include "../base/util.h"

#include <stdlib.h>

int
schema_upgrade(sqlite3 *db, const char *sql, int version)
{
	char *bump = bakery_xasprintf("PRAGMA user_version = %d", version);
	int rc = sql ? db_exec(db, sql) : 0;
	if (!rc)
		rc = db_exec(db, bump);
	free(bump);
	return rc;
}

int
schema_refuse_unreleased(const schema_def *schema, const char *path,
    int version)
{
	if (version < 1 || version >= schema->oldest)
		return 0;
	return bakery_fail(EX_CONFIG, "cannot use '%s': schema version %d "
	    "was made by a bakery before 0.1.0, and no release migrates it "
	    "(the oldest released is %d); the file is left as it is", path,
	    version, schema->oldest);
}

/* keep_open: when the schema was written, the transaction is left open
 * for the caller's first change. */
int
schema_migrate(sqlite3 *db, const schema_def *schema, const char *path,
    int create, int keep_open)
{
	sqlite3_stmt *st;
	int version = 0;
	int src = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0), src = SQLITE_OK;
	sqlite3_finalize(st);
	if (src != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot read '%s'", path);
		int rc = db_fail(db, src, what);
		free(what);
		return rc;
	}
	if (version == schema->count)
		return 0;
	/* Only a program that makes the file gives it its schema: an empty
	 * file (a creation that failed, or one under way) is not one. */
	if (version == 0 && !create)
		return bakery_fail(EX_NOINPUT, "'%s' is empty, not a bakery "
		    "file yet", path);
	if (version > schema->count)
		return bakery_fail(EX_CONFIG,
		    "cannot use '%s': schema version %d is newer than this "
		    "bakery knows (%d)", path, version, schema->count);
	int rc = schema_refuse_unreleased(schema, path, version);
	if (rc)
		return rc;
	rc = db_begin(db);
	if (rc)
		return rc;
	/* Read again under the write lock: another process may have won.
	 * The version read is checked again: the migrations of one no
	 * release wrote are not there to run. */
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	rc = schema_refuse_unreleased(schema, path, version);
	int wrote = version < schema->count;
	if (version == 0 && schema->create) {
		rc = schema_upgrade(db, schema->create, schema->count);
		version = schema->count;
	}
	for (; !rc && version < schema->count; version++)
		rc = schema_upgrade(db, schema->migrations[version], version + 1);
	if (rc) {
		db_rollback(db);
		return rc;
	}
	return keep_open && wrote ? 0 : db_commit(db);
}

/* PRAGMA user_version, 0 when it cannot be read (migrate says why). */
int
schema_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int version = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return version;
}
