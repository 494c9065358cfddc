/*
 * outbox.h — moving an object's recorded events to the queue.
 *
 * Invariant 2: a send carries up to OUTBOX_BATCH rows and at most
 * OUTBOX_BATCH_BYTES of envelopes, oldest first. The rows the queue
 * accepted are marked relayed (events.relayed_at), which takes them out of
 * the outbox; the events themselves stay. Every row it did not accept stays
 * in the outbox, its attempts go up by one, and relay_error is logged. Only
 * the wipe removes an unsent row, with its sandbox's folder.
 *
 * Callers send after every commit that recorded events; by then the command
 * has given its answer, so a refused send never fails the command.
 */
#ifndef BAKERY_OUTBOX_H
#define BAKERY_OUTBOX_H

#include "object.h"

#define OUTBOX_BATCH 100
#define OUTBOX_BATCH_BYTES (256 * 1024)

/* Sends the whole outbox, batch after batch. *sent counts the rows the
 * queue accepted (may be NULL). Returns 0 when the outbox is empty at the
 * end, else the error of the send that failed (logged as relay_error). */
int outbox_send(bakery_object *o, int *sent);

/* Sends the outboxes of n objects of one context together: the first
 * batch of each, all in ONE queue send (one commit of the embedded
 * queue), then each object's rows settled as outbox_send settles them.
 * An outbox left holding more (rows an earlier refusal kept) sends the
 * rest on its own. rcs[i] is what outbox_send would return for o[i];
 * the return is the first of them that is not 0. The caller passes each
 * object once. */
int outbox_send_together(bakery_object **o, size_t n, int *rcs);

/* Rows in the outbox now. */
int outbox_count(bakery_object *o);

/* The events of the home's objects marked relayed (*events, in *objects
 * objects), read without writing (db_open_readonly): events the queue
 * accepted. With no queue to hold them (the home's queue.db gone after
 * it took them) they are lost: no relay sends an event again once it is
 * marked. A file that cannot be read is left out. */
void outbox_relayed_in_home(bakery_ctx *ctx, long *events, long *objects);

#endif
