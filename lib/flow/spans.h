/*
 * spans.h — the spans of an event's delivery, after OpenTelemetry's
 * messaging conventions (span.h): "process bakery-events" (CONSUMER), a
 * child of the event's traceparent, one for each delivery of a message,
 * and under it "apply ADDRESS" (INTERNAL), one for each subscriber.
 *
 * Owns: their names, attributes (messaging.system, .destination.name,
 * .operation.type, .message.id, bakery.sandbox, bakery.order,
 * bakery.delivery, bakery.outcome; bakery.subscriber, bakery.status) and
 * status (ERROR with the error when refused).
 *
 * Only called while span_on(): export off costs nothing here.
 */
#ifndef BAKERY_FLOW_SPANS_H
#define BAKERY_FLOW_SPANS_H

#include <stdint.h>

#include "../net/span.h"
#include "../store/ctx.h"

/* Begins s for the delivery of env (the message id and its delivery
 * count), and makes env's traceparent the span's own: its subscribers
 * apply it, and record what follows, in the span. */
void spans_process_begin(const bakery_ctx *ctx, span *s, jv *env,
    const char *id, int delivery);
/* Ends s with the delivery's answer (status, error: answer.h) and outcome (acked, retried,
 * dead-lettered, ...). */
void spans_process_end(span *s, int status, const char *error,
    const char *outcome);
/* What the apply spans of one event share, read from its envelope once
 * for all its subscribers. */
typedef struct spans_event {
	trace_ctx parent;    /* its traceparent: the process span's */
	int has;             /* 0: it had none, parent is a new trace */
	const char *sandbox; /* borrowed from the envelope, or NULL */
	const char *order;   /* the order its subject names, or NULL */
} spans_event;

/* e of env, whose trace (envelope_trace's, with has its answer) was read
 * already (borrowed: e's strings live as long as env). */
void spans_event_read(jv env, const trace_ctx *parent, int has,
    spans_event *e);
/* The span of one subscriber's apply of the event e was read from, from
 * start_ns to now. */
void spans_apply(const spans_event *e, const char *address, int status,
    const char *error, int64_t start_ns);

#endif
