/*
 * faults.c — fault switches in SANDBOX/sandbox.db.
 */
#include "faults.h"
#include "../base/util.h"

#include <string.h>

int
fault_name_known(const char *name, const char **kind)
{
	size_t n = strlen(FAULT_REFUSES);
	int refuses = strncmp(name, FAULT_REFUSES, n) == 0 &&
	    bakery_name_valid(name + n);
	if (kind)
		*kind = refuses ? name + n : NULL;
	return refuses || strcmp(name, FAULT_QUEUE_REFUSES) == 0;
}

int
fault_is_set(bakery_ctx *ctx, const char *sandbox, const char *name)
{
	sqlite3 *db;
	if (birth_open_sandbox(ctx, sandbox, 0, &db))
		return 0;
	sqlite3_stmt *st;
	int set = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM faults WHERE name = ?", -1,
		&st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		set = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return set;
}

static int
fault_write(bakery_ctx *ctx, const char *sandbox, const char *name,
    const char *sql)
{
	if (!fault_name_known(name, NULL))
		return bakery_fail(EX_USAGE, "unknown fault: '%s': %s", name,
		    "want refuses:KIND or " FAULT_QUEUE_REFUSES);
	sqlite3 *db;
	int rc = birth_open_sandbox(ctx, sandbox, 1, &db);
	if (rc)
		return rc;
	rc = db_run(db, "cannot write fault", 1, &sql, "ti", name,
	    bakery_now_ms());
	sqlite3_close(db);
	return rc;
}

int
fault_set(bakery_ctx *ctx, const char *sandbox, const char *name)
{
	return fault_write(ctx, sandbox, name,
	    "INSERT OR IGNORE INTO faults(name, set_at) VALUES (?1, ?2)");
}

int
fault_clear(bakery_ctx *ctx, const char *sandbox, const char *name)
{
	return fault_write(ctx, sandbox, name,
	    "DELETE FROM faults WHERE name = ?1");
}

int
fault_read(sqlite3 *db, jv *out)
{
	*out = jv_array();
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db,
	    "SELECT name, set_at FROM faults ORDER BY name", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "cannot read faults");
	while (sqlite3_step(st) == SQLITE_ROW) {
		char ts[32];
		bakery_format_time(sqlite3_column_int64(st, 1), ts, sizeof ts);
		jv f = jv_object();
		f = jv_object_set(f, jv_string("name"),
		    jv_string((const char *)sqlite3_column_text(st, 0)));
		f = jv_object_set(f, jv_string("set_at"), jv_string(ts));
		*out = jv_array_append(*out, f);
	}
	sqlite3_finalize(st);
	return 0;
}

int
fault_list(bakery_ctx *ctx, const char *sandbox, jv *out)
{
	*out = jv_array();
	sqlite3 *db;
	int rc = birth_open_sandbox(ctx, sandbox, 0, &db);
	if (rc == EX_NOINPUT)
		return 0;
	if (rc)
		return rc;
	jv_free(*out);
	rc = fault_read(db, out);
	sqlite3_close(db);
	return rc;
}
