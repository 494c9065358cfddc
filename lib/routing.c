/*
 * routing.c — the compiled-in routing table.
 */
#include "routing.h"
#include "envelope.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

const route routing_table[] = {
	{ "OrderPlaced", "order", "schedule", "day", NULL },
	{ "OrderPlaced", "order", "kitchen", NULL, "board" },
	{ "PaymentSucceeded", "billing", "order", "order", NULL },
	{ "OrderPaid", "order", "schedule", "day", NULL },
	{ "OrderPaid", "order", "kitchen", NULL, "board" },
	{ "OrderPaid", "order", "crm", NULL, "customers" },
	{ "OrderPaid", "order", "customer", "customer", NULL },
	{ "OrderPaid", "order", "inbox", "customer", NULL },
	{ "OrderPaid", "order", "dispatch", "day", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

int
routing_subscribers(jv env, char addresses[][130], size_t *n)
{
	*n = 0;
	const char *type = envelope_str(env, "type");
	if (!type)
		return bakery_fail(EX_DATAERR, "envelope has no type");
	for (const route *r = routing_table; r->type; r++) {
		if (strcmp(r->type, type) != 0)
			continue;
		const char *key = r->key;
		if (r->key_field) {
			key = envelope_data_str(env, r->key_field);
			if (!key || !bakery_name_valid(key))
				return bakery_fail(EX_DATAERR,
				    "%s has no valid data.%s for %s", type,
				    r->key_field, r->kind);
		}
		if (*n == ROUTING_MAX_SUBSCRIBERS)
			break;
		snprintf(addresses[(*n)++], 130, "%s/%s", r->kind, key);
	}
	return 0;
}

jv
routing_describe(void)
{
	jv out = jv_array();
	for (const route *r = routing_table; r->type; r++) {
		jv row = jv_object();
		row = jv_object_set(row, jv_string("type"), jv_string(r->type));
		row = jv_object_set(row, jv_string("from"), jv_string(r->from));
		if (r->key_field)
			row = jv_object_set(row, jv_string("to"), jv_string_fmt(
			    "%s/{data.%s}", r->kind, r->key_field));
		else
			row = jv_object_set(row, jv_string("to"),
			    jv_string_fmt("%s/%s", r->kind, r->key));
		out = jv_array_append(out, row);
	}
	return out;
}
