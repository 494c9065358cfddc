/*
 * subscriber.c — the delivery engine: a batch's events applied at each
 * routed object, idempotently, one transaction per object (subscriber.h).
 */
#include "subscriber.h"
#include "kindkit.h"
#include "../store/store.h"
#include "../core/envelope.h"
#include "../net/external.h"
#include "../core/faults.h"
#include "../orders/event_data.h"
#include "../core/outbox.h"
#include "../queue/queue.h"
#include "routing.h"
#include "spans.h"
#include "../base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const object_kind *
subscriber_find(const char *kind)
{
	const object_kind *k = kind_find(kind);
	return k && k->apply ? k : NULL;
}

/* "Kitchen answered 503: why", a ';' of why written ',' (subscriber.h). */
static void
answered(apply_result *r, const char *kind, int status, const char *why)
{
	r->status = status;
	r->final = 0;
	int n = snprintf(r->error, sizeof r->error, "%c%s answered %d",
	    toupper((unsigned char)kind[0]), kind + 1, status);
	if (why && *why && n > 0 && (size_t)n < sizeof r->error)
		snprintf(r->error + n, sizeof r->error - (size_t)n, ": %s", why);
	for (char *w = strchr(r->error, ';'); w; w = strchr(w, ';'))
		*w = ',';
}

/* The sandbox's fence (ms), the time its last wipe set in the queue
 * (queue.h, wipe.h): an event recorded before it is dropped. 0 when the
 * sandbox was never wiped or the queue cannot be had. The wipe sets it
 * holding the sandbox's lock exclusively, and an open object holds that
 * lock shared: read once an object is open, it holds for every event
 * applied there until the object closes. */
static int64_t
fence_of(bakery_ctx *ctx, const char *sandbox)
{
	bakery_queue *q;
	return queue_get(ctx, &q) == 0 ? queue_fence(q, sandbox) : 0;
}

/* Why an envelope's id or data is bad ("" when good), when it was
 * recorded (ms, 0 when its time cannot be read), and its trace, found
 * once for all its subscribers: each of them answers 422 with why, and
 * records what follows in that trace. */
typedef struct envelope_check {
	char why[200];
	int64_t at;
	trace_ctx trace; /* envelope_trace's: a new one when it had none */
	int traced;      /* 1 when the envelope had one */
} envelope_check;

static void
check_envelope(jv env, envelope_check *c)
{
	const char *id = envelope_str(env, "id");
	c->why[0] = '\0';
	c->at = envelope_time_ms(env);
	c->traced = envelope_trace(env, &c->trace);
	if (!id || !bakery_text_valid(id, 128))
		snprintf(c->why, sizeof c->why, "bad id");
	else
		event_data_check(env, c->why, sizeof c->why);
}

/* Whether the envelope c was found of was recorded before fence. */
static int
predates(const envelope_check *c, int64_t fence)
{
	return c->at > 0 && c->at < fence;
}

/* One envelope at one of its subscribers. */
typedef struct delivery {
	jv env; /* borrowed */
	const char *body; /* the text env was parsed from, or NULL */
	const char *sandbox;
	const char *address;
	const envelope_check *check; /* borrowed */
	apply_result *r;
} delivery;

/* What a batch reads of a sandbox once, not at each of its deliveries:
 * its faults (a sandbox file that cannot be read sets none, as
 * fault_is_set), and its fence as first read (the first look of
 * answer_early, before any object is open; the fence is read again under
 * each object's lock). One sandbox at a time: a batch's deliveries are
 * grouped by sandbox. */
typedef struct sandbox_reads {
	char sandbox[BAKERY_NAME_SIZE];
	jv faults;     /* jv_invalid() until read */
	int64_t fence; /* -1 until read */
} sandbox_reads;

static sandbox_reads *
reads_of(sandbox_reads *s, const char *sandbox)
{
	if (strcmp(s->sandbox, sandbox) != 0) {
		jv_free(s->faults);
		*s = (sandbox_reads){ "", jv_invalid(), -1 };
		snprintf(s->sandbox, sizeof s->sandbox, "%s", sandbox);
	}
	return s;
}

/* Whether the sandbox has the fault that makes kind refuse every event
 * (FAULT_REFUSES kind). */
static int
refuses(bakery_ctx *ctx, sandbox_reads *s, const char *sandbox,
    const char *kind)
{
	sandbox_reads *f = reads_of(s, sandbox);
	if (!jv_is_valid(f->faults) && fault_list(ctx, sandbox, &f->faults)) {
		jv_free(f->faults);
		f->faults = jv_array();
	}
	char name[80];
	snprintf(name, sizeof name, FAULT_REFUSES "%s", kind);
	int set = 0;
	jv_array_foreach(f->faults, i, one) {
		const char *n = envelope_str(one, "name");
		set |= n && strcmp(n, name) == 0;
		jv_free(one);
	}
	return set;
}

/* The group's failure for every event of it that had answered 2xx: its
 * changes did not commit (or never will), so none of them may be acked. */
static void
fail_group(delivery *const *g, size_t n, const char *kind, const char *why)
{
	char copy[sizeof g[0]->r->error];
	snprintf(copy, sizeof copy, "%s", why);
	for (size_t i = 0; i < n; i++)
		if (g[i]->r->status < 300)
			answered(g[i]->r, kind, ANSWER_UNAVAILABLE, copy);
}

/* Applies one event in the open transaction, inside a savepoint: 200 when
 * applied or seen before, 205 when wiped, else the refusal, with its
 * changes rolled back and nothing recorded. Returns 1 when it applied
 * something, 0 when not, -1 when the transaction is gone. */
static int
apply_one(bakery_object *o, const object_kind *sub, int refused,
    int64_t fence, delivery *d)
{
	const char *id = envelope_str(d->env, "id");
	const char *type = envelope_str(d->env, "type");
	/* Checked again under the object's lock (fence, read since the
	 * object opened): a wipe that came between the first check and the
	 * open must not see this event applied. */
	if (object_seen(o, id))
		return 0;
	if (predates(d->check, fence)) {
		d->r->status = ANSWER_WIPED;
		return 0;
	}
	if (refused) {
		answered(d->r, sub->name, ANSWER_UNAVAILABLE, NULL);
		return 0;
	}
	object_saved sp;
	if (object_savepoint(o, &sp)) {
		answered(d->r, sub->name, ANSWER_UNAVAILABLE, bakery_error());
		return -1;
	}
	char why[200] = "";
	int status = kind_apply(sub, o, d->env, &d->check->trace, type, why,
	    sizeof why);
	if (answer_applied(status) && object_mark_seen(o, id, type)) {
		status = ANSWER_UNAVAILABLE;
		snprintf(why, sizeof why, "%s", bakery_error());
	}
	if (answer_applied(status)) {
		if (!object_release(o, &sp))
			return 1;
		answered(d->r, sub->name, ANSWER_UNAVAILABLE, bakery_error());
		return -1;
	}
	answered(d->r, sub->name, status, why);
	return object_rollback_to(o, &sp) ? -1 : 0;
}

/* One event at an external subscriber, inside a write transaction on
 * external/NAME: seen there → 200 without a call; else called, and on
 * success its id recorded in that transaction's commit, right after the
 * answer. The lock held through the call keeps a second consumer (whose
 * lease on the message began after this one's ran out) from calling the
 * subscriber for the same event at the same time: it waits, then answers
 * 503 and comes again to find the id seen. A crash between the answer and
 * the commit (external.after_answer) is the one way the subscriber hears
 * an event twice. */
static void
call_external(bakery_ctx *ctx, bakery_object *o, const route *rt,
    delivery *d)
{
	const char *id = envelope_str(d->env, "id");
	const char *type = envelope_str(d->env, "type");
	if (object_begin(o)) {
		answered(d->r, rt->key, ANSWER_UNAVAILABLE, bakery_error());
		return;
	}
	if (object_seen(o, id)) {
		object_rollback(o);
		return;
	}
	/* The text the envelope came in, when it is one line, as it is: no
	 * dump of what was parsed from it. */
	size_t len = d->body ? strlen(d->body) : 0;
	jv line = d->body && !memchr(d->body, '\n', len) &&
	    !memchr(d->body, '\r', len) ? jv_string_sized(d->body, (int)len)
	    : jv_dump_string(jv_copy(d->env), 0);
	external_event ev = { id, type, d->sandbox, jv_string_value(line),
		(size_t)jv_string_length_bytes(jv_copy(line)),
		&d->check->trace };
	external_answer a = { 0, 0, "" };
	/* The batch's new files are named before the call: between the
	 * answer and its seen record only the external's own file waits. */
	(void)birth_group_settle(ctx); /* each object answers for its own */
	if (rt->how == ROUTE_EXEC)
		external_exec(rt->target, &ev, ctx->subscriber_timeout_s, &a);
	else
		external_http(rt->target, rt->secret_file, &ev,
		    ctx->subscriber_timeout_s, &a);
	jv_free(line);
	if (a.status != ANSWER_APPLIED) {
		object_rollback(o);
		answered(d->r, rt->key, a.status, a.why);
		d->r->final = a.final;
		bakery_log(LOG_WARN, "external_refused", "subscriber", rt->key,
		    "id", id, "error", d->r->error, (char *)NULL);
		return;
	}
	bakery_crash_point("external.after_answer");
	int rc = object_mark_seen(o, id, type);
	if (rc)
		object_rollback(o);
	else
		rc = object_commit(o);
	/* Its seen record counts once its file has its name. */
	if (!rc)
		rc = object_settled(o);
	if (rc)
		answered(d->r, rt->key, ANSWER_UNAVAILABLE, "applied, but its "
		    "seen record failed (it will hear the event again)");
}

/* Answers the group's events that need no object: all refused (422) when
 * refused names why, else each with a bad id or bad data (422, as its
 * envelope's check found), or recorded before its sandbox's wipe (205;
 * the fence as the batch first read it, before any object opened; read
 * again under the object's lock, where it counts). Returns how many are
 * left. */
static size_t
answer_early(bakery_ctx *ctx, sandbox_reads *s, delivery *const *g,
    size_t n, const char *name, const char *refused)
{
	sandbox_reads *f = reads_of(s, g[0]->sandbox);
	if (f->fence < 0 && !refused)
		f->fence = fence_of(ctx, g[0]->sandbox);
	size_t pending = 0;
	for (size_t i = 0; i < n; i++) {
		if (refused)
			answered(g[i]->r, name, ANSWER_MALFORMED, refused);
		else if (g[i]->check->why[0])
			answered(g[i]->r, name, ANSWER_MALFORMED,
			    g[i]->check->why);
		else if (predates(g[i]->check, f->fence))
			g[i]->r->status = ANSWER_WIPED;
		else
			pending++;
	}
	return pending;
}

/* The group's events at the external subscriber name, one call each, in
 * order; those it applied before (seen) are not called again. */
static void
apply_external(bakery_ctx *ctx, sandbox_reads *s, delivery *const *g,
    size_t n, const char *name)
{
	const route *rt = routing_external(ctx, name);
	if (!answer_early(ctx, s, g, n, name,
	    rt ? NULL : "not in the routes file"))
		return;
	bakery_crash_point("consume.before_open");
	bakery_object *o;
	int rc = object_open(ctx, g[0]->sandbox, g[0]->address, 1, &o);
	int64_t fence = rc ? 0 : fence_of(ctx, g[0]->sandbox);
	for (size_t i = 0; i < n; i++) {
		if (g[i]->r->status != ANSWER_APPLIED)
			continue;
		if (!rc && predates(g[i]->check, fence))
			g[i]->r->status = ANSWER_WIPED; /* under the lock */
		else if (rc)
			answered(g[i]->r, name, ANSWER_UNAVAILABLE,
			    bakery_error());
		else
			call_external(ctx, o, rt, g[i]);
	}
	object_close(o);
}

/* A group whose commit made its object's file, waiting for the batch's
 * births to be named together (birth.h): its object stays open until
 * then, and its events count as applied only once the file has its
 * name. */
typedef struct unnamed {
	bakery_object *o;
	delivery **g;
	size_t n;
	char kind[BAKERY_NAME_SIZE];
} unnamed;

/* After the group's commit: what the object recorded goes out now (an
 * order's OrderPaid); a refusal leaves it in the outbox for the alarm. */
static void
applied_group(bakery_object *o)
{
	bakery_crash_point("consume.after_apply");
	if (outbox_count(o) > 0)
		outbox_send(o, NULL);
}

/* Applies the group's events, in order, at one object of one sandbox: one
 * open, one BEGIN IMMEDIATE, a savepoint per event so that a refusal takes
 * back only that event's changes, one COMMIT for all that applied, then
 * the send of whatever the object recorded. If that commit fails, every
 * event of the group fails with it. */
static void
apply_group(bakery_ctx *ctx, sandbox_reads *f, delivery *const *g, size_t n,
    unnamed *u)
{
	char kind[BAKERY_NAME_SIZE], key[BAKERY_NAME_SIZE];
	const char *address = g[0]->address;
	for (size_t i = 0; i < n; i++) {
		g[i]->r->status = ANSWER_APPLIED;
		g[i]->r->final = 0;
		g[i]->r->error[0] = '\0';
	}
	if (kind_parse_address(address, kind, key, NULL)) {
		for (size_t i = 0; i < n; i++)
			answered(g[i]->r, "routing", ANSWER_MALFORMED,
			    bakery_error());
		return;
	}
	if (strcmp(kind, "external") == 0) {
		apply_external(ctx, f, g, n, key);
		return;
	}
	const object_kind *sub = subscriber_find(kind);
	if (!answer_early(ctx, f, g, n, kind, sub ? NULL : "not a subscriber"))
		return;
	/* A wipe may come now, after the first look at the fence: the look
	 * under the object's lock below is the one that counts. */
	bakery_crash_point("consume.before_open");
	bakery_object *o;
	int rc = object_open(ctx, g[0]->sandbox, address, sub->create, &o);
	if (rc == EX_NOINPUT) {
		for (size_t i = 0; i < n; i++)
			if (g[i]->r->status == ANSWER_APPLIED)
				answered(g[i]->r, kind, ANSWER_NOT_YET,
				    bakery_error());
		return;
	}
	if (!rc)
		rc = object_begin(o);
	if (rc) {
		/* Locked past the busy timeout, a full disk: retry later. */
		for (size_t i = 0; i < n; i++)
			if (g[i]->r->status == ANSWER_APPLIED)
				answered(g[i]->r, kind, ANSWER_UNAVAILABLE,
				    bakery_error());
		object_close(o);
		return;
	}
	int applied = 0, lost = 0;
	int refused = refuses(ctx, f, g[0]->sandbox, kind);
	int64_t fence = fence_of(ctx, g[0]->sandbox);
	for (size_t i = 0; i < n && !lost; i++) {
		if (g[i]->r->status != ANSWER_APPLIED)
			continue;
		int one = apply_one(o, sub, refused, fence, g[i]);
		if (one < 0)
			lost = 1;
		else
			applied += one;
	}
	if (lost) {
		fail_group(g, n, kind, bakery_error());
		object_rollback(o);
	} else if (!applied) {
		object_rollback(o);
	} else if ((rc = object_commit(o))) {
		fail_group(g, n, kind, bakery_error());
	} else if (o->birth.state == BIRTH_PENDING) {
		u->o = o;
		u->g = bakery_xmalloc(n * sizeof *u->g);
		memcpy(u->g, g, n * sizeof *g);
		u->n = n;
		snprintf(u->kind, sizeof u->kind, "%s", kind);
		return;
	} else {
		applied_group(o);
	}
	object_close(o);
}

static const char *
sandbox_of(bakery_ctx *ctx, jv env)
{
	const char *sandbox = envelope_str(env, "sandbox");
	return sandbox ? sandbox : ctx->sandbox;
}

int
subscriber_apply(bakery_ctx *ctx, const char *address, jv env,
    apply_result *r)
{
	return subscriber_apply_batch(ctx, address, &env, 1, r);
}

/* The groups whose commits made files, once the batch's births are
 * named: a file that could not be named lost its commit, and its group's
 * events fail with it. */
static void
name_unnamed(bakery_ctx *ctx, unnamed *u, size_t n)
{
	(void)birth_group_settle(ctx); /* each object answers for its own */
	for (size_t i = 0; i < n; i++) {
		if (object_settled(u[i].o))
			fail_group(u[i].g, u[i].n, u[i].kind, bakery_error());
		else
			applied_group(u[i].o);
		object_close(u[i].o);
		free(u[i].g);
	}
}

/* Applies every delivery: those to one object (one address in one
 * sandbox), in their order, as one group; the files the groups make are
 * named together at the end. */
static void
apply_all(bakery_ctx *ctx, delivery *ds, size_t nd)
{
	delivery **group = bakery_xmalloc(nd * sizeof *group);
	unnamed *u = bakery_xmalloc(nd * sizeof *u);
	size_t nu = 0;
	sandbox_reads f = { "", jv_invalid(), -1 };
	char *grouped = bakery_xmalloc(nd);
	memset(grouped, 0, nd);
	int began = birth_group_begin(ctx, 0);
	for (size_t a = 0; a < nd; a++) {
		if (grouped[a])
			continue;
		size_t m = 0;
		for (size_t b = a; b < nd; b++) {
			if (grouped[b] ||
			    strcmp(ds[a].address, ds[b].address) != 0 ||
			    strcmp(ds[a].sandbox, ds[b].sandbox) != 0)
				continue;
			grouped[b] = 1;
			group[m++] = &ds[b];
		}
		u[nu].o = NULL;
		apply_group(ctx, &f, group, m, &u[nu]);
		nu += u[nu].o != NULL;
	}
	name_unnamed(ctx, u, nu);
	if (began)
		(void)birth_group_end(ctx);
	jv_free(f.faults);
	free(u);
	free(group);
	free(grouped);
}

int
subscriber_apply_batch(bakery_ctx *ctx, const char *address, const jv *envs,
    size_t n, apply_result *r)
{
	delivery *ds = bakery_xmalloc(n * sizeof *ds);
	envelope_check *checks = bakery_xmalloc(n * sizeof *checks);
	for (size_t i = 0; i < n; i++) {
		check_envelope(envs[i], &checks[i]);
		ds[i] = (delivery){ envs[i], NULL, sandbox_of(ctx, envs[i]),
			address, &checks[i], &r[i] };
	}
	apply_all(ctx, ds, n);
	free(ds);
	free(checks);
	return 0;
}

/* The envelope's result from its subscribers' (ds, in routing order):
 * 200 when all answered 2xx, else the first failure's status with every
 * error joined; 205 as soon as one answered 205 (the whole event is
 * dropped). */
static void
fold(apply_result *r, const delivery *ds, size_t n)
{
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		const apply_result *one = ds[i].r;
		if (one->status == ANSWER_WIPED) {
			r->status = ANSWER_WIPED;
			return;
		}
		if (answer_applied(one->status))
			continue;
		if (r->status < 300)
			r->status = one->status;
		r->final |= one->final;
		int w = snprintf(r->error + used, sizeof r->error - used, "%s%s",
		    used ? "; " : "", one->error);
		if (w > 0)
			used += (size_t)w < sizeof r->error - used
			    ? (size_t)w : sizeof r->error - used - 1;
	}
}

int
subscriber_deliver_batch(bakery_ctx *ctx, const jv *envs,
    const char *const *bodies, size_t n, apply_result *r)
{
	char (*addresses)[BAKERY_ADDRESS_SIZE] = bakery_xmalloc(
	    n * ROUTING_MAX_SUBSCRIBERS * sizeof *addresses);
	apply_result *results = bakery_xmalloc(
	    n * ROUTING_MAX_SUBSCRIBERS * sizeof *results);
	delivery *ds = bakery_xmalloc(
	    n * ROUTING_MAX_SUBSCRIBERS * sizeof *ds);
	size_t *first = bakery_xmalloc((n + 1) * sizeof *first);
	envelope_check *checks = bakery_xmalloc(n * sizeof *checks);
	size_t nd = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k;
		r[i].status = ANSWER_APPLIED;
		r[i].final = 0;
		r[i].error[0] = '\0';
		first[i] = nd;
		if (routing_subscribers(ctx, envs[i], addresses + nd, &k)) {
			r[i].status = ANSWER_MALFORMED;
			snprintf(r[i].error, sizeof r[i].error, "%s",
			    bakery_error());
			continue;
		}
		if (k > 0)
			check_envelope(envs[i], &checks[i]);
		for (size_t j = 0; j < k; j++, nd++)
			ds[nd] = (delivery){ envs[i],
				bodies ? bodies[i] : NULL,
				sandbox_of(ctx, envs[i]), addresses[nd],
				&checks[i], &results[nd] };
	}
	first[n] = nd;
	int64_t start = span_on() ? span_now_ns() : 0;
	apply_all(ctx, ds, nd);
	for (size_t i = 0; start && i < n; i++) {
		spans_event e;
		if (first[i] < first[i + 1])
			spans_event_read(envs[i], &checks[i].trace,
			    checks[i].traced, &e);
		for (size_t j = first[i]; j < first[i + 1]; j++)
			spans_apply(&e, ds[j].address, ds[j].r->status,
			    ds[j].r->error, start);
	}
	for (size_t i = 0; i < n; i++)
		if (r[i].status == ANSWER_APPLIED)
			fold(&r[i], ds + first[i], first[i + 1] - first[i]);
	free(addresses);
	free(results);
	free(ds);
	free(first);
	free(checks);
	return 0;
}

int
subscriber_deliver(bakery_ctx *ctx, jv env, apply_result *r)
{
	return subscriber_deliver_batch(ctx, &env, NULL, 1, r);
}
