/*
 * kindkit.h — what a kind's apply function may call (kind.h,
 * kind_apply_fn), and the calls it shares with the other kinds.
 *
 * A kind's apply runs inside its object's transaction, in a savepoint of
 * the event's own, after the seen check (subscriber.c). It may:
 *   - read its object: o->state, o->key, o->sandbox (object.h);
 *   - change its own object only: object_set_state, object_exec on its
 *     own tables, object_record of the event types its descriptor
 *     records (object.h), and the calls below;
 *   - read the event: env's fields through envelope.h's getters, and
 *     kindkit_data and kindkit_pick below;
 *   - answer as answer.h says, filling error when not 2xx.
 * It never begins, commits or rolls back (the engine does, and rolls
 * back whatever a refusal changed), never writes another object
 * (invariant 1: it may read one, as the order reads its Billing record)
 * and never sends: what it recorded goes out after the commit.
 *
 * Owns: the shapes the built-in kinds share: lists of records keyed by
 * .order (kind.h, .arrays), and arrays a state always shows.
 * Promises: none of these writes anything but the object's state and its
 * lists' rows; each says what it consumes.
 */
#ifndef BAKERY_KINDKIT_H
#define BAKERY_KINDKIT_H

#include <jv.h>

#include "../core/answer.h"
#include "../core/kind.h"
#include "../core/object.h"

/* A kind's lists (kind.h, .arrays) are tables of its file: a record a
 * row, keyed by its .order. Each call touches the rows of one order. */
/* Sets state.KEY_FIELD = o->key (once) and adds record to o's list
 * unless a record of the same .order is there; a record without an order
 * is not added. Consumes record. 200, or 503 when it cannot write. */
int kindkit_append_once(bakery_object *o, const char *key_field,
    const char *list, jv record);
/* Whether o's list holds a record of order: object_list_has (object.h). */
/* Removes order's record from o's list. An exit code. */
int kindkit_list_remove(bakery_object *o, const char *list, const char *order);
/* env's data.FIELD, or null when it has none. */
jv kindkit_data(jv env, const char *field);
/* An object with the named fields of env's data (those present). */
jv kindkit_pick(jv env, const char *const *fields);
/* State as an object with the given arrays present. Consumes state. */
jv kindkit_state(jv state, const char *const *arrays);

#endif
