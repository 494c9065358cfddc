/*
 * queue_sqlite.c — the embedded queue: named queues in one SQLite file.
 *
 * A message is one row keyed by (queue, id); the id is the event id, so a
 * repeated send of a pending event is a no-op (INSERT OR IGNORE). A lease
 * is a token and a visible_at in the future: receive sets both, ack and
 * retry check the token, and once visible_at passes the row is ready again
 * whatever happened to the consumer that held it.
 *
 * A consumer's acks and its next receive share a transaction: a batch's
 * ack_many also leases the next batch (the same queue, sandbox, size and
 * visibility as the last receive) and keeps it for the receive that
 * follows, so a steady consumer commits twice per batch, not three times.
 * Leases it took and nobody received are given back when the queue is
 * closed (a killed consumer's come back when their visibility ends, as
 * any lease does). The operations that only look or purge (init's report,
 * stats, peek, a sandbox's wipe and its fence) are queue_sqlite_admin.c's.
 */
#include "../core/faults.h"
#include "queue_sqlite-internal.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

/* Version 2, the one 0.1.0 wrote, is the oldest a release wrote and this
 * bakery's: no migration is kept (schema.h). */
const schema_def queue_schema = {
	.name = "queue",
	.count = 2,
	.read_from = 2,
	.oldest = 2,
	.create =
	    "CREATE TABLE messages(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	    "  queue TEXT NOT NULL, id TEXT NOT NULL, sandbox TEXT NOT NULL,"
	    "  body TEXT NOT NULL, deliveries INTEGER NOT NULL DEFAULT 0,"
	    "  visible_at INTEGER NOT NULL, lease TEXT, last_error TEXT,"
	    "  enqueued_at INTEGER NOT NULL,"
	    /* In the DLQ: how many times bakery-events delivered it. */
	    "  attempts INTEGER NOT NULL DEFAULT 0,"
	    /* When visible_at was last set: visible_at - held_at is the
	     * lease or delay granted then (see hold_from_now). */
	    "  held_at INTEGER, UNIQUE (queue, id));"
	    "CREATE INDEX messages_ready ON messages(queue, visible_at, seq);"
	    /* A sandbox's last wipe: events recorded before it are dropped. */
	    "CREATE TABLE fences(sandbox TEXT PRIMARY KEY,"
	    "  wiped_at INTEGER NOT NULL);",
};

int
queue_sqlite_prepare(sqlite_queue *sq, const char *sql, sqlite3_stmt **st)
{
	int rc = db_prepare(sq->db, &sq->stmts, sql, st);
	return rc == SQLITE_OK ? 0 : db_fail(sq->db, rc, "queue");
}

void
queue_sqlite_finish(sqlite_queue *sq, sqlite3_stmt *st)
{
	db_release(&sq->stmts, st);
}

static int
sqlite_send(bakery_queue *q, const char *queue, queue_item *items, size_t n)
{
	/* The fault switch of each sandbox in the batch; a batch comes from
	 * one object, so this is one sandbox in practice. */
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(items[i].sandbox, items[i - 1].sandbox) == 0)
			continue;
		if (fault_is_set(q->ctx, items[i].sandbox, FAULT_QUEUE_REFUSES))
			return bakery_fail(EX_UNAVAILABLE,
			    "queue refused the send: sandbox '%s' has the "
			    "fault queue-refuses", items[i].sandbox);
	}
	sqlite3 *db = DB(q);
	sqlite3_stmt *st;
	int rc = db_begin(db);
	if (rc)
		return rc;
	/* The fence is read under the write lock, so a wipe is either wholly
	 * before this send (its items are dropped) or wholly after it (the
	 * wipe deletes them). */
	if ((rc = queue_sqlite_prepare(SQ(q),
		 "INSERT OR IGNORE INTO messages(queue, id, sandbox, body,"
		 " visible_at, enqueued_at, held_at) SELECT ?1, ?2, ?3, ?4, ?5,"
		 " ?5, ?5"
		 " WHERE ?6 = 0 OR ?6 >= coalesce((SELECT wiped_at FROM fences"
		 " WHERE sandbox = ?3), 0)",
		 &st))) {
		db_rollback(db);
		return rc;
	}
	int64_t now = bakery_now_ms();
	for (size_t i = 0; i < n && !rc; i++) {
		sqlite3_bind_text(st, 1, queue, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, items[i].id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, items[i].sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, items[i].body, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, now);
		sqlite3_bind_int64(st, 6, items[i].recorded_at);
		int src = sqlite3_step(st);
		if (src != SQLITE_DONE)
			rc = db_fail(db, src, "queue send");
		sqlite3_reset(st);
	}
	queue_sqlite_finish(SQ(q), st);
	if (!rc)
		rc = db_commit(db);
	db_rollback(db);
	/* One transaction: every item is accepted, or none is. */
	for (size_t i = 0; i < n; i++)
		items[i].accepted = rc == 0;
	return rc;
}

static char *
column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	return s ? bakery_xstrdup((const char *)s) : NULL;
}

/*
 * A clock stepped back. A lease or a retry delay is an absolute wall time
 * in a file every consumer shares, so no process's monotonic clock can
 * measure it; but each row knows when it was granted (held_at). A row
 * granted "later" than now was granted before the clock went back: its
 * lease or delay starts again from now, whole. Never shorter than it was
 * granted in real time (so no second consumer takes a message its holder
 * may still be working on), and never an hour longer because NTP stepped
 * the clock an hour back (so a killed consumer's message, or one sent
 * just before the step, does not wait that hour). Only rows not yet
 * visible are looked at, through messages_ready: the leased and delayed
 * ones. That scan grows with them (30 ms for 20,000 delayed rows), so a
 * process runs it at its first receive and then at most every
 * HOLD_CHECK_MS of its own monotonic clock; until then a stepped row only
 * waits longer, the safe way. A forward step cannot be told from time
 * passing (a suspended host, a killed consumer): leases then end early,
 * and the holder's ack fails as "lease lost" while the receivers' dedup
 * keeps the effect once.
 */
#define HOLD_CHECK_MS 10000

static int
hold_from_now(sqlite_queue *sq, const char *queue, int64_t now)
{
	int64_t mono = bakery_monotonic_ms();
	if (sq->held_checked && mono - sq->held_checked < HOLD_CHECK_MS)
		return 0;
	sq->held_checked = mono;
	sqlite3_stmt *st;
	int rc = queue_sqlite_prepare(sq, "UPDATE messages SET"
	    " visible_at = ?2 + (visible_at - held_at), held_at = ?2"
	    " WHERE queue = ?1 AND visible_at > ?2 AND held_at > ?2", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, queue, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	int src = sqlite3_step(st);
	queue_sqlite_finish(sq, st);
	return src == SQLITE_DONE ? 0 : db_fail(sq->db, src, "queue receive");
}

/* Leases up to max ready messages into out, inside the caller's
 * transaction. */
static int
lease(sqlite_queue *sq, const char *queue, const char *sandbox, size_t max,
    int visibility_s, queue_message *out, int64_t *was_visible, size_t *got)
{
	sqlite3 *db = sq->db;
	sqlite3_stmt *sel = NULL, *upd = NULL;
	int64_t now = bakery_now_ms();
	int rc;
	*got = 0;
	if ((rc = hold_from_now(sq, queue, now)) ||
	    (rc = queue_sqlite_prepare(sq,
		 "SELECT seq, id, sandbox, body, deliveries, last_error, attempts,"
		 " visible_at FROM messages WHERE queue = ?1 AND visible_at <= ?2"
		 " AND (?3 IS NULL OR sandbox = ?3)"
		 " ORDER BY visible_at, seq LIMIT ?4", &sel)) ||
	    (rc = queue_sqlite_prepare(sq,
		 "UPDATE messages SET lease = ?1, visible_at = ?2, held_at = ?4,"
		 " deliveries = deliveries + 1 WHERE seq = ?3", &upd)))
		goto out;
	sqlite3_bind_text(sel, 1, queue, -1, SQLITE_STATIC);
	sqlite3_bind_int64(sel, 2, now);
	sqlite3_bind_text(sel, 3, sandbox, -1, SQLITE_STATIC);
	sqlite3_bind_int64(sel, 4, (sqlite3_int64)max);
	int src;
	while (*got < max && (src = sqlite3_step(sel)) == SQLITE_ROW) {
		queue_message *m = &out[*got];
		memset(m, 0, sizeof *m);
		m->handle = sqlite3_column_int64(sel, 0);
		m->id = column_dup(sel, 1);
		m->sandbox = column_dup(sel, 2);
		m->body = column_dup(sel, 3);
		m->deliveries = sqlite3_column_int(sel, 4) + 1;
		m->last_error = column_dup(sel, 5);
		m->attempts = sqlite3_column_int(sel, 6);
		if (was_visible)
			was_visible[*got] = sqlite3_column_int64(sel, 7);
		bakery_random_id("", m->lease, sizeof m->lease);
		(*got)++;
	}
	for (size_t i = 0; i < *got && !rc; i++) {
		sqlite3_bind_text(upd, 1, out[i].lease, -1, SQLITE_STATIC);
		sqlite3_bind_int64(upd, 2, now + (int64_t)visibility_s * 1000);
		sqlite3_bind_int64(upd, 3, out[i].handle);
		sqlite3_bind_int64(upd, 4, now);
		if ((src = sqlite3_step(upd)) != SQLITE_DONE)
			rc = db_fail(db, src, "queue receive");
		sqlite3_reset(upd);
	}
out:
	queue_sqlite_finish(sq, sel);
	queue_sqlite_finish(sq, upd);
	if (rc) {
		for (size_t i = 0; i < *got; i++)
			queue_message_free(&out[i]);
		*got = 0;
	}
	return rc;
}

static int
same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int
sqlite_receive(bakery_queue *q, const char *queue, const char *sandbox,
    size_t max, int visibility_s, queue_message *out, size_t *got)
{
	sqlite_queue *sq = SQ(q);
	*got = 0;
	if (sq->next_n > 0 && same(sq->queue, queue) &&
	    same(sq->sandbox, sandbox) && sq->max == max &&
	    sq->visibility_s == visibility_s) {
		/* Leased by the last ack_many for this very receive. */
		memcpy(out, sq->next, sq->next_n * sizeof *out);
		*got = sq->next_n;
		sq->next_n = 0;
		return 0;
	}
	free(sq->queue);
	free(sq->sandbox);
	sq->queue = bakery_xstrdup(queue);
	sq->sandbox = sandbox ? bakery_xstrdup(sandbox) : NULL;
	sq->max = max <= PREFETCH_MAX ? max : 0; /* 0: never prefetched */
	sq->visibility_s = visibility_s;
	/* A lease a power cut may take (db_relaxed): the messages are
	 * ready again and delivered again, and the receivers absorb the
	 * repeat (docs/design.md, "WAL"). */
	db_relaxed(q->ctx, sq->db, 1);
	int rc = db_begin(sq->db);
	if (!rc && !(rc = lease(sq, queue, sandbox, max, visibility_s, out,
		  NULL, got)))
		rc = db_commit(sq->db);
	db_rollback(sq->db);
	db_relaxed(q->ctx, sq->db, 0);
	if (rc) {
		for (size_t i = 0; i < *got; i++)
			queue_message_free(&out[i]);
		*got = 0;
	}
	return rc;
}

/* Why m's lease no longer holds (EX_TEMPFAIL): its row is another's (the
 * lease expired and the message went back or on), or gone: removed by a
 * wipe of its sandbox fenced since the lease could have begun, or
 * answered by the consumer that took it after the lease expired. */
static int
lease_lost(bakery_queue *q, queue_message *m)
{
	sqlite3_stmt *st;
	int there = 1;
	if (!queue_sqlite_prepare(SQ(q),
		"SELECT 1 FROM messages WHERE seq = ?1", &st)) {
		sqlite3_bind_int64(st, 1, m->handle);
		there = sqlite3_step(st) == SQLITE_ROW;
		queue_sqlite_finish(SQ(q), st);
	}
	int64_t fence = there || !m->sandbox ? 0
	    : queue_sqlite_fence(q, m->sandbox);
	if (fence && fence >= bakery_now_ms() -
	    (int64_t)SQ(q)->visibility_s * 1000)
		return bakery_fail(EX_TEMPFAIL, "lease lost: '%s': its sandbox "
		    "'%s' was wiped while it was leased, and the wipe removed "
		    "it", m->id, m->sandbox);
	return bakery_fail(EX_TEMPFAIL, "lease lost: '%s': %s", m->id, there
	    ? "it expired and the message went to another consumer"
	    : "it expired, and the consumer that took it answered it");
}

/* Runs one statement bound to (?1 lease, ?2 seq, ?3 a, ?4 b, ?5 c), any
 * of the last three unused, that must touch one row. */
static int
leased_write(bakery_queue *q, const char *sql, queue_message *m,
    int64_t a, const char *b, int64_t c)
{
	sqlite3 *db = DB(q);
	sqlite3_stmt *st;
	int rc = queue_sqlite_prepare(SQ(q), sql, &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, m->lease, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, m->handle);
	sqlite3_bind_int64(st, 3, a);
	sqlite3_bind_text(st, 4, b, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, c);
	int src = sqlite3_step(st);
	queue_sqlite_finish(SQ(q), st);
	if (src != SQLITE_DONE)
		return db_fail(db, src, "queue");
	return sqlite3_changes(db) == 1 ? 0 : lease_lost(q, m);
}

static int
sqlite_ack(bakery_queue *q, const char *queue, queue_message *m)
{
	(void)queue;
	return leased_write(q,
	    "DELETE FROM messages WHERE lease = ?1 AND seq = ?2", m, 0, NULL,
	    0);
}

/* Forgets the leased next batch (its commit failed: nothing was leased). */
static void
drop_next(sqlite_queue *sq)
{
	for (size_t i = 0; i < sq->next_n; i++)
		queue_message_free(&sq->next[i]);
	sq->next_n = 0;
}

/* Gives back a leased next batch nobody received: ready again as it was,
 * its delivery not counted. A failure leaves the leases to run out. */
static void
give_back_next(sqlite_queue *sq)
{
	if (sq->next_n == 0)
		return;
	sqlite3_stmt *st = NULL;
	int rc = db_begin(sq->db);
	if (!rc)
		rc = queue_sqlite_prepare(sq, "UPDATE messages SET"
		    " lease = NULL, visible_at = ?3,"
		    " deliveries = deliveries - 1"
		    " WHERE lease = ?1 AND seq = ?2", &st);
	for (size_t i = 0; i < sq->next_n && !rc; i++) {
		sqlite3_bind_text(st, 1, sq->next[i].lease, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, sq->next[i].handle);
		sqlite3_bind_int64(st, 3, sq->next_visible[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = 1;
		sqlite3_reset(st);
	}
	queue_sqlite_finish(sq, st);
	if (!rc)
		db_commit(sq->db);
	db_rollback(sq->db);
	drop_next(sq);
}

static int ack_many_in(bakery_queue *q, const char *queue,
    queue_message **m, size_t n, int *rcs);

/* One transaction for the lot: a lost lease deletes nothing and is
 * reported for its message; anything else rolls every ack back. A
 * commit a power cut may take (db_relaxed): the acks are made after
 * the receivers' commits, which keep what they applied, so a lost ack is
 * a delivery again that they absorb; a lost lease, as in receive. */
static int
sqlite_ack_many(bakery_queue *q, const char *queue, queue_message **m,
    size_t n, int *rcs)
{
	db_relaxed(q->ctx, DB(q), 1);
	int rc = ack_many_in(q, queue, m, n, rcs);
	db_relaxed(q->ctx, DB(q), 0);
	return rc;
}

static int
ack_many_in(bakery_queue *q, const char *queue, queue_message **m,
    size_t n, int *rcs)
{
	sqlite3 *db = DB(q);
	int rc = db_begin(db);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		rcs[i] = sqlite_ack(q, queue, m[i]);
		if (rcs[i] && rcs[i] != EX_TEMPFAIL)
			rc = rcs[i];
	}
	/* The next batch, in the same commit (see the top of this file). */
	sqlite_queue *sq = SQ(q);
	if (!rc && sq->max > 0 && sq->next_n == 0 && same(sq->queue, queue))
		rc = lease(sq, queue, sq->sandbox, sq->max, sq->visibility_s,
		    sq->next, sq->next_visible, &sq->next_n);
	if (!rc)
		rc = db_commit(db);
	db_rollback(db);
	if (rc)
		drop_next(sq);
	return rc;
}

static int
sqlite_retry(bakery_queue *q, const char *queue, queue_message *m,
    int delay_s, const char *error)
{
	(void)queue;
	int64_t now = bakery_now_ms();
	return leased_write(q,
	    "UPDATE messages SET lease = NULL, visible_at = ?3, held_at = ?5,"
	    " last_error = ?4 WHERE lease = ?1 AND seq = ?2", m,
	    now + (int64_t)delay_s * 1000, error, now);
}

static int
sqlite_dead_letter(bakery_queue *q, queue_message *m, const char *error)
{
	sqlite3 *db = DB(q);
	int rc = db_begin(db);
	if (rc)
		return rc;
	rc = leased_write(q,
	    "DELETE FROM messages WHERE lease = ?1 AND seq = ?2", m, 0, NULL,
	    0);
	sqlite3_stmt *st = NULL;
	if (!rc && !(rc = queue_sqlite_prepare(SQ(q),
		 "INSERT INTO messages(queue, id, sandbox, body, visible_at,"
		 " enqueued_at, last_error, attempts, held_at)"
		 " VALUES ('" QUEUE_DLQ "', ?1, ?2, ?3, ?4, ?4, ?5, ?6, ?4)"
		 " ON CONFLICT (queue, id) DO UPDATE SET body = excluded.body,"
		 " last_error = excluded.last_error,"
		 " attempts = excluded.attempts", &st))) {
		sqlite3_bind_text(st, 1, m->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, m->sandbox, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, m->body, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, bakery_now_ms());
		sqlite3_bind_text(st, 5, error, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 6, m->deliveries);
		int src = sqlite3_step(st);
		if (src != SQLITE_DONE)
			rc = db_fail(db, src, "queue dead-letter");
	}
	queue_sqlite_finish(SQ(q), st);
	if (!rc)
		rc = db_commit(db);
	db_rollback(db);
	return rc;
}

static void
sqlite_close(bakery_queue *q)
{
	sqlite_queue *sq = SQ(q);
	give_back_next(sq);
	db_stmts_free(&sq->stmts);
	sqlite3_close(sq->db);
	free(sq->queue);
	free(sq->sandbox);
	free(sq);
	free(q);
}

static const struct queue_ops sqlite_ops = {
	.send = sqlite_send,
	.receive = sqlite_receive,
	.ack = sqlite_ack,
	.retry = sqlite_retry,
	.dead_letter = sqlite_dead_letter,
	.stats = queue_sqlite_stats,
	.peek = queue_sqlite_peek,
	.peek_event = queue_sqlite_peek_event,
	.wipe_sandbox = queue_sqlite_wipe_sandbox,
	.fence = queue_sqlite_fence,
	.init = queue_sqlite_init,
	.close = sqlite_close,
	.ack_many = sqlite_ack_many,
};

int
queue_sqlite_open(bakery_ctx *ctx, const char *path, int look_only,
    bakery_queue **out)
{
	sqlite3 *db;
	/* A queue.db that is there is opened as any file; only a missing
	 * one, or one whose making a killed process left (EX_NOINPUT, as
	 * database.h says), goes to its birth. */
	int rc = look_only ? db_open_readonly(ctx, path, &queue_schema, &db)
			   : db_open(ctx, path, &queue_schema, &db);
	if (rc == EX_NOINPUT && !look_only)
		rc = birth_open(ctx, path, &queue_schema, &db);
	if (rc)
		return rc;
	bakery_queue *q = bakery_xmalloc(sizeof *q);
	sqlite_queue *sq = bakery_xmalloc(sizeof *sq);
	memset(sq, 0, sizeof *sq);
	sq->db = db;
	q->ops = &sqlite_ops;
	q->ctx = ctx;
	q->impl = sq;
	*out = q;
	return 0;
}
