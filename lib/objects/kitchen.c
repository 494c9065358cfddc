/*
 * kitchen.c — the kitchen board: a card per order, placed then confirmed,
 * and an oven ticket (a row of its own) for each paid order.
 * State: {"cards":[{"order","status","day","items"}]}.
 *
 * An OrderPaid for an order without a card is not applicable yet (409):
 * the board must learn of the order before it bakes it. While the sandbox
 * has the fault kitchen-refuses, every event is refused with 503.
 */
#include "../subscriber.h"
#include "../envelope.h"
#include "../faults.h"
#include "../util.h"

#include <stdio.h>
#include <string.h>

static const char *const arrays[] = { "cards", NULL };

static int
kitchen_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	if (fault_is_set(o->ctx, o->sandbox, "kitchen-refuses"))
		return 503;
	const char *order = envelope_data_str(env, "order");
	if (!order)
		return 422;
	jv state = subscriber_state(jv_copy(o->state), arrays);
	jv cards = jv_object_get(jv_copy(state), jv_string("cards"));
	int at = subscriber_find_order(cards, order);
	int status = 200;
	if (strcmp(type, "OrderPlaced") == 0) {
		if (at < 0) {
			static const char *const fields[] = { "order", "day",
				"items", NULL };
			jv card = subscriber_pick(env, fields);
			card = jv_object_set(card, jv_string("status"),
			    jv_string("placed"));
			cards = jv_array_append(cards, card);
		}
	} else if (strcmp(type, "OrderPaid") == 0) {
		if (at < 0) {
			snprintf(error, size, "no card for order '%s' yet", order);
			status = 409;
		} else {
			jv card = jv_array_get(jv_copy(cards), at);
			card = jv_object_set(card, jv_string("status"),
			    jv_string("confirmed"));
			cards = jv_array_set(cards, at, card);
			jv items = jv_object_get(jv_object_get(jv_copy(env),
			    jv_string("data")), jv_string("items"));
			jv args = JV_ARRAY(jv_string(order),
			    jv_string(envelope_str(env, "id")),
			    jv_dump_string(items, 0), jv_number(bakery_now_ms()));
			if (object_exec(o, "INSERT OR IGNORE INTO tickets(order_id,"
				" event_id, items, created_at)"
				" VALUES (?1, ?2, ?3, ?4)", args, NULL))
				status = 503;
		}
	}
	state = jv_object_set(state, jv_string("cards"), cards);
	if (status == 200)
		object_set_state(o, state);
	else
		jv_free(state);
	return status;
}

static const char *const shape[] = { "cards", NULL };
const subscriber kitchen_subscriber = { "kitchen", kitchen_apply, 1, shape };
