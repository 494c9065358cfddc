/*
 * subscriber.h — the delivery engine: applying an event at an object,
 * once in effect.
 *
 * Every subscriber answers like an HTTP handler (answer.h names them):
 *   2xx  applied, or applied before (its id is in the object's seen table);
 *        205 when the event predates its sandbox's last wipe and is dropped
 *   409  not applicable yet (the kitchen has no card for a paid order)
 *   422  malformed for this subscriber
 *   503  refused or unavailable (a fault, a locked or full disk)
 *
 * Owns: a batch's deliveries grouped by object, one transaction each with
 * a savepoint per event; what a batch reads of a sandbox once (its faults,
 * its fence as first read); the fence read again under each object's lock;
 * the fault that makes a kind refuse; the subscribers outside bakery
 * (external/NAME), called one event at a time under their object's lock.
 * A kind's own part is its apply function (kindkit.h says what it may
 * call); an event's data is checked once, before any subscriber writes
 * (event_data.h).
 *
 * Promises: invariant 3: the event id is stored in the same transaction as
 * the change, so a repeat finds it, changes nothing and answers 200. A 409
 * or 503 records nothing.
 */
#ifndef BAKERY_SUBSCRIBER_H
#define BAKERY_SUBSCRIBER_H

#include <jv.h>

#include "../core/answer.h"
#include "../core/kind.h"
#include "../core/object.h"

typedef struct apply_result {
	int status;
	/* Refused for good by its subscriber's own word (an external's exit
	 * 65 or 4xx): the consumer dead-letters the event at once. */
	int final;
	char error[256];
} apply_result;

/* The kind named kind when it applies events (a subscriber), or NULL. */
const object_kind *subscriber_find(const char *kind);

/* Applies env at address in the envelope's sandbox, then sends whatever
 * the object recorded: subscriber_deliver_batch()'s transaction, for one
 * event. Fills r; returns 0 unless bakery itself failed. */
int subscriber_apply(bakery_ctx *ctx, const char *address, jv env,
    apply_result *r);

/* subscriber_apply() of n envelopes at one address, in one transaction
 * per sandbox's object (see subscriber_deliver_batch()); r[i] is
 * envs[i]'s answer. */
int subscriber_apply_batch(bakery_ctx *ctx, const char *address,
    const jv *envs, size_t n, apply_result *r);

/* object_show() of address, with the kind's arrays present even in an
 * object that has refused everything so far (its stable shape). */
int subscriber_show(bakery_ctx *ctx, const char *address, jv *out);

/* Delivers env to every subscriber of its type. r->status is 200 when all
 * answered 2xx, else the first failure's status with every error joined by
 * "; " ("Kitchen answered 503; Ext answered 503: exit 75: busy"). Each
 * part starts with the name of the subscriber that refused, capitalized,
 * and " answered NNN"; its why (after ": ") never holds ';' (written
 * ','), so what a subscriber says cannot make a part of its own: the
 * error names who refused (the console's dead letters read it so).
 * Every subscriber is tried each time. */
int subscriber_deliver(bakery_ctx *ctx, jv env, apply_result *r);

/* subscriber_deliver() for n envelopes received together: r[i] is
 * envs[i]'s result. bodies[i] (bodies may be NULL) is the text envs[i]
 * was parsed from: an external subscriber gets it as it is when it is
 * one line, instead of envs[i] dumped again. The deliveries to one object are applied in one
 * transaction on it, in batch order, each event in a savepoint of its own
 * (a refusal takes back only its changes), then one commit: one commit
 * per object per batch instead of one per event. A failed commit fails
 * every event of that object. */
int subscriber_deliver_batch(bakery_ctx *ctx, const jv *envs,
    const char *const *bodies, size_t n, apply_result *r);

#endif
