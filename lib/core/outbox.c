/*
 * outbox.c — send an object's outbox to the queue, mark relayed what it
 * accepted.
 */
#include "outbox.h"
#include "envelope.h"
#include "../queue/queue.h"
#include "../net/span.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
outbox_count(bakery_object *o)
{
	/* A file its first commit just made holds in its outbox what that
	 * commit recorded: no need to open it again to count. */
	if (!o->db && (o->birth.state == BIRTH_MADE ||
	    o->birth.state == BIRTH_PENDING))
		return o->recorded;
	sqlite3_stmt *st = NULL;
	int n = 0;
	if (object_connect(o) == 0 && db_prepare(o->db, &o->stmts,
		"SELECT count(*) FROM events"
		" WHERE relayed_at IS NULL", &st) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	object_finish(o, st);
	return n;
}

typedef struct batch {
	queue_item items[OUTBOX_BATCH];
	int64_t seq[OUTBOX_BATCH];
	int64_t created[OUTBOX_BATCH];
	char *ids[OUTBOX_BATCH];
	char *bodies[OUTBOX_BATCH];
	size_t n;
} batch;

static void
batch_free(batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->ids[i]);
		free(b->bodies[i]);
	}
	b->n = 0;
}

/* The oldest rows, up to OUTBOX_BATCH of them and OUTBOX_BATCH_BYTES. */
static int
batch_read(bakery_object *o, batch *b)
{
	sqlite3_stmt *st;
	int rc = object_connect(o);
	if (rc)
		return rc;
	rc = db_prepare(o->db, &o->stmts,
	    "SELECT seq, id, envelope, recorded_at FROM events"
	    " WHERE relayed_at IS NULL ORDER BY seq LIMIT ?", &st);
	if (rc != SQLITE_OK)
		return db_fail(o->db, rc, "cannot read outbox");
	sqlite3_bind_int(st, 1, OUTBOX_BATCH);
	size_t bytes = 0;
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t len = (size_t)sqlite3_column_bytes(st, 2);
		/* One oversized row still goes alone, or it would never go. */
		if (b->n > 0 && bytes + len > OUTBOX_BATCH_BYTES)
			break;
		bytes += len;
		b->seq[b->n] = sqlite3_column_int64(st, 0);
		b->ids[b->n] = bakery_xstrdup((const char *)sqlite3_column_text(st, 1));
		b->bodies[b->n] = bakery_xstrdup((const char *)sqlite3_column_text(st, 2));
		b->items[b->n] = (queue_item){ b->ids[b->n], o->sandbox,
			b->bodies[b->n], sqlite3_column_int64(st, 3), 0, 0 };
		b->n++;
	}
	int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
	object_finish(o, st);
	if (bad) {
		batch_free(b);
		return db_fail(o->db, rc, "cannot read outbox");
	}
	return 0;
}

/* Marks the accepted events relayed, which takes them out of the outbox;
 * counts an attempt on the others. When the outbox is left empty the
 * alarm has nothing to do and is disarmed (its index entry, if any, goes
 * at the next alarm run). */
static int
batch_settle_in(bakery_object *o, batch *b, const char *error)
{
	int rc = db_begin(o->db);
	if (rc)
		return rc;
	sqlite3_stmt *relayed = NULL, *bump = NULL;
	/* relayed_at is when it left the outbox (bakery-trace shows it). */
	int src = db_prepare(o->db, &o->stmts,
	    "UPDATE events SET relayed_at = ?2 WHERE seq = ?1"
	    " AND relayed_at IS NULL", &relayed);
	if (src == SQLITE_OK)
		src = db_prepare(o->db, &o->stmts,
		    "UPDATE events SET attempts = attempts + 1, last_error = ?2"
		    " WHERE seq = ?1", &bump);
	for (size_t i = 0; i < b->n && src == SQLITE_OK; i++) {
		sqlite3_stmt *st = b->items[i].accepted ? relayed : bump;
		sqlite3_bind_int64(st, 1, b->seq[i]);
		if (st == bump)
			sqlite3_bind_text(st, 2, error, -1, SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, 2, bakery_now_ms());
		src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
	}
	object_finish(o, relayed);
	object_finish(o, bump);
	if (src == SQLITE_OK)
		src = sqlite3_exec(o->db,
		    "UPDATE alarm SET fire_at = NULL WHERE id = 1"
		    " AND NOT EXISTS (SELECT 1 FROM events"
		    " WHERE relayed_at IS NULL)", NULL, NULL, NULL);
	if (src != SQLITE_OK) {
		rc = db_fail(o->db, src, "cannot update outbox");
		db_rollback(o->db);
		return rc;
	}
	return db_commit(o->db);
}

static int
batch_settle(bakery_object *o, batch *b, const char *error)
{
	/* A commit a power cut may take (db_relaxed): lost, the events
	 * are still in the outbox with the alarm armed, and are sent again;
	 * the receivers absorb the repeat (docs/design.md, "WAL"). */
	db_relaxed(o->ctx, o->db, 1);
	int rc = batch_settle_in(o, b, error);
	db_relaxed(o->ctx, o->db, 0);
	return rc;
}

/* The relay's span of one send (span.h): "send bakery-events", PRODUCER,
 * linked to each event it sends; their trace's child when they are all
 * of one trace, else a trace of its own. */
static void
send_span_begin(bakery_ctx *ctx, span *s, const queue_item *items,
    size_t n)
{
	trace_ctx *t = bakery_xmalloc(n * sizeof *t);
	int one = 1;
	for (size_t i = 0; i < n; i++) {
		envelope_text_trace(items[i].body, &t[i]);
		one &= strcmp(t[i].trace_id, t[0].trace_id) == 0;
	}
	span_begin(s, "send bakery-events", SPAN_PRODUCER, one ? &t[0] : NULL);
	span_str(s, "messaging.system", ctx->queue_url &&
	    strncmp(ctx->queue_url, "nats", 4) == 0 ? "nats" : "bakery");
	span_str(s, "messaging.operation.type", "send");
	span_str(s, "messaging.destination.name", "bakery-events");
	span_int(s, "messaging.batch.message_count", (long long)n);
	for (size_t i = 0; i < n; i++)
		span_link(s, &t[i]);
	free(t);
}

/* Sends the batches b[i], read from the outboxes of o[i], in one queue
 * send (one commit of the embedded queue), then settles each in its
 * object. rcs[i] is 0, or the queue's error (logged as relay_error) or
 * the settle's; accepted[i] counts the rows the queue took. */
static void
batches_send(bakery_object **o, batch **b, size_t n, int *rcs,
    size_t *accepted)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += b[i]->n;
	queue_item *items = n == 1 ? b[0]->items
	    : bakery_xmalloc(total * sizeof *items);
	for (size_t i = 0, k = 0; n > 1 && i < n; k += b[i]->n, i++)
		memcpy(items + k, b[i]->items, b[i]->n * sizeof *items);
	span s;
	if (span_on())
		send_span_begin(o[0]->ctx, &s, items, total);
	bakery_queue *q;
	int qrc = queue_get(o[0]->ctx, &q);
	if (!qrc)
		qrc = queue_send(q, QUEUE_EVENTS, items, total);
	char *error = qrc ? bakery_xstrdup(bakery_error()) : NULL;
	if (span_on()) {
		if (error)
			span_error(&s, error);
		span_end(&s);
	}
	bakery_crash_point("relay.after_send");
	for (size_t i = 0, k = 0; i < n; i++) {
		accepted[i] = 0;
		for (size_t j = 0; j < b[i]->n; j++, k++) {
			b[i]->items[j].accepted = items[k].accepted;
			accepted[i] += items[k].accepted != 0;
		}
		rcs[i] = batch_settle(o[i], b[i], error ? error : "");
		if (!rcs[i] && qrc) {
			char rows[24];
			snprintf(rows, sizeof rows, "%zu", b[i]->n - accepted[i]);
			bakery_log(LOG_WARN, "relay_error", "object",
			    o[i]->address, "sandbox", o[i]->sandbox, "rows",
			    rows, "error", error, (char *)NULL);
			rcs[i] = bakery_fail(qrc, "%s", error);
		}
	}
	if (items != b[0]->items)
		free(items);
	free(error);
}

int
outbox_send(bakery_object *o, int *sent)
{
	batch *b = bakery_xmalloc(sizeof *b);
	b->n = 0;
	int total = 0, rc = 0;
	if (sent)
		*sent = 0;
	for (;;) {
		if ((rc = batch_read(o, b)) || b->n == 0)
			break;
		size_t accepted, n = b->n;
		batches_send(&o, &b, 1, &rc, &accepted);
		total += (int)accepted;
		batch_free(b);
		/* Stop at a refusal: the rest would meet the same queue. */
		if (rc || accepted < n)
			break;
	}
	batch_free(b);
	free(b);
	if (sent)
		*sent = total;
	return rc;
}

int
outbox_send_together(bakery_object **o, size_t n, int *rcs)
{
	batch **b = bakery_xmalloc(n * sizeof *b);
	bakery_object **from = bakery_xmalloc(n * sizeof *from);
	int *sent_rcs = bakery_xmalloc(n * sizeof *sent_rcs);
	size_t *accepted = bakery_xmalloc(n * sizeof *accepted);
	size_t *index = bakery_xmalloc(n * sizeof *index), m = 0;
	for (size_t i = 0; i < n; i++) {
		batch *bi = bakery_xmalloc(sizeof *bi);
		bi->n = 0;
		rcs[i] = batch_read(o[i], bi);
		if (rcs[i] || bi->n == 0) {
			free(bi);
			continue;
		}
		b[m] = bi;
		from[m] = o[i];
		index[m++] = i;
	}
	if (m > 0)
		batches_send(from, b, m, sent_rcs, accepted);
	for (size_t k = 0; k < m; k++) {
		size_t i = index[k];
		rcs[i] = sent_rcs[k];
		/* An outbox of more than one batch (rows a refused send left
		 * behind) sends the rest on its own. */
		if (!rcs[i] && accepted[k] == b[k]->n && outbox_count(o[i]) > 0)
			rcs[i] = outbox_send(o[i], NULL);
		batch_free(b[k]);
		free(b[k]);
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = rcs[i];
	free(b);
	free(from);
	free(sent_rcs);
	free(accepted);
	free(index);
	return rc;
}

void
outbox_relayed_in_home(bakery_ctx *ctx, long *events, long *objects)
{
	*events = *objects = 0;
	jv names = home_sandbox_names(ctx);
	jv_array_foreach(names, i, name) {
		jv all;
		object_list(ctx, jv_string_value(name), &all);
		jv_array_foreach(all, j, address) {
			char *path = home_object_path(ctx, jv_string_value(name),
			    jv_string_value(address));
			sqlite3 *db;
			sqlite3_stmt *st = NULL;
			if (db_open_readonly(ctx, path, &object_schema, &db) == 0 &&
			    sqlite3_prepare_v2(db, "SELECT count(*) FROM events"
				" WHERE relayed_at IS NOT NULL", -1, &st,
				NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
				long n = (long)sqlite3_column_int64(st, 0);
				*events += n;
				*objects += n > 0;
			}
			sqlite3_finalize(st);
			sqlite3_close(db);
			free(path);
			jv_free(address);
		}
		jv_free(all);
		jv_free(name);
	}
	jv_free(names);
}
