/*
 * spans.c — the spans of an event's delivery (spans.h).
 */
#include "spans.h"
#include "../core/answer.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <string.h>

/* The order the event is about, when its subject names one (for
 * bakery.order), else NULL. */
static const char *
order_of(jv env)
{
	const char *subject = envelope_str(env, "subject");
	return subject && strncmp(subject, "order/", 6) == 0 ? subject + 6
							     : NULL;
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
	span_str(s, "bakery.order", order_of(*env));
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
spans_event_read(jv env, const trace_ctx *parent, int has, spans_event *e)
{
	e->parent = *parent;
	e->has = has;
	e->sandbox = envelope_str(env, "sandbox");
	e->order = order_of(env);
}

void
spans_apply(const spans_event *e, const char *address, int status,
    const char *error, int64_t start_ns)
{
	/* "apply ADDRESS", the address at most BAKERY_ADDRESS_SIZE - 1. */
	char name[BAKERY_ADDRESS_SIZE + 8] = "apply ";
	size_t n = strnlen(address, BAKERY_ADDRESS_SIZE - 1);
	memcpy(name + 6, address, n);
	name[6 + n] = '\0';
	span s;
	span_begin(&s, name, SPAN_INTERNAL, e->has ? &e->parent : NULL);
	span_start(&s, start_ns);
	span_str(&s, "bakery.subscriber", address);
	span_str(&s, "bakery.sandbox", e->sandbox);
	span_str(&s, "bakery.order", e->order);
	span_int(&s, "bakery.status", status);
	if (!answer_applied(status))
		span_error(&s, error[0] ? error : "refused");
	span_end(&s);
}
