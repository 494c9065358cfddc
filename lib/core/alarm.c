/*
 * alarm.c — the alarm index in HOME/alarms.db.
 */
#include "alarm.h"
#include "../base/util.h"
#include "../store/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The boot whose entries the index holds all of (alarm_index_boot): no
 * row, or another boot, and entries may have been lost. */
#define BOOT \
	"CREATE TABLE boot(id INTEGER PRIMARY KEY CHECK (id = 1)," \
	"  boot_id TEXT NOT NULL);"

/* Version 2, the one 0.1.0 wrote, is the oldest a release wrote: the
 * steps to it are not kept (schema.h). */
static const char *const alarms_migrations[3] = {
	[2] = BOOT,
};
const schema_def alarms_schema = {
	.name = "alarms", .migrations = alarms_migrations,
	.count = 3, .read_from = 2, .oldest = 2,
	/* An entry says "this object may have an alarm due at fire_at". The
	 * object's own alarm row is the truth; a stale entry costs one open.
	 * armed_at is when it was written: one written later than now was
	 * written before the wall clock went back (alarm_due). */
	.create =
	    "CREATE TABLE alarms(sandbox TEXT NOT NULL, address TEXT NOT NULL,"
	    "  fire_at INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 1,"
	    "  armed_at INTEGER, PRIMARY KEY (sandbox, address));"
	    "CREATE INDEX alarms_due ON alarms(fire_at);"
	    BOOT,
};
static int alarm_entry_fires(sqlite3 *db, const char *sandbox,
    const char *address, int64_t fire_at);

/* The boot this machine is in: BAKERY_BOOT_ID (checked by ctx_init; a
 * test's power cut is a new boot), else the kernel's; "" when unknown. */
static const char *
boot_id(void)
{
	static char id[65];
	static int done;
	if (done)
		return id;
	done = 1;
	const char *env = getenv("BAKERY_BOOT_ID");
	if (env && *env) {
		snprintf(id, sizeof id, "%s", env);
		return id;
	}
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f && fgets(id, sizeof id, f))
		id[strcspn(id, "\n")] = '\0';
	else
		id[0] = '\0';
	if (f)
		fclose(f);
	return id;
}

/*
 * The index stays open for the life of the context. Its commits are at
 * synchronous=NORMAL (no sync) when the boot is known: a power loss may
 * take the last ones, and is a new boot, which alarm_index_boot sees.
 * Written, the boot row says which boot's entries are all there: a
 * writer adds it when there is none, in the WAL before its entry, so
 * an entry that outlives a power loss comes with the boot row it was
 * written under. Without a boot id, every commit is synced.
 */
static int
index_db(bakery_ctx *ctx, sqlite3 **db)
{
	if (!ctx->alarms) {
		char *path = bakery_xasprintf("%s/alarms.db", ctx->home);
		int rc = birth_open(ctx, path, &alarms_schema, &ctx->alarms);
		free(path);
		if (rc)
			return rc;
		/* Its commits unsynced (its entries are found again after
		 * a power cut: alarm_index_boot); in a replicated home its
		 * log synced before its records are sent. */
		if (*boot_id()) {
			db_relaxed(ctx, ctx->alarms, 1);
			capture_sync_late(ctx->alarms);
		}
	}
	*db = ctx->alarms;
	return 0;
}

/* Runs sql on the index bound to (?1 the boot id): an SQLite code. */
static int
boot_exec(sqlite3 *db, const char *sql, sqlite3_stmt **out)
{
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return src;
	sqlite3_bind_text(st, 1, boot_id(), -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	if (out && src == SQLITE_ROW)
		*out = st;
	else
		sqlite3_finalize(st);
	return src;
}

/* Writes sql on the index bound to (?1 the boot id): 0 or the failure. */
static int
boot_write(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot write the alarm index");
	sqlite3_bind_text(st, 1, boot_id(), -1, SQLITE_STATIC);
	int rc = db_write_step(db, st, "cannot write the alarm index");
	sqlite3_finalize(st);
	return rc;
}

int
alarm_index_boot(bakery_ctx *ctx, int *lost)
{
	*lost = 0;
	sqlite3 *db;
	int rc = index_db(ctx, &db);
	if (rc || !*boot_id())
		return rc;
	sqlite3_stmt *st = NULL;
	int src = boot_exec(db, "SELECT boot_id = ?1 FROM boot WHERE id = 1",
	    &st);
	if (src == SQLITE_ROW)
		*lost = !sqlite3_column_int(st, 0);
	else if (src == SQLITE_DONE)
		*lost = 1;
	else
		return db_fail(db, src, "cannot read the alarm index");
	sqlite3_finalize(st);
	return 0;
}

int
alarm_index_reader(bakery_ctx *ctx, sqlite3 **out)
{
	*out = NULL;
	char *path = bakery_xasprintf("%s/alarms.db", ctx->home);
	sqlite3 *db;
	int rc = db_open_readonly(ctx, path, &alarms_schema, &db);
	free(path);
	if (rc == EX_NOINPUT)
		return 0; /* not made: the next alarm run restores it */
	if (rc)
		return rc;
	sqlite3_stmt *st = NULL;
	int src = SQLITE_ROW, current = 1;
	if (*boot_id()) {
		src = boot_exec(db, "SELECT boot_id = ?1 FROM boot WHERE id = 1",
		    &st);
		current = src == SQLITE_ROW && sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	if (src != SQLITE_ROW && src != SQLITE_DONE) {
		rc = db_fail(db, src, "cannot read the alarm index");
		sqlite3_close(db);
		return rc;
	}
	if (!current)
		sqlite3_close(db);
	else
		*out = db;
	return 0;
}

int
alarm_index_has(sqlite3 *db, const char *sandbox, const char *address)
{
	if (!db)
		return 1;
	return alarm_entry_fires(db, sandbox, address, INT64_MAX);
}

int
alarm_index_booted(bakery_ctx *ctx)
{
	sqlite3 *db;
	int rc = index_db(ctx, &db);
	if (rc || !*boot_id())
		return rc;
	return boot_write(db, "INSERT INTO boot(id, boot_id) VALUES (1, ?1)"
	    " ON CONFLICT DO UPDATE SET boot_id = ?1");
}

/* Runs sql bound to (?1 sandbox, ?2 address, ?3 a, ?4 b, ?5 now); a
 * statement may leave any of them unused (binding those fails
 * harmlessly). */
static int
index_write(bakery_ctx *ctx, const char *sql, const char *sandbox,
    const char *address, int64_t a, int64_t b)
{
	sqlite3 *db;
	int rc = index_db(ctx, &db);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, address, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, a);
		sqlite3_bind_int64(st, 4, b);
		sqlite3_bind_int64(st, 5, bakery_now_ms());
		rc = db_write_step(db, st, "cannot write the alarm index");
		sqlite3_finalize(st);
		return rc;
	}
	return db_fail(db, src, "cannot write the alarm index");
}

int
alarm_index_add(bakery_ctx *ctx, const char *sandbox, const char *address,
    int64_t fire_at)
{
	static int booted;
	sqlite3 *db;
	if (!booted && *boot_id() && !index_db(ctx, &db)) {
		int rc = boot_write(db, "INSERT OR IGNORE INTO boot(id, "
		    "boot_id) VALUES (1, ?1)");
		if (rc)
			return rc;
		booted = 1;
	}
	return index_write(ctx,
	    "INSERT INTO alarms(sandbox, address, fire_at, armed_at)"
	    " VALUES (?1, ?2, ?3, ?5) ON CONFLICT DO UPDATE SET fire_at = ?3,"
	    " armed_at = ?5, gen = gen + 1"
	    "", sandbox, address, fire_at, 0);
}

int
alarm_index_restore(bakery_ctx *ctx, const char *sandbox,
    const char *address, int64_t fire_at)
{
	return index_write(ctx,
	    "INSERT INTO alarms(sandbox, address, fire_at, armed_at)"
	    " VALUES (?1, ?2, ?3, ?5) ON CONFLICT DO UPDATE SET"
	    " fire_at = min(fire_at, ?3), gen = gen + 1",
	    sandbox, address, fire_at, 0);
}

int
alarm_index_covers(bakery_ctx *ctx, const char *sandbox, const char *address,
    int64_t fire_at)
{
	sqlite3 *db;
	return !index_db(ctx, &db) &&
	    alarm_entry_fires(db, sandbox, address, fire_at);
}

/* Whether db's index has an entry for the object firing at or before
 * fire_at. */
static int
alarm_entry_fires(sqlite3 *db, const char *sandbox, const char *address,
    int64_t fire_at)
{
	sqlite3_stmt *st;
	int covered = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM alarms WHERE sandbox = ?1"
		" AND address = ?2 AND fire_at <= ?3", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, address, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, fire_at);
		covered = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return covered;
}

int
alarm_index_remove(bakery_ctx *ctx, const alarm_entry *e)
{
	return index_write(ctx,
	    "DELETE FROM alarms WHERE sandbox = ?1 AND address = ?2"
	    " AND gen = ?3", e->sandbox, e->address, e->gen, 0);
}

int
alarm_index_move(bakery_ctx *ctx, const alarm_entry *e, int64_t fire_at)
{
	return index_write(ctx,
	    "UPDATE alarms SET fire_at = ?4, armed_at = ?5 WHERE sandbox = ?1"
	    " AND address = ?2 AND gen = ?3", e->sandbox, e->address, e->gen,
	    fire_at);
}

int
alarm_index_remove_sandbox(bakery_ctx *ctx, const char *sandbox)
{
	return index_write(ctx,
	    "DELETE FROM alarms WHERE sandbox = ?1",
	    sandbox, "", 0, 0);
}

int
alarm_due(const bakery_ctx *ctx, const alarm_entry *e, int64_t fire_at,
    int64_t now)
{
	return fire_at <= now || (e->armed_at > now &&
	    fire_at > now + (int64_t)ctx->alarm_delay_s * 1000);
}

int
alarm_day_over(const char *day, int64_t now)
{
	char today[11];
	bakery_format_day(now, today, sizeof today);
	return strcmp(day ? day : "", today) < 0;
}

/* Reads an entry's row (sandbox, address, fire_at, gen, armed_at). */
static void
entry_of(sqlite3_stmt *st, alarm_entry *e)
{
	snprintf(e->sandbox, sizeof e->sandbox, "%s",
	    (const char *)sqlite3_column_text(st, 0));
	snprintf(e->address, sizeof e->address, "%s",
	    (const char *)sqlite3_column_text(st, 1));
	e->fire_at = sqlite3_column_int64(st, 2);
	e->gen = sqlite3_column_int64(st, 3);
	e->armed_at = sqlite3_column_int64(st, 4);
}

int
alarm_index_due(bakery_ctx *ctx, int64_t now, const alarm_entry *after,
    size_t max, alarm_entry *out, size_t *n)
{
	*n = 0;
	sqlite3 *db;
	int rc = index_db(ctx, &db);
	if (rc)
		return rc;
	/* The key (fire_at, sandbox, address) orders every entry: a page
	 * starts past the last one read, whatever became of it, so an entry
	 * left where it was (one that could not be fired) hides none after
	 * it, and no entry is read twice for where it was. */
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db,
	    "SELECT sandbox, address, fire_at, gen, armed_at FROM alarms"
	    " WHERE (fire_at <= ?1 OR (fire_at > ?3 AND armed_at > ?1))"
	    " AND (?4 IS NULL OR (fire_at, sandbox, address) > (?4, ?5, ?6))"
	    " ORDER BY fire_at, sandbox, address LIMIT ?2", -1, &st,
	    NULL); /* alarm_due */
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot read the alarm index");
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int64(st, 3, now + (int64_t)ctx->alarm_delay_s * 1000);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	if (after) {
		sqlite3_bind_int64(st, 4, after->fire_at);
		sqlite3_bind_text(st, 5, after->sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, after->address, -1, SQLITE_STATIC);
	}
	while (*n < max && (src = sqlite3_step(st)) == SQLITE_ROW)
		entry_of(st, &out[(*n)++]);
	if (src == SQLITE_ROW)
		src = SQLITE_DONE;
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return db_fail(db, src, "cannot read the alarm index");
	return 0;
}

int
alarm_index_next(bakery_ctx *ctx, int64_t after, int64_t *fire_at)
{
	*fire_at = 0;
	sqlite3 *db;
	int rc = index_db(ctx, &db);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, "SELECT min(fire_at) FROM alarms"
	    " WHERE fire_at > ?1", -1, &st, NULL);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot read the alarm index");
	sqlite3_bind_int64(st, 1, after);
	if (sqlite3_step(st) == SQLITE_ROW)
		*fire_at = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int
alarm_index_overdue(sqlite3 *db, const char *sandbox, int64_t before,
    long *count, alarm_entry *oldest)
{
	*count = 0;
	memset(oldest, 0, sizeof *oldest);
	if (!db)
		return 0;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, "SELECT sandbox, address, fire_at, gen,"
	    " armed_at, count(*) OVER () FROM alarms WHERE sandbox = ?1"
	    " AND fire_at < ?2 ORDER BY fire_at, address LIMIT 1", -1, &st,
	    NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, before);
		if ((src = sqlite3_step(st)) == SQLITE_ROW) {
			entry_of(st, oldest);
			*count = (long)sqlite3_column_int64(st, 5);
			src = SQLITE_DONE;
		}
	}
	sqlite3_finalize(st);
	return src == SQLITE_DONE ? 0
	    : db_fail(db, src, "cannot read the alarm index");
}
