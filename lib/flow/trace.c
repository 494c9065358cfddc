/*
 * trace.c — follow one event id through objects, queue and sandbox.
 */
#include "trace.h"
#include "../core/envelope.h"
#include "../core/kind.h"
#include "../core/object.h"
#include "../queue/queue.h"
#include "routing.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jv
text_or_null(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);
	return s ? jv_string(s) : jv_null();
}

/* Runs sql with ?1 = id on a read-only file; row(st, arg) for each row.
 * A file that is missing or has no schema yet holds nothing. */
static int
query(bakery_ctx *ctx, const char *path, const schema_def *schema,
    const char *sql, const char *id, void (*row)(sqlite3_stmt *, void *),
    void *arg)
{
	sqlite3 *db;
	int rc = db_open_readonly(ctx, path, schema, &db);
	if (rc)
		return rc == EX_NOINPUT ? 0 : rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		while ((src = sqlite3_step(st)) == SQLITE_ROW)
			row(st, arg);
	}
	if (src != SQLITE_DONE)
		rc = db_fail(db, src, path);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* query on an object's file: a file that cannot be read (not SQLite's,
 * say) is reported and skipped, and the search goes on. A busy file and
 * a schema newer than this bakery (a bakery to upgrade) still end it. */
static int
query_object(bakery_ctx *ctx, const char *path, const char *sql,
    const char *id, void (*row)(sqlite3_stmt *, void *), void *arg)
{
	int rc = query(ctx, path, &object_schema, sql, id, row, arg);
	if (rc && rc != EX_TEMPFAIL && rc != EX_CONFIG) {
		bakery_log(LOG_WARN, "bad_file", "file", path, "error",
		    bakery_error(), (char *)NULL);
		rc = 0;
	}
	return rc;
}

struct found {
	jv t;        /* the trace being built */
	jv envelope; /* null until found */
	int recorded;
};

static void
set(struct found *f, const char *field, jv v)
{
	f->t = jv_object_set(f->t, jv_string(field), v);
}

static void
event_row(sqlite3_stmt *st, void *arg)
{
	struct found *f = arg;
	jv_free(f->envelope);
	f->envelope = jv_parse((const char *)sqlite3_column_text(st, 0));
	set(f, "recorded_at", db_column_time(st, 1));
	set(f, "relayed_at", db_column_time(st, 2));
	f->recorded = 1;
}

static void
outbox_row(sqlite3_stmt *st, void *arg)
{
	struct found *f = arg;
	jv o = jv_object();
	o = jv_object_set(o, jv_string("attempts"),
	    jv_number(sqlite3_column_int(st, 0)));
	o = jv_object_set(o, jv_string("last_error"), text_or_null(st, 1));
	o = jv_object_set(o, jv_string("created_at"), db_column_time(st, 2));
	set(f, "outbox", o);
}

/* The objects of the kinds that record events of their own (the
 * descriptor's .records) hold every recorded event. */
static int
find_recording(bakery_ctx *ctx, const char *sandbox, const char *id,
    struct found *f)
{
	jv all;
	int rc = object_list(ctx, sandbox, &all);
	jv_array_foreach(all, i, a) {
		const char *address = jv_string_value(a);
		char kind[BAKERY_NAME_SIZE], key[BAKERY_NAME_SIZE];
		const object_kind *k = NULL;
		if (!rc && !f->recorded && kind_parse_address(address, kind, key,
		    &k) == 0 && k && k->records[0]) {
			char *path = home_object_path(ctx, sandbox, address);
			rc = query_object(ctx, path,
			    "SELECT envelope, recorded_at, relayed_at FROM events"
			    " WHERE id = ?1", id, event_row, f);
			if (!rc && f->recorded) {
				set(f, "recorded_in", jv_string(address));
				rc = query_object(ctx, path,
				    "SELECT attempts, last_error, created_at"
				    " FROM outbox WHERE event_id = ?1", id,
				    outbox_row, f);
			}
			free(path);
		}
		jv_free(a);
	}
	jv_free(all);
	return rc;
}

static void
dead_row(sqlite3_stmt *st, void *arg)
{
	struct found *f = arg;
	jv d = jv_object();
	d = jv_object_set(d, jv_string("error"), text_or_null(st, 0));
	d = jv_object_set(d, jv_string("attempts"),
	    jv_number(sqlite3_column_int(st, 1)));
	d = jv_object_set(d, jv_string("times"),
	    jv_number(sqlite3_column_int(st, 2)));
	d = jv_object_set(d, jv_string("stored_at"), db_column_time(st, 3));
	d = jv_object_set(d, jv_string("updated_at"), db_column_time(st, 4));
	set(f, "dead_letter", d);
	if (jv_get_kind(f->envelope) == JV_KIND_NULL) {
		jv_free(f->envelope);
		f->envelope = jv_parse((const char *)sqlite3_column_text(st, 5));
	}
}

/* The column of st named name, or -1: a sandbox file of the first
 * version has no note of the dead letter a redrive removed. */
static int
column(sqlite3_stmt *st, const char *name)
{
	for (int i = 0; i < sqlite3_column_count(st); i++)
		if (strcmp(sqlite3_column_name(st, i), name) == 0)
			return i;
	return -1;
}

/* The dead letter the last redrive removed, as the redrive noted it;
 * null when there is no note. */
static jv
redriven_dead_letter(sqlite3_stmt *st)
{
	int stored = column(st, "dead_stored_at");
	if (stored < 0 || sqlite3_column_type(st, stored) == SQLITE_NULL)
		return jv_null();
	jv d = jv_object();
	d = jv_object_set(d, jv_string("error"),
	    text_or_null(st, column(st, "dead_error")));
	d = jv_object_set(d, jv_string("attempts"),
	    jv_number(sqlite3_column_int(st, column(st, "dead_attempts"))));
	d = jv_object_set(d, jv_string("times"),
	    jv_number(sqlite3_column_int(st, column(st, "dead_times"))));
	d = jv_object_set(d, jv_string("stored_at"), db_column_time(st,
	    stored));
	return jv_object_set(d, jv_string("updated_at"), db_column_time(st,
	    column(st, "dead_updated_at")));
}

static void
redrive_row(sqlite3_stmt *st, void *arg)
{
	struct found *f = arg;
	jv r = jv_object();
	r = jv_object_set(r, jv_string("times"),
	    jv_number(sqlite3_column_int(st, column(st, "times"))));
	r = jv_object_set(r, jv_string("last_at"), db_column_time(st,
	    column(st, "last_at")));
	r = jv_object_set(r, jv_string("dead_letter"), redriven_dead_letter(st));
	set(f, "redriven", r);
}

/* The event's messages in both queues, looked up by its id
 * (queue_peek_event): what else the queue holds is not read. A driver
 * that stopped before it had read every message that could be the
 * event's says so: "queue_complete" false, and a line on stderr. */
static int
find_in_queue(bakery_ctx *ctx, const char *sandbox, const char *id,
    struct found *f)
{
	jv found = jv_array();
	int all = 1;
	bakery_queue *q;
	int rc = queue_get_existing(ctx, &q);
	if (rc == EX_NOINPUT)
		rc = 0, q = NULL;
	/* The type, when known, names the event's subject on NATS. */
	jv type = jv_get_kind(f->envelope) == JV_KIND_OBJECT
	    ? envelope_field(f->envelope, "type") : jv_null();
	const char *names[] = { QUEUE_EVENTS, QUEUE_DLQ };
	for (int i = 0; q && !rc && i < 2; i++) {
		jv msgs;
		int complete;
		if ((rc = queue_peek_event(q, names[i], sandbox, id,
		    jv_get_kind(type) == JV_KIND_STRING ? jv_string_value(type)
		    : NULL, &msgs, &complete)))
			break;
		if (!complete) {
			char most[24];
			snprintf(most, sizeof most, "%d", QUEUE_SCAN_MAX);
			bakery_log(LOG_WARN, "trace_queue_scan_stopped", "id", id,
			    "queue", names[i], "read", most, (char *)NULL);
			all = 0;
		}
		jv_array_foreach(msgs, j, m) {
			if (jv_get_kind(f->envelope) == JV_KIND_NULL) {
				jv_free(f->envelope);
				f->envelope = jv_object_get(jv_copy(m),
				    jv_string("envelope"));
			}
			m = jv_object_delete(m, jv_string("envelope"));
			m = jv_object_delete(m, jv_string("id"));
			m = jv_object_delete(m, jv_string("sandbox"));
			found = jv_array_append(found, m);
		}
		jv_free(msgs);
	}
	jv_free(type);
	set(f, "queue", found);
	set(f, "queue_complete", jv_bool(all));
	return rc;
}

static void
seen_row(sqlite3_stmt *st, void *arg)
{
	jv *applied = arg;
	jv_free(*applied);
	*applied = db_column_time(st, 0);
}

static int
find_subscribers(bakery_ctx *ctx, const char *sandbox, const char *id,
    struct found *f)
{
	char addresses[ROUTING_MAX_SUBSCRIBERS][BAKERY_ADDRESS_SIZE];
	size_t n = 0;
	jv subs = jv_array();
	int rc = 0;
	if (routing_ensure(ctx))
		return EX_CONFIG;
	if (jv_get_kind(f->envelope) == JV_KIND_OBJECT &&
	    routing_subscribers(ctx, f->envelope, addresses, &n))
		n = 0; /* an envelope without its key fields reaches nobody */
	for (size_t i = 0; i < n && !rc; i++) {
		char *path = home_object_path(ctx, sandbox, addresses[i]);
		jv applied = jv_null();
		rc = query_object(ctx, path,
		    "SELECT applied_at FROM seen WHERE event_id = ?1", id,
		    seen_row, &applied);
		free(path);
		jv s = jv_object_set(jv_object(), jv_string("address"),
		    jv_string(addresses[i]));
		subs = jv_array_append(subs, jv_object_set(s,
		    jv_string("applied_at"), applied));
	}
	set(f, "subscribers", subs);
	return rc;
}

static jv
step(jv at, const char *what, jv where, jv detail)
{
	jv s = jv_object();
	s = jv_object_set(s, jv_string("at"), at);
	s = jv_object_set(s, jv_string("step"), jv_string(what));
	s = jv_object_set(s, jv_string("where"), where);
	return jv_object_set(s, jv_string("detail"), detail);
}

static int
by_time(const void *a, const void *b)
{
	jv x = envelope_field(*(const jv *)a, "at");
	jv y = envelope_field(*(const jv *)b, "at");
	int nx = jv_get_kind(x) != JV_KIND_STRING;
	int ny = jv_get_kind(y) != JV_KIND_STRING;
	int c = nx || ny ? nx - ny
			 : strcmp(jv_string_value(x), jv_string_value(y));
	jv_free(x);
	jv_free(y);
	return c;
}

/* The steps above, in time order; those without a time come last, stably. */
static jv
timeline(jv t)
{
	jv steps[64];
	size_t n = 0;
	jv v;
	if (jv_get_kind(v = envelope_field(t, "recorded_at")) == JV_KIND_STRING)
		steps[n++] = step(v, "recorded", envelope_field(t, "recorded_in"), jv_null());
	else
		jv_free(v);
	if (jv_get_kind(v = envelope_field(t, "relayed_at")) == JV_KIND_STRING)
		steps[n++] = step(v, "relayed", jv_string(QUEUE_EVENTS), jv_null());
	else
		jv_free(v);
	jv o = envelope_field(t, "outbox");
	if (jv_get_kind(o) == JV_KIND_OBJECT)
		steps[n++] = step(jv_null(), "in outbox", envelope_field(t, "recorded_in"),
		    jv_copy(o));
	jv_free(o);
	jv d = envelope_field(t, "dead_letter");
	if (jv_get_kind(d) == JV_KIND_OBJECT)
		steps[n++] = step(envelope_field(d, "stored_at"), "dead-lettered",
		    envelope_field(t, "sandbox"), jv_copy(d));
	jv_free(d);
	jv r = envelope_field(t, "redriven");
	if (jv_get_kind(r) == JV_KIND_OBJECT) {
		/* The dead letter a redrive removed: still a step it took. */
		jv gone = envelope_field(r, "dead_letter");
		if (jv_get_kind(gone) == JV_KIND_OBJECT)
			steps[n++] = step(envelope_field(gone, "stored_at"),
			    "dead-lettered", envelope_field(t, "sandbox"),
			    jv_copy(gone));
		jv_free(gone);
		steps[n++] = step(envelope_field(r, "last_at"), "redriven",
		    envelope_field(t, "sandbox"), jv_copy(r));
	}
	jv_free(r);
	jv subs = envelope_field(t, "subscribers");
	jv_array_foreach(subs, i, s) {
		jv at = envelope_field(s, "applied_at");
		int done = jv_get_kind(at) == JV_KIND_STRING;
		if (n < 62)
			steps[n++] = step(at, done ? "applied" : "not applied",
			    envelope_field(s, "address"), jv_null());
		else
			jv_free(at);
		jv_free(s);
	}
	jv_free(subs);
	jv queue = envelope_field(t, "queue");
	jv_array_foreach(queue, i, m) {
		if (n < 64)
			steps[n++] = step(jv_null(), "queued", envelope_field(m, "queue"),
			    jv_copy(m));
		jv_free(m);
	}
	jv_free(queue);
	/* Insertion sort: stable, and there are a dozen steps at most. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && by_time(&steps[j - 1], &steps[j]) > 0;
		     j--) {
			jv tmp = steps[j];
			steps[j] = steps[j - 1];
			steps[j - 1] = tmp;
		}
	jv list = jv_array();
	for (size_t i = 0; i < n; i++)
		list = jv_array_append(list, steps[i]);
	return list;
}

int
trace_event(bakery_ctx *ctx, const char *sandbox, const char *id, jv *out)
{
	if (!sandbox)
		sandbox = ctx->sandbox;
	struct found f = { jv_object(), jv_null(), 0 };
	set(&f, "id", jv_string(id));
	set(&f, "sandbox", jv_string(sandbox));
	set(&f, "recorded_in", jv_null());
	set(&f, "recorded_at", jv_null());
	set(&f, "relayed_at", jv_null());
	set(&f, "outbox", jv_null());
	set(&f, "dead_letter", jv_null());
	set(&f, "redriven", jv_null());
	char *sandbox_db = home_sandbox_file(ctx, sandbox);
	/* No home is a mistake in the setup, not an event never seen. */
	int rc = home_exists(ctx);
	if (!rc)
		rc = find_recording(ctx, sandbox, id, &f);
	if (!rc)
		rc = query(ctx, sandbox_db, &home_sandbox_schema,
		    "SELECT error, attempts, times, stored_at, updated_at,"
		    " envelope FROM dead_letters WHERE event_id = ?1", id,
		    dead_row, &f);
	if (!rc)
		rc = query(ctx, sandbox_db, &home_sandbox_schema,
		    "SELECT * FROM redrives WHERE event_id = ?1", id,
		    redrive_row, &f);
	free(sandbox_db);
	if (!rc)
		rc = find_in_queue(ctx, sandbox, id, &f);
	jv redriven = envelope_field(f.t, "redriven");
	int known = jv_get_kind(f.envelope) == JV_KIND_OBJECT ||
	    jv_get_kind(redriven) == JV_KIND_OBJECT;
	jv_free(redriven);
	if (!rc && !known)
		rc = bakery_fail(EX_NOINPUT, "no such event: '%s' in sandbox "
		    "'%s'", id, sandbox);
	if (!rc)
		rc = find_subscribers(ctx, sandbox, id, &f);
	if (rc) {
		jv_free(f.t);
		jv_free(f.envelope);
		return rc;
	}
	int have = jv_get_kind(f.envelope) == JV_KIND_OBJECT;
	set(&f, "type", have ? envelope_field(f.envelope, "type") : jv_null());
	set(&f, "subject", have ? envelope_field(f.envelope, "subject") : jv_null());
	/* The W3C trace it belongs to: none from an envelope without a
	 * valid traceparent (one written before bakery carried them). */
	trace_ctx tc;
	set(&f, "trace_id", have && envelope_trace(f.envelope, &tc)
	    ? jv_string(tc.trace_id) : jv_null());
	jv_free(f.envelope);
	set(&f, "timeline", timeline(f.t));
	*out = f.t;
	return 0;
}

static void
id_row(sqlite3_stmt *st, void *arg)
{
	jv *ids = arg;
	*ids = jv_array_append(*ids,
	    jv_string((const char *)sqlite3_column_text(st, 0)));
}

/* The ids of the events the order's objects recorded: KIND/ORDER's of
 * each kind that records events (the order's, then Billing's payments),
 * each in the order recorded. */
static int
order_event_ids(bakery_ctx *ctx, const char *sandbox, const char *order,
    jv *ids)
{
	int rc = 0, found = 0;
	*ids = jv_array();
	for (int i = 0; object_kinds[i] && !rc; i++) {
		if (!object_kinds[i]->records[0])
			continue;
		char address[96];
		snprintf(address, sizeof address, "%s/%s",
		    object_kinds[i]->name, order);
		char *path = home_object_path(ctx, sandbox, address);
		found |= access(path, F_OK) == 0;
		rc = query_object(ctx, path, "SELECT id FROM events ORDER BY"
		    " seq", NULL, id_row, ids);
		free(path);
	}
	if (!rc && !found)
		rc = bakery_fail(EX_NOINPUT, "no such order: '%s' in sandbox "
		    "'%s'", order, sandbox);
	if (rc)
		jv_free(*ids);
	return rc;
}

int
trace_order(bakery_ctx *ctx, const char *sandbox, const char *order,
    jv *out)
{
	if (!sandbox)
		sandbox = ctx->sandbox;
	if (!bakery_name_valid(order))
		return bakery_fail(EX_USAGE, "bad order id: '%s'", order);
	jv ids;
	int rc = home_exists(ctx);
	if (!rc)
		rc = order_event_ids(ctx, sandbox, order, &ids);
	if (rc)
		return rc;
	*out = jv_array();
	jv_array_foreach(ids, i, id) {
		jv t;
		if (!rc && !(rc = trace_event(ctx, sandbox, jv_string_value(id),
		    &t)))
			*out = jv_array_append(*out, t);
		jv_free(id);
	}
	jv_free(ids);
	if (rc) {
		jv_free(*out);
		return rc;
	}
	/* In time order across the two objects (a payment is recorded
	 * between OrderPlaced and OrderPaid); jv_sort is stable. */
	jv keys = jv_array();
	jv_array_foreach(*out, i, t) {
		keys = jv_array_append(keys, envelope_field(t, "recorded_at"));
		jv_free(t);
	}
	*out = jv_sort(*out, keys);
	return 0;
}
