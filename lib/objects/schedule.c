/*
 * schedule.c — the day's schedule: holds for placed orders, reservations
 * for paid ones. Shown as {"day","holds":[…],"reservations":[…]}, each
 * {"order","customer","items"}: the two lists are rows of the schedule's
 * file (kind.h), one touched a event.
 *
 * Either event may come first (a redrive can reorder them): an OrderPaid
 * without a hold reserves directly, and a late OrderPlaced for a reserved
 * order holds nothing.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"

#include <string.h>

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
	int reserved = 0, rc = object_list_has(o, "reservations", order,
	    &reserved);
	if (rc)
		return ANSWER_UNAVAILABLE;
	if (strcmp(type, "OrderPlaced") == 0)
		/* An order reserved already holds nothing. */
		return kindkit_append_once(o, "day", "holds", reserved
		    ? jv_object() : kindkit_pick(env, fields));
	if (strcmp(type, "OrderPaid") != 0)
		return ANSWER_APPLIED;
	if (kindkit_list_remove(o, "holds", order))
		return ANSWER_UNAVAILABLE;
	return kindkit_append_once(o, "day", "reservations",
	    kindkit_pick(env, fields));
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
