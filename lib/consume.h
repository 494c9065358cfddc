/*
 * consume.h — one message from the queue to every subscriber and back.
 *
 * Invariant 4: a message is acknowledged only when every subscriber
 * answered 2xx; otherwise it is given back with its error and goes again
 * to all of them. A message whose delivery number passes max_retries
 * (four deliveries for three retries) moves to bakery-events-dlq with its
 * last error ("Kitchen answered 503").
 */
#ifndef BAKERY_CONSUME_H
#define BAKERY_CONSUME_H

#include <jv.h>

#include "queue.h"

typedef struct consume_options {
	int max_retries;  /* default 3 */
	int retry_delay_s;/* default 0 */
} consume_options;

/* Delivers m, then acks, retries or dead-letters it. *result is one line
 * for stdout: {"id","type","sandbox","delivery","status","outcome",
 * "error"}. Returns 0 unless the queue itself failed. */
int consume_message(bakery_ctx *ctx, bakery_queue *q, queue_message *m,
    const consume_options *opt, jv *result);

/* consume_message() for a batch received together: the deliveries of the
 * batch to one object are applied in one transaction on it
 * (subscriber_deliver_batch), and the messages all their subscribers
 * applied are acked together at the end, in one commit of the embedded
 * queue. results[i] is messages[i]'s line. Returns 0 unless the queue
 * itself failed. */
int consume_batch(bakery_ctx *ctx, bakery_queue *q, queue_message *msgs,
    size_t n, const consume_options *opt, jv *results);

/* Delivers one envelope line straight to its subscribers (no queue). */
int consume_line(bakery_ctx *ctx, const char *line, size_t len, jv *result);

#endif
