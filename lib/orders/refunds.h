/*
 * refunds.h — payments bakery kept but did not count (flagged: double,
 * mismatch, no_order; see billing.h), remembered until an operator says
 * they are refunded, past the wipe that removes their sandbox.
 *
 * HOME/refunds.db holds one row per flagged payment intent that was
 * either wiped with its sandbox (wiped_at) or marked refunded
 * (refunded_at): the wipe copies a sandbox's flagged payments into it
 * before it removes the sandbox, and `bakery-order refunded ORDER PI`
 * marks one refunded, live or wiped. bakery-status shows every flagged
 * payment not marked refunded, live or wiped, under "needs attention".
 */
#ifndef BAKERY_REFUNDS_H
#define BAKERY_REFUNDS_H

#include "../store/store.h"

#include <jv.h>
#include <stdint.h>

/* HOME/refunds.db's schema. */
extern const schema_def refunds_schema;

/* The flagged payments of one sandbox's billing objects, kept in
 * refunds.db with wiped_at; called by the wipe under the sandbox's lock,
 * before it removes the folder. A payment kept already stays as it was,
 * so a resumed wipe keeps each once. A billing file that cannot be read
 * (but for one being created: no schema yet) fails it, naming the file:
 * the wipe must not remove what may be owed. */
int refunds_keep_sandbox(bakery_ctx *ctx, const char *sandbox,
    int64_t wiped_at);

/* Marks payment intent pi of order (in ctx's sandbox) refunded. It must
 * be a flagged payment: live in billing/ORDER, or kept by a wipe.
 * *out: {order, payment_intent, sandbox, flag, reason, amount_cents,
 * currency, wiped_at, refunded_at}. A second call answers the first
 * mark. EX_NOINPUT: no such flagged payment; EX_DATAERR: pi is the
 * payment that counted for the order (never refunded through here). */
int refunds_mark(bakery_ctx *ctx, const char *order, const char *pi,
    jv *out);

/* For bakery-status, read-only (no refunds.db: nothing): *refunded, an
 * object whose keys are the payment intents marked refunded; *owed, the
 * array of wiped payments not marked refunded (as refunds_mark's out). */
int refunds_read(bakery_ctx *ctx, jv *refunded, jv *owed);

#endif
