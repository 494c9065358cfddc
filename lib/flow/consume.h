/*
 * consume.h — one message from the queue to every subscriber and back.
 *
 * Invariant 4: a message is acknowledged only when every subscriber
 * answered 2xx; otherwise it is given back with its error and goes again
 * to all of them, after a delay that grows with its delivery number
 * (5 s, 30 s, then 2 min by default: long enough for an event overtaken by
 * a predecessor held in a killed consumer's lease, an outbox waiting for
 * its alarm, or a retry of its own, to find that predecessor applied; see
 * docs/design.md). A message whose delivery number passes max_retries
 * (four deliveries for three retries) moves to bakery-events-dlq with its
 * last error ("Kitchen answered 503").
 */
#ifndef BAKERY_CONSUME_H
#define BAKERY_CONSUME_H

#include <jv.h>

#include "../queue/queue.h"

/* At most one delay per retry: --max-retries goes up to 100 too. */
#define CONSUME_MAX_DELAYS 100
#define CONSUME_MAX_DELAY_S 43200

typedef struct consume_options {
	int max_retries; /* default 3 */
	/* The n-th retry waits delay_s[n - 1] seconds; retries past the
	 * last entry wait the last. ndelays >= 1. */
	int ndelays;
	int delay_s[CONSUME_MAX_DELAYS];
} consume_options;

/* The defaults: three retries, after 5 s, 30 s and 2 min. */
#define CONSUME_OPTIONS_DEFAULT { 3, 3, { 5, 30, 120 } }

/* Parses --retry-delay's argument: one number of seconds for every retry
 * ("0": immediate retries), or a comma-separated list, one for each retry
 * in turn ("5,30,120"), each 0 to CONSUME_MAX_DELAY_S, digits only, at most
 * CONSUME_MAX_DELAYS of them. Sets opt's delays and returns 0, or returns
 * EX_USAGE with the reason in bakery_error() and leaves opt alone. */
int consume_parse_delays(const char *arg, consume_options *opt);

/* How long a message that failed its delivery-th delivery waits. */
int consume_retry_delay(const consume_options *opt, int delivery);

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

/* Delivers one envelope line straight to its subscribers (no queue):
 * 0 and its result line, or the line's error. No queue retries a
 * refusal here, so *refused says what the caller's exit is: 0 when every
 * subscriber applied it, EX_TEMPFAIL when one refused it for now (give
 * the line again: nothing is applied twice), EX_DATAERR when one refused
 * it for good (its own word, or a 422: malformed). */
int consume_line(bakery_ctx *ctx, const char *line, size_t len, jv *result,
    int *refused);

#endif
