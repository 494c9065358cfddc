/*
 * outbox.c — the atomic record (invariant 1) and the relay (invariant 2).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include "../../lib/core/envelope.h"
#include "../../lib/core/faults.h"
#include "../../lib/core/object.h"
#include "../../lib/core/outbox.h"
#include "../../lib/queue/queue-internal.h"
#include "../../lib/base/util.h"

#define T0 1800000000LL

/* A queue that forwards to the sqlite driver and notes each batch's size. */
static bakery_queue *real;
static size_t batches[16];
static int n_batches;

static int
spy_send(bakery_queue *q, const char *queue, queue_item *items, size_t n)
{
	(void)q;
	if (n_batches < 16)
		batches[n_batches] = n;
	n_batches++;
	return real->ops->send(real, queue, items, n);
}

static int
spy_stats(bakery_queue *q, jv *out)
{
	(void)q;
	return real->ops->stats(real, out);
}

static void
spy_close(bakery_queue *q)
{
	queue_close(real);
	free(q);
}

static struct queue_ops spy_ops;

static long long
count(bakery_object *o, const char *sql)
{
	return sql_int(OBJECT_DB(o), sql);
}

/* Rows of the queue file, through a connection of its own. */
static long long
queued(const char *home)
{
	char *path = bakery_xasprintf("%s/queue.db", home);
	sqlite3 *db;
	sqlite3_open(path, &db);
	long long n = sql_int(db,
	    "SELECT count(*) FROM messages WHERE queue = 'bakery-events'");
	sqlite3_close(db);
	free(path);
	return n;
}

static jv
order_data(int i)
{
	jv d = jv_object();
	d = jv_object_set(d, jv_string("order"), jv_string("ord_1"));
	d = jv_object_set(d, jv_string("day"), jv_string("2027-01-15"));
	d = jv_object_set(d, jv_string("n"), jv_number(i));
	return d;
}

int
main(void)
{
	char *home = tmp_home();
	unsetenv("BAKERY_ALARM_DELAY");
	unsetenv("BAKERY_QUEUE");
	setenv("BAKERY_NOW", "1800000000", 1);
	bakery_ctx ctx;
	ctx_init(&ctx, home, NULL, NULL);

	bakery_object *o = NULL;
	is_int(object_open(&ctx, NULL, "order/ord_1", 1, &o), 0, "object_open");
	is_int(object_begin(o), 0, "object_begin");
	object_set_state(o, jv_parse("{\"status\":\"placed\"}"));
	jv env = jv_invalid();
	is_int(object_record(o, "OrderPlaced", order_data(0), &env), 0,
	    "object_record");
	const char *id = envelope_str(env, "id");
	ok(id != NULL, "object_record hands back the envelope");
	is_str(envelope_str(env, "source"), "bakery:default/order/ord_1",
	    "  its source is the object");

	/* Before the commit another connection sees no event and no outbox
	 * row. In a rollback journal not even the new file's schema: it
	 * commits with the first change, in one go; in WAL not even the
	 * file: it is made with its first commit, in a private copy renamed
	 * into place (wal.c). */
	char *path = home_object_path(&ctx, NULL, "order/ord_1");
	sqlite3 *other = NULL;
	if (strcmp(wal_journal_mode(), "wal") == 0) {
		ok(access(path, F_OK) != 0, "before commit: no file");
	} else {
		sqlite3_open(path, &other);
		is_int(sql_int(other, "SELECT count(*) FROM sqlite_master"), 0,
		    "before commit: no table visible, no event, no outbox row");
	}
	is_int(object_commit(o), 0, "object_commit");
	if (!other)
		sqlite3_open(path, &other);
	is_int(sql_int(other, "SELECT count(*) FROM events"), 1,
	    "after commit: one event");
	is_int(sql_int(other, "SELECT count(*) FROM outbox"), 1,
	    "after commit: one outbox row");
	char buf[256], sql[256];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM events e JOIN outbox x"
	    " ON x.event_id = e.id WHERE e.id = '%s' AND e.type = 'OrderPlaced'"
	    " AND x.envelope = e.envelope AND x.attempts = 0", id);
	is_int(sql_int(other, sql), 1, "the outbox row carries the event");
	is_str(sql_text(other, "SELECT json_extract(json, '$.status')"
		" FROM state", buf, sizeof buf), "placed", "the state committed");
	is_int(sql_int(other, "SELECT fire_at FROM alarm WHERE id = 1"),
	    T0 * 1000 + 30000, "the alarm is armed 30 s out");
	sqlite3_close(other);
	free(path);
	{
		char *apath = bakery_xasprintf("%s/alarms.db", home);
		sqlite3_open(apath, &other);
		is_int(sql_int(other, "SELECT count(*) FROM alarms WHERE"
			" sandbox = 'default' AND address = 'order/ord_1'"), 1,
		    "the alarm index has the object");
		sqlite3_close(other);
		free(apath);
	}

	/* The relay with a working queue. */
	int sent = -1, rc;
	is_int(outbox_count(o), 1, "outbox_count is 1");
	is_int(outbox_send(o, &sent), 0, "outbox_send");
	is_int(sent, 1, "  sent one row");
	is_int(outbox_count(o), 0, "  the outbox is empty");
	is_int(queued(home), 1, "  the queue has the message");
	ok(count(o, "SELECT count(*) FROM alarm WHERE fire_at IS NULL") == 1,
	    "  the alarm is disarmed");
	{
		bakery_queue *q;
		jv peek;
		queue_get(&ctx, &q);
		queue_peek(q, QUEUE_EVENTS, 10, &peek);
		jv first = jv_array_get(jv_copy(peek), 0);
		is_str(envelope_str(first, "id"), id, "  under the event's id");
		jv qenv = jv_object_get(first, jv_string("envelope"));
		ok(jv_equal(jv_copy(qenv), jv_copy(env)),
		    "  with the envelope that was recorded");
		jv_free(qenv);
		jv_free(peek);
	}
	jv_free(env);

	/* A refusing queue: every row stays, attempts go up by one. */
	fault_set(&ctx, "default", "queue-refuses");
	object_begin(o);
	object_record(o, "OrderPlaced", order_data(1), NULL);
	object_record(o, "OrderPlaced", order_data(2), NULL);
	object_commit(o);
	/* stderr goes to a file for this send, to see relay_error logged. */
	char *logpath = bakery_xasprintf("%s/stderr.log", home);
	fflush(stderr);
	int saved = dup(2);
	FILE *log = fopen(logpath, "w+");
	dup2(fileno(log), 2);
	rc = outbox_send(o, &sent);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char logline[512] = "";
	rewind(log);
	if (!fgets(logline, sizeof logline, log))
		logline[0] = '\0';
	fclose(log);
	free(logpath);
	is_int(rc, EX_UNAVAILABLE,
	    "outbox_send with queue-refuses is EX_UNAVAILABLE");
	ok(strstr(logline, "warning: relay_error") != NULL &&
		strstr(logline, "object=order/ord_1") != NULL &&
		strstr(logline, "rows=2") != NULL,
	    "  relay_error is logged with the object and the rows");
	is_int(sent, 0, "  sent nothing");
	is_int(outbox_count(o), 2, "  both rows stay");
	is_int(count(o, "SELECT count(*) FROM outbox WHERE attempts = 1"), 2,
	    "  attempts is 1 on each");
	is_int(count(o, "SELECT count(*) FROM outbox WHERE last_error LIKE"
		" '%queue-refuses%'"), 2, "  with the error on each");
	is_int(queued(home), 1, "  the queue got nothing new");
	ok(count(o, "SELECT count(*) FROM alarm WHERE fire_at IS NOT NULL") == 1,
	    "  the alarm stays armed");
	bakery_verbosity = LOG_ERROR; /* the other refusals are expected */
	outbox_send(o, &sent);
	is_int(count(o, "SELECT count(*) FROM outbox WHERE attempts = 2"), 2,
	    "a second refusal: attempts 2");
	fault_clear(&ctx, "default", "queue-refuses");
	is_int(outbox_send(o, &sent), 0, "once cleared outbox_send succeeds");
	is_int(sent, 2, "  sends both rows");
	is_int(outbox_count(o), 0, "  the outbox is empty");
	is_int(queued(home), 3, "  the queue has three messages");

	/* A rollback leaves nothing. */
	long long events = count(o, "SELECT count(*) FROM events");
	object_begin(o);
	object_set_state(o, jv_parse("{\"status\":\"rolled back\"}"));
	object_record(o, "OrderPaid", order_data(3), NULL);
	object_rollback(o);
	is_int(count(o, "SELECT count(*) FROM events"), events,
	    "a rollback leaves no event");
	is_int(outbox_count(o), 0, "  and no outbox row");
	is_str(sql_text(OBJECT_DB(o), "SELECT json_extract(json, '$.status')"
		" FROM state", buf, sizeof buf), "placed", "  and the old state");
	ok(count(o, "SELECT count(*) FROM alarm WHERE fire_at IS NULL") == 1,
	    "  and no armed alarm");
	/* Armed again: the entry the first arming left still fires no later,
	 * so the index is not written (its generation stays 1). */
	object_begin(o);
	object_record(o, "OrderPlaced", order_data(1), NULL);
	is_int(object_commit(o), 0, "a second event arms the alarm again");
	{
		char *apath = bakery_xasprintf("%s/alarms.db", home);
		sqlite3_open(apath, &other);
		free(apath);
		is_int(sql_int(other, "SELECT gen FROM alarms WHERE"
			" address = 'order/ord_1'"), 1,
		    "  the index entry left by the first arming serves");
		ok(sql_int(other, "SELECT fire_at FROM alarms WHERE"
		       " address = 'order/ord_1'") <= count(o,
		       "SELECT fire_at FROM alarm"),
		    "  and fires no later than the alarm");
		sqlite3_close(other);
	}
	outbox_send(o, &sent);
	object_close(o);

	/* A new file whose first change is rolled back: in WAL it was never
	 * made, and no private copy is left; in a rollback journal it keeps
	 * its schema. */
	is_int(object_open(&ctx, NULL, "order/ord_gone", 1, &o), 0,
	    "open a new object");
	object_begin(o);
	object_record(o, "OrderPlaced", order_data(2), NULL);
	object_rollback(o);
	object_close(o);
	{
		char *gpath = home_object_path(&ctx, NULL, "order/ord_gone");
		if (strcmp(wal_journal_mode(), "wal") == 0) {
			ok(access(gpath, F_OK) != 0, "  its change rolled "
			    "back: no file");
			char *copy = home_object_path(&ctx, NULL,
			    "order/.new.ord_gone");
			*strrchr(copy, '.') = '\0'; /* no .db */
			ok(access(copy, F_OK) != 0, "  and no private copy");
			free(copy);
		} else {
			sqlite3_open(gpath, &other);
			is_int(sql_int(other, "SELECT count(*) FROM events"), 0,
			    "  its change rolled back: no event");
			is_int(sql_int(other, "PRAGMA user_version"),
			    object_schema.count, "  its schema kept");
			sqlite3_close(other);
		}
		free(gpath);
	}

	/* Batches of at most 100 rows, oldest first. */
	is_int(queue_get(&ctx, &real), 0, "the real queue");
	spy_ops = *real->ops;
	spy_ops.send = spy_send;
	spy_ops.stats = spy_stats;
	spy_ops.close = spy_close;
	bakery_queue *spy = bakery_xmalloc(sizeof *spy);
	*spy = (bakery_queue){ &spy_ops, &ctx, NULL };
	ctx.queue = spy;

	is_int(object_open(&ctx, NULL, "order/ord_2", 1, &o), 0, "open order/ord_2");
	object_begin(o);
	rc = 0;
	for (int i = 0; i < 250 && !rc; i++)
		rc = object_record(o, "OrderPlaced", order_data(i), NULL);
	is_int(rc, 0, "record 250 events");
	is_int(object_commit(o), 0, "commit them in one transaction");
	is_int(outbox_count(o), 250, "250 outbox rows");
	char first_id[64];
	sql_text(OBJECT_DB(o), "SELECT event_id FROM outbox ORDER BY seq LIMIT 1",
	    first_id, sizeof first_id);
	n_batches = 0;
	is_int(outbox_send(o, &sent), 0, "outbox_send");
	is_int(sent, 250, "  sent 250");
	is_int(n_batches, 3, "  in three sends");
	is_int((long long)batches[0], 100, "  first of 100");
	is_int((long long)batches[1], 100, "  second of 100");
	is_int((long long)batches[2], 50, "  third of 50");
	is_int(outbox_count(o), 0, "  the outbox is empty");
	is_int(queued(home), 254, "  the queue has all 250 (and the 4 before)");
	{
		char *qp = bakery_xasprintf("%s/queue.db", home);
		sqlite3_open(qp, &other);
		free(qp);
		snprintf(sql, sizeof sql, "SELECT seq = (SELECT min(seq) FROM"
		    " messages WHERE sandbox = 'default' AND json_extract(body,"
		    " '$.source') = 'bakery:default/order/ord_2') FROM messages"
		    " WHERE id = '%s'", first_id);
		is_int(sql_int(other, sql), 1, "  the oldest row went first");
		sqlite3_close(other);
	}

	/* A refusal in the first batch stops the send: one batch is tried. */
	object_begin(o);
	for (int i = 0; i < 150; i++)
		object_record(o, "OrderPlaced", order_data(i), NULL);
	object_commit(o);
	fault_set(&ctx, "default", "queue-refuses");
	n_batches = 0;
	is_int(outbox_send(o, &sent), EX_UNAVAILABLE, "150 rows, queue refuses");
	is_int(n_batches, 1, "  one send tried");
	is_int(count(o, "SELECT count(*) FROM outbox WHERE attempts = 1"), 100,
	    "  the 100 rows of that send count an attempt");
	is_int(outbox_count(o), 150, "  every row stays");
	fault_clear(&ctx, "default", "queue-refuses");
	outbox_send(o, &sent);
	is_int(sent, 150, "then all 150 go");

	/* Batches of at most 256 KB: three rows of ~100 KB go as 2 + 1. */
	{
		char *big = bakery_xmalloc(100 * 1024 + 1);
		memset(big, 'x', 100 * 1024);
		big[100 * 1024] = '\0';
		object_begin(o);
		for (int i = 0; i < 3; i++) {
			jv d = order_data(i);
			d = jv_object_set(d, jv_string("pad"), jv_string(big));
			object_record(o, "OrderPlaced", d, NULL);
		}
		object_commit(o);
		free(big);
		n_batches = 0;
		is_int(outbox_send(o, &sent), 0, "three rows of 100 KB");
		is_int(n_batches, 2, "  go in two sends");
		is_int((long long)batches[0], 2, "  two rows first (under 256 KB)");
		is_int((long long)batches[1], 1, "  then one");
	}
	object_close(o);

	/* Several objects' outboxes together: one send, each settled in its
	 * object; an outbox of more than a batch sends the rest after. */
	{
		bakery_object *os[3];
		const char *names[3] = { "order/ord_t1", "order/ord_t2",
			"order/ord_t3" };
		int rows[3] = { 1, 150, 2 }, rcs[3] = { -1, -1, -1 };
		for (int k = 0; k < 3; k++) {
			object_open(&ctx, NULL, names[k], 1, &os[k]);
			object_begin(os[k]);
			for (int i = 0; i < rows[k]; i++)
				object_record(os[k], "OrderPlaced",
				    order_data(i), NULL);
			object_commit(os[k]);
		}
		long long before = queued(home);
		n_batches = 0;
		is_int(outbox_send_together(os, 3, rcs), 0,
		    "outbox_send_together of 1, 150 and 2 rows");
		is_int(n_batches, 2, "  in two sends");
		is_int((long long)batches[0], 103,
		    "  the first of every outbox's first batch (1 + 100 + 2)");
		is_int((long long)batches[1], 50, "  then the rest of the 150");
		ok(rcs[0] == 0 && rcs[1] == 0 && rcs[2] == 0, "  each object 0");
		ok(outbox_count(os[0]) + outbox_count(os[1]) +
		    outbox_count(os[2]) == 0, "  every outbox empty");
		is_int(queued(home), before + 153, "  the queue has all 153");

		fault_set(&ctx, "default", "queue-refuses");
		for (int k = 0; k < 3; k += 2) {
			object_begin(os[k]);
			object_record(os[k], "OrderPlaced", order_data(9), NULL);
			object_commit(os[k]);
		}
		n_batches = 0;
		is_int(outbox_send_together(os, 3, rcs), EX_UNAVAILABLE,
		    "a refused send together");
		is_int(n_batches, 1, "  one send tried");
		ok(rcs[0] == EX_UNAVAILABLE && rcs[1] == 0 &&
		    rcs[2] == EX_UNAVAILABLE,
		    "  refused for the objects that had rows, 0 for the empty");
		is_int(count(os[0], "SELECT count(*) FROM outbox WHERE"
			" attempts = 1") + count(os[2], "SELECT count(*) FROM"
			" outbox WHERE attempts = 1"), 2,
		    "  each kept row counts an attempt");
		fault_clear(&ctx, "default", "queue-refuses");
		for (int k = 0; k < 3; k++)
			object_close(os[k]);
	}

	ctx_free(&ctx);
	unsetenv("BAKERY_NOW");
	rm_home(home);
	return done_testing();
}
