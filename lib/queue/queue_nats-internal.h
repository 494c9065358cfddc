/*
 * queue_nats-internal.h — what the four files of the NATS driver share
 * and nobody else needs: the handle's insides and the calls one makes of
 * another. queue_nats.c holds the connection, send and the fences;
 * queue_nats_receive.c receive and the answers to one message (its
 * consumers, its lease, ack, retry, dead letter); queue_nats_stream.c the
 * streams' administration: the assets made or checked, a stream healed
 * that moved back under its consumer, the deletes that remove an answered
 * message (one or a batch), stats and the wipe's purge;
 * queue_nats_peek.c peek, of every message or of one event's.
 */
#ifndef BAKERY_QUEUE_NATS_INTERNAL_H
#define BAKERY_QUEUE_NATS_INTERNAL_H

#include "queue-internal.h"

#include "../lazy/lazy_nats.h"
#include <pthread.h>

#define STREAM_EVENTS "BAKERY_EVENTS"
#define STREAM_DLQ "BAKERY_EVENTS_DLQ"
#define FENCE_BUCKET "BAKERY_FENCES"
#define PUBLISH_WAIT_MS 5000
#define MAX_SUBS 4

struct held {
	natsMsg *msg;
	uint64_t seq;
	unsigned generation; /* n->generation when received */
};

struct sub {
	char *key; /* queue|sandbox|visibility */
	natsSubscription *sub;
	const char *stream;
	char name[120], filter[200];
	int64_t ack_wait;
};

typedef struct nats_queue {
	natsConnection *nc;
	jsCtx *js;
	kvStore *fences;
	pthread_mutex_t mu;
	queue_item *batch; /* the send waiting for its acks */
	size_t batch_n;
	char pub_error[256];
	int replicas;            /* for assets this process creates */
	const char *created[3];  /* what open found or made, for init */
	struct sub subs[MAX_SUBS];
	struct held *held; /* received, not yet answered: handle = index */
	size_t held_n;
	int64_t unanswered_until; /* see queue_nats_stream.c, unanswered() */
	int reconnected;          /* set by the client's thread: check again */
	/* of the consumers, counted by queue_nats_heal_behind() */
	unsigned generation;
	uint64_t stale_above;     /* the stream's end when one was healed */
} nats_queue;

#define NQ(q) ((nats_queue *)(q)->impl)

/* queue_nats.c */

/* bakery_fail with the client's last error, or s's text, and jerr. */
int queue_nats_failed(int code, const char *what, natsStatus s,
    jsErrCode jerr);
/* The stream of a queue (QUEUE_EVENTS, QUEUE_DLQ), and its subjects'
 * first tokens ("bakery.events", "bakery.dlq"). */
const char *queue_nats_stream_of(const char *queue);
const char *queue_nats_prefix_of(const char *queue);
/* s as one subject token into buf: '.' becomes '~', what a subject cannot
 * hold '_'; "unknown" when empty. */
void queue_nats_token(const char *s, char *buf, size_t size);
/* s into buf with its line breaks made blanks (a header value). */
void queue_nats_one_line(const char *s, char *buf, size_t size);
/* The sandbox's fence (ms since the epoch), 0 when never wiped. */
int64_t queue_nats_fence(bakery_queue *q, const char *sandbox);

/* queue_nats_receive.c */

/* A copy of msg's header key, or NULL. */
char *queue_nats_header_dup(natsMsg *msg, const char *key);
/* The held message of m (EX_SOFTWARE and NULL when it is not held); 1 when
 * it was held before its consumer was made again (to be dropped);
 * releasing it destroys it. */
struct held *queue_nats_held_of(nats_queue *n, queue_message *m);
int queue_nats_held_is_stale(nats_queue *n, struct held *h, const char *id);
void queue_nats_release(struct held *h);
/* The operations of queue-internal.h done there. */
int queue_nats_receive(bakery_queue *q, const char *queue,
    const char *sandbox, size_t max, int visibility_s, queue_message *out,
    size_t *got);
int queue_nats_ack(bakery_queue *q, const char *queue, queue_message *m);
int queue_nats_retry(bakery_queue *q, const char *queue, queue_message *m,
    int delay_s, const char *error);
int queue_nats_dead_letter(bakery_queue *q, queue_message *m,
    const char *error);

/* queue_nats_stream.c */

/* Makes the streams and the fence bucket, or finds them; with a report
 * (init), sets the streams' replicas and appends one object per asset. */
int queue_nats_ensure_assets(nats_queue *n, int replicas, jv *report);
/* 1 when the stream moved back below what consumer name (its info ci)
 * delivered, and the consumer was deleted to be made again. */
int queue_nats_heal_behind(nats_queue *n, const char *stream,
    const char *name, jsConsumerInfo *ci);
/* Deletes message seq of queue's stream: 0 when it is gone, EX_TEMPFAIL
 * when refused or not answered (asked again while the process waits). */
int queue_nats_forget(nats_queue *n, const char *queue, uint64_t seq);
/* The operations of queue-internal.h done here. */
int queue_nats_ack_many(bakery_queue *q, const char *queue,
    queue_message **m, size_t n, int *rcs);
int queue_nats_stats(bakery_queue *q, jv *out);
int queue_nats_wipe_sandbox(bakery_queue *q, const char *sandbox,
    int64_t fence_ms);
int queue_nats_init(bakery_queue *q, int replicas, jv *out);

/* queue_nats_peek.c: the operations of queue-internal.h done there. */
int queue_nats_peek(bakery_queue *q, const char *queue, size_t max,
    jv *out);
int queue_nats_peek_event(bakery_queue *q, const char *queue,
    const char *sandbox, const char *id, const char *type, jv *out,
    int *complete);

#endif
