/*
 * subscribers.c — each kind's apply through subscriber_apply (invariant 3).
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include "../../lib/core/envelope.h"
#include "../../lib/core/faults.h"
#include "../../lib/core/object.h"
#include "../../lib/core/outbox.h"
#include "../../lib/queue/queue.h"
#include "../../lib/flow/subscriber.h"
#include "../../lib/base/util.h"
#include "../../lib/store/wal.h"

#define DAY "2027-01-15"

static bakery_ctx ctx;

static jv
data(const char *order, const char *extra)
{
	char *json = bakery_xasprintf("{\"order\":\"%s\",\"day\":\"" DAY "\","
	    "\"customer\":\"cus_1\",\"items\":[{\"item\":\"cardamom-bun\","
	    "\"qty\":2,\"price_cents\":450}],\"total_cents\":900,"
	    "\"currency\":\"eur\",\"payment_intent\":\"pi_1\"%s%s}",
	    order, extra ? "," : "", extra ? extra : "");
	jv d = jv_parse(json);
	free(json);
	return d;
}

static jv
event(const char *type, const char *order, const char *extra)
{
	char address[80];
	snprintf(address, sizeof address, "order/%s", order);
	return envelope_new("default", address, type, data(order, extra));
}

static int
apply(const char *address, jv env, apply_result *r)
{
	memset(r, 0, sizeof *r);
	r->status = -1;
	if (subscriber_apply(&ctx, address, env, r) != 0)
		return -1;
	return r->status;
}

/* object_show of address, or null when it does not exist. */
static jv
show(const char *address)
{
	bakery_object *o;
	jv out = jv_null();
	if (object_open(&ctx, NULL, address, 0, &o))
		return out;
	if (object_show(o, &out))
		out = jv_null();
	object_close(o);
	return out;
}

/* The value at a jq-like path of keys and indexes, e.g. "state","holds",0. */
static jv
at(jv v, const char *path)
{
	char *copy = bakery_xstrdup(path), *save = NULL;
	for (char *p = strtok_r(copy, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
		if (*p >= '0' && *p <= '9' && jv_get_kind(v) == JV_KIND_ARRAY)
			v = jv_array_get(v, atoi(p));
		else if (jv_get_kind(v) == JV_KIND_OBJECT)
			v = jv_object_get(v, jv_string(p));
		else {
			jv_free(v);
			v = jv_invalid();
		}
		if (!jv_is_valid(v))
			break;
	}
	free(copy);
	return v;
}

static long long
len_at(const char *address, const char *path)
{
	jv v = at(show(address), path);
	long long n = -1;
	if (jv_get_kind(v) == JV_KIND_ARRAY)
		n = jv_array_length(jv_copy(v));
	jv_free(v);
	return n;
}

static char strbuf[256];
static const char *
str_at(const char *address, const char *path)
{
	jv v = at(show(address), path);
	strbuf[0] = '\0';
	if (jv_get_kind(v) == JV_KIND_STRING)
		snprintf(strbuf, sizeof strbuf, "%s", jv_string_value(v));
	else if (jv_get_kind(v) == JV_KIND_NUMBER)
		snprintf(strbuf, sizeof strbuf, "%g", jv_number_value(v));
	jv_free(v);
	return strbuf;
}

/* Applies env again at address: 200 and object_show unchanged. */
static void
repeat_changes_nothing(const char *address, jv env)
{
	apply_result r;
	jv before = show(address);
	is_int(apply(address, env, &r), 200, "%s: a repeated event answers 200",
	    address);
	jv after = show(address);
	ok(jv_get_kind(before) == JV_KIND_OBJECT &&
		jv_equal(before, after), "%s:   and changes nothing", address);
}

/* Runs sql in the file of address (a trigger the test sets up). */
static void
exec_at(const char *address, const char *sql)
{
	bakery_object *o;
	int rc = object_open(&ctx, NULL, address, 1, &o);
	if (!rc && sqlite3_exec(OBJECT_DB(o), sql, NULL, NULL, NULL) != SQLITE_OK)
		rc = 1;
	if (rc)
		printf("# cannot run '%s' at %s\n", sql, address);
	object_close(o);
}

/* A trigger at address that refuses the seen row of env's id with how
 * (ABORT: the statement; ROLLBACK: the whole transaction). */
static void
refuse_seen(const char *address, jv env, const char *how)
{
	char *sql = bakery_xasprintf("CREATE TRIGGER refuse BEFORE INSERT ON seen"
	    " WHEN NEW.event_id = '%s' BEGIN SELECT RAISE(%s, 'refused by the"
	    " test'); END", envelope_str(env, "id"), how);
	exec_at(address, sql);
	free(sql);
}

/* Applies n events as one batch at address; their statuses, joined. */
static const char *
apply_batch(const char *address, const jv *envs, size_t n, apply_result *r)
{
	static char out[64];
	size_t used = 0;
	out[0] = '\0';
	subscriber_apply_batch(&ctx, address, envs, n, r);
	for (size_t i = 0; i < n && used < sizeof out; i++)
		used += (size_t)snprintf(out + used, sizeof out - used, "%s%d",
		    i ? " " : "", r[i].status);
	return out;
}

/* Applies the batch b at address with a trigger named refuse there: every
 * event answers 503 with want in its error, and the object is unchanged.
 * Drops the trigger. */
static void
fails_whole(const char *address, const jv *b, size_t n, const char *want,
    const char *what)
{
	apply_result r[8];
	char all503[64] = "";
	for (size_t i = 0; i < n; i++)
		strcat(all503, i ? " 503" : "503");
	jv before = show(address);
	is_str(apply_batch(address, b, n, r), all503, "%s", what);
	ok(strstr(r[n - 1].error, want) != NULL, "  error '%s'",
	    r[n - 1].error);
	jv after = show(address);
	ok(jv_equal(before, after), "  nothing changed, nothing seen");
	exec_at(address, "DROP TRIGGER refuse");
}

/* A batch's events at one object: one transaction, a savepoint each. */
static void
batches(void)
{
	const char *board = "kitchen/batch";
	apply_result r[4];
	jv g1placed = event("OrderPlaced", "g1", NULL);
	jv g1paid = event("OrderPaid", "g1", NULL);
	jv g2placed = event("OrderPlaced", "g2", NULL);
	jv g2paid = event("OrderPaid", "g2", NULL);
	{
		jv b[] = { g1placed, g2paid, g2placed, g1paid };
		is_str(apply_batch(board, b, 4, r), "200 409 200 200",
		    "batch: a 409 amid applied events");
		ok(strncmp(r[1].error, "Kitchen answered 409", 20) == 0,
		    "  error '%s'", r[1].error);
		is_int(len_at(board, "state.cards"), 2, "  two cards");
		is_str(str_at(board, "state.cards.0.status"), "confirmed",
		    "  g1's placed and then confirmed, in batch order");
		is_str(str_at(board, "state.cards.1.status"), "placed",
		    "  g2's placed: its OrderPaid came before the card");
		is_int(len_at(board, "state.tickets"), 1, "  one ticket, g1's");
		is_int(len_at(board, "seen"), 3, "  three ids seen, not the 409's");
	}
	{
		/* The same batch again, and an event twice in one batch. */
		jv b[] = { g1placed, g1paid, g2paid, g2paid };
		is_str(apply_batch(board, b, 4, r), "200 200 200 200",
		    "batch: repeats answer 200, the 409's event now applies once");
		is_int(len_at(board, "state.tickets"), 2, "  two tickets");
		is_int(len_at(board, "seen"), 4, "  four ids seen");
		is_str(str_at(board, "state.cards.1.status"), "confirmed",
		    "  g2 confirmed");
	}
	jv h1placed = event("OrderPlaced", "h1", NULL);
	jv h1paid = event("OrderPaid", "h1", NULL);
	jv h2placed = event("OrderPlaced", "h2", NULL);
	{
		/* Refused after the kind changed the state and wrote a ticket
		 * row: the savepoint takes both back, and only them. */
		refuse_seen(board, h1paid, "ABORT");
		jv b[] = { h1placed, h1paid, h2placed };
		is_str(apply_batch(board, b, 3, r), "200 503 200",
		    "batch: a 503 after the kind's changes");
		ok(strstr(r[1].error, "refused by the test") != NULL,
		    "  error '%s'", r[1].error);
		is_int(len_at(board, "state.cards"), 4, "  h1 and h2 have cards");
		is_str(str_at(board, "state.cards.2.status"), "placed",
		    "  h1's is placed, not confirmed");
		is_int(len_at(board, "state.tickets"), 2, "  no ticket for h1");
		is_int(len_at(board, "seen"), 6, "  h1's OrderPaid not seen");
		exec_at(board, "DROP TRIGGER refuse");
		is_int(apply(board, h1paid, &r[0]), 200, "  applied alone later");
		is_str(str_at(board, "state.cards.2.status"), "confirmed",
		    "  h1 confirmed");
		is_int(len_at(board, "state.tickets"), 3, "  with its ticket");
	}
	jv i1 = event("OrderPlaced", "i1", NULL);
	jv i2 = event("OrderPlaced", "i2", NULL);
	jv i3 = event("OrderPlaced", "i3", NULL);
	{
		/* An error that takes the whole transaction with it fails every
		 * event of the group, and nothing runs outside a transaction. */
		refuse_seen(board, i2, "ROLLBACK");
		jv b[] = { i1, i2, i3 };
		fails_whole(board, b, 3, "rolled back",
		    "batch: the transaction lost, every event 503");
		/* A commit that fails fails every event of the group: a
		 * deferred foreign key, which a new card breaks, is checked
		 * only at COMMIT. */
		exec_at(board, "CREATE TABLE refuse_p(id INTEGER PRIMARY KEY);"
		    "CREATE TABLE refuse_c(p INTEGER REFERENCES refuse_p(id)"
		    " DEFERRABLE INITIALLY DEFERRED);"
		    "CREATE TRIGGER refuse AFTER INSERT ON cards"
		    " BEGIN INSERT INTO refuse_c VALUES (1); END");
		fails_whole(board, b + 1, 2, "FOREIGN KEY constraint failed",
		    "batch: the commit fails, every event 503");
		is_str(apply_batch(board, b, 3, r), "200 200 200",
		    "  they all apply once it commits");
		is_int(len_at(board, "state.cards"), 7, "  three cards more");
	}
	jv all[] = { g1placed, g1paid, g2placed, g2paid, h1placed, h1paid,
		h2placed, i1, i2, i3 };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		jv_free(all[i]);
}

int
main(void)
{
	char *home = tmp_home();
	setenv("BAKERY_NOW", "2027-01-14T09:00:00Z", 1);
	unsetenv("BAKERY_QUEUE");
	ctx_init(&ctx, home, NULL, NULL);
	apply_result r;
	const char *sched = "schedule/" DAY;

	/* Schedule: hold, then reservation. */
	jv placed1 = event("OrderPlaced", "ord_1", NULL);
	jv paid1 = event("OrderPaid", "ord_1", NULL);
	is_int(apply(sched, placed1, &r), 200, "schedule: OrderPlaced 200");
	is_str(r.error, "", "  no error");
	is_int(len_at(sched, "state.holds"), 1, "  one hold");
	is_str(str_at(sched, "state.holds.0.order"), "ord_1", "  for ord_1");
	is_str(str_at(sched, "state.holds.0.customer"), "cus_1", "  of cus_1");
	is_str(str_at(sched, "state.day"), DAY, "  state.day is the key");
	is_int(len_at(sched, "state.reservations"), 0, "  no reservation");
	is_int(len_at(sched, "seen"), 1, "  the event id is in seen");
	is_str(str_at(sched, "seen.0"), envelope_str(placed1, "id"),
	    "  the OrderPlaced id");
	is_int(apply(sched, paid1, &r), 200, "schedule: OrderPaid 200");
	is_int(len_at(sched, "state.holds"), 0, "  the hold is gone");
	is_int(len_at(sched, "state.reservations"), 1, "  one reservation");
	is_str(str_at(sched, "state.reservations.0.order"), "ord_1", "  for ord_1");
	repeat_changes_nothing(sched, placed1);
	repeat_changes_nothing(sched, paid1);

	/* Schedule: OrderPaid first reserves; a late OrderPlaced holds nothing. */
	jv placed2 = event("OrderPlaced", "ord_2", NULL);
	jv paid2 = event("OrderPaid", "ord_2", NULL);
	is_int(apply(sched, paid2, &r), 200, "schedule: OrderPaid before OrderPlaced");
	is_int(len_at(sched, "state.reservations"), 2, "  reserves ord_2");
	is_int(len_at(sched, "state.holds"), 0, "  holds nothing");
	is_int(apply(sched, placed2, &r), 200, "schedule: the late OrderPlaced 200");
	is_int(len_at(sched, "state.holds"), 0, "  still holds nothing");
	is_int(len_at(sched, "state.reservations"), 2, "  two reservations");
	is_int(len_at(sched, "seen"), 4, "  four event ids seen");

	/* Kitchen: card placed, then confirmed with one ticket. */
	const char *kitchen = "kitchen/board";
	is_int(apply(kitchen, placed1, &r), 200, "kitchen: OrderPlaced 200");
	is_int(len_at(kitchen, "state.cards"), 1, "  one card");
	is_str(str_at(kitchen, "state.cards.0.status"), "placed", "  placed");
	is_int(len_at(kitchen, "state.tickets"), 0, "  no ticket yet");
	is_int(apply(kitchen, paid1, &r), 200, "kitchen: OrderPaid 200");
	is_int(len_at(kitchen, "state.cards"), 1, "  still one card");
	is_str(str_at(kitchen, "state.cards.0.status"), "confirmed", "  confirmed");
	is_int(len_at(kitchen, "state.tickets"), 1, "  one ticket row");
	is_str(str_at(kitchen, "state.tickets.0.order"), "ord_1", "  for ord_1");
	is_str(str_at(kitchen, "state.tickets.0.event"), envelope_str(paid1, "id"),
	    "  written with the OrderPaid's id");
	is_str(str_at(kitchen, "state.tickets.0.items.0.item"), "cardamom-bun",
	    "  with its items");
	repeat_changes_nothing(kitchen, paid1);
	repeat_changes_nothing(kitchen, placed1);

	{
		/* Another OrderPaid (a new id) for the same order: no second ticket. */
		jv again = event("OrderPaid", "ord_1", NULL);
		is_int(apply(kitchen, again, &r), 200,
		    "kitchen: same order, new event id 200");
		is_int(len_at(kitchen, "state.tickets"), 1, "  still one ticket");
		is_int(len_at(kitchen, "state.cards"), 1, "  still one card");
		jv_free(again);
	}

	/* Kitchen: 409 for an OrderPaid without a card, and nothing recorded. */
	jv paid3 = event("OrderPaid", "ord_3", NULL);
	long long seen_before = len_at(kitchen, "seen");
	is_int(apply(kitchen, paid3, &r), 409, "kitchen: OrderPaid without a card 409");
	ok(strncmp(r.error, "Kitchen answered 409", 20) == 0,
	    "  error '%s'", r.error);
	is_int(len_at(kitchen, "seen"), seen_before, "  nothing added to seen");
	is_int(len_at(kitchen, "state.tickets"), 1, "  no ticket");
	{
		/* On a fresh board: in WAL the file is made with its first
		 * commit, so the 409's rollback leaves none; in a rollback
		 * journal it is created with its schema, which the rollback
		 * keeps (docs/design.md), but seen stays empty. */
		jv paid9 = envelope_new("fresh", "order/ord_9", "OrderPaid",
		    data("ord_9", NULL));
		is_int(apply(kitchen, paid9, &r), 409, "kitchen: fresh board 409");
		bakery_object *o = NULL;
		jv s;
		int wal = strcmp(wal_journal_mode(), "wal") == 0;
		if (wal)
			is_int(object_open(&ctx, "fresh", kitchen, 0, &o),
			    EX_NOINPUT, "  no board was made");
		else if (is_int(object_open(&ctx, "fresh", kitchen, 0, &o), 0,
			"  the board exists, its schema kept") &&
		    is_int(object_show(o, &s), 0, "  and shows")) {
			jv seen = jv_object_get(s, jv_string("seen"));
			is_int(jv_array_length(seen), 0, "  seen is empty");
			is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM tickets"), 0,
			    "  no ticket");
		}
		object_close(o);
		jv_free(paid9);
	}
	/* And once the card is there, the same event applies. */
	jv placed3 = event("OrderPlaced", "ord_3", NULL);
	is_int(apply(kitchen, placed3, &r), 200, "kitchen: OrderPlaced ord_3");
	is_int(apply(kitchen, paid3, &r), 200, "kitchen: then its OrderPaid 200");
	is_int(len_at(kitchen, "state.tickets"), 2, "  two tickets");

	/* Kitchen: 503 while the fault refuses:kitchen is set. */
	jv placed4 = event("OrderPlaced", "ord_4", NULL);
	fault_set(&ctx, "default", "refuses:kitchen");
	jv before = show(kitchen);
	is_int(apply(kitchen, placed4, &r), 503, "kitchen: refusing 503");
	is_str(r.error, "Kitchen answered 503", "  error 'Kitchen answered 503'");
	jv after = show(kitchen);
	ok(jv_equal(before, after), "  nothing changed, nothing seen");
	is_int(apply(sched, placed4, &r), 200, "  the schedule still applies");
	fault_clear(&ctx, "default", "refuses:kitchen");
	is_int(apply(kitchen, placed4, &r), 200, "kitchen: cleared, 200");
	is_int(len_at(kitchen, "state.cards"), 3, "  the card is placed");

	/* CRM. */
	const char *crm = "crm/customers";
	is_int(apply(crm, paid1, &r), 200, "crm: OrderPaid 200");
	is_str(str_at(crm, "state.customers.cus_1.orders"), "1", "  one order");
	is_str(str_at(crm, "state.customers.cus_1.total_cents"), "900",
	    "  total 900");
	is_str(str_at(crm, "state.customers.cus_1.last_order"), "ord_1",
	    "  last order ord_1");
	repeat_changes_nothing(crm, paid1);
	is_str(str_at(crm, "state.customers.cus_1.orders"), "1",
	    "  still one order");
	is_int(apply(crm, paid2, &r), 200, "crm: a second order");
	is_str(str_at(crm, "state.customers.cus_1.orders"), "2", "  two orders");
	is_str(str_at(crm, "state.customers.cus_1.total_cents"), "1800",
	    "  total 1800");

	/* Customer. */
	const char *cust = "customer/cus_1";
	is_int(apply(cust, paid1, &r), 200, "customer: OrderPaid 200");
	is_int(len_at(cust, "state.orders"), 1, "  one order");
	is_str(str_at(cust, "state.customer"), "cus_1", "  state.customer");
	is_str(str_at(cust, "state.orders.0.order"), "ord_1", "  ord_1");
	is_str(str_at(cust, "state.orders.0.total_cents"), "900", "  its total");
	repeat_changes_nothing(cust, paid1);
	{
		/* A second event for the same order (another id) is not doubled. */
		jv again = event("OrderPaid", "ord_1", NULL);
		is_int(apply(cust, again, &r), 200, "customer: same order, new id");
		is_int(len_at(cust, "state.orders"), 1, "  still one order");
		jv_free(again);
	}

	/* Inbox. */
	const char *inbox = "inbox/cus_1";
	is_int(apply(inbox, paid1, &r), 200, "inbox: OrderPaid 200");
	is_int(len_at(inbox, "state.receipts"), 1, "  one receipt");
	is_str(str_at(inbox, "state.receipts.0.order"), "ord_1", "  for ord_1");
	is_str(str_at(inbox, "state.receipts.0.payment_intent"), "pi_1",
	    "  with the payment intent");
	is_str(str_at(inbox, "state.receipts.0.items.0.item"), "cardamom-bun",
	    "  and the items");
	repeat_changes_nothing(inbox, paid1);

	/* Dispatch: a stop only with data.delivery. */
	const char *disp = "dispatch/" DAY;
	is_int(apply(disp, paid1, &r), 200, "dispatch: pickup OrderPaid 200");
	is_int(len_at(disp, "state.stops"), 0, "  no stop for a pickup");
	jv paid5 = event("OrderPaid", "ord_5",
	    "\"delivery\":\"1 Mill Lane\"");
	is_int(apply(disp, paid5, &r), 200, "dispatch: delivery OrderPaid 200");
	is_int(len_at(disp, "state.stops"), 1, "  one stop");
	is_str(str_at(disp, "state.stops.0.order"), "ord_5", "  for ord_5");
	is_str(str_at(disp, "state.stops.0.address"), "1 Mill Lane", "  the address");
	is_str(str_at(disp, "state.stops.0.status"), "confirmed", "  confirmed");
	is_str(str_at(disp, "state.stops.0.customer"), "cus_1", "  the customer");
	repeat_changes_nothing(disp, paid5);

	/* Malformed for a subscriber: 422, nothing recorded. */
	{
		jv bad = envelope_new("default", "order/x", "OrderPaid",
		    jv_parse("{\"day\":\"" DAY "\",\"customer\":\"cus_1\"}"));
		is_int(apply(sched, bad, &r), 422, "schedule: no data.order 422");
		is_int(len_at(sched, "seen"), 5, "  nothing seen");
		is_int(apply("oven/x", bad, &r), 422, "an unknown kind 422");
		jv_free(bad);
	}

	/* subscriber_deliver: every subscriber tried; the refusal is reported. */
	{
		jv placed6 = event("OrderPlaced", "ord_6", NULL);
		fault_set(&ctx, "default", "refuses:kitchen");
		apply_result all;
		is_int(subscriber_deliver(&ctx, placed6, &all), 0, "deliver");
		is_int(all.status, 503, "  status 503 while the kitchen refuses");
		is_str(all.error, "Kitchen answered 503", "  the kitchen's error");
		is_int(len_at(sched, "state.holds"), 2, "  the schedule applied it");
		fault_clear(&ctx, "default", "refuses:kitchen");
		is_int(subscriber_deliver(&ctx, placed6, &all), 0, "deliver again");
		is_int(all.status, 200, "  all 2xx now");
		is_int(len_at(sched, "state.holds"), 2, "  the schedule not twice");
		is_int(len_at(kitchen, "state.cards"), 4, "  the kitchen applied it");
		jv nokey = envelope_new("default", "order/x", "OrderPlaced",
		    jv_parse("{\"order\":\"x\"}"));
		subscriber_deliver(&ctx, nokey, &all);
		is_int(all.status, 422, "  an unroutable event is 422");
		jv_free(nokey);
		jv_free(placed6);
	}

	/* subscriber_deliver_batch: a result per envelope. */
	{
		jv b[] = { event("OrderPlaced", "ord_8", NULL),
			envelope_new("default", "order/x", "OrderPlaced",
			    jv_parse("{\"order\":\"x\"}")),
			event("OrderPaid", "ord_8", NULL) };
		apply_result all[3];
		is_int(subscriber_deliver_batch(&ctx, b, NULL, 3, all), 0,
		    "deliver a batch");
		is_int(all[0].status, 200, "  OrderPlaced 200");
		is_int(all[1].status, 422, "  the unroutable one 422");
		is_int(all[2].status, 200, "  OrderPaid 200, after its card");
		is_str(str_at(kitchen, "state.cards.4.status"), "confirmed",
		    "  the card placed and confirmed");
		for (int i = 0; i < 3; i++)
			jv_free(b[i]);
	}
	batches();

	/* The order: PaymentSucceeded becomes OrderPaid, sent to the queue. */
	{
		jv pay = envelope_new("default", "billing/pi_1", "PaymentSucceeded",
		    jv_parse("{\"order\":\"ord_7\",\"amount_cents\":900,"
			     "\"currency\":\"eur\",\"payment_intent\":\"pi_7\"}"));
		jv yen = envelope_new("default", "billing/pi_1", "PaymentSucceeded",
		    jv_parse("{\"order\":\"ord_7\",\"amount_cents\":900,"
			     "\"currency\":\"jpy\",\"payment_intent\":\"pi_8\"}"));
		is_int(apply("order/ord_7", pay, &r), 409,
		    "order: PaymentSucceeded for a missing order 409");
		bakery_object *o;
		object_open(&ctx, NULL, "order/ord_7", 1, &o);
		object_begin(o);
		object_set_state(o, jv_parse("{\"id\":\"ord_7\",\"status\":"
		    "\"placed\",\"customer\":\"cus_1\",\"day\":\"" DAY "\","
		    "\"items\":[],\"total_cents\":900,\"currency\":\"eur\"}"));
		object_commit(o);
		object_close(o);
		is_int(apply("order/ord_7", yen, &r), 422,
		    "order: PaymentSucceeded in another currency 422");
		is_str(str_at("order/ord_7", "state.status"), "placed",
		    "  status still placed");
		jv_free(yen);
		/* Paid only once Billing recorded the payment (billing.h):
		 * a flagged payment of the same intent does not count. */
		object_open(&ctx, NULL, "billing/ord_7", 1, &o);
		object_begin(o);
		object_set_state(o, jv_parse("{\"order\":\"ord_7\",\"payments\":"
		    "[{\"order\":\"ord_7\",\"payment_intent\":\"pi_7\","
		    "\"amount_cents\":900,\"currency\":\"eur\",\"flag\":"
		    "\"double\"}]}"));
		object_commit(o);
		object_close(o);
		is_int(apply("order/ord_7", pay, &r), 422,
		    "order: a PaymentSucceeded Billing did not count 422");
		ok(strstr(r.error, "no payment recorded by Billing") != NULL,
		    "  saying so");
		is_str(str_at("order/ord_7", "state.status"), "placed",
		    "  status still placed");
		object_open(&ctx, NULL, "billing/ord_7", 0, &o);
		object_begin(o);
		object_set_state(o, jv_parse("{\"order\":\"ord_7\",\"payments\":"
		    "[{\"order\":\"ord_7\",\"payment_intent\":\"pi_7\","
		    "\"amount_cents\":900,\"currency\":\"eur\"}]}"));
		object_commit(o);
		object_close(o);
		is_int(apply("order/ord_7", pay, &r), 200, "order: PaymentSucceeded 200");
		is_str(str_at("order/ord_7", "state.status"), "paid", "  status paid");
		is_str(str_at("order/ord_7", "state.payment_intent"), "pi_7",
		    "  the payment intent");
		is_int(len_at("order/ord_7", "outbox"), 0,
		    "  its OrderPaid left the outbox");
		bakery_queue *q;
		jv peek;
		queue_get(&ctx, &q);
		queue_peek(q, QUEUE_EVENTS, 10, &peek);
		jv type = at(jv_copy(peek), "0.envelope.type");
		ok(jv_get_kind(type) == JV_KIND_STRING &&
			strcmp(jv_string_value(type), "OrderPaid") == 0,
		    "  an OrderPaid is on the queue");
		jv_free(type);
		is_int(jv_array_length(peek), 1, "  just one");
		repeat_changes_nothing("order/ord_7", pay);
		jv pay2 = envelope_new("default", "billing/pi_1", "PaymentSucceeded",
		    jv_parse("{\"order\":\"ord_7\",\"amount_cents\":900}"));
		is_int(apply("order/ord_7", pay2, &r), 200,
		    "order: a second payment event for a paid order 200");
		object_open(&ctx, NULL, "order/ord_7", 0, &o);
		is_int(sql_int(OBJECT_DB(o), "SELECT count(*) FROM events"), 1,
		    "  records no second OrderPaid");
		object_close(o);
		jv_free(pay2);
		jv_free(pay);
	}

	jv_free(placed1);
	jv_free(paid1);
	jv_free(placed2);
	jv_free(paid2);
	jv_free(paid3);
	jv_free(placed3);
	jv_free(placed4);
	jv_free(paid5);
	ctx_free(&ctx);
	unsetenv("BAKERY_NOW");
	rm_home(home);
	return done_testing();
}
