/*
 * queue_sqlite_admin.c — the embedded queue's administration: init's
 * report, stats, peek (all, or one event's), a sandbox's wipe and its
 * fence
 * (queue_sqlite-internal.h).
 */
#include "queue_sqlite-internal.h"
#include "../base/util.h"

#include <string.h>

int
queue_sqlite_stats(bakery_queue *q, jv *out)
{
	sqlite3_stmt *st;
	*out = jv_object();
	const char *names[] = { QUEUE_EVENTS, QUEUE_DLQ };
	for (int i = 0; i < 2; i++)
		*out = jv_object_set(*out, jv_string(names[i]),
		    jv_parse("{\"ready\":0,\"leased\":0,\"delayed\":0}"));
	int rc = queue_sqlite_prepare(SQ(q),
	    "SELECT queue,"
	    " sum(visible_at <= ?1),"
	    " sum(visible_at > ?1 AND lease IS NOT NULL),"
	    " sum(visible_at > ?1 AND lease IS NULL)"
	    " FROM messages GROUP BY queue", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, bakery_now_ms());
	while (sqlite3_step(st) == SQLITE_ROW) {
		jv s = jv_object();
		s = jv_object_set(s, jv_string("ready"),
		    jv_number(sqlite3_column_int64(st, 1)));
		s = jv_object_set(s, jv_string("leased"),
		    jv_number(sqlite3_column_int64(st, 2)));
		s = jv_object_set(s, jv_string("delayed"),
		    jv_number(sqlite3_column_int64(st, 3)));
		*out = jv_object_set(*out,
		    jv_string((const char *)sqlite3_column_text(st, 0)), s);
	}
	queue_sqlite_finish(SQ(q), st);
	return 0;
}

/* The messages st selects (id, sandbox, deliveries, visible_at, leased,
 * last_error, body), as peek shows them, appended to *out. */
static void
peek_rows(sqlite3_stmt *st, const char *queue, jv *out)
{
	while (sqlite3_step(st) == SQLITE_ROW) {
		char ts[32];
		bakery_format_time(sqlite3_column_int64(st, 3), ts, sizeof ts);
		jv m = jv_object();
		m = jv_object_set(m, jv_string("id"),
		    jv_string((const char *)sqlite3_column_text(st, 0)));
		m = jv_object_set(m, jv_string("queue"), jv_string(queue));
		m = jv_object_set(m, jv_string("sandbox"),
		    jv_string((const char *)sqlite3_column_text(st, 1)));
		m = jv_object_set(m, jv_string("deliveries"),
		    jv_number(sqlite3_column_int(st, 2)));
		m = jv_object_set(m, jv_string("visible_at"), jv_string(ts));
		m = jv_object_set(m, jv_string("leased"),
		    jv_bool(sqlite3_column_int(st, 4)));
		const char *err = (const char *)sqlite3_column_text(st, 5);
		m = jv_object_set(m, jv_string("last_error"),
		    err ? jv_string(err) : jv_null());
		const char *body = (const char *)sqlite3_column_text(st, 6);
		jv env = jv_parse(body);
		m = jv_object_set(m, jv_string("envelope"),
		    jv_is_valid(env) ? env : (jv_free(env), jv_string(body)));
		*out = jv_array_append(*out, m);
	}
}

#define PEEK_COLUMNS "SELECT id, sandbox, deliveries, visible_at," \
	" lease IS NOT NULL, last_error, body FROM messages"

int
queue_sqlite_peek(bakery_queue *q, const char *queue, size_t max, jv *out)
{
	sqlite3_stmt *st;
	*out = jv_array();
	int rc = queue_sqlite_prepare(SQ(q), PEEK_COLUMNS
	    " WHERE queue = ?1 ORDER BY seq LIMIT ?2", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, queue, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	peek_rows(st, queue, out);
	queue_sqlite_finish(SQ(q), st);
	return 0;
}

/* One row at most: (queue, id) is the table's unique key, and its index
 * finds it, whatever else the queue holds. The type is not needed. */
int
queue_sqlite_peek_event(bakery_queue *q, const char *queue,
    const char *sandbox, const char *id, const char *type, jv *out,
    int *complete)
{
	(void)type;
	sqlite3_stmt *st;
	*out = jv_invalid();
	*complete = 1;
	int rc = queue_sqlite_prepare(SQ(q), PEEK_COLUMNS
	    " WHERE queue = ?1 AND id = ?2 AND sandbox = ?3", &st);
	if (rc)
		return rc;
	*out = jv_array();
	sqlite3_bind_text(st, 1, queue, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, sandbox, -1, SQLITE_STATIC);
	peek_rows(st, queue, out);
	queue_sqlite_finish(SQ(q), st);
	return 0;
}

int
queue_sqlite_wipe_sandbox(bakery_queue *q, const char *sandbox,
    int64_t fence_ms)
{
	sqlite3 *db = DB(q);
	sqlite3_stmt *st;
	int rc = db_begin(db);
	if (rc)
		return rc;
	const char *sql[] = {
		"DELETE FROM messages WHERE sandbox = ?1",
		"INSERT INTO fences(sandbox, wiped_at) VALUES (?1, ?2)"
		" ON CONFLICT (sandbox) DO UPDATE SET"
		" wiped_at = max(wiped_at, excluded.wiped_at)",
	};
	for (int i = 0; i < 2 && !rc; i++) {
		if ((rc = queue_sqlite_prepare(SQ(q), sql[i], &st)))
			break;
		sqlite3_bind_text(st, 1, sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, fence_ms);
		int src = sqlite3_step(st);
		if (src != SQLITE_DONE)
			rc = db_fail(db, src, "queue wipe");
		queue_sqlite_finish(SQ(q), st);
	}
	if (!rc)
		rc = db_commit(db);
	db_rollback(db);
	return rc;
}

int64_t
queue_sqlite_fence(bakery_queue *q, const char *sandbox)
{
	sqlite3_stmt *st;
	int64_t at = 0;
	if (queue_sqlite_prepare(SQ(q),
		"SELECT wiped_at FROM fences WHERE sandbox = ?1", &st))
		return 0;
	sqlite3_bind_text(st, 1, sandbox, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		at = sqlite3_column_int64(st, 0);
	queue_sqlite_finish(SQ(q), st);
	return at;
}

/* The file and its schema exist once it is open: report it. */
int
queue_sqlite_init(bakery_queue *q, int replicas, jv *out)
{
	(void)replicas;
	const char *path = sqlite3_db_filename(DB(q), "main");
	jv r = jv_object();
	r = jv_object_set(r, jv_string("file"), jv_string(path ? path : ""));
	r = jv_object_set(r, jv_string("status"), jv_string("exists"));
	*out = jv_array_append(jv_array(), r);
	return 0;
}
