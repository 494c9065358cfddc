/*
 * consume.c — deliver, then ack, retry or dead-letter.
 */
#include "consume.h"
#include "envelope.h"
#include "subscriber.h"
#include "util.h"

#include <stdio.h>
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

int
consume_message(bakery_ctx *ctx, bakery_queue *q, queue_message *m,
    const consume_options *opt, jv *result)
{
	apply_result r = { 200, "" };
	jv env;
	if (envelope_parse(m->body, strlen(m->body), &env)) {
		r.status = 422;
		snprintf(r.error, sizeof r.error, "malformed envelope: %s",
		    bakery_error());
		env = jv_null();
	} else {
		subscriber_deliver(ctx, env, &r);
	}
	const char *outcome;
	int rc;
	if (r.status == 205) {
		/* Recorded before its sandbox was wiped: dropped. */
		rc = queue_ack(q, QUEUE_EVENTS, m);
		outcome = "wiped";
	} else if (r.status >= 200 && r.status < 300) {
		bakery_crash_point("consume.before_ack");
		rc = queue_ack(q, QUEUE_EVENTS, m);
		outcome = "acked";
	} else if (m->deliveries > opt->max_retries) {
		rc = queue_dead_letter(q, m, r.error);
		outcome = "dead-lettered";
		if (!rc)
			bakery_log(LOG_WARN, "dead_lettered", "id", m->id,
			    "sandbox", m->sandbox, "error", r.error, (char *)NULL);
	} else {
		rc = queue_retry(q, QUEUE_EVENTS, m, opt->retry_delay_s, r.error);
		outcome = "retried";
	}
	if (rc == EX_TEMPFAIL) {
		/* The lease was lost to another consumer, or the queue stayed
		 * locked: either way the message stays queued, comes again,
		 * and finds every effect it had already applied. */
		bakery_log(LOG_WARN, "lease_lost", "id", m->id, "error",
		    bakery_error(), (char *)NULL);
		rc = 0;
		outcome = "lease-lost";
	}
	*result = result_line(env, m->id, m->sandbox, m->deliveries, &r, outcome);
	jv_free(env);
	return rc;
}

int
consume_line(bakery_ctx *ctx, const char *line, size_t len, jv *result)
{
	jv env;
	int rc = envelope_parse(line, len, &env);
	if (rc)
		return rc;
	apply_result r;
	subscriber_deliver(ctx, env, &r);
	*result = result_line(env, envelope_str(env, "id"),
	    envelope_str(env, "sandbox"), 0, &r,
	    r.status < 300 ? "applied" : "refused");
	jv_free(env);
	return 0;
}
