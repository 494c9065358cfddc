/*
 * deadletter.c — store, list and redrive dead letters.
 */
#include "deadletter.h"
#include "envelope.h"
#include "loop.h"
#include "../queue/queue.h"
#include "../net/span.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

/* A span of the dead letter id (span.h): a child of the caller's trace
 * (TRACEPARENT) when given, else of the event's; linked to the event's
 * context either way. */
static void
dead_span(bakery_ctx *ctx, span *s, const char *name, enum span_kind kind,
    jv env, const char *id, const char *sandbox, const char *destination)
{
	trace_ctx event, caller;
	int has = jv_get_kind(env) == JV_KIND_OBJECT &&
	    envelope_trace(env, &event);
	int called = tracectx_environment(&caller);
	span_begin(s, name, kind, called ? &caller : has ? &event : NULL);
	if (has)
		span_link(s, &event);
	span_str(s, "messaging.system", ctx->queue_url &&
	    strncmp(ctx->queue_url, "nats", 4) == 0 ? "nats" : "bakery");
	span_str(s, "messaging.destination.name", destination);
	span_str(s, "messaging.message.id", id);
	span_str(s, "bakery.sandbox", sandbox);
}

static void
dead_span_end(span *s, int rc)
{
	if (rc)
		span_error(s, bakery_error());
	span_end(s);
}

int
deadletter_store(bakery_ctx *ctx, const char *sandbox, const char *id,
    const char *type, const char *envelope, const char *error, int attempts)
{
	sqlite3 *db;
	int rc = birth_open_sandbox(ctx, sandbox, 1, &db);
	if (rc)
		return rc;
	static const char *const sql[] = {
		"INSERT INTO dead_letters(event_id, type, envelope, error,"
		" attempts, stored_at, updated_at)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
		" ON CONFLICT (event_id) DO UPDATE SET"
		" envelope = excluded.envelope, error = excluded.error,"
		" attempts = excluded.attempts, times = times + 1,"
		" updated_at = excluded.updated_at",
	};
	rc = db_run(db, "cannot store dead letter", 1, sql, "ttttii", id,
	    type, envelope, error, (int64_t)attempts, bakery_now_ms());
	sqlite3_close(db);
	return rc;
}

int
deadletter_take(bakery_ctx *ctx, bakery_queue *q, queue_message *m,
    jv *line)
{
	jv env = jv_parse(m->body);
	const char *type = envelope_str(env, "type");
	const char *error = m->last_error ? m->last_error : "";
	span s;
	if (span_on()) {
		dead_span(ctx, &s, "process bakery-events-dlq", SPAN_CONSUMER,
		    env, m->id, m->sandbox, "bakery-events-dlq");
		span_str(&s, "bakery.error", error);
		span_int(&s, "bakery.attempts", m->attempts);
	}
	int rc = deadletter_store(ctx, m->sandbox, m->id, type ? type : "",
	    m->body, error, m->attempts);
	if (!rc) {
		bakery_crash_point("dlq.after_store");
		rc = queue_ack(q, QUEUE_DLQ, m);
		if (rc == EX_TEMPFAIL)
			rc = 0; /* another drainer stored it too: same row */
	}
	if (!rc) {
		jv l = jv_object();
		l = jv_object_set(l, jv_string("id"), jv_string(m->id));
		l = jv_object_set(l, jv_string("type"),
		    type ? jv_string(type) : jv_null());
		l = jv_object_set(l, jv_string("sandbox"),
		    jv_string(m->sandbox));
		l = jv_object_set(l, jv_string("error"), jv_string(error));
		l = jv_object_set(l, jv_string("attempts"),
		    jv_number(m->attempts));
		*line = l;
	}
	if (span_on())
		dead_span_end(&s, rc);
	jv_free(env);
	return rc;
}

static jv
row_to_jv(sqlite3_stmt *st, const char *sandbox)
{
	char stored[32], updated[32];
	bakery_format_time(sqlite3_column_int64(st, 6), stored, sizeof stored);
	bakery_format_time(sqlite3_column_int64(st, 7), updated, sizeof updated);
	jv d = jv_object();
	d = jv_object_set(d, jv_string("id"),
	    jv_string((const char *)sqlite3_column_text(st, 0)));
	d = jv_object_set(d, jv_string("type"),
	    jv_string((const char *)sqlite3_column_text(st, 1)));
	d = jv_object_set(d, jv_string("sandbox"), jv_string(sandbox));
	d = jv_object_set(d, jv_string("error"),
	    jv_string((const char *)sqlite3_column_text(st, 3)));
	d = jv_object_set(d, jv_string("attempts"),
	    jv_number(sqlite3_column_int(st, 4)));
	d = jv_object_set(d, jv_string("times"),
	    jv_number(sqlite3_column_int(st, 5)));
	d = jv_object_set(d, jv_string("stored_at"), jv_string(stored));
	d = jv_object_set(d, jv_string("updated_at"), jv_string(updated));
	/* A poison message's body may not be JSON: keep it as a string. */
	const char *body = (const char *)sqlite3_column_text(st, 2);
	jv env = jv_parse(body);
	d = jv_object_set(d, jv_string("envelope"),
	    jv_is_valid(env) ? env : (jv_free(env), jv_string(body)));
	return d;
}

/* A dead letter's row as it was read: a store again counts times and
 * moves updated_at, so a redrive deletes the row it sent and no newer. */
struct row_version {
	int64_t times, updated_at;
};

/* The dead letters of the sandbox (id: that one only) into *out; v, when
 * not NULL, gets the first row's version. */
static int
query(bakery_ctx *ctx, const char *sandbox, const char *id, jv *out,
    struct row_version *v)
{
	sqlite3 *db;
	*out = jv_array();
	if (!sandbox)
		sandbox = ctx->sandbox;
	int rc = birth_open_sandbox(ctx, sandbox, 0, &db);
	if (rc == EX_NOINPUT)
		return 0;
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db,
	    "SELECT event_id, type, envelope, error, attempts, times,"
	    " stored_at, updated_at FROM dead_letters"
	    " WHERE ?1 IS NULL OR event_id = ?1 ORDER BY stored_at, event_id",
	    -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = db_fail(db, src, "cannot read dead letters");
		sqlite3_close(db);
		return rc;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (v && jv_array_length(jv_copy(*out)) == 0)
			*v = (struct row_version){ sqlite3_column_int64(st, 5),
				sqlite3_column_int64(st, 7) };
		*out = jv_array_append(*out, row_to_jv(st, sandbox));
	}
	if (src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot read dead letters");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

int
deadletter_drain(bakery_ctx *ctx, const char *only, int follow,
    void (*each)(void *arg, jv line), void *arg)
{
	bakery_queue *q;
	int rc = queue_get(ctx, &q);
	if (rc)
		return rc;
	loop_catch_signals();
	queue_message msgs[10];
	long idle_ms = 0;
	while (!loop_stopping()) {
		size_t got;
		/* A newer bakery may have written in the home meanwhile. */
		if ((rc = home_recheck(ctx)))
			return rc;
		if ((rc = queue_receive(q, QUEUE_DLQ, only, 10, 30, msgs, &got)))
			return rc;
		for (size_t i = 0; i < got; i++) {
			jv line;
			int one = deadletter_take(ctx, q, &msgs[i], &line);
			if (!one)
				each(arg, line);
			else if (!rc)
				rc = one;
			queue_message_free(&msgs[i]);
		}
		if (rc)
			return rc;
		if (got)
			idle_ms = 0;
		else if (!follow)
			break;
		else
			loop_idle_wait(&idle_ms);
	}
	return 0;
}

int
deadletter_list(bakery_ctx *ctx, const char *sandbox, jv *out)
{
	return query(ctx, sandbox, NULL, out, NULL);
}

static int
get_version(bakery_ctx *ctx, const char *sandbox, const char *id, jv *out,
    struct row_version *v)
{
	jv all;
	int rc = query(ctx, sandbox, id, &all, v);
	if (rc) {
		jv_free(all);
		return rc;
	}
	if (jv_array_length(jv_copy(all)) == 0) {
		jv_free(all);
		return bakery_fail(EX_NOINPUT, "no such dead letter: '%s'", id);
	}
	*out = jv_array_get(all, 0);
	return 0;
}

int
deadletter_get(bakery_ctx *ctx, const char *sandbox, const char *id, jv *out)
{
	return get_version(ctx, sandbox, id, out, NULL);
}

/* The row goes and a note of the redrive stays, in one transaction: the
 * note keeps the dead letter as it was (its error, its deliveries), which
 * bakery-trace shows after the redrive. Only the row as it was read (v)
 * goes: the event sent may have failed again and been stored again
 * meanwhile (times and updated_at moved), and that dead letter stays. */
static int
forget_redriven(bakery_ctx *ctx, const char *sandbox, const char *id,
    const char *type, const struct row_version *v)
{
	sqlite3 *db;
	int rc = birth_open_sandbox(ctx, sandbox, 0, &db);
	if (rc)
		return rc;
	static const char *const sql[] = {
		"INSERT INTO redrives(event_id, type, last_at)"
		" VALUES (?1, ?2, ?3) ON CONFLICT (event_id) DO UPDATE"
		" SET times = times + 1, last_at = excluded.last_at",
		/* A row another redrive deleted, or one stored again,
		 * leaves the note of the dead letter it kept. */
		"UPDATE redrives SET (dead_error, dead_attempts, dead_times,"
		" dead_stored_at, dead_updated_at) = (SELECT error, attempts,"
		" times, stored_at, updated_at FROM dead_letters"
		" WHERE event_id = ?1) WHERE event_id = ?1 AND EXISTS"
		" (SELECT 1 FROM dead_letters WHERE event_id = ?1"
		" AND times = ?4 AND updated_at = ?5)",
		"DELETE FROM dead_letters WHERE event_id = ?1"
		" AND times = ?4 AND updated_at = ?5",
	};
	rc = db_run(db, "cannot forget dead letter", 3, sql, "ttiii", id,
	    type ? type : "", bakery_now_ms(), v->times, v->updated_at);
	sqlite3_close(db);
	return rc;
}

int
deadletter_redrive(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *redriven)
{
	jv d;
	struct row_version v;
	if (!sandbox)
		sandbox = ctx->sandbox;
	int rc = get_version(ctx, sandbox, id, &d, &v);
	if (rc)
		return rc;
	jv env = jv_object_get(jv_copy(d), jv_string("envelope"));
	char *body = jv_get_kind(env) == JV_KIND_STRING
	    ? bakery_xstrdup(jv_string_value(env)) : envelope_dump(env);
	jv_free(env);
	jv checked;
	if (envelope_parse(body, strlen(body), &checked)) {
		/* Sending it again would only poison the queue again. */
		rc = bakery_fail(EX_DATAERR, "cannot redrive '%s': %s", id,
		    bakery_error());
		free(body);
		jv_free(d);
		return rc;
	}
	bakery_queue *q;
	span s;
	if (span_on())
		dead_span(ctx, &s, "redrive bakery-events", SPAN_PRODUCER,
		    checked, id, sandbox, "bakery-events");
	/* A redrive: on NATS a fresh message id, so the duplicate window that
	 * swallows a relay's repeat does not swallow this. */
	queue_item item = { id, sandbox, body, envelope_time_ms(checked), 0, 1 };
	if (!(rc = queue_get(ctx, &q)))
		rc = queue_send(q, QUEUE_EVENTS, &item, 1);
	if (!rc && !item.accepted)
		rc = bakery_fail(EX_UNAVAILABLE, "queue did not accept '%s'", id);
	if (span_on())
		dead_span_end(&s, rc);
	free(body);
	jv_free(checked);
	if (!rc) {
		/* A crash here sends it twice at worst, never zero times. */
		bakery_crash_point("redrive.after_send");
		rc = forget_redriven(ctx, sandbox, id, envelope_str(d, "type"),
		    &v);
	}
	if (rc) {
		jv_free(d);
		return rc;
	}
	*redriven = d;
	return 0;
}
