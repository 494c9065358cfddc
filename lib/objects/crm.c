/*
 * crm.c — what the bakery knows of its customers, in one object
 * (crm/customers). State: {"customers":{"ID":{"orders","total_cents",
 * "last_order"}}}.
 */
#include "../subscriber.h"
#include "../envelope.h"

static int
crm_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	(void)type;
	(void)error;
	(void)size;
	const char *customer = envelope_data_str(env, "customer");
	const char *order = envelope_data_str(env, "order");
	if (!customer || !order)
		return 422;
	jv state = subscriber_state(jv_copy(o->state), NULL);
	jv customers = jv_object_get(jv_copy(state), jv_string("customers"));
	if (jv_get_kind(customers) != JV_KIND_OBJECT) {
		jv_free(customers);
		customers = jv_object();
	}
	jv c = jv_object_get(jv_copy(customers), jv_string(customer));
	if (jv_get_kind(c) != JV_KIND_OBJECT) {
		jv_free(c);
		c = jv_object();
	}
	jv orders = jv_object_get(jv_copy(c), jv_string("orders"));
	jv total = jv_object_get(jv_copy(c), jv_string("total_cents"));
	jv add = jv_object_get(jv_object_get(jv_copy(env), jv_string("data")),
	    jv_string("total_cents"));
	double n = jv_get_kind(orders) == JV_KIND_NUMBER ? jv_number_value(orders) : 0;
	double t = jv_get_kind(total) == JV_KIND_NUMBER ? jv_number_value(total) : 0;
	double a = jv_get_kind(add) == JV_KIND_NUMBER ? jv_number_value(add) : 0;
	jv_free(orders);
	jv_free(total);
	jv_free(add);
	c = jv_object_set(c, jv_string("orders"), jv_number(n + 1));
	c = jv_object_set(c, jv_string("total_cents"), jv_number(t + a));
	c = jv_object_set(c, jv_string("last_order"), jv_string(order));
	customers = jv_object_set(customers, jv_string(customer), c);
	state = jv_object_set(state, jv_string("customers"), customers);
	object_set_state(o, state);
	return 200;
}

const subscriber crm_subscriber = { "crm", crm_apply, 1, NULL };
