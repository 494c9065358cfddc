/*
 * alarm.c — the alarm index in HOME/alarms.db.
 */
#include "alarm.h"
#include "util.h"

#include <stdlib.h>

static int
index_write(bakery_ctx *ctx, const char *sql, const char *sandbox,
    const char *address, int64_t fire_at)
{
	char *path = bakery_xasprintf("%s/alarms.db", ctx->home);
	sqlite3 *db;
	int rc = store_open(ctx, path, &store_alarms_schema, 1, &db);
	free(path);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, address, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, fire_at);
		src = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (src != SQLITE_DONE)
		rc = store_fail(db, src, "cannot write the alarm index");
	sqlite3_close(db);
	return rc;
}

int
alarm_index_add(bakery_ctx *ctx, const char *sandbox, const char *address,
    int64_t fire_at)
{
	return index_write(ctx,
	    "INSERT INTO alarms(sandbox, address, fire_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT DO UPDATE SET fire_at = min(fire_at, ?3)",
	    sandbox, address, fire_at);
}

int
alarm_index_remove(bakery_ctx *ctx, const char *sandbox, const char *address)
{
	return index_write(ctx,
	    "DELETE FROM alarms WHERE sandbox = ?1 AND address = ?2"
	    " AND ?3 IS NOT NULL", sandbox, address, 0);
}
