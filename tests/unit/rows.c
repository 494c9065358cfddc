/*
 * rows.c — the kitchen's cards and the CRM's customers are rows: an event
 * touches one, however many there are, and object_show still shows them
 * inside the state, in the order they came.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include "../../lib/core/envelope.h"
#include "../../lib/core/object.h"
#include "../../lib/flow/subscriber.h"
#include "../../lib/base/util.h"

#define DAY "2027-01-15"
#define CARDS 1000

static bakery_ctx ctx;

static jv
event(const char *type, const char *order, const char *customer, int cents)
{
	char address[80];
	snprintf(address, sizeof address, "order/%s", order);
	char *json = bakery_xasprintf("{\"order\":\"%s\",\"day\":\"" DAY "\","
	    "\"customer\":\"%s\",\"items\":[{\"item\":\"rye\",\"qty\":1,"
	    "\"price_cents\":%d}],\"total_cents\":%d}", order, customer, cents,
	    cents);
	jv env = envelope_new("default", address, type, jv_parse(json));
	free(json);
	return env;
}

static jv
show(const char *address)
{
	jv out = jv_null();
	if (subscriber_show(&ctx, address, &out))
		out = jv_null();
	return out;
}

/* The JSON text of the value at path (keys and indexes separated by
 * '.') in v; consumes v. */
static char text[512];
static const char *
dump_at(jv v, const char *path)
{
	char *copy = bakery_xstrdup(path), *save = NULL;
	for (char *p = strtok_r(copy, ".", &save); p; p = strtok_r(NULL, ".",
	    &save)) {
		if (jv_get_kind(v) == JV_KIND_ARRAY)
			v = jv_array_get(v, atoi(p));
		else if (jv_get_kind(v) == JV_KIND_OBJECT)
			v = jv_object_get(v, jv_string(p));
		if (!jv_is_valid(v))
			break;
	}
	free(copy);
	jv s = jv_dump_string(v, 0);
	snprintf(text, sizeof text, "%s", jv_string_value(s));
	jv_free(s);
	return text;
}

/* Applies env at o as subscriber_apply does, in one transaction on the
 * connection the test keeps open; returns the status and the pages the
 * transaction wrote to the file. */
static int
apply_counting(bakery_object *o, jv env, int *pages)
{
	int cur = 0, high = 0;
	char why[200];
	if (object_begin(o))
		return -1;
	sqlite3_db_status(OBJECT_DB(o), SQLITE_DBSTATUS_CACHE_WRITE, &cur, &high, 1);
	int status = subscriber_find("kitchen")->apply(o, env, envelope_str(env, "type"),
	    why, sizeof why);
	if (status != 200 || object_mark_seen(o, envelope_str(env, "id"),
		envelope_str(env, "type")) || object_commit(o)) {
		object_rollback(o);
		return status == 200 ? -1 : status;
	}
	sqlite3_db_status(OBJECT_DB(o), SQLITE_DBSTATUS_CACHE_WRITE, &cur, &high, 0);
	*pages = cur;
	return status;
}

int
main(void)
{
	char *home = tmp_home();
	setenv("BAKERY_NOW", "2027-01-14T09:00:00Z", 1);
	setenv("BAKERY_SYNC", "normal", 1); /* 1,000 commits: fewer fsyncs */
	unsetenv("BAKERY_QUEUE");
	ctx_init(&ctx, home, NULL, NULL);

	/* 1,000 OrderPlaced at the board: a card row each, and the pages an
	 * event writes do not grow with the cards already there. */
	bakery_object *o;
	is_int(object_open(&ctx, NULL, "kitchen/board", 1, &o), 0,
	    "open kitchen/board");
	int pages[CARDS], applied = 0;
	for (int i = 0; i < CARDS; i++) {
		char order[32];
		snprintf(order, sizeof order, "ord_%04d", i);
		jv env = event("OrderPlaced", order, "cus_1", 450);
		pages[i] = 0;
		applied += apply_counting(o, env, &pages[i]) == 200;
		jv_free(env);
	}
	is_int(applied, CARDS, "%d OrderPlaced applied", CARDS);
	is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM cards"), CARDS,
	    "  a card row each");
	is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM seen"), CARDS,
	    "  an id in seen each");
	is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM state"), 0,
	    "  and no state document written");
	long first = 0, last = 0;
	for (int i = 0; i < 100; i++) {
		first += pages[i];
		last += pages[CARDS - 100 + i];
	}
	printf("# pages written: %ld by the first 100 events, %ld by the "
	    "last 100\n", first, last);
	ok(first > 0 && last <= first + first / 2,
	    "  the last 100 events write no more pages than the first 100 "
	    "(%ld, %ld), give or take a B-tree level", last, first);

	/* OrderPaid: the one card confirmed, a ticket; 409 without a card. */
	{
		jv paid = event("OrderPaid", "ord_0500", "cus_1", 450);
		int p = 0;
		is_int(apply_counting(o, paid, &p), 200, "OrderPaid ord_0500 200");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM cards"
			" WHERE status = 'confirmed'"), 1, "  one card confirmed");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM cards WHERE status ="
			" 'confirmed' AND order_id = 'ord_0500'"), 1,
		    "  its card");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM tickets"), 1,
		    "  one ticket");
		jv_free(paid);
		jv placed = event("OrderPlaced", "ord_0500", "cus_1", 450);
		is_int(apply_counting(o, placed, &p), 200,
		    "OrderPlaced again (a new id) for the confirmed card 200");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM cards"), CARDS,
		    "  no second card");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM cards WHERE status ="
			" 'confirmed' AND order_id = 'ord_0500'"), 1,
		    "  and it stays confirmed");
		jv_free(placed);
		jv nocard = event("OrderPaid", "ord_x", "cus_1", 450);
		is_int(apply_counting(o, nocard, &p), 409,
		    "OrderPaid without a card 409");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM seen"), CARDS + 2,
		    "  nothing seen");
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM tickets"), 1,
		    "  no ticket");
		jv_free(nocard);
	}
	object_close(o);

	/* The board shows state.cards in the order the cards came, each
	 * {"order","day","items","status"}, and state.tickets. */
	jv board = show("kitchen/board");
	is_str(dump_at(jv_copy(board), "state.cards.0"),
	    "{\"order\":\"ord_0000\",\"day\":\"" DAY "\",\"items\":[{\"item\":"
	    "\"rye\",\"qty\":1,\"price_cents\":450}],\"status\":\"placed\"}",
	    "state.cards[0] as a card always was");
	is_str(dump_at(jv_copy(board), "state.cards.999.order"), "\"ord_0999\"",
	    "state.cards[999] is the last card placed");
	is_str(dump_at(jv_copy(board), "state.cards.500.status"),
	    "\"confirmed\"", "state.cards[500] is confirmed");
	is_str(dump_at(jv_copy(board), "state.tickets.0.order"), "\"ord_0500\"",
	    "state.tickets[0] is ord_0500's");
	{
		jv state = jv_object_get(jv_copy(board), jv_string("state"));
		jv keys = jv_keys_unsorted(state);
		jv s = jv_dump_string(keys, 0);
		is_str(jv_string_value(s), "[\"cards\",\"tickets\"]",
		    "the board's state is {cards, tickets}");
		jv_free(s);
	}
	jv_free(board);

	/* The CRM: a row per customer, one touched per OrderPaid; shown as
	 * state.customers keyed by customer, in the order they came. */
	apply_result r;
	const char *crm = "crm/customers";
	const char *const who[] = { "cus_b", "cus_a", "cus_b", NULL };
	for (int i = 0; who[i]; i++) {
		char order[32];
		snprintf(order, sizeof order, "ord_c%d", i);
		jv paid = event("OrderPaid", order, who[i], 900 + i);
		subscriber_apply(&ctx, crm, paid, &r);
		is_int(r.status, 200, "crm: OrderPaid %s for %s 200", order,
		    who[i]);
		jv_free(paid);
	}
	{
		jv bad = envelope_new("default", "order/ord_q", "OrderPaid",
		    jv_parse("{\"order\":\"ord_q\"}"));
		subscriber_apply(&ctx, crm, bad, &r);
		is_int(r.status, 422, "crm: no customer 422");
		jv_free(bad);
		jv free_ = envelope_new("default", "order/ord_f", "OrderPaid",
		    jv_parse("{\"order\":\"ord_f\",\"customer\":\"cus_c\"}"));
		subscriber_apply(&ctx, crm, free_, &r);
		is_int(r.status, 200, "crm: no total_cents counts 0, 200");
		jv_free(free_);
	}
	jv c = show(crm);
	is_str(dump_at(jv_copy(c), "state"),
	    "{\"customers\":{\"cus_b\":{\"orders\":2,\"total_cents\":1802,"
	    "\"last_order\":\"ord_c2\"},\"cus_a\":{\"orders\":1,\"total_cents\":"
	    "901,\"last_order\":\"ord_c1\"},\"cus_c\":{\"orders\":1,"
	    "\"total_cents\":0,\"last_order\":\"ord_f\"}}}",
	    "state.customers as it always was, in the order they came");
	jv_free(c);
	is_int(object_open(&ctx, NULL, crm, 0, &o), 0, "open crm/customers");
	is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM crm_customers"), 3,
	    "  three customer rows");
	is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM state"), 0,
	    "  and no state document");
	object_close(o);

	ctx_free(&ctx);
	unsetenv("BAKERY_NOW");
	unsetenv("BAKERY_SYNC");
	rm_home(home);
	/* A re-arm count belongs to one UTC day (object_rearms_today). */
	is_int(object_rearms_today("2027-01-15", 7, 1800057599000LL), 7,
	    "a count of today stands at the day's last second (UTC)");
	is_int(object_rearms_today("2027-01-15", 7, 1800057600000LL), 0,
	    "  and is 0 a second later, on the next UTC day");
	is_int(object_rearms_today(NULL, 7, 1800057599000LL), 0,
	    "  and 0 with no day at all");
	return done_testing();
}
