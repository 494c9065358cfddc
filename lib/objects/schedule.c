/*
 * schedule.c — the day's schedule: holds for placed orders, reservations
 * for paid ones. State: {"day","holds":[…],"reservations":[…]}, each
 * {"order","customer","items"}.
 *
 * Either event may come first (a redrive can reorder them): an OrderPaid
 * without a hold reserves directly, and a late OrderPlaced for a reserved
 * order holds nothing.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"

#include <string.h>

static const char *const arrays[] = { "holds", "reservations", NULL };
static const char *const fields[] = { "order", "customer", "items", NULL };

static int
schedule_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	(void)error;
	(void)size;
	const char *order = envelope_data_str(env, "order");
	if (!order)
		return ANSWER_MALFORMED;
	jv state = kindkit_state(jv_copy(o->state), arrays);
	state = jv_object_set(state, jv_string("day"), jv_string(o->key));
	jv holds = jv_object_get(jv_copy(state), jv_string("holds"));
	jv reservations = jv_object_get(jv_copy(state), jv_string("reservations"));
	int held = kindkit_find_order(holds, order);
	int reserved = kindkit_find_order(reservations, order);
	if (strcmp(type, "OrderPlaced") == 0) {
		if (held < 0 && reserved < 0)
			holds = jv_array_append(holds, kindkit_pick(env, fields));
	} else if (strcmp(type, "OrderPaid") == 0) {
		if (held >= 0)
			holds = kindkit_remove_at(holds, held);
		if (reserved < 0)
			reservations = jv_array_append(reservations,
			    kindkit_pick(env, fields));
	}
	state = jv_object_set(state, jv_string("holds"), holds);
	state = jv_object_set(state, jv_string("reservations"), reservations);
	object_set_state(o, state);
	return ANSWER_APPLIED;
}

static const char *const shape[] = { "holds", "reservations", NULL };
const object_kind schedule_kind = {
	.name = "schedule",
	.key_field = "day",
	.hears = { "OrderPlaced", "OrderPaid" },
	.apply = schedule_apply,
	.create = 1,
	.arrays = shape,
};
