/*
 * batch.c — bakery-order --batch: a line of JSON a command, commits in
 * each command's object, one queue send per group of lines, then the
 * answers (batch.h).
 *
 * Why the answers wait for the send: a script that reads an answer may
 * act on it (tell a customer, stop the batch); an answer given before the
 * send would name events that a kill at that moment leaves only in the
 * outbox, and one given before the commit, nothing at all. A kill
 * anywhere leaves every answered line committed and sent (or armed in its
 * outbox), and the lines after it unanswered: running them again with
 * their "key" places nothing twice, and pay never pays twice.
 */
#include "batch.h"
#include "../core/envelope.h"
#include "../base/json.h"
#include "../net/span.h"
#include "order.h"
#include "../core/outbox.h"
#include "../store/capture.h"
#include "payments.h"
#include "../base/util.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Lines read from fd, one at a time, in a buffer that never holds more
 * than a line of BATCH_LINE_MAX bytes and a read's worth beyond it. */
typedef struct reader {
	int fd;
	char buf[2 * BATCH_LINE_MAX + 2];
	size_t start, end;
	int eof;
	int skipping; /* inside a line over BATCH_LINE_MAX: dropped as read */
} reader;

enum { LINE_NONE, LINE_OK, LINE_TOO_LONG, LINE_EOF, LINE_ERROR };

/* Whether fd has something to read now (data or its end). */
static int
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;
	while ((n = poll(&p, 1, 0)) < 0 && errno == EINTR)
		;
	return n > 0;
}

/* The next line (its newline dropped, NUL-terminated in the buffer,
 * valid until the next call). wait=0: LINE_NONE when no whole line can be
 * had without blocking. A last line without a newline is a line. */
static int
reader_next(reader *r, int wait, char **line, size_t *len)
{
	for (;;) {
		char *s = r->buf + r->start;
		char *nl = memchr(s, '\n', r->end - r->start);
		if (nl || (r->eof && (r->end > r->start || r->skipping))) {
			size_t n = nl ? (size_t)(nl - s) : r->end - r->start;
			r->start += n + (nl != NULL);
			s[n] = '\0';
			*line = s;
			*len = n;
			int too_long = r->skipping || n > BATCH_LINE_MAX;
			r->skipping = 0;
			return too_long ? LINE_TOO_LONG : LINE_OK;
		}
		if (r->eof)
			return LINE_EOF;
		if (r->end - r->start > BATCH_LINE_MAX) {
			/* No newline in the first BATCH_LINE_MAX + 1 bytes. */
			r->skipping = 1;
			r->start = r->end = 0;
		}
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		if (!wait && !readable(r->fd))
			return LINE_NONE;
		ssize_t got = read(r->fd, r->buf + r->end,
		    sizeof r->buf - 1 - r->end);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			bakery_fail(EX_IOERR, "cannot read the commands: %s",
			    strerror(errno));
			return LINE_ERROR;
		}
		r->eof = got == 0;
		r->end += (size_t)got;
	}
}

/* The string field name of cmd: 0 and *out (NULL when absent and not
 * required), or EX_USAGE. */
static int
field(jv cmd, const char *name, int required, const char **out)
{
	*out = NULL;
	jv v = jv_object_get(jv_copy(cmd), jv_string(name));
	jv_kind k = jv_get_kind(v);
	jv_free(v);
	if (k == JV_KIND_INVALID || (k == JV_KIND_NULL && !required)) {
		if (required)
			return bakery_fail(EX_USAGE, "%s needs \"%s\"",
			    envelope_str(cmd, "cmd"), name);
		return 0;
	}
	if (k != JV_KIND_STRING)
		return bakery_fail(EX_USAGE, "\"%s\" must be a string", name);
	*out = envelope_str(cmd, name);
	return 0;
}

/* EX_USAGE unless every key of cmd is one of the NULL-ended allowed. */
static int
fields_known(jv cmd, const char *const *allowed)
{
	int rc = 0;
	jv_object_foreach(cmd, k, v) {
		const char *const *a = allowed;
		while (*a && strcmp(*a, jv_string_value(k)) != 0)
			a++;
		/* Any command may carry its trace context (line_trace). */
		if (!*a && !rc && strcmp(jv_string_value(k), "traceparent") &&
		    strcmp(jv_string_value(k), "tracestate"))
			rc = bakery_fail(EX_USAGE, "unknown field: \"%.64s\" in "
			    "%s", jv_string_value(k), envelope_str(cmd, "cmd"));
		jv_free(k);
		jv_free(v);
	}
	return rc;
}

static int
place(bakery_ctx *ctx, jv cmd, jv *out, bakery_object **o)
{
	static const char *const known[] = { "cmd", "customer", "day",
		"delivery", "key", "items", NULL };
	order_request req = { 0 };
	int rc = fields_known(cmd, known);
	if (!rc)
		rc = field(cmd, "customer", 1, &req.customer);
	if (!rc)
		rc = field(cmd, "day", 1, &req.day);
	if (!rc)
		rc = field(cmd, "delivery", 0, &req.delivery);
	if (!rc)
		rc = field(cmd, "key", 0, &req.key);
	if (rc)
		return rc;
	jv items = jv_object_get(jv_copy(cmd), jv_string("items"));
	if (jv_get_kind(items) != JV_KIND_ARRAY) {
		jv_free(items);
		return bakery_fail(EX_USAGE, "place needs \"items\", an array "
		    "of \"ITEM=QTY\" strings");
	}
	int n = jv_array_length(jv_copy(items));
	char **each = bakery_xmalloc(((size_t)n + 1) * sizeof *each);
	for (int i = 0; i < n && !rc; i++) {
		jv e = jv_array_get(jv_copy(items), i);
		if (jv_get_kind(e) != JV_KIND_STRING)
			rc = bakery_fail(EX_USAGE, "\"items\" must hold "
			    "\"ITEM=QTY\" strings");
		else
			each[i] = (char *)jv_string_value(e);
		jv_free(e); /* the string lives on in items */
	}
	req.items = each;
	req.n_items = n;
	if (!rc)
		rc = order_place(ctx, &req, out, o);
	free(each);
	jv_free(items);
	return rc;
}

static int
pay(bakery_ctx *ctx, jv cmd, const batch_options *opt, jv *out,
    bakery_object **o)
{
	static const char *const known[] = { "cmd", "order", "card",
		"payment_method", NULL };
	payment_request req = { .stripe_key_file = opt->stripe_key_file };
	int rc = fields_known(cmd, known);
	if (!rc)
		rc = field(cmd, "order", 1, &req.order_id);
	if (!rc)
		rc = field(cmd, "card", 0, &req.card);
	if (!rc)
		rc = field(cmd, "payment_method", 0, &req.payment_method);
	if (!rc && req.card && req.payment_method)
		rc = bakery_fail(EX_USAGE, "pay takes \"card\" or "
		    "\"payment_method\"");
	if (rc)
		return rc;
	rc = payment_pay(ctx, &req, out, o);
	if (rc == 1)
		bakery_fail(1, "payment declined: '%s': %s", req.order_id,
		    envelope_str(*out, "decline_code"));
	return rc;
}

static int
show(bakery_ctx *ctx, jv cmd, jv *out)
{
	static const char *const known[] = { "cmd", "order", NULL };
	const char *id;
	int rc = fields_known(cmd, known);
	if (!rc)
		rc = field(cmd, "order", 1, &id);
	return rc ? rc : order_get(ctx, id, out);
}

/* The trace the line's events continue: its own "traceparent" and
 * "tracestate" when it has them (a bad one, or one that is no string,
 * dropped with a warning: a new trace instead, the line runs all the
 * same), else one of its own, a child of the process's (TRACEPARENT) or a
 * new one. */
static void
line_trace(bakery_ctx *ctx, jv cmd, trace_ctx *t, span *s)
{
	int own = envelope_trace_fields(cmd, "batch line", NULL, t);
	const char *name = envelope_str(cmd, "cmd");
	const char *order = envelope_str(cmd, "order");
	trace_ctx caller, placed;
	/* A pay continues its order's trace (span_continue): linked to it
	 * when the line (its traceparent good, whatever became of its
	 * tracestate), or the process, gave one of its own. */
	if (name && strcmp(name, "pay") == 0 && order &&
	    order_trace(ctx, NULL, order, &placed) == 0) {
		int called = own > 0 || (own < 0 && tracectx_parse(
		    envelope_str(cmd, "traceparent"), &caller) == 0);
		if (called)
			caller = *t;
		else
			called = tracectx_environment(&caller);
		span_continue(s, "pay order", SPAN_SERVER,
		    called ? &caller : NULL, &placed);
		if (!tracectx_current(t))
			*t = placed;
		return;
	}
	if (!span_on()) {
		if (!own)
			tracectx_next(t);
		return;
	}
	/* The line's span, a child of its own trace, else of the process's;
	 * the line's events carry it. */
	char span_name[32];
	snprintf(span_name, sizeof span_name, "%s order",
	    name && strlen(name) < 16 ? name : "batch");
	int called = own || tracectx_environment(&caller);
	if (own)
		caller = *t;
	span_begin(s, span_name, SPAN_SERVER, called ? &caller : NULL);
	*t = s->ctx;
}

/* Runs one line: 0, 1 (declined) or the exit code, the error recorded.
 * *out is the result (jv_invalid() when none), *o the object to send. */
static int
run_line(bakery_ctx *ctx, const char *line, size_t len,
    const batch_options *opt, jv *out, bakery_object **o)
{
	*out = jv_invalid();
	*o = NULL;
	if (len == 0)
		return bakery_fail(EX_DATAERR, "empty line");
	/* As an envelope is read (json.h): a repeated field, a NUL or
	 * invalid UTF-8 refused, never read as libjq would take it. */
	jv cmd;
	int parsed = json_parse(line, len, &cmd);
	if (parsed)
		return parsed;
	const char *name = jv_get_kind(cmd) == JV_KIND_OBJECT
	    ? envelope_str(cmd, "cmd") : NULL;
	int rc;
	trace_ctx t;
	span s = { 0 };
	if (jv_get_kind(cmd) == JV_KIND_OBJECT) {
		line_trace(ctx, cmd, &t, &s);
		tracectx_set(&t);
	}
	if (jv_get_kind(cmd) != JV_KIND_OBJECT)
		rc = bakery_fail(EX_DATAERR, "a command is a JSON object");
	else if (!name)
		rc = bakery_fail(EX_USAGE, "missing \"cmd\": want place, pay "
		    "or show");
	else if (strcmp(name, "place") == 0)
		rc = place(ctx, cmd, out, o);
	else if (strcmp(name, "pay") == 0)
		rc = pay(ctx, cmd, opt, out, o);
	else if (strcmp(name, "show") == 0)
		rc = show(ctx, cmd, out);
	else
		rc = bakery_fail(EX_USAGE, "unknown command: '%.64s': want "
		    "place, pay or show", name);
	if (rc > 1)
		span_error(&s, bakery_error());
	span_end(&s);
	tracectx_set(NULL);
	jv_free(cmd);
	if (rc > 1 && jv_is_valid(*out)) {
		jv_free(*out);
		*out = jv_invalid();
	}
	return rc;
}

/* A group: its answers, and the objects whose outboxes go in its send,
 * each once (two commands of a group may change one object). */
typedef struct group {
	jv answers;
	int sent[BATCH_GROUP]; /* answer i's object: index in objects, or -1 */
	bakery_object *objects[BATCH_GROUP];
	size_t n_answers, n_objects;
} group;

static void
group_add(group *g, long number, int rc, jv out, bakery_object *o)
{
	jv a = jv_object_set(jv_object(), jv_string("line"),
	    jv_number((double)number));
	a = jv_object_set(a, jv_string("exit"), jv_number(rc));
	if (rc)
		a = jv_object_set(a, jv_string("error"),
		    jv_string(bakery_error()));
	if (jv_is_valid(out))
		a = jv_object_set(a, jv_string("result"), out);
	else
		jv_free(out);
	int k = -1;
	for (size_t i = 0; o && i < g->n_objects && k < 0; i++)
		if (strcmp(g->objects[i]->sandbox, o->sandbox) == 0 &&
		    strcmp(g->objects[i]->address, o->address) == 0)
			k = (int)i;
	if (o && k < 0) {
		k = (int)g->n_objects;
		g->objects[g->n_objects++] = o;
	} else if (o) {
		object_close(o);
	}
	g->sent[g->n_answers++] = k;
	g->answers = jv_array_append(g->answers, a);
}

/* The answer of a line whose object's new file could not be named (the
 * group's births, birth.h): its commit is lost, and so it failed. */
static jv
answer_lost(jv a, int rc, const char *error, int *status)
{
	a = jv_object_delete(a, jv_string("result"));
	a = jv_object_set(a, jv_string("exit"), jv_number(rc));
	a = jv_object_set(a, jv_string("error"), jv_string(error));
	if (!*status)
		*status = rc;
	return a;
}

/* The group's new files named, its outboxes in one send; then its
 * answers. */
static int
group_end(bakery_ctx *ctx, group *g, long first, const batch_options *opt,
    int *status)
{
	int rcs[BATCH_GROUP], sent_rcs[BATCH_GROUP];
	char *lost[BATCH_GROUP];
	bakery_object *named[BATCH_GROUP];
	size_t which[BATCH_GROUP], n = 0;
	(void)birth_group_settle(ctx); /* each object answers for its own */
	/* In a replicated home, every record of the group taken by the
	 * stream before any line is sent or answered; one not taken is
	 * every line's failure (capture.h). */
	int recorded = capture_settle(ctx);
	char *unrecorded = recorded ? bakery_xstrdup(bakery_error()) : NULL;
	for (size_t i = 0; i < g->n_objects; i++) {
		rcs[i] = object_settled(g->objects[i]);
		lost[i] = rcs[i] ? bakery_xstrdup(bakery_error()) : NULL;
		if (!rcs[i] && recorded) {
			rcs[i] = recorded;
			lost[i] = bakery_xstrdup(unrecorded);
		}
		if (!rcs[i]) {
			which[n] = i;
			named[n++] = g->objects[i];
		}
	}
	free(unrecorded);
	bakery_crash_point("batch.after_commit");
	if (n)
		outbox_send_together(named, n, sent_rcs);
	bakery_crash_point("batch.after_send");
	for (size_t k = 0; k < n; k++) {
		size_t i = which[k];
		rcs[i] = sent_rcs[k];
		/* A refused send leaves the rows to the alarm. */
		if (rcs[i] && object_arm(g->objects[i]))
			bakery_log(LOG_WARN, "alarm_error", "object",
			    g->objects[i]->address, "error", bakery_error(),
			    (char *)NULL);
	}
	jv answers = jv_array();
	for (size_t i = 0; i < g->n_answers; i++) {
		jv a = jv_array_get(jv_copy(g->answers), (int)i);
		int k = g->sent[i];
		if (k >= 0 && lost[k])
			a = answer_lost(a, rcs[k], lost[k], status);
		else if (jv_number_value(jv_object_get(jv_copy(a),
		    jv_string("exit"))) == 0)
			a = jv_object_set(a, jv_string("sent"),
			    jv_bool(k < 0 || !rcs[k]));
		answers = jv_array_append(answers, a);
	}
	jv_free(g->answers);
	int rc = opt->answer(opt->arg, answers);
	for (size_t i = 0; i < g->n_objects; i++) {
		object_close(g->objects[i]);
		free(lost[i]);
	}
	g->answers = jv_array();
	g->n_answers = g->n_objects = 0;
	if (rc)
		return bakery_fail(EX_IOERR, "the answers from line %ld on "
		    "were lost (their commands are committed): %s", first,
		    bakery_error());
	bakery_crash_point("batch.after_answer");
	return 0;
}

int
batch_run(bakery_ctx *ctx, int fd, const batch_options *opt, int *status)
{
	reader *r = bakery_xmalloc(sizeof *r);
	*r = (reader){ .fd = fd };
	group g = { .answers = jv_array() };
	long number = 0, first = 1;
	int rc = 0, got;
	*status = 0;
	/* The group's new files are made durable together (birth.h), and
	 * in a replicated home its records sent together (capture.h). */
	birth_group_begin(ctx, 1);
	ctx->replica_batched = ctx->replica != NULL;
	char *line;
	size_t len;
	while ((got = reader_next(r, g.n_answers == 0, &line, &len)) !=
	    LINE_EOF && got != LINE_ERROR) {
		if (got == LINE_NONE || g.n_answers == BATCH_GROUP) {
			if ((rc = group_end(ctx, &g, first, opt, status)))
				break;
			first = number + 1;
			if (got == LINE_NONE)
				continue;
		}
		number++;
		jv out = jv_invalid();
		bakery_object *o = NULL;
		int lrc = got == LINE_TOO_LONG
		    ? bakery_fail(EX_DATAERR, "line too long: over %d bytes",
			BATCH_LINE_MAX)
		    : run_line(ctx, line, len, opt, &out, &o);
		if (lrc && !*status)
			*status = lrc;
		group_add(&g, number, lrc, out, o);
	}
	/* The lines read before a read error are committed: answer them. */
	char *read_error = got == LINE_ERROR && !rc
	    ? bakery_xstrdup(bakery_error()) : NULL;
	if (!rc && g.n_answers)
		rc = group_end(ctx, &g, first, opt, status);
	if (!rc && read_error)
		rc = bakery_fail(EX_IOERR, "%s", read_error);
	free(read_error);
	for (size_t i = 0; i < g.n_objects; i++)
		object_close(g.objects[i]);
	(void)birth_group_end(ctx); /* committed, never answered */
	(void)capture_settle(ctx); /* what was published, taken or not */
	ctx->replica_batched = 0;
	jv_free(g.answers);
	free(r);
	return rc;
}
