/*
 * consume.c — deliver, then ack, retry or dead-letter.
 */
#include "consume.h"
#include "../core/envelope.h"
#include "spans.h"
#include "subscriber.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jv
result_line(jv env, const char *id, const char *sandbox, int delivery,
    const apply_result *r, const char *outcome)
{
	const char *type = envelope_str(env, "type");
	jv o = jv_object();
	o = jv_object_set(o, jv_string("id"), jv_string(id));
	o = jv_object_set(o, jv_string("type"), type ? jv_string(type) : jv_null());
	o = jv_object_set(o, jv_string("sandbox"),
	    sandbox ? jv_string(sandbox) : jv_null());
	if (delivery > 0)
		o = jv_object_set(o, jv_string("delivery"), jv_number(delivery));
	o = jv_object_set(o, jv_string("status"), jv_number(r->status));
	o = jv_object_set(o, jv_string("outcome"), jv_string(outcome));
	o = jv_object_set(o, jv_string("error"),
	    r->error[0] ? jv_string(r->error) : jv_null());
	return o;
}

/* Parses each message's envelope (env[i], or jv_null() and a 422 in r[i]
 * when malformed), then delivers the good ones together, so that the
 * deliveries of the batch to one object commit together. */
static void
deliver(bakery_ctx *ctx, queue_message *msgs, size_t n, apply_result *r,
    jv *env, span *spans)
{
	jv *good = bakery_xmalloc(n * sizeof *good);
	const char **bodies = bakery_xmalloc(n * sizeof *bodies);
	apply_result *got = bakery_xmalloc(n * sizeof *got);
	size_t *which = bakery_xmalloc(n * sizeof *which);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		r[i].status = ANSWER_APPLIED;
		r[i].final = 0;
		r[i].error[0] = '\0';
		if (envelope_parse(msgs[i].body, strlen(msgs[i].body),
			&env[i])) {
			r[i].status = ANSWER_MALFORMED;
			snprintf(r[i].error, sizeof r[i].error,
			    "malformed envelope: %s", bakery_error());
			env[i] = jv_null();
			if (spans)
				spans[i] = (span){ 0 };
			continue;
		}
		if (spans)
			spans_process_begin(ctx, &spans[i], &env[i], msgs[i].id,
			    msgs[i].deliveries);
		good[k] = env[i];
		bodies[k] = msgs[i].body;
		which[k++] = i;
	}
	subscriber_deliver_batch(ctx, good, bodies, k, got);
	for (size_t j = 0; j < k; j++)
		r[which[j]] = got[j];
	free(good);
	free(bodies);
	free(got);
	free(which);
}

/* The lease was lost to another consumer, or the queue stayed locked:
 * either way the message stays queued, comes again, and finds every
 * effect it had already applied. */
static int
unsettled(queue_message *m, const char **outcome)
{
	bakery_log(LOG_WARN, "lease_lost", "id", m->id, "error",
	    bakery_error(), (char *)NULL);
	*outcome = "lease-lost";
	return 0;
}

/* A refused message: retried, or dead-lettered past max_retries. */
static int
give_back(bakery_queue *q, queue_message *m, const apply_result *r,
    const consume_options *opt, const char **outcome)
{
	int rc;
	/* An external subscriber's refusal for good (exit 65, a 4xx) is
	 * final: no retry can help, so the event is a dead letter at once;
	 * a redrive sends it again to those that did not apply it. */
	if (m->deliveries > opt->max_retries || r->final) {
		rc = queue_dead_letter(q, m, r->error);
		*outcome = "dead-lettered";
		if (!rc)
			bakery_log(LOG_WARN, "dead_lettered", "id", m->id,
			    "sandbox", m->sandbox, "error", r->error, (char *)NULL);
	} else {
		rc = queue_retry(q, QUEUE_EVENTS, m,
		    consume_retry_delay(opt, m->deliveries), r->error);
		*outcome = "retried";
	}
	if (rc == EX_TEMPFAIL)
		rc = unsettled(m, outcome);
	return rc;
}

int
consume_retry_delay(const consume_options *opt, int delivery)
{
	if (opt->ndelays < 1)
		return 0;
	int i = delivery < 1 ? 0 : delivery - 1;
	return opt->delay_s[i < opt->ndelays ? i : opt->ndelays - 1];
}

int
consume_parse_delays(const char *arg, consume_options *opt)
{
	int d[CONSUME_MAX_DELAYS], n = 0;
	const char *p = arg;
	for (;;) {
		/* Digits only: no sign, space or exponent slips through. */
		if (*p < '0' || *p > '9')
			goto bad;
		long v = 0;
		while (*p >= '0' && *p <= '9' && v <= CONSUME_MAX_DELAY_S)
			v = v * 10 + (*p++ - '0');
		if (v > CONSUME_MAX_DELAY_S)
			return bakery_fail(EX_USAGE, "a delay above %d seconds",
			    CONSUME_MAX_DELAY_S);
		if (n == CONSUME_MAX_DELAYS)
			return bakery_fail(EX_USAGE, "more than %d delays",
			    CONSUME_MAX_DELAYS);
		d[n++] = (int)v;
		if (*p == '\0')
			break;
		if (*p++ != ',')
			goto bad;
	}
	memcpy(opt->delay_s, d, (size_t)n * sizeof *d);
	opt->ndelays = n;
	return 0;
bad:
	return bakery_fail(EX_USAGE, "want seconds, 0 to %d, or a list of "
	    "them joined by ','", CONSUME_MAX_DELAY_S);
}

int
consume_batch(bakery_ctx *ctx, bakery_queue *q, queue_message *msgs,
    size_t n, const consume_options *opt, jv *results)
{
	apply_result *r = bakery_xmalloc(n * sizeof *r);
	jv *env = bakery_xmalloc(n * sizeof *env);
	const char **outcome = bakery_xmalloc(n * sizeof *outcome);
	queue_message **done = bakery_xmalloc(n * sizeof *done);
	size_t *which = bakery_xmalloc(n * sizeof *which);
	int *rcs = bakery_xmalloc(n * sizeof *rcs);
	size_t k = 0;
	int rc = 0;
	span *spans = span_on() ? bakery_xmalloc(n * sizeof *spans) : NULL;
	deliver(ctx, msgs, n, r, env, spans);
	for (size_t i = 0; i < n; i++) {
		if (answer_applied(r[i].status)) {
			/* 205: recorded before its sandbox was wiped, dropped. */
			outcome[i] = r[i].status == ANSWER_WIPED ? "wiped"
								 : "acked";
			if (r[i].status != ANSWER_WIPED)
				bakery_crash_point("consume.before_ack");
			done[k] = &msgs[i];
			which[k++] = i;
		} else {
			int mrc = give_back(q, &msgs[i], &r[i], opt, &outcome[i]);
			if (mrc && !rc)
				rc = mrc;
		}
	}
	/* Every message of the batch that all its subscribers applied is
	 * acked in one go: one commit for the batch. An ack still comes only
	 * after all 2xx; a crash before it delivers them again, and the
	 * receivers find them seen. */
	int arc = queue_ack_many(q, QUEUE_EVENTS, done, k, rcs);
	for (size_t j = 0; j < k; j++)
		if (arc == EX_TEMPFAIL || (!arc && rcs[j] == EX_TEMPFAIL))
			unsettled(done[j], &outcome[which[j]]);
	if (arc && arc != EX_TEMPFAIL && !rc)
		rc = arc;
	for (size_t i = 0; i < n; i++) {
		results[i] = result_line(env[i], msgs[i].id, msgs[i].sandbox,
		    msgs[i].deliveries, &r[i], outcome[i]);
		if (spans)
			spans_process_end(&spans[i], r[i].status, r[i].error,
			    outcome[i]);
		jv_free(env[i]);
	}
	free(spans);
	free(r);
	free(env);
	free(outcome);
	free(done);
	free(which);
	free(rcs);
	return rc;
}

int
consume_message(bakery_ctx *ctx, bakery_queue *q, queue_message *m,
    const consume_options *opt, jv *result)
{
	return consume_batch(ctx, q, m, 1, opt, result);
}

int
consume_line(bakery_ctx *ctx, const char *line, size_t len, jv *result,
    int *refused)
{
	*refused = 0;
	jv env;
	int rc = envelope_parse(line, len, &env);
	if (rc)
		return rc;
	apply_result r;
	span s;
	if (span_on())
		spans_process_begin(ctx, &s, &env, envelope_str(env, "id"), 0);
	subscriber_deliver(ctx, env, &r);
	int applied = answer_applied(r.status);
	if (span_on())
		spans_process_end(&s, r.status, r.error,
		    applied ? "applied" : "refused");
	*result = result_line(env, envelope_str(env, "id"),
	    envelope_str(env, "sandbox"), 0, &r,
	    applied ? "applied" : "refused");
	/* Malformed stays malformed, however often it is given again. */
	if (!applied)
		*refused = r.final || r.status == ANSWER_MALFORMED ? EX_DATAERR
							       : EX_TEMPFAIL;
	jv_free(env);
	return 0;
}
