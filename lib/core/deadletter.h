/*
 * deadletter.h — the sandbox's dead letters, in SANDBOX/sandbox.db.
 *
 * A dead letter is an envelope the queue gave up on, keyed by its event
 * id, with its last error and how many deliveries it had. Invariant 5: it
 * is stored before the DLQ message is acknowledged; a second
 * dead-lettering of the same id updates the row (and counts `times`).
 * Invariant 6: a redrive deletes the row only after the queue accepted the
 * same envelope again, and only the row it read and sent.
 */
#ifndef BAKERY_DEADLETTER_H
#define BAKERY_DEADLETTER_H

#include <jv.h>

#include "../store/store.h"
#include "../queue/queue.h"

int deadletter_store(bakery_ctx *ctx, const char *sandbox, const char *id,
    const char *type, const char *envelope, const char *error, int attempts);
/* Invariant 5 for one message m received from QUEUE_DLQ: stores it as its
 * sandbox's dead letter, then acks it; a crash between the two stores it
 * again, which updates the same row. A lost lease on the ack is 0 (another
 * drainer stored it too: the same row). A failed store acks nothing. On 0,
 * *line is {"id","type","sandbox","error","attempts"} (type null when the
 * body has none), bakery-dlq drain's line. */
int deadletter_take(bakery_ctx *ctx, bakery_queue *q, queue_message *m,
    jv *line);
/* bakery-dlq drain: takes every message of QUEUE_DLQ (only: of that
 * sandbox; NULL every sandbox) with deadletter_take, ten at a time,
 * calling each(arg, line) for each one stored (line consumed), until the
 * queue has none left; follow: then waits for more. SIGTERM or SIGINT
 * (loop.h) stops it after the batch in hand. The first failure of a take stops it after its batch,
 * the others of that batch still taken; 0 or that failure. */
int deadletter_drain(bakery_ctx *ctx, const char *only, int follow,
    void (*each)(void *arg, jv line), void *arg);
/* Every dead letter of the sandbox, oldest first: a jv array of
 * {"id","type","sandbox","error","attempts","times","stored_at",
 * "updated_at","envelope"}. */
int deadletter_list(bakery_ctx *ctx, const char *sandbox, jv *out);
/* EX_NOINPUT when there is no dead letter with that id. */
int deadletter_get(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *out);

/* Sends the dead letter back to bakery-events with the same id, then
 * deletes its row as it was read: a row stored again meanwhile (the
 * event failed again and was drained before the delete) stays. */
int deadletter_redrive(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *redriven);

#endif
