/*
 * crm.c — what the bakery knows of its customers, in one object
 * (crm/customers): a row per customer (table crm_customers) with the
 * orders paid, their total and the last order, one touched per OrderPaid.
 * bakery-show shows them as state.customers, {"ID":{"orders",
 * "total_cents","last_order"}}.
 */
#include "../flow/kindkit.h"
#include "../core/envelope.h"

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
		return ANSWER_MALFORMED;
	jv add = kindkit_data(env, "total_cents");
	if (jv_get_kind(add) != JV_KIND_NUMBER) {
		jv_free(add);
		add = jv_number(0);
	}
	jv args = JV_ARRAY(jv_string(customer), add, jv_string(order));
	if (object_exec(o, "INSERT INTO crm_customers(customer, orders,"
		" total_cents, last_order) VALUES (?1, 1, ?2, ?3)"
		" ON CONFLICT (customer) DO UPDATE SET orders = orders + 1,"
		" total_cents = total_cents + excluded.total_cents,"
		" last_order = excluded.last_order", args, NULL))
		return ANSWER_UNAVAILABLE;
	return ANSWER_APPLIED;
}

const object_kind crm_kind = {
	.name = "crm",
	.key = "customers",
	.hears = { "OrderPaid" },
	.apply = crm_apply,
	.create = 1,
	/* A row per customer rather than a document in the state, so that
	 * an event changes one row instead of rewriting a document that
	 * grows with every order; seq keeps the order they came in. */
	.tables =
	    "CREATE TABLE crm_customers(seq INTEGER PRIMARY KEY,"
	    "  customer TEXT NOT NULL UNIQUE, orders INTEGER NOT NULL,"
	    "  total_cents NUMERIC NOT NULL, last_order TEXT);",
	.rows = {
		{ "customers", "kvvv", "SELECT customer, orders, total_cents,"
		  " last_order FROM crm_customers ORDER BY seq" },
	},
};
