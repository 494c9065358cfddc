/*
 * event_data.h — the one check of an event's data, made before any
 * subscriber writes anything of it.
 *
 * Owns: what each field of an event's data that bakery may write must be
 * (bakery-envelope(5), "Data"): its type, and its range, by the same
 * limits place refuses past, the order's (order.h) and the menu's
 * (menu.h), so that an order placed is never one its subscribers refuse
 * once paid.
 *
 * Promises: it reads env and writes only why. A field that is absent
 * passes: each subscriber says what it needs.
 *
 * Why here and not beside the event types (envelope.h, in lib/core/):
 * the fields are the order's and its payment's (data.order,
 * data.customer, data.items, data.total_cents), named after kinds of
 * object, and their limits are the order's, both of the domain; the
 * machinery names no kind (mk/kinds) and includes no domain header
 * (mk/layers). The delivery engine (subscriber.c) calls it once for each
 * envelope of a batch.
 */
#ifndef BAKERY_EVENT_DATA_H
#define BAKERY_EVENT_DATA_H

#include <stddef.h>

#include <jv.h>

/* 0 when every field of env's data bakery may write is of its type and
 * within its range, else 422 (ANSWER_MALFORMED) with the first fault in
 * why ("bad data.items[0]: bad qty: want 1 to 99"). */
int event_data_check(jv env, char *why, size_t size);

#endif
