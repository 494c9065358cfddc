/*
 * customer.c — one customer's record: the orders they paid.
 * State: {"customer","orders":[{"order","day","total_cents"}]}.
 */
#include "../subscriber.h"
#include "../envelope.h"

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
	return subscriber_append_once(o, "customer", "orders",
	    subscriber_pick(env, fields));
}

static const char *const shape[] = { "orders", NULL };
const subscriber customer_subscriber = { "customer", customer_apply, 1, shape };
