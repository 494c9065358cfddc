/*
 * routing.c — the routing table: which addresses hear which event.
 */
#define _GNU_SOURCE
#include "tap.h"

#include "../../lib/envelope.h"
#include "../../lib/routing.h"
#include "../../lib/store.h"
#include "../../lib/subscriber.h"
#include "../../lib/util.h"

static jv
event(const char *type, const char *data_json)
{
	return envelope_new("default", "order/ord_1", type, jv_parse(data_json));
}

static void
expect(const char *type, const char *data_json, const char *const *want)
{
	jv env = event(type, data_json);
	char addr[ROUTING_MAX_SUBSCRIBERS][130];
	size_t n = 99;
	is_int(routing_subscribers(env, addr, &n), 0, "%s routes", type);
	size_t w = 0;
	while (want[w])
		w++;
	is_int((long long)n, (long long)w, "  to %zu addresses", w);
	for (size_t i = 0; i < w && i < n; i++)
		is_str(addr[i], want[i], "  #%zu is %s", i + 1, want[i]);
	jv_free(env);
}

static void
refuses(const char *type, const char *data_json, const char *what)
{
	jv env = event(type, data_json);
	char addr[ROUTING_MAX_SUBSCRIBERS][130];
	size_t n;
	is_int(routing_subscribers(env, addr, &n), EX_DATAERR,
	    "%s %s is EX_DATAERR", type, what);
	ok(strstr(bakery_error(), "data.") != NULL, "  error names the field (%s)",
	    bakery_error());
	jv_free(env);
}

/* Every route names a known event type, a valid kind that records it, and
 * a valid kind that has a subscriber, with a key field or a valid fixed key:
 * a route added without its subscriber, its kind or its event type
 * (docs/design.md, "How to add a kind of object, an event, or a
 * subscriber") fails here rather than as a 422 at the first delivery. */
static void
routes_are_whole(void)
{
	int n = 0;
	for (const route *r = routing_table; r->type; r++, n++) {
		ok(envelope_type_known(r->type), "route %d: %s is a known event type",
		    n + 1, r->type);
		ok(store_kind_valid(r->from), "  recorded by %s, a valid kind",
		    r->from);
		ok(store_kind_valid(r->kind), "  heard by %s, a valid kind", r->kind);
		const subscriber *sub = subscriber_find(r->kind);
		ok(sub && strcmp(sub->kind, r->kind) == 0 && sub->apply,
		    "  %s has a subscriber", r->kind);
		if (r->key_field)
			ok(!r->key, "  keyed by data.%s", r->key_field);
		else
			ok(r->key && bakery_name_valid(r->key),
			    "  keyed by the fixed name %s", r->key ? r->key : "(none)");
	}
	ok(n > 0, "the routing table has routes (%d)", n);
	ok(!subscriber_find("billing") && !subscriber_find("nonesuch"),
	    "billing, which only records, and an unknown kind have none");
}

int
main(void)
{
	routes_are_whole();

	const char *placed[] = { "schedule/2027-01-15", "kitchen/board", NULL };
	expect("OrderPlaced", "{\"order\":\"ord_1\",\"day\":\"2027-01-15\","
	    "\"customer\":\"cus_1\"}", placed);
	const char *payment[] = { "order/ord_1", NULL };
	expect("PaymentSucceeded", "{\"order\":\"ord_1\",\"amount_cents\":900}",
	    payment);
	const char *paid[] = { "schedule/2027-01-15", "kitchen/board",
		"crm/customers", "customer/cus_1", "inbox/cus_1",
		"dispatch/2027-01-15", NULL };
	expect("OrderPaid", "{\"order\":\"ord_1\",\"day\":\"2027-01-15\","
	    "\"customer\":\"cus_1\"}", paid);

	refuses("OrderPlaced", "{\"order\":\"ord_1\"}", "without data.day");
	refuses("OrderPaid", "{\"order\":\"ord_1\",\"customer\":\"cus_1\"}",
	    "without data.day");
	refuses("OrderPaid", "{\"order\":\"ord_1\",\"day\":\"2027-01-15\"}",
	    "without data.customer");
	refuses("OrderPaid", "{\"order\":\"ord_1\",\"day\":\"../../etc\","
	    "\"customer\":\"cus_1\"}", "with a path for a day");
	refuses("OrderPlaced", "{\"order\":\"ord_1\",\"day\":20270115}",
	    "with a numeric day");
	refuses("PaymentSucceeded", "{}", "without data.order");

	jv notype = jv_parse("{\"data\":{}}");
	char addr[ROUTING_MAX_SUBSCRIBERS][130];
	size_t n;
	is_int(routing_subscribers(notype, addr, &n), EX_DATAERR,
	    "an envelope without a type is EX_DATAERR");
	jv_free(notype);

	jv table = routing_describe();
	is_int(jv_array_length(jv_copy(table)), 9, "the table has nine routes");
	jv first = jv_array_get(jv_copy(table), 0);
	is_str(envelope_str(first, "to"), "schedule/{data.day}",
	    "routes print their key field");
	jv_free(first);
	jv_free(table);
	return done_testing();
}
