/*
 * status.c — read every object's outbox and alarm, the dead letters and
 * the queue's depth, without writing anything.
 */
#define _GNU_SOURCE
#include "status.h"
#include "status-internal.h"
#include "../orders/billing.h"
#include "../core/alarm.h"
#include "../core/envelope.h"
#include "../base/json.h"
#include "../store/file.h"
#include "../net/gateway.h"
#include "../net/otlp.h"
#include "../core/object.h"
#include "../core/outbox.h"
#include "../queue/queue.h"
#include "../orders/refunds.h"
#include "../replica/replica_status.h"
#include "../flow/relay.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Below this much free space on the home's disk, writes are about to
 * fail (74): SQLite needs room for a transaction's pages and its WAL. */
#define STATUS_DISK_LOW (1024 * 1024)

struct totals {
	jv busy, dead, attention, flagged;
	jv refunded; /* borrowed: the payment intents marked refunded */
	jv billed;   /* {ORDER: the payment Billing counted for it} */
	sqlite3 *index; /* the alarm index read-only; NULL: it cannot tell */
	long objects, rows, armed, rearms, tripped, dead_letters, n_flagged;
	long unbilled, unfound;
	int64_t oldest_age_s;
};

static void
attention(struct totals *t, char *sentence)
{
	t->attention = jv_array_append(t->attention, jv_string(sentence));
	free(sentence);
}

/* Opens path (freed here) read-only into *db. A file that fails to open
 * is under "needs attention"; EX_NOINPUT, a file being made, is not. */
static int
look_at(bakery_ctx *ctx, char *path, const schema_def *schema,
    const char *sandbox, struct totals *t, sqlite3 **db)
{
	int rc = db_open_readonly(ctx, path, schema, db);
	free(path);
	if (rc && rc != EX_NOINPUT)
		attention(t, bakery_xasprintf("sandbox %s: %s", sandbox,
		    bakery_error()));
	return rc;
}

/* The flagged payments of one billing object not marked refunded, each
 * under "needs attention" until an operator refunds it and says so. */
static void
read_flagged_payments(sqlite3 *db, const char *sandbox, const char *address,
    struct totals *t)
{
	jv all;
	if (billing_payments(db, address, &all)) {
		attention(t, bakery_xasprintf("sandbox %s: cannot read %s",
		    sandbox, bakery_error()));
		jv_free(all);
		return;
	}
	jv counted = billing_counted_payment(jv_object_set(jv_object(),
	    jv_string("payments"), jv_copy(all)));
	if (jv_is_valid(counted))
		t->billed = jv_object_set(t->billed, jv_string(address + 8),
		    counted);
	jv_array_foreach(all, i, f) {
		const char *pi = envelope_str(f, "payment_intent");
		int refunded = pi && jv_object_has(jv_copy(t->refunded),
		    jv_string(pi));
		if (!envelope_str(f, "flag") || refunded) {
			jv_free(f);
			continue;
		}
		attention(t, bakery_xasprintf("sandbox %s: %s: payment %s not "
		    "counted: %s: refund it, then bakery-order -s %s refunded "
		    "%s %s", sandbox, address, pi ? pi : "?",
		    envelope_str(f, "reason") ? envelope_str(f, "reason") : "?",
		    sandbox, address + 8, pi ? pi : "?"));
		t->flagged = jv_array_append(t->flagged, jv_object_set(f,
		    jv_string("address"), jv_string(address)));
		t->n_flagged++;
	}
	jv_free(all);
}

/*
 * Whether the object's alarm, read armed at fire_at, has an entry in the
 * index (1) or not (0). The object and the index are two files read one
 * after the other: an alarm run may disarm the alarm and remove its entry
 * between the two reads. So a missing entry is looked for again after the
 * alarm is read again: the alarm still armed at the same time and still
 * no entry cannot come of a run that disarmed it (an alarm armed again
 * gets its entry before its commit, and a later time).
 */
static int
alarm_found(sqlite3 *db, sqlite3 *index, const char *sandbox,
    const char *address, int64_t fire_at)
{
	if (alarm_index_has(index, sandbox, address))
		return 1;
	sqlite3_stmt *st;
	int64_t again = 0;
	if (sqlite3_prepare_v2(db, "SELECT fire_at FROM alarm WHERE id = 1",
		-1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		again = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return again != fire_at || alarm_index_has(index, sandbox, address);
}

static void
read_object(bakery_ctx *ctx, const char *sandbox, const char *address,
    int64_t now, int64_t max_age_s, struct totals *t)
{
	sqlite3 *db;
	int rc = look_at(ctx, home_object_path(ctx, sandbox, address),
	    &object_schema, sandbox, t, &db);
	if (rc == EX_NOINPUT)
		return; /* being created right now: nothing to see yet */
	t->objects++;
	if (rc)
		return;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db,
	    "SELECT (SELECT count(*) FROM outbox),"
	    " (SELECT min(created_at) FROM outbox),"
	    " (SELECT fire_at FROM alarm WHERE id = 1),"
	    " (SELECT rearms_today FROM alarm WHERE id = 1),"
	    " (SELECT rearm_day FROM alarm WHERE id = 1)", -1, &st, NULL);
	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
		long rows = sqlite3_column_int64(st, 0);
		int64_t oldest = sqlite3_column_int64(st, 1);
		int64_t fire_at = sqlite3_column_int64(st, 2);
		const char *day = (const char *)sqlite3_column_text(st, 4);
		long rearms = object_rearms_today(day,
		    sqlite3_column_int64(st, 3), now);
		int tripped = rearms >= REARM_GUARD && rows > 0;
		int unfound = fire_at && !alarm_found(db, t->index, sandbox,
		    address, fire_at);
		int64_t age_s = rows ? (now - oldest) / 1000 : 0;
		t->rows += rows;
		t->armed += fire_at != 0;
		t->rearms += rearms;
		t->tripped += tripped;
		t->unfound += unfound;
		if (age_s > t->oldest_age_s)
			t->oldest_age_s = age_s;
		if (rows || fire_at || rearms) {
			jv b = jv_object();
			b = jv_object_set(b, jv_string("address"),
			    jv_string(address));
			b = jv_object_set(b, jv_string("outbox_rows"),
			    jv_number(rows));
			b = jv_object_set(b, jv_string("oldest_at"),
			    bakery_time_jv(rows ? oldest : 0));
			b = jv_object_set(b, jv_string("oldest_age_s"),
			    rows ? jv_number(age_s) : jv_null());
			b = jv_object_set(b, jv_string("alarm_at"),
			    bakery_time_jv(fire_at));
			b = jv_object_set(b, jv_string("alarm_indexed"),
			    fire_at ? jv_bool(!unfound) : jv_null());
			b = jv_object_set(b, jv_string("rearms_today"),
			    jv_number(rearms));
			b = jv_object_set(b, jv_string("guard_tripped"),
			    jv_bool(tripped));
			t->busy = jv_array_append(t->busy, b);
		}
		if (tripped)
			attention(t, bakery_xasprintf("sandbox %s: %s: re-arm "
			    "guard tripped, %ld rows wait for a command or the "
			    "wipe", sandbox, address, rows));
		if (unfound) {
			char at[32];
			bakery_format_time(fire_at, at, sizeof at);
			attention(t, bakery_xasprintf("sandbox %s: %s: alarm armed "
			    "for %s with no entry in the alarm index: no alarm "
			    "run will fire it (bakery-relay -s %s %s sends its "
			    "outbox)", sandbox, address, at, sandbox, address));
		}
		if (rows && age_s > max_age_s)
			attention(t, bakery_xasprintf("sandbox %s: %s: outbox "
			    "row %lld s old (over %lld s)", sandbox, address,
			    (long long)age_s, (long long)max_age_s));
	} else {
		db_fail(db, src, address);
		attention(t, bakery_xasprintf("sandbox %s: cannot read %s",
		    sandbox, bakery_error()));
	}
	sqlite3_finalize(st);
	if (strncmp(address, "billing/", 8) == 0)
		read_flagged_payments(db, sandbox, address, t);
	sqlite3_close(db);
}

/* A dead-lettered PaymentSucceeded that Billing never counted (the order's
 * subscriber refused it: billing.h, billing_counts) was made by someone
 * other than Billing: it paid nothing, and someone sent it. */
static void
check_billed(const char *sandbox, const char *id, const char *text,
    struct totals *t)
{
	jv env;
	if (!text || json_parse(text, strlen(text), &env))
		return;
	const char *order = envelope_data_str(env, "order");
	const char *pi = envelope_data_str(env, "payment_intent");
	jv counted = order ? jv_object_get(jv_copy(t->billed), jv_string(order))
			   : jv_invalid();
	if (!billing_counts(counted, pi)) {
		t->unbilled++;
		attention(t, bakery_xasprintf("sandbox %s: payment event %s for "
		    "order %s has no record in Billing: it paid nothing; find "
		    "who sent it", sandbox, id, order ? order : "?"));
	}
	jv_free(env);
}

static void
read_dead_letters(bakery_ctx *ctx, const char *sandbox, struct totals *t)
{
	sqlite3 *db;
	if (look_at(ctx, home_sandbox_file(ctx, sandbox), &home_sandbox_schema,
		sandbox, t, &db))
		return;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db,
	    "SELECT event_id, type, error, attempts, times, updated_at,"
	    " envelope FROM dead_letters ORDER BY stored_at, event_id", -1, &st,
	    NULL);
	while (src == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		jv d = jv_object();
		d = jv_object_set(d, jv_string("id"), jv_string(
		    (const char *)sqlite3_column_text(st, 0)));
		d = jv_object_set(d, jv_string("type"), jv_string(
		    (const char *)sqlite3_column_text(st, 1)));
		d = jv_object_set(d, jv_string("error"), jv_string(
		    (const char *)sqlite3_column_text(st, 2)));
		d = jv_object_set(d, jv_string("attempts"),
		    jv_number(sqlite3_column_int(st, 3)));
		d = jv_object_set(d, jv_string("times"),
		    jv_number(sqlite3_column_int(st, 4)));
		d = jv_object_set(d, jv_string("updated_at"),
		    bakery_time_jv(sqlite3_column_int64(st, 5)));
		t->dead = jv_array_append(t->dead, d);
		t->dead_letters++;
		if (strcmp((const char *)sqlite3_column_text(st, 1),
			"PaymentSucceeded") == 0)
			check_billed(sandbox, (const char *)sqlite3_column_text(st,
			    0), (const char *)sqlite3_column_text(st, 6), t);
	}
	if (src == SQLITE_OK)
		src = sqlite3_errcode(db);
	if (src != SQLITE_OK && src != SQLITE_DONE) {
		db_fail(db, src, "dead letters");
		attention(t, bakery_xasprintf("sandbox %s: cannot read %s",
		    sandbox, bakery_error()));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (t->dead_letters)
		attention(t, bakery_xasprintf("sandbox %s: %ld dead letters "
		    "(bakery-dlq list, bakery-redrive)", sandbox,
		    t->dead_letters));
}

static jv
read_sandbox(bakery_ctx *ctx, const char *sandbox, int64_t now,
    int64_t max_age_s, jv refunded, sqlite3 *index, jv *attention_out)
{
	struct totals t = { .busy = jv_array(), .dead = jv_array(),
		.flagged = jv_array(), .attention = *attention_out,
		.refunded = refunded, .billed = jv_object(), .index = index };
	jv all;
	object_list(ctx, sandbox, &all);
	jv_array_foreach(all, i, a) {
		read_object(ctx, sandbox, jv_string_value(a), now, max_age_s, &t);
		jv_free(a);
	}
	jv_free(all);
	read_dead_letters(ctx, sandbox, &t);
	long overdue = status_alarms_overdue(index, sandbox, now, max_age_s,
	    &t.attention);
	jv_free(t.billed);
	*attention_out = t.attention;
	jv s = jv_object();
	s = jv_object_set(s, jv_string("sandbox"), jv_string(sandbox));
	s = jv_object_set(s, jv_string("objects"), jv_number(t.objects));
	s = jv_object_set(s, jv_string("outbox_rows"), jv_number(t.rows));
	s = jv_object_set(s, jv_string("oldest_age_s"),
	    jv_number((double)t.oldest_age_s));
	s = jv_object_set(s, jv_string("alarms_armed"), jv_number(t.armed));
	s = jv_object_set(s, jv_string("rearms_today"), jv_number(t.rearms));
	s = jv_object_set(s, jv_string("guards_tripped"), jv_number(t.tripped));
	s = jv_object_set(s, jv_string("alarms_unfound"), jv_number(t.unfound));
	s = jv_object_set(s, jv_string("alarms_overdue"), jv_number(overdue));
	s = jv_object_set(s, jv_string("dead_letters"),
	    jv_number(t.dead_letters));
	s = jv_object_set(s, jv_string("flagged_payments"),
	    jv_number(t.n_flagged));
	s = jv_object_set(s, jv_string("unbilled_payments"),
	    jv_number(t.unbilled));
	s = jv_object_set(s, jv_string("busy"), t.busy);
	s = jv_object_set(s, jv_string("dead"), t.dead);
	s = jv_object_set(s, jv_string("flagged"), t.flagged);
	return s;
}

/* The queue's stats; an embedded queue that does not exist yet is empty,
 * unless the home's objects hold events it took (relayed): then it is
 * gone, and they with it. */
static int
read_queue(bakery_ctx *ctx, jv *out, jv *attention_list)
{
	bakery_queue *q;
	int rc = queue_get_existing(ctx, &q);
	if (rc != EX_NOINPUT)
		return rc ? rc : queue_stats(q, out);
	*out = queue_empty_stats();
	long events, objects;
	outbox_relayed_in_home(ctx, &events, &objects);
	if (events) {
		char *file = queue_file(ctx);
		char *s = bakery_xasprintf("queue: no queue at '%s', yet %ld "
		    "events of %ld objects are marked relayed: the queue that "
		    "took them is gone, with what it had not delivered, which "
		    "no relay sends again (restore it from a backup)", file, events, objects);
		*attention_list = jv_array_append(*attention_list, jv_string(s));
		free(s);
		free(file);
	}
	return 0;
}

/* The bytes free to bakery on the home's filesystem, -1 when unknown. A
 * full disk stops every write; status, which writes nothing, is where an
 * operator learns of it before the errors pile up. */
static double
read_disk(bakery_ctx *ctx, jv *attention_list)
{
	struct statvfs fs;
	if (statvfs(ctx->home, &fs) != 0)
		return -1;
	double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
	if (free_bytes < STATUS_DISK_LOW) {
		char *s = bakery_xasprintf("home %s: its disk is full (%.0f bytes "
		    "free): every write fails (74) until space is freed",
		    ctx->home, free_bytes);
		*attention_list = jv_array_append(*attention_list, jv_string(s));
		free(s);
	}
	return free_bytes;
}

int
status_collect(bakery_ctx *ctx, const char *sandbox, int64_t max_age_s,
    jv *out)
{
	int64_t now = bakery_now_ms();
	jv queue;
	/* No home is a mistake in the setup, not a home with nothing to
	 * report: a monitor must not show green for it. */
	jv attention_list = jv_array();
	int rc = home_exists(ctx);
	if (!rc)
		rc = read_queue(ctx, &queue, &attention_list);
	if (rc) {
		jv_free(attention_list);
		return rc;
	}
	double free_bytes = read_disk(ctx, &attention_list);
	jv dlq = jv_object_get(jv_copy(queue), jv_string(QUEUE_DLQ));
	double undrained = 0;
	jv_object_foreach(dlq, k, v) {
		undrained += jv_number_value(v);
		jv_free(k);
		jv_free(v);
	}
	jv_free(dlq);
	if (undrained > 0) {
		char *s = bakery_xasprintf("%s: %.0f messages not yet drained "
		    "(bakery-dlq drain)", QUEUE_DLQ, undrained);
		attention_list = jv_array_append(attention_list, jv_string(s));
		free(s);
	}
	jv by = status_undrained(ctx, undrained, &attention_list);
	gateway_kind g;
	if (gateway_read(ctx->home, &g))
		attention_list = jv_array_append(attention_list,
		    jv_string(bakery_error()));
	/* Flagged payments whose sandbox was wiped before they were marked
	 * refunded: still owed to a customer. */
	jv refunded, owed;
	if (refunds_read(ctx, &refunded, &owed)) {
		attention_list = jv_array_append(attention_list,
		    jv_string(bakery_error()));
		refunded = jv_object();
		owed = jv_array();
	}
	jv_array_foreach(owed, i, r) {
		char *line = bakery_xasprintf("refunds: payment %s of order %s "
		    "(sandbox %s, wiped) not counted: %s: refund it, then "
		    "bakery-order -s %s refunded %s %s",
		    envelope_str(r, "payment_intent"), envelope_str(r, "order"),
		    envelope_str(r, "sandbox"), envelope_str(r, "reason"),
		    envelope_str(r, "sandbox"), envelope_str(r, "order"),
		    envelope_str(r, "payment_intent"));
		attention_list = jv_array_append(attention_list, jv_string(line));
		free(line);
		jv_free(r);
	}
	/* An armed alarm with no entry would wait for its object's next
	 * command or the wipe: no alarm run finds it (alarm.h). */
	sqlite3 *index;
	if (alarm_index_reader(ctx, &index))
		attention_list = jv_array_append(attention_list,
		    jv_string(bakery_error()));
	/* A replicated home: the lease and each standby's lag. */
	jv replica = replica_status(ctx, max_age_s, &attention_list);
	jv names = sandbox ? jv_array_append(jv_array(), jv_string(sandbox))
			   : home_sandbox_names(ctx);
	jv sandboxes = jv_array();
	jv_array_foreach(names, i, name) {
		jv one = read_sandbox(ctx, jv_string_value(name), now,
		    max_age_s, refunded, index, &attention_list);
		sandboxes = jv_array_append(sandboxes, status_held(ctx,
		    jv_string_value(name), by, one, &attention_list));
		jv_free(name);
	}
	jv_free(names);
	jv_free(by);
	sqlite3_close(index);
	jv s = jv_object();
	s = jv_object_set(s, jv_string("time"), bakery_time_jv(now));
	s = jv_object_set(s, jv_string("home"), jv_string(ctx->home));
	s = jv_object_set(s, jv_string("gateway"),
	    g ? jv_string(gateway_name(g)) : jv_null());
	s = jv_object_set(s, jv_string("max_age_s"),
	    jv_number((double)max_age_s));
	s = jv_object_set(s, jv_string("disk_free_bytes"),
	    free_bytes >= 0 ? jv_number(free_bytes) : jv_null());
	s = jv_object_set(s, jv_string("ok"),
	    jv_bool(jv_array_length(jv_copy(attention_list)) == 0));
	s = jv_object_set(s, jv_string("attention"), attention_list);
	s = jv_object_set(s, jv_string("queue"), queue);
	s = jv_object_set(s, jv_string("sandboxes"), sandboxes);
	s = jv_object_set(s, jv_string("refunds_owed"), owed);
	s = jv_object_set(s, jv_string("spans_dropped"),
	    jv_number((double)otlp_dropped(ctx->home)));
	s = jv_object_set(s, jv_string("replica"), replica);
	jv_free(refunded);
	*out = s;
	return 0;
}

/* Appends to a growing buffer. */
struct text {
	char *buf;
	size_t len;
};

static void __attribute__((format(printf, 2, 3)))
add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *more;
	if (vasprintf(&more, fmt, ap) < 0)
		abort();
	va_end(ap);
	size_t n = strlen(more);
	t->buf = bakery_xrealloc(t->buf, t->len + n + 1);
	memcpy(t->buf + t->len, more, n + 1);
	t->len += n;
	free(more);
}

static const struct {
	const char *field, *metric, *help;
} sandbox_metrics[] = {
	{ "objects", "bakery_objects", "Objects in the sandbox." },
	{ "outbox_rows", "bakery_outbox_rows",
	  "Outbox rows the queue has not accepted yet." },
	{ "oldest_age_s", "bakery_outbox_oldest_age_seconds",
	  "Age of the oldest outbox row." },
	{ "alarms_armed", "bakery_alarms_armed", "Objects with an armed alarm." },
	{ "rearms_today", "bakery_alarm_rearms_today",
	  "Alarm re-arms today (UTC), summed over the objects." },
	{ "guards_tripped", "bakery_alarm_guards_tripped",
	  "Objects whose re-arm guard tripped today." },
	{ "alarms_unfound", "bakery_alarms_unfound",
	  "Objects whose armed alarm has no entry in the alarm index." },
	{ "alarms_overdue", "bakery_alarms_overdue",
	  "Alarms due more than --max-age ago that no alarm run fired." },
	{ "dead_letters", "bakery_dead_letters",
	  "Dead letters stored in the sandbox." },
	{ "flagged_payments", "bakery_payments_flagged",
	  "Payments kept but not counted (double or not the order's): refund." },
	{ "unbilled_payments", "bakery_payments_unbilled",
	  "Dead-lettered payment events Billing never recorded: they paid "
	  "nothing." },
};

char *
status_prometheus(jv status)
{
	struct text t = { bakery_xstrdup(""), 0 };
	jv sandboxes = jv_object_get(jv_copy(status), jv_string("sandboxes"));
	for (size_t m = 0; m < sizeof sandbox_metrics / sizeof *sandbox_metrics;
	     m++) {
		add(&t, "# HELP %s %s\n# TYPE %s gauge\n",
		    sandbox_metrics[m].metric, sandbox_metrics[m].help,
		    sandbox_metrics[m].metric);
		jv_array_foreach(sandboxes, i, s) {
			jv name = jv_object_get(jv_copy(s), jv_string("sandbox"));
			add(&t, "%s{sandbox=\"%s\"} %.0f\n",
			    sandbox_metrics[m].metric, jv_string_value(name),
			    envelope_number(s, sandbox_metrics[m].field, 0));
			jv_free(name);
			jv_free(s);
		}
	}
	jv_free(sandboxes);
	add(&t, "# HELP bakery_queue_messages Messages in the queue by state.\n"
		"# TYPE bakery_queue_messages gauge\n");
	jv queue = jv_object_get(jv_copy(status), jv_string("queue"));
	jv_object_foreach(queue, name, states) {
		jv_object_foreach(states, state, n) {
			add(&t, "bakery_queue_messages{queue=\"%s\",state=\"%s\"} "
			    "%.0f\n", jv_string_value(name),
			    jv_string_value(state), jv_number_value(n));
			jv_free(state);
			jv_free(n);
		}
		jv_free(name);
		jv_free(states);
	}
	jv_free(queue);
	jv gw = jv_object_get(jv_copy(status), jv_string("gateway"));
	add(&t, "# HELP bakery_gateway The home's payment gateway (none: "
		"not chosen, pay refuses).\n# TYPE bakery_gateway gauge\n"
		"bakery_gateway{gateway=\"%s\"} 1\n",
	    jv_get_kind(gw) == JV_KIND_STRING ? jv_string_value(gw) : "none");
	jv_free(gw);
	jv owed = jv_object_get(jv_copy(status), jv_string("refunds_owed"));
	add(&t, "# HELP bakery_refunds_owed Flagged payments wiped with their "
		"sandbox and not marked refunded.\n"
		"# TYPE bakery_refunds_owed gauge\nbakery_refunds_owed %d\n",
	    jv_get_kind(owed) == JV_KIND_ARRAY ? jv_array_length(jv_copy(owed))
					       : 0);
	jv_free(owed);
	add(&t, "# HELP bakery_spans_dropped_total Spans the OTLP exporter "
		"could not send.\n# TYPE bakery_spans_dropped_total counter\n"
		"bakery_spans_dropped_total %.0f\n",
	    envelope_number(status, "spans_dropped", 0));
	jv replica = jv_object_get(jv_copy(status), jv_string("replica"));
	char *lines = replica_prometheus(replica);
	add(&t, "%s", lines);
	free(lines);
	jv ok = jv_object_get(jv_copy(status), jv_string("ok"));
	add(&t, "# HELP bakery_attention 1 when something needs an operator.\n"
		"# TYPE bakery_attention gauge\nbakery_attention %d\n",
	    jv_get_kind(ok) == JV_KIND_TRUE ? 0 : 1);
	jv_free(ok);
	add(&t, "# HELP bakery_status_time_seconds When this was read.\n"
		"# TYPE bakery_status_time_seconds gauge\n"
		"bakery_status_time_seconds %lld\n",
	    (long long)(bakery_now_ms() / 1000));
	return t.buf;
}

int
status_write_file(const char *path, const char *text)
{
	/* node_exporter runs as another user: the file is readable (0644).
	 * The collector sees the old file or the new one, never half. */
	return file_put(path, text, 0644, 1, NULL);
}
