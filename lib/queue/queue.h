/*
 * queue.h — the at-least-once transport between objects.
 *
 * Two named queues: bakery-events and its dead-letter queue
 * bakery-events-dlq. One interface, drivers chosen by URL (--queue,
 * BAKERY_QUEUE):
 *
 *   sqlite:PATH   the embedded default (queue_sqlite.c), PATH defaulting to
 *                 HOME/queue.db: one file, a row per message.
 *   nats://HOST:PORT[,HOST:PORT...]  NATS JetStream (queue_nats.c): two
 *                 streams and a key-value bucket of fences, for several
 *                 hosts (docs/nats.md).
 *
 * What a driver promises (its operations, struct queue_ops, are private to
 * the drivers: lib/queue/queue-internal.h):
 *   send      accepts a batch and marks each item it accepted; a repeat of an
 *             id still pending in that queue is accepted and changes nothing.
 *   receive   leases up to N ready messages for `visibility` seconds; a
 *             lease that expires makes the message deliverable again, so a
 *             consumer that dies loses nothing. Each receive counts a delivery.
 *   ack       deletes a leased message (EX_TEMPFAIL if the lease was lost).
 *   ack_many  acks several at once (optional; queue_ack_many() falls back
 *             to one ack each): the embedded queue does it in one
 *             transaction, one commit instead of one per message.
 *   retry     gives the message back after `delay` seconds with an error.
 *   dead_letter  moves it with its last error to bakery-events-dlq in one
 *             transaction.
 *   peek_event  the messages of one event of a sandbox, found by its id
 *             rather than by reading the queue: the embedded queue looks
 *             the id up in its index, NATS reads the event's own subject
 *             (queue_nats.c), so the cost and the memory do not grow with
 *             the messages of other events.
 *   wipe_sandbox  deletes every message of a sandbox from both queues and
 *             sets its fence in the same transaction: from then on a send
 *             of an event recorded before the fence is accepted and dropped,
 *             so a relay that read its rows before the wipe cannot bring
 *             the sandbox's messages back (the wipe, bakery-wipe(1)).
 */
#ifndef BAKERY_QUEUE_H
#define BAKERY_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "../store/store.h"

#define QUEUE_EVENTS "bakery-events"
#define QUEUE_DLQ "bakery-events-dlq"

/* How long a command that sends the events it just recorded (place, pay,
 * --batch, the console, the webhook) waits for a NATS queue, its
 * connection's requests and its publish alike (ctx->queue_wait_ms): what
 * it could not send in that time stays in the outbox, and the relay or
 * the alarm sends it. A queue electing a leader after a node's loss
 * answers in seconds; the command need not wait for it (bakery-relay and
 * bakery-consume, whose work the sending is, wait the driver's 5 s). */
#define QUEUE_BRIEF_WAIT_MS 1000

typedef struct queue_item {
	const char *id;
	const char *sandbox;
	const char *body;
	int64_t recorded_at; /* ms; 0 when unknown (never fenced off) */
	int accepted;        /* set by send */
	int redrive;         /* a redrive: never taken for a repeat */
} queue_item;

typedef struct queue_message {
	char *id;
	char *sandbox;
	char *body;
	char *last_error; /* NULL when none */
	int deliveries;   /* this one included */
	int attempts;     /* in the DLQ: deliveries it had on bakery-events */
	int64_t handle;   /* driver's reference */
	char lease[32];
} queue_message;

typedef struct bakery_queue bakery_queue;

/* EX_CONFIG unless url (NULL: the default) names a known driver, and a
 * sqlite: URL an absolute, printable path without a query (no
 * :memory:, no ?mode=memory, no relative path). */
int queue_url_check(const char *url);
/* EX_CONFIG for a sqlite: URL whose file is missing (ctx_init checked the
 * URL itself with queue_url_check) unless may_be_missing (bakery-queue init makes it):
 * checked by every program before it writes anything, so that a producer
 * told of a mistyped queue places nothing. */
int queue_config_check(bakery_ctx *ctx, int may_be_missing);
/* The embedded queue's file (caller frees): a sqlite: URL's PATH, else
 * HOME/queue.db; NULL when the queue is on NATS. */
char *queue_file(bakery_ctx *ctx);
/* The context's queue, opened on first use from ctx->queue_url, for the
 * programs that send and receive: the home's own queue is made on first
 * use; a sqlite: URL naming a missing file is EX_CONFIG, never a new
 * queue that no consumer reads (or, to a consumer, one to wait on
 * forever). */
int queue_get(bakery_ctx *ctx, bakery_queue **q);
/* Like queue_get, but a sqlite: URL's missing file is made too:
 * bakery-queue init. */
int queue_make(bakery_ctx *ctx, bakery_queue **q);
/* Like queue_get, but for tools that only look (bakery-status,
 * bakery-trace, bakery-queue stats and peek): the file is opened
 * read-only (a read-only home is read) and never made. The home's queue
 * not made yet is EX_NOINPUT (an empty queue: queue_empty_stats); a
 * sqlite: URL naming a missing file is EX_CONFIG. */
int queue_get_existing(bakery_ctx *ctx, bakery_queue **q);
/* What queue_stats says of an empty queue. */
jv queue_empty_stats(void);
void queue_close(bakery_queue *q);
void queue_message_free(queue_message *m);

int queue_send(bakery_queue *, const char *queue, queue_item *, size_t);
int queue_receive(bakery_queue *, const char *queue, const char *sandbox,
    size_t max, int visibility_s, queue_message *out, size_t *got);
int queue_ack(bakery_queue *, const char *queue, queue_message *);
/* Acks n messages; rcs[i] as for queue_ack. Returns 0 unless the queue
 * failed, and then no message was acked by the failing call. */
int queue_ack_many(bakery_queue *, const char *queue, queue_message **m,
    size_t n, int *rcs);
int queue_retry(bakery_queue *, const char *queue, queue_message *,
    int delay_s, const char *error);
int queue_dead_letter(bakery_queue *, queue_message *, const char *error);
int queue_stats(bakery_queue *, jv *out);
int queue_peek(bakery_queue *, const char *queue, size_t max, jv *out);
/* How many messages a driver that cannot look an event up reads at most,
 * for one event in one queue, before it stops. */
#define QUEUE_SCAN_MAX 10000
/* The messages of event id of sandbox in queue, as queue_peek gives them
 * (a jv array, at most a few: a redrive queues the event again). type is
 * the event's type when known, NULL otherwise (NATS: the subject to
 * read). *complete is 1 when every message of the event was looked at,
 * 0 when a driver read QUEUE_SCAN_MAX messages and stopped (NATS,
 * messages an older bakery queued: queue_nats.c). */
int queue_peek_event(bakery_queue *, const char *queue, const char *sandbox,
    const char *id, const char *type, jv *out, int *complete);
int queue_wipe_sandbox(bakery_queue *, const char *sandbox, int64_t fence_ms);
/* Creates or checks the queue's storage; replicas matters on NATS only. */
int queue_init(bakery_queue *, int replicas, jv *out);
/* The sandbox's fence (ms since the epoch), 0 when never wiped: one read
 * (on NATS a request to the server) for many events of one sandbox. */
int64_t queue_fence(bakery_queue *, const char *sandbox);

#endif
