/*
 * routing.c — the routing table: which addresses hear which event.
 */
#define _GNU_SOURCE
#include "tap.h"

#include "../../lib/envelope.h"
#include "../../lib/routing.h"
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

int
main(void)
{
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
