/*
 * dispatch.c — the day's deliveries: a confirmed stop for each paid order
 * that asked for delivery (an order collected at the shop has none).
 * State: {"day","stops":[{"order","customer","address","status"}]}.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"

static int
dispatch_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	(void)type;
	(void)error;
	(void)size;
	const char *order = envelope_data_str(env, "order");
	const char *address = envelope_data_str(env, "delivery");
	if (!order)
		return ANSWER_MALFORMED;
	jv stop = jv_object();
	if (address) {
		stop = jv_object_set(stop, jv_string("order"), jv_string(order));
		stop = jv_object_set(stop, jv_string("customer"), jv_string(
		    envelope_data_str(env, "customer") ?
		    envelope_data_str(env, "customer") : ""));
		stop = jv_object_set(stop, jv_string("address"),
		    jv_string(address));
		stop = jv_object_set(stop, jv_string("status"),
		    jv_string("confirmed"));
	}
	/* Without an order field the record is not appended: a pickup. */
	return kindkit_append_once(o, "day", "stops", stop);
}

static const char *const shape[] = { "stops", NULL };
const object_kind dispatch_kind = {
	.name = "dispatch",
	.key_field = "day",
	.hears = { "OrderPaid" },
	.apply = dispatch_apply,
	.create = 1,
	.arrays = shape,
};
