/*
 * trace.h — where one event has been.
 *
 * Follows an event id through what bakery keeps about it, reading only
 * (db_open_readonly, queue_get_existing):
 *
 *   recorded       the events table of the object that recorded it. bakery
 *                  keeps no index of event ids, so the sandbox's order/ and
 *                  billing/ objects (the kinds that record events) are
 *                  scanned: the cost grows with the orders of the sandbox.
 *   relayed        events.relayed_at, set when the queue accepted its
 *                  outbox row; a row still in the outbox shows its attempts
 *                  and last error instead.
 *   queued         the message in bakery-events or bakery-events-dlq, with
 *                  its deliveries and last error, looked up by the event's
 *                  id (queue_peek_event): the queue's other messages are
 *                  not read. "queue_complete" is false, and a line on
 *                  stderr says so, when the driver stopped before it had
 *                  read every message that could be the event's (NATS,
 *                  messages bakery 0.1.0 queued).
 *   applied        at each subscriber the routes file names for it
 *                  (routing_subscribers), the seen table's applied_at.
 *   dead-lettered  the sandbox's dead_letters row: when, how often, why.
 *   redriven       the sandbox's redrives row: how often, the last time,
 *                  and the dead letter the last redrive removed (its
 *                  error, deliveries, times, when stored): the timeline
 *                  keeps that dead-lettered step after the redrive.
 *
 * The envelope comes from the recording object, else from the dead letter,
 * else from the queue; trace_id is its traceparent's trace id (null when it
 * has no valid one). EX_NOINPUT when the event is found nowhere.
 *
 * The shape (bakery-trace(1) --json):
 *   {"id","type","sandbox","subject","trace_id","recorded_in","recorded_at",
 *    "relayed_at","outbox":{"attempts","last_error","created_at"}|null,
 *    "queue":[{"queue","deliveries","leased","visible_at","last_error"}],
 *    "queue_complete":true|false,
 *    "subscribers":[{"address","applied_at"}],
 *    "dead_letter":{"error","attempts","times","stored_at","updated_at"}|null,
 *    "redriven":{"times","last_at","dead_letter":{...as above}|null}|null,
 *    "timeline":[{"at","step","where","detail"}]}
 * The timeline is in time order; steps without a time ("queued", "pending"
 * at a subscriber that has not applied it) come last.
 */
#ifndef BAKERY_TRACE_H
#define BAKERY_TRACE_H

#include <jv.h>

#include "../store/store.h"

int trace_event(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *out);

/* Every event of an order: those its order/ORDER and billing/ORDER
 * objects recorded, in the order recorded (by recorded_at), each traced as trace_event
 * does; a jv array. EX_NOINPUT when the sandbox has neither object;
 * EX_USAGE for an order id that is not a name. */
int trace_order(bakery_ctx *ctx, const char *sandbox, const char *order,
    jv *out);

#endif
