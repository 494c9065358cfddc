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
 * Owns: the shapes the built-in kinds share in their state: arrays of
 * records keyed by .order, and arrays a state always shows.
 * Promises: none of these writes anything but the object's state
 * (kindkit_append_once); each says what it consumes.
 */
#ifndef BAKERY_KINDKIT_H
#define BAKERY_KINDKIT_H

#include <jv.h>

#include "../core/answer.h"
#include "../core/kind.h"
#include "../core/object.h"

/* The index of the element of arr whose .order is order, or -1. */
int kindkit_find_order(jv arr, const char *order);
/* Sets state.KEY_FIELD = key and appends record to state.ARRAY unless an
 * element for the same order is there. Consumes record. Returns 200. */
int kindkit_append_once(bakery_object *o, const char *key_field,
    const char *array, jv record);
/* arr without its element at index i. Consumes arr. */
jv kindkit_remove_at(jv arr, int i);
/* env's data.FIELD, or null when it has none. */
jv kindkit_data(jv env, const char *field);
/* An object with the named fields of env's data (those present). */
jv kindkit_pick(jv env, const char *const *fields);
/* State as an object with the given arrays present. Consumes state. */
jv kindkit_state(jv state, const char *const *arrays);

#endif
