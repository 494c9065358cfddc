/*
 * wipe.c — reset one sandbox or every one, resumably.
 */
#define _GNU_SOURCE
#include "wipe.h"
#include "../core/alarm.h"
#include "../store/capture.h"
#include "../core/object.h"
#include "../core/progress.h"
#include "../queue/queue.h"
#include "../orders/refunds.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const wipe_migrations[] = {
	"CREATE TABLE runs(id INTEGER PRIMARY KEY,"
	"  started_at INTEGER NOT NULL, finished_at INTEGER);"
	"CREATE TABLE steps(run INTEGER NOT NULL, sandbox TEXT NOT NULL,"
	"  done_at INTEGER, PRIMARY KEY (run, sandbox));",
	/* A run's scope: the one sandbox it wipes, NULL for every one (the
	 * runs before scopes were all of every sandbox). */
	"ALTER TABLE runs ADD COLUMN sandbox TEXT;",
};
const schema_def wipe_schema = SCHEMA_REPLAYED("wipe", wipe_migrations, 1);

/* Runs sql bound to (?1 a, ?2 b, ?3 c); unused parameters are ignored. */
static int
exec_bound(sqlite3 *db, const char *sql, int64_t a, const char *b, int64_t c)
{
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, a);
		sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, c);
		int rc = db_write_step(db, st, "cannot record wipe progress");
		sqlite3_finalize(st);
		return rc;
	}
	return db_fail(db, src, "cannot record wipe progress");
}

/* Whether a run of this scope started on the UTC day of now or a later
 * one: a wipe of one sandbox is not the day's wipe of every sandbox. */
static int
started_today(sqlite3 *db, const char *scope, int64_t now)
{
	sqlite3_stmt *st;
	int64_t last = 0;
	if (sqlite3_prepare_v2(db, "SELECT max(started_at) FROM runs"
		" WHERE sandbox IS ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, scope, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			last = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	char day[11], today[11];
	bakery_format_day(last, day, sizeof day);
	bakery_format_day(now, today, sizeof today);
	return last && strcmp(day, today) >= 0;
}

/*
 * The unfinished runs a request may finish, oldest first: with --all,
 * every one; with -s S, those of S alone. A run of every sandbox killed
 * midway is not finished by a wipe of one: that would wipe more than it
 * was asked. *exact says whether one of them has the request's scope:
 * then it is the wipe asked for, begun earlier, and no new run starts.
 * A wipe.db of the first schema (a dry run reads it as it is) has no
 * scopes: its runs were all of every sandbox.
 */
static jv
unfinished_runs(sqlite3 *db, const char *scope, int *exact)
{
	jv runs = jv_array();
	sqlite3_stmt *st;
	*exact = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, sandbox FROM runs WHERE"
		" finished_at IS NULL ORDER BY id", -1, &st, NULL) != SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT id, NULL FROM runs WHERE"
		" finished_at IS NULL ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return runs;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *s = (const char *)sqlite3_column_text(st, 1);
		if (scope && (!s || strcmp(s, scope) != 0))
			continue;
		*exact |= scope ? 1 : !s;
		runs = jv_array_append(runs,
		    jv_number((double)sqlite3_column_int64(st, 0)));
	}
	sqlite3_finalize(st);
	return runs;
}

/* The sandboxes a new run of this scope would wipe: the folders there
 * are, or the one named if it is there. */
static jv
scope_sandboxes(bakery_ctx *ctx, const char *scope)
{
	jv all = home_sandbox_names(ctx);
	if (!scope)
		return all;
	jv one = jv_array();
	jv_array_foreach(all, i, name) {
		if (strcmp(jv_string_value(name), scope) == 0)
			one = jv_array_append(one, jv_copy(name));
		jv_free(name);
	}
	jv_free(all);
	return one;
}

/* Whether the request starts a new run besides finishing *runs. */
static int
starts_new(sqlite3 *db, const wipe_request *req, int exact)
{
	return req->mode != WIPE_RESUME && !exact &&
	    !(req->mode == WIPE_DAILY && db &&
		started_today(db, req->sandbox, bakery_now_ms()));
}

/* The runs to finish: the unfinished ones in the request's scope, then
 * a new one as the mode allows, listing its sandboxes; in one
 * transaction, so that two wipes do not both start one. */
static int
start(bakery_ctx *ctx, sqlite3 *db, const wipe_request *req, jv *runs)
{
	int rc = db_begin(db), exact;
	*runs = jv_array();
	if (rc)
		return rc;
	jv_free(*runs);
	*runs = unfinished_runs(db, req->sandbox, &exact);
	if (!starts_new(db, req, exact)) {
		db_rollback(db);
		return 0;
	}
	if ((rc = exec_bound(db, "INSERT INTO runs(started_at, sandbox)"
		" VALUES (?1, ?2)", bakery_now_ms(), req->sandbox, 0)))
		goto fail;
	int64_t run = sqlite3_last_insert_rowid(db);
	jv names = scope_sandboxes(ctx, req->sandbox);
	jv_array_foreach(names, i, name) {
		if (!rc)
			rc = exec_bound(db, "INSERT INTO steps(run, sandbox)"
			    " VALUES (?1, ?2)", run, jv_string_value(name), 0);
		jv_free(name);
	}
	jv_free(names);
	if (rc || (rc = db_commit(db)))
		goto fail;
	*runs = jv_array_append(*runs, jv_number((double)run));
	return 0;
fail:
	db_rollback(db);
	return rc;
}

/* Writes the floor, synced: it must outlive the folder's removal. */
static int
set_floor(bakery_ctx *ctx, const char *sandbox, int64_t ms)
{
	char *path = home_sandbox_lock_path(ctx, sandbox);
	char buf[24];
	int len = snprintf(buf, sizeof buf, "%020lld\n", (long long)ms);
	int rc = 0, fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, buf, (size_t)len, 0) != len || fsync(fd) != 0)
		rc = bakery_fail(EX_IOERR, "cannot write '%s': %s", path,
		    strerror(errno));
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

/* The fence: a time later than any an object stamped before the sandbox's
 * lock was taken, its clock floor included. The clock is read in
 * milliseconds, so it waits for the next one (a pinned BAKERY_NOW never
 * moves: then it is that time). The wait is a few hundred microseconds,
 * on the wall clock on purpose: it is the wall clock's reading that must
 * move on. */
static int64_t
fence_time(int64_t floor)
{
	const struct timespec pause = { 0, 200000 };
	int64_t locked_at = bakery_now_ms(), now = locked_at;
	for (int i = 0; i < 20 && now <= locked_at; i++) {
		nanosleep(&pause, NULL);
		now = bakery_now_ms();
	}
	return now > floor ? now : floor + 1;
}

static int
wipe_sandbox(bakery_ctx *ctx, int64_t run, const char *sandbox,
    int64_t *wiped_at)
{
	/* Held from the fence to the rename: no object of the sandbox is
	 * open meanwhile. An object that was open recorded its events
	 * before the fence, and the queue and the subscribers drop them;
	 * one opened after is in the new folder, and its events, after the
	 * fence, go on. Without it, an order placed between the two was
	 * moved aside with the folder while its events, after the fence,
	 * reached the kitchen and the schedule. */
	int lock, rc = home_lock_sandbox(ctx, sandbox, 1, 1, &lock);
	if (rc)
		return rc;
	bakery_queue *q;
	*wiped_at = fence_time(home_lock_floor(lock));
	/* A payment kept but not counted outlives its sandbox: it is owed
	 * back until an operator marks it refunded. */
	rc = refunds_keep_sandbox(ctx, sandbox, *wiped_at);
	if (!rc)
		rc = set_floor(ctx, sandbox, *wiped_at);
	if (!rc)
		rc = queue_get(ctx, &q);
	if (!rc)
		rc = queue_wipe_sandbox(q, sandbox, *wiped_at);
	if (!rc)
		rc = alarm_index_remove_sandbox(ctx, sandbox);
	if (rc) {
		home_unlock_sandbox(lock);
		return rc;
	}
	bakery_crash_point("wipe.midway");
	/* Renamed aside first, so that nobody opens a half-removed object;
	 * a resumed run removes what an earlier attempt renamed. */
	char *live = home_sandbox_dir(ctx, sandbox);
	char *aside = bakery_xasprintf("%s/.wipe-%lld-%s", ctx->home,
	    (long long)run, sandbox);
	/* A replicated home's standby removes it too (capture.h). */
	rc = capture_removal(ctx, live, run);
	if (!rc && rename(live, aside) != 0 && errno != ENOENT)
		rc = bakery_fail(EX_IOERR, "cannot move '%s' aside: %s", live,
		    strerror(errno));
	home_unlock_sandbox(lock);
	if (!rc)
		rc = home_remove_tree(aside);
	free(live);
	free(aside);
	return rc;
}

/* The sandboxes a run has still to wipe, sorted. */
static jv
run_todo(sqlite3 *db, int64_t run)
{
	jv todo = jv_array();
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT sandbox FROM steps WHERE run = ?1"
		" AND done_at IS NULL ORDER BY sandbox", -1, &st, NULL) != SQLITE_OK)
		return todo;
	sqlite3_bind_int64(st, 1, run);
	while (sqlite3_step(st) == SQLITE_ROW)
		todo = jv_array_append(todo,
		    jv_string((const char *)sqlite3_column_text(st, 0)));
	sqlite3_finalize(st);
	return todo;
}

static void
report_line(wipe_report_fn report, void *arg, const char *sandbox,
    jv run, const char *key, jv value)
{
	jv line = jv_object();
	line = jv_object_set(line, jv_string("sandbox"), jv_string(sandbox));
	line = jv_object_set(line, jv_string("run"), run);
	line = jv_object_set(line, jv_string(key), value);
	report(arg, line);
}

/* Wipes what is left of one run, sandbox by sandbox, then marks it done. */
static int
finish_run(bakery_ctx *ctx, sqlite3 *db, int64_t run, wipe_report_fn report,
    void *arg)
{
	jv todo = run_todo(db, run);
	bakery_progress progress;
	progress_start(&progress, "wipe", (long)jv_array_length(jv_copy(todo)));
	int rc = 0;
	jv_array_foreach(todo, i, name) {
		const char *sandbox = jv_string_value(name);
		int64_t at = 0;
		if (!rc && !(rc = wipe_sandbox(ctx, run, sandbox, &at)))
			rc = exec_bound(db, "UPDATE steps SET done_at = ?1 WHERE"
			    " sandbox = ?2 AND run = ?3", at, sandbox, run);
		if (!rc) {
			char ts[32];
			bakery_format_time(at, ts, sizeof ts);
			report_line(report, arg, sandbox, jv_number((double)run),
			    "wiped_at", jv_string(ts));
			progress_step(&progress);
		}
		jv_free(name);
	}
	progress_end(&progress);
	jv_free(todo);
	if (!rc)
		rc = exec_bound(db, "UPDATE runs SET finished_at = ?1 WHERE"
		    " id = ?3", bakery_now_ms(), NULL, run);
	return rc;
}

/* The objects of a sandbox the wipe would remove: its listed files that
 * are files (a symlink or a FIFO named like one is no object; the wipe
 * removes the name, never what it links to). */
static int
count_objects(bakery_ctx *ctx, const char *sandbox)
{
	jv objects;
	int n = 0;
	if (object_list(ctx, sandbox, &objects))
		return 0;
	jv_array_foreach(objects, i, address) {
		char *path = home_object_path(ctx, sandbox,
		    jv_string_value(address));
		struct stat st;
		n += lstat(path, &st) == 0 && S_ISREG(st.st_mode);
		free(path);
		jv_free(address);
	}
	jv_free(objects);
	return n;
}

static void
report_dry(bakery_ctx *ctx, jv names, jv run, wipe_report_fn report,
    void *arg)
{
	jv_array_foreach(names, i, name) {
		report_line(report, arg, jv_string_value(name), jv_copy(run),
		    "objects", jv_number(count_objects(ctx,
			jv_string_value(name))));
		jv_free(name);
	}
	jv_free(names);
	jv_free(run);
}

/* What a wipe would do, said and not done: wipe.db is read as it is (not
 * created, not migrated), and nothing else is opened for writing. */
static int
dry_run(bakery_ctx *ctx, const wipe_request *req, wipe_report_fn report,
    void *arg)
{
	char *path = bakery_xasprintf("%s/wipe.db", ctx->home);
	sqlite3 *db = NULL;
	int rc = db_open_readonly(ctx, path, &wipe_schema, &db), exact = 0;
	free(path);
	if (rc && rc != EX_NOINPUT)
		return rc;
	jv runs = db ? unfinished_runs(db, req->sandbox, &exact) : jv_array();
	jv_array_foreach(runs, i, run) {
		report_dry(ctx, run_todo(db, (int64_t)jv_number_value(run)),
		    run, report, arg);
	}
	jv_free(runs);
	if (starts_new(db, req, exact))
		report_dry(ctx, scope_sandboxes(ctx, req->sandbox), jv_null(),
		    report, arg);
	if (db)
		sqlite3_close(db);
	return 0;
}

int
wipe_run(bakery_ctx *ctx, const wipe_request *req, wipe_report_fn report,
    void *arg, int *ran)
{
	*ran = 0;
	if (req->dry_run)
		return dry_run(ctx, req, report, arg);
	char *path = bakery_xasprintf("%s/wipe.db", ctx->home);
	sqlite3 *db;
	int rc = birth_open(ctx, path, &wipe_schema, &db);
	free(path);
	if (rc)
		return rc;
	jv runs;
	rc = start(ctx, db, req, &runs);
	*ran = !rc && jv_array_length(jv_copy(runs)) > 0;
	jv_array_foreach(runs, i, run) {
		if (!rc)
			rc = finish_run(ctx, db, (int64_t)jv_number_value(run),
			    report, arg);
		jv_free(run);
	}
	jv_free(runs);
	sqlite3_close(db);
	return rc;
}
