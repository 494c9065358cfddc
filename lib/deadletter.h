/*
 * deadletter.h — the sandbox's dead letters, in SANDBOX/sandbox.db.
 *
 * A dead letter is an envelope the queue gave up on, keyed by its event
 * id, with its last error and how many deliveries it had. Invariant 5: it
 * is stored before the DLQ message is acknowledged; a second
 * dead-lettering of the same id updates the row (and counts `times`).
 * Invariant 6: a redrive deletes the row only after the queue accepted the
 * same envelope again.
 */
#ifndef BAKERY_DEADLETTER_H
#define BAKERY_DEADLETTER_H

#include <jv.h>

#include "ctx.h"
#include "queue.h"

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
/* Every dead letter of the sandbox, oldest first: a jv array of
 * {"id","type","sandbox","error","attempts","times","stored_at",
 * "updated_at","envelope"}. */
int deadletter_list(bakery_ctx *ctx, const char *sandbox, jv *out);
/* EX_NOINPUT when there is no dead letter with that id. */
int deadletter_get(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *out);
int deadletter_delete(bakery_ctx *ctx, const char *sandbox, const char *id);

/* Sends the dead letter back to bakery-events with the same id, then
 * deletes its row. */
int deadletter_redrive(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *redriven);

#endif
