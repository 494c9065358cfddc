/*
 * spans.c — the spans of an event's delivery (spans.h).
 */
#include "spans.h"
#include "../core/answer.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

/* bakery.order: the order the event is about, when its subject names
 * one. */
static void
order_of(span *s, jv env)
{
	const char *subject = envelope_str(env, "subject");
	if (subject && strncmp(subject, "order/", 6) == 0)
		span_str(s, "bakery.order", subject + 6);
}

void
spans_process_begin(const bakery_ctx *ctx, span *s, jv *env,
    const char *id, int delivery)
{
	trace_ctx parent;
	int has = envelope_trace(*env, &parent);
	span_begin(s, "process bakery-events", SPAN_CONSUMER,
	    has ? &parent : NULL);
	span_str(s, "messaging.system", ctx->queue_url &&
	    strncmp(ctx->queue_url, "nats", 4) == 0 ? "nats" : "bakery");
	span_str(s, "messaging.operation.type", "process");
	span_str(s, "messaging.destination.name", "bakery-events");
	span_str(s, "messaging.message.id", id);
	span_str(s, "bakery.sandbox", envelope_str(*env, "sandbox"));
	span_str(s, "bakery.event_type", envelope_str(*env, "type"));
	order_of(s, *env);
	if (delivery > 0)
		span_int(s, "bakery.delivery", delivery);
	*env = envelope_set_trace(*env, &s->ctx);
}

void
spans_process_end(span *s, int status, const char *error,
    const char *outcome)
{
	span_str(s, "bakery.outcome", outcome);
	if (!answer_applied(status))
		span_error(s, error[0] ? error : outcome);
	span_end(s);
}

void
spans_apply(jv env, const char *address, int status, const char *error,
    int64_t start_ns)
{
	trace_ctx parent;
	int has = envelope_trace(env, &parent);
	char name[BAKERY_ADDRESS_SIZE + 8];
	snprintf(name, sizeof name, "apply %s", address);
	span s;
	span_begin(&s, name, SPAN_INTERNAL, has ? &parent : NULL);
	span_start(&s, start_ns);
	span_str(&s, "bakery.subscriber", address);
	span_str(&s, "bakery.sandbox", envelope_str(env, "sandbox"));
	order_of(&s, env);
	span_int(&s, "bakery.status", status);
	if (!answer_applied(status))
		span_error(&s, error[0] ? error : "refused");
	span_end(&s);
}
