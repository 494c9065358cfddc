/*
 * queue-internal.h — what the queue drivers share and nobody else needs:
 * the table of operations a driver fills (its promises are in queue.h),
 * the handle's insides, and the drivers' open calls, which queue.c
 * chooses between by URL. Included by queue.c, the embedded driver's
 * files (through queue_sqlite-internal.h), the NATS driver's (through
 * queue_nats-internal.h), the unit tests that drive a driver directly,
 * and the checker (tests/checker.c), for queue.db's schema version;
 * every other file reaches the queue through queue.h.
 */
#ifndef BAKERY_QUEUE_INTERNAL_H
#define BAKERY_QUEUE_INTERNAL_H

#include "queue.h"

struct queue_ops {
	int (*send)(bakery_queue *, const char *queue, queue_item *, size_t);
	int (*receive)(bakery_queue *, const char *queue, const char *sandbox,
	    size_t max, int visibility_s, queue_message *out, size_t *got);
	int (*ack)(bakery_queue *, const char *queue, queue_message *);
	int (*retry)(bakery_queue *, const char *queue, queue_message *,
	    int delay_s, const char *error);
	int (*dead_letter)(bakery_queue *, queue_message *, const char *error);
	/* {"QUEUE":{"ready":N,"leased":N,"delayed":N}, ...} */
	int (*stats)(bakery_queue *, jv *out);
	/* Up to max messages without leasing them, as a jv array. */
	int (*peek)(bakery_queue *, const char *queue, size_t max, jv *out);
	/* The messages of one event, looked up by its id (queue.h). */
	int (*peek_event)(bakery_queue *, const char *queue,
	    const char *sandbox, const char *id, const char *type, jv *out,
	    int *complete);
	/* Deletes every message of a sandbox and fences it at fence_ms. */
	int (*wipe_sandbox)(bakery_queue *, const char *sandbox,
	    int64_t fence_ms);
	/* The sandbox's fence (ms since the epoch), 0 when never wiped. */
	int64_t (*fence)(bakery_queue *, const char *sandbox);
	/* Creates what the driver needs, or checks it is there; *out is a jv
	 * array, one object per asset with its "status" (created, exists). */
	int (*init)(bakery_queue *, int replicas, jv *out);
	void (*close)(bakery_queue *);
	/* Optional. rcs[i]: 0, or EX_TEMPFAIL when m[i]'s lease was lost;
	 * any other failure acks none and is returned. */
	int (*ack_many)(bakery_queue *, const char *queue, queue_message **m,
	    size_t n, int *rcs);
};

struct bakery_queue {
	const struct queue_ops *ops;
	bakery_ctx *ctx;
	void *impl;
};

/* HOME/queue.db's schema, the embedded queue's. */
extern const schema_def queue_schema;

/* Drivers. */
/* look_only: an existing file, read-only (db_open_readonly). */
int queue_sqlite_open(bakery_ctx *ctx, const char *path, int look_only,
    bakery_queue **q);
int queue_nats_open(bakery_ctx *ctx, const char *url, bakery_queue **q);
/* 1 when a JetStream answer to a message delete (its JSON) says the
 * message is gone, deleted now or before; 0 when the delete must be tried
 * again (refused, or not an answer). queue_nats_stream.c; docs/nats.md. */
int queue_nats_delete_gone(const char *answer, int len);

#endif
