/*
 * customer.c — one customer's record: the orders they paid.
 * State: {"customer","orders":[{"order","day","total_cents"}]}.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"

static int
customer_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	(void)type;
	(void)error;
	(void)size;
	static const char *const fields[] = { "order", "day", "total_cents",
		"currency", NULL };
	if (!envelope_data_str(env, "order"))
		return ANSWER_MALFORMED;
	return kindkit_append_once(o, "customer", "orders",
	    kindkit_pick(env, fields));
}

static const char *const shape[] = { "orders", NULL };
const object_kind customer_kind = {
	.name = "customer",
	.key_field = "customer",
	.hears = { "OrderPaid" },
	.apply = customer_apply,
	.create = 1,
	.arrays = shape,
};
