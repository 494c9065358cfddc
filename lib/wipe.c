/*
 * wipe.c — reset every sandbox, resumably.
 */
#define _GNU_SOURCE
#include "wipe.h"
#include "alarm.h"
#include "progress.h"
#include "queue.h"
#include "refunds.h"
#include "util.h"

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
};
static const store_schema wipe_schema = {
	"wipe", wipe_migrations, 1, 1, NULL
};

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
		src = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	return src == SQLITE_DONE || src == SQLITE_ROW ? 0
	    : store_fail(db, src, "cannot record wipe progress");
}

/* Whether a run started on the UTC day of now or a later one. */
static int
started_today(sqlite3 *db, int64_t now)
{
	sqlite3_stmt *st;
	int64_t last = 0;
	if (sqlite3_prepare_v2(db, "SELECT max(started_at) FROM runs", -1, &st,
		NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			last = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	char day[11], today[11];
	bakery_format_day(last, day, sizeof day);
	bakery_format_day(now, today, sizeof today);
	return last && strcmp(day, today) >= 0;
}

/* The unfinished run, or a new one listing every sandbox folder. */
static int
start(bakery_ctx *ctx, sqlite3 *db, enum wipe_mode mode, int64_t *run)
{
	int rc = store_begin(db);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	*run = 0;
	if (sqlite3_prepare_v2(db, "SELECT id FROM runs WHERE finished_at IS NULL"
		" ORDER BY id LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			*run = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	int64_t now = bakery_now_ms();
	if (*run || mode == WIPE_RESUME ||
	    (mode == WIPE_DAILY && started_today(db, now))) {
		store_rollback(db);
		return 0;
	}
	if ((rc = exec_bound(db, "INSERT INTO runs(started_at) VALUES (?1)",
		 now, NULL, 0)))
		goto fail;
	*run = sqlite3_last_insert_rowid(db);
	DIR *d = opendir(ctx->sandboxes);
	struct dirent *e;
	while (d && !rc && (e = readdir(d))) {
		struct stat sb;
		char *path = bakery_xasprintf("%s/%s", ctx->sandboxes, e->d_name);
		int dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
		free(path);
		if (dir && bakery_name_valid(e->d_name))
			rc = exec_bound(db, "INSERT INTO steps(run, sandbox)"
			    " VALUES (?1, ?2)", *run, e->d_name, 0);
	}
	if (d)
		closedir(d);
	if (rc)
		goto fail;
	return store_commit(db);
fail:
	store_rollback(db);
	return rc;
}

/* Writes the floor, synced: it must outlive the folder's removal. */
static int
set_floor(bakery_ctx *ctx, const char *sandbox, int64_t ms)
{
	char *path = store_sandbox_lock_path(ctx, sandbox);
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
	int lock, rc = store_lock_sandbox(ctx, sandbox, 1, 1, &lock);
	if (rc)
		return rc;
	bakery_queue *q;
	*wiped_at = fence_time(store_lock_floor(lock));
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
		store_unlock_sandbox(lock);
		return rc;
	}
	bakery_crash_point("wipe.midway");
	/* Renamed aside first, so that nobody opens a half-removed object;
	 * a resumed run removes what an earlier attempt renamed. */
	char *live = store_sandbox_dir(ctx, sandbox);
	char *aside = bakery_xasprintf("%s/.wipe-%lld-%s", ctx->home,
	    (long long)run, sandbox);
	if (rename(live, aside) != 0 && errno != ENOENT)
		rc = bakery_fail(EX_IOERR, "cannot move '%s' aside: %s", live,
		    strerror(errno));
	store_unlock_sandbox(lock);
	if (!rc)
		rc = store_remove_tree(aside);
	free(live);
	free(aside);
	return rc;
}

int
wipe_run(bakery_ctx *ctx, enum wipe_mode mode, wipe_report_fn report,
    void *arg, int *ran)
{
	*ran = 0;
	char *path = bakery_xasprintf("%s/wipe.db", ctx->home);
	sqlite3 *db;
	int rc = store_open(ctx, path, &wipe_schema, 1, &db);
	free(path);
	if (rc)
		return rc;
	int64_t run;
	if ((rc = start(ctx, db, mode, &run)) || !run) {
		sqlite3_close(db);
		return rc;
	}
	*ran = 1;
	sqlite3_stmt *st;
	char **todo = NULL;
	size_t n = 0;
	if (sqlite3_prepare_v2(db, "SELECT sandbox FROM steps WHERE run = ?1"
		" AND done_at IS NULL ORDER BY sandbox", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		while (sqlite3_step(st) == SQLITE_ROW) {
			todo = bakery_xrealloc(todo, (n + 1) * sizeof *todo);
			todo[n++] = bakery_xstrdup(
			    (const char *)sqlite3_column_text(st, 0));
		}
		sqlite3_finalize(st);
	}
	bakery_progress progress;
	progress_start(&progress, "wipe", (long)n);
	for (size_t i = 0; i < n && !rc; i++) {
		int64_t at;
		if ((rc = wipe_sandbox(ctx, run, todo[i], &at)))
			break;
		rc = exec_bound(db, "UPDATE steps SET done_at = ?1 WHERE"
		    " sandbox = ?2 AND run = ?3", at, todo[i], run);
		if (rc)
			break;
		char ts[32];
		bakery_format_time(at, ts, sizeof ts);
		jv line = jv_object();
		line = jv_object_set(line, jv_string("sandbox"), jv_string(todo[i]));
		line = jv_object_set(line, jv_string("run"), jv_number((double)run));
		line = jv_object_set(line, jv_string("wiped_at"), jv_string(ts));
		report(arg, line);
		progress_step(&progress);
	}
	progress_end(&progress);
	for (size_t i = 0; i < n; i++)
		free(todo[i]);
	free(todo);
	if (!rc)
		rc = exec_bound(db, "UPDATE runs SET finished_at = ?1 WHERE"
		    " id = ?3", bakery_now_ms(), NULL, run);
	sqlite3_close(db);
	return rc;
}
