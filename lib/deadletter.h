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

int deadletter_store(bakery_ctx *ctx, const char *sandbox, const char *id,
    const char *type, const char *envelope, const char *error, int attempts);
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
