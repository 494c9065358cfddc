/*
 * inbox.c — the inbox that writes each customer's receipts.
 * State: {"customer","receipts":[{"order","items","total_cents",
 * "currency","payment_intent","paid_at"}]}.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"

static int
inbox_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	(void)type;
	(void)error;
	(void)size;
	static const char *const fields[] = { "order", "day", "items",
		"total_cents", "currency", "payment_intent", "paid_at", NULL };
	if (!envelope_data_str(env, "order"))
		return ANSWER_MALFORMED;
	return kindkit_append_once(o, "customer", "receipts",
	    kindkit_pick(env, fields));
}

static const char *const shape[] = { "receipts", NULL };
const object_kind inbox_kind = {
	.name = "inbox",
	.key_field = "customer",
	.hears = { "OrderPaid" },
	.apply = inbox_apply,
	.create = 1,
	.arrays = shape,
};
