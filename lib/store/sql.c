/*
 * sql.c — the SQLite calls every file of the store makes (sql.h).
 */
#define _GNU_SOURCE
#include "sql.h"
#include "capture.h"
#include "../base/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

jv
db_column_time(sqlite3_stmt *st, int col)
{
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return jv_null();
	return bakery_time_jv(sqlite3_column_int64(st, col));
}


int
db_exec(sqlite3 *db, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : db_fail(db, rc, "cannot write");
}

int
db_run(sqlite3 *db, const char *what, int n, const char *const *sql,
    const char *types, ...)
{
	const char *text[8];
	int64_t num[8];
	int np = (int)strlen(types);
	if (np > 8)
		np = 8;
	va_list ap;
	va_start(ap, types);
	for (int k = 0; k < np; k++) {
		if (types[k] == 'i')
			num[k] = va_arg(ap, int64_t);
		else
			text[k] = va_arg(ap, const char *);
	}
	va_end(ap);
	int rc = db_begin(db);
	for (int i = 0; i < n && !rc; i++) {
		sqlite3_stmt *st;
		int src = sqlite3_prepare_v2(db, sql[i], -1, &st, NULL);
		if (src == SQLITE_OK) {
			for (int k = 0; k < np; k++) {
				if (types[k] == 'i')
					sqlite3_bind_int64(st, k + 1, num[k]);
				else
					sqlite3_bind_text(st, k + 1, text[k], -1,
					    SQLITE_STATIC);
			}
			src = sqlite3_step(st);
			sqlite3_finalize(st);
		}
		if (src != SQLITE_DONE)
			rc = db_fail(db, src, what);
	}
	if (!rc)
		rc = db_commit(db);
	db_rollback(db);
	return rc;
}

const char *
db_intern(const char *text)
{
	static char **texts;
	static size_t n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(texts[i], text) == 0)
			return texts[i];
	texts = bakery_xrealloc(texts, (n + 1) * sizeof *texts);
	return texts[n++] = bakery_xstrdup(text);
}

int
db_prepare(sqlite3 *db, db_stmts *c, const char *sql,
    sqlite3_stmt **st)
{
	size_t empty = DB_STMTS;
	for (size_t i = 0; i < DB_STMTS; i++) {
		sqlite3_stmt *s = c->slot[i].st;
		if (!s) {
			if (empty == DB_STMTS)
				empty = i;
		} else if (c->slot[i].sql == sql && !sqlite3_stmt_busy(s) &&
		    strcmp(sqlite3_sql(s), sql) == 0) {
			*st = s;
			return SQLITE_OK;
		}
	}
	/* A full cache, or the same statement already stepping: one for
	 * this use only. */
	int rc = sqlite3_prepare_v3(db, sql, -1,
	    empty < DB_STMTS ? SQLITE_PREPARE_PERSISTENT : 0, st, NULL);
	if (rc == SQLITE_OK && *st && empty < DB_STMTS) {
		c->slot[empty].sql = sql;
		c->slot[empty].st = *st;
	}
	return rc;
}

void
db_release(db_stmts *c, sqlite3_stmt *st)
{
	for (size_t i = 0; st && i < DB_STMTS; i++) {
		if (c->slot[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return;
		}
	}
	sqlite3_finalize(st);
}

void
db_stmts_free(db_stmts *c)
{
	for (size_t i = 0; i < DB_STMTS; i++) {
		sqlite3_finalize(c->slot[i].st);
		c->slot[i].st = NULL;
		c->slot[i].sql = NULL;
	}
}

int
db_begin(sqlite3 *db)
{
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0
			       : db_fail(db, rc, "cannot begin a transaction");
}

/* In a replicated home, the commit's record is kept with it, and sent
 * before the commit is answered (capture.h). */
int
db_commit(sqlite3 *db)
{
	int code = capture_before_commit(db);
	if (code) {
		db_rollback(db);
		return code;
	}
	int rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return capture_after_commit(db);
	code = db_fail(db, rc, "cannot commit");
	db_rollback(db);
	return code;
}

int
db_write_step(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	int own = sqlite3_get_autocommit(db);
	int rc = own ? db_begin(db) : 0;
	if (rc)
		return rc;
	int src = sqlite3_step(st);
	if (src != SQLITE_DONE && src != SQLITE_ROW) {
		rc = db_fail(db, src, what);
		if (own)
			db_rollback(db);
		return rc;
	}
	sqlite3_reset(st);
	return own ? db_commit(db) : 0;
}

void
db_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db)) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		capture_rolled_back(db);
	}
}

/*
 * Waiting for a lock. SQLite's own busy timeout sleeps 1, 2, 5, 10, 15,
 * 20, 25, 25, 25, 50, 50, then 100 ms between tries: under steady
 * contention (commands sending to queue.db while a consumer receives and
 * acks) a waiter goes on sleeping long after the lock was freed, and a
 * commit of a millisecond waits tens. bakery tries again every
 * millisecond for the first 100, then every 5, up to the busy timeout.
 */
#define BUSY_FAST_TRIES 100
#define BUSY_SLOW_MS 5

int
db_busy_wait(void *timeout_ms, int tries)
{
	long waited_ms = tries <= BUSY_FAST_TRIES ? tries
	    : BUSY_FAST_TRIES + (long)(tries - BUSY_FAST_TRIES) * BUSY_SLOW_MS;
	if (waited_ms >= (long)(intptr_t)timeout_ms)
		return 0;
	sqlite3_sleep(tries < BUSY_FAST_TRIES ? 1 : BUSY_SLOW_MS);
	return 1;
}
