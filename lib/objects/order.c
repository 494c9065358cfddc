/*
 * order.c — the order: placing it, and its subscriber, which turns a
 * PaymentSucceeded into the order's OrderPaid.
 * State: {"id","status","customer","day","delivery","items":[{"item",
 * "qty","price_cents"}],"total_cents","currency","placed_at","paid_at",
 * "payment_intent"}.
 */
#include "../orders/order.h"
#include "../orders/billing.h"
#include "../core/envelope.h"
#include "../core/menu.h"
#include "../net/stripe.h"
#include "../flow/kindkit.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
order_key_valid(const char *key)
{
	return bakery_text_valid(key, ORDER_MAX_KEY) && !strchr(key, ' ');
}

static int
check_request(const order_request *req)
{
	if (!req->customer || !bakery_name_valid(req->customer))
		return bakery_fail(EX_USAGE, "bad customer: '%s': %s",
		    req->customer ? req->customer : "",
		    "want [a-z0-9][a-z0-9_.-]{0,63}");
	if (!req->day || !bakery_day_valid(req->day))
		return bakery_fail(EX_USAGE, "bad day: '%s': want YYYY-MM-DD",
		    req->day ? req->day : "");
	if (req->delivery && !bakery_text_valid(req->delivery,
		ORDER_MAX_DELIVERY))
		return bakery_fail(EX_USAGE, "bad delivery address: want 1 to "
		    "%d bytes of UTF-8 without control characters",
		    ORDER_MAX_DELIVERY);
	if (req->key && !order_key_valid(req->key))
		return bakery_fail(EX_USAGE, "bad key: want 1 to %d bytes %s",
		    ORDER_MAX_KEY, "of UTF-8 without spaces or control "
		    "characters");
	if (req->n_items < 1)
		return bakery_fail(EX_USAGE, "no items: want ITEM=QTY...");
	if (req->n_items > ORDER_MAX_LINES)
		return bakery_fail(EX_USAGE, "too many items: %d lines, want at "
		    "most %d (an item's lines may be one ITEM=QTY)", req->n_items,
		    ORDER_MAX_LINES);
	return 0;
}

static int
build_order(const order_request *req, const char *id, jv *out)
{
	menu m;
	int rc = menu_load(&m);
	if (rc)
		return rc;
	jv items = jv_array();
	long total = 0;
	for (int i = 0; i < req->n_items; i++) {
		const menu_item *it;
		int qty;
		if ((rc = menu_parse_line_item(&m, req->items[i], &it, &qty))) {
			jv_free(items);
			menu_free(&m);
			return rc;
		}
		/* The limit is an item's, however many lines name it. */
		int sum = qty;
		for (int j = 0; j < i; j++) {
			const menu_item *other;
			int q;
			if (!menu_parse_line_item(&m, req->items[j], &other, &q) &&
			    other == it)
				sum += q;
		}
		if (sum > MENU_MAX_QTY) {
			rc = bakery_fail(EX_USAGE, "bad quantity: '%s' %d in all: "
			    "want 1 to %d of an item", it->name, sum,
			    MENU_MAX_QTY);
			jv_free(items);
			menu_free(&m);
			return rc;
		}
		jv line = jv_object();
		line = jv_object_set(line, jv_string("item"), jv_string(it->name));
		line = jv_object_set(line, jv_string("qty"), jv_number(qty));
		line = jv_object_set(line, jv_string("price_cents"),
		    jv_number((double)it->price_cents));
		items = jv_array_append(items, line);
		total += it->price_cents * qty;
	}
	menu_free(&m);
	char ts[32];
	bakery_format_time(bakery_now_ms(), ts, sizeof ts);
	jv o = jv_object();
	o = jv_object_set(o, jv_string("id"), jv_string(id));
	o = jv_object_set(o, jv_string("status"), jv_string("placed"));
	o = jv_object_set(o, jv_string("customer"), jv_string(req->customer));
	o = jv_object_set(o, jv_string("day"), jv_string(req->day));
	o = jv_object_set(o, jv_string("delivery"),
	    req->delivery ? jv_string(req->delivery) : jv_null());
	o = jv_object_set(o, jv_string("items"), items);
	o = jv_object_set(o, jv_string("total_cents"), jv_number((double)total));
	o = jv_object_set(o, jv_string("currency"), jv_string(MENU_CURRENCY));
	o = jv_object_set(o, jv_string("placed_at"), jv_string(ts));
	*out = o;
	return 0;
}

/* The event's data: the order without its bookkeeping. */
static jv
order_data(jv state)
{
	jv d = jv_copy(state);
	d = jv_object_delete(d, jv_string("id"));
	d = jv_object_delete(d, jv_string("status"));
	d = jv_object_set(d, jv_string("order"),
	    jv_object_get(jv_copy(state), jv_string("id")));
	return d;
}

/* An order's items as a set: {ITEM: total quantity}, whatever the order
 * and the split of its lines. */
static jv
items_set(jv order)
{
	jv set = jv_object();
	jv items = envelope_field(order, "items");
	if (jv_get_kind(items) == JV_KIND_ARRAY)
		jv_array_foreach(items, i, line) {
			jv item = envelope_field(line, "item");
			jv qty = envelope_field(line, "qty");
			if (jv_get_kind(item) == JV_KIND_STRING &&
			    jv_get_kind(qty) == JV_KIND_NUMBER) {
				jv had = jv_object_get(jv_copy(set),
				    jv_copy(item));
				double n = jv_number_value(qty) +
				    (jv_get_kind(had) == JV_KIND_NUMBER
					? jv_number_value(had) : 0);
				jv_free(had);
				set = jv_object_set(set, item, jv_number(n));
			} else {
				jv_free(item);
			}
			jv_free(qty);
			jv_free(line);
		}
	jv_free(items);
	return set;
}

/* Whether a stored order answers the same request (same key reused):
 * the same customer, day and delivery, and the same items in any order. */
static int
same_request(jv stored, jv fresh)
{
	static const char *const fields[] = { "customer", "day", "delivery",
		NULL };
	int same = jv_equal(items_set(stored), items_set(fresh));
	for (int i = 0; fields[i] && same; i++)
		same = jv_equal(envelope_field(stored, fields[i]),
		    envelope_field(fresh, fields[i]));
	return same;
}

int
order_place(bakery_ctx *ctx, const order_request *req, jv *order,
    bakery_object **out)
{
	*out = NULL;
	int rc = check_request(req);
	if (rc)
		return rc;
	char id[64];
	if (req->key) {
		char *seed = bakery_xasprintf("%s\n%s", ctx->sandbox, req->key);
		char hex[25];
		stripe_hash_hex(seed, strlen(seed), hex, 24);
		free(seed);
		snprintf(id, sizeof id, "ord_%s", hex);
	} else {
		bakery_random_id("ord_", id, sizeof id);
	}
	jv fresh;
	if ((rc = build_order(req, id, &fresh)))
		return rc;
	char address[80];
	snprintf(address, sizeof address, "order/%s", id);
	bakery_object *o;
	if ((rc = object_open(ctx, NULL, address, 1, &o))) {
		jv_free(fresh);
		return rc;
	}
	if ((rc = object_begin(o))) {
		jv_free(fresh);
		object_close(o);
		return rc;
	}
	char *cmd = bakery_xasprintf("place:%s", req->key ? req->key : id);
	jv before;
	if (object_command_result(o, cmd, &before)) {
		object_rollback(o);
		jv_free(before);
		if (!same_request(o->state, fresh))
			rc = bakery_fail(EX_DATAERR, "key '%s' was used for %s",
			    req->key, "another order: same key, other details");
		jv_free(fresh);
		free(cmd);
		if (rc) {
			object_close(o);
			return rc;
		}
		*order = jv_copy(o->state);
		*out = o;
		return 0;
	}
	jv_free(before);
	object_set_state(o, jv_copy(fresh));
	rc = object_record(o, "OrderPlaced", order_data(fresh), NULL);
	if (!rc)
		rc = object_remember_command(o, cmd, jv_string(id));
	if (!rc)
		rc = object_commit(o);
	free(cmd);
	if (rc) {
		jv_free(fresh);
		object_close(o);
		return rc;
	}
	*order = fresh;
	*out = o;
	return 0;
}

int
order_get(bakery_ctx *ctx, const char *id, jv *order)
{
	return order_get_in(ctx, NULL, id, order);
}

/* Opens an existing order/ID of sandbox (NULL: ctx's): a bad id is
 * EX_USAGE, a missing order EX_NOINPUT "no such order". */
static int
open_order(bakery_ctx *ctx, const char *sandbox, const char *id,
    bakery_object **o)
{
	*o = NULL; /* object_close(NULL) does nothing */
	if (!bakery_name_valid(id))
		return bakery_fail(EX_USAGE, "bad order id: '%s'", id);
	char address[80];
	snprintf(address, sizeof address, "order/%s", id);
	int rc = object_open(ctx, sandbox, address, 0, o);
	if (rc == EX_NOINPUT)
		return bakery_fail(EX_NOINPUT, "no such order: '%s'", id);
	return rc;
}

int
order_get_in(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *order)
{
	bakery_object *o;
	int rc = open_order(ctx, sandbox, id, &o);
	if (!rc)
		rc = object_load(o);
	if (!rc && jv_get_kind(o->state) == JV_KIND_NULL)
		rc = bakery_fail(EX_NOINPUT, "no such order: '%s'", id);
	if (!rc)
		*order = jv_copy(o->state);
	object_close(o);
	return rc;
}

int
order_trace(bakery_ctx *ctx, const char *sandbox, const char *id,
    trace_ctx *t)
{
	bakery_object *o;
	int rc = open_order(ctx, sandbox, id, &o);
	sqlite3_stmt *st = NULL;
	if (!rc)
		rc = object_prepare(o, "SELECT envelope FROM events WHERE "
		    "type = 'OrderPlaced' ORDER BY seq LIMIT 1", &st);
	int found = 0;
	if (!rc) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			const char *text = (const char *)sqlite3_column_text(st, 0);
			jv env = text ? jv_parse(text) : jv_invalid();
			found = jv_get_kind(env) == JV_KIND_OBJECT &&
			    envelope_trace(env, t);
			jv_free(env);
		}
		object_finish(o, st);
	}
	object_close(o);
	if (!rc && !found)
		rc = bakery_fail(EX_NOINPUT, "order '%s' has no trace", id);
	return rc;
}

/* The order at address that order_get could not read (rc), into unread:
 * its file, named once in the error. */
static jv
unread_order(bakery_ctx *ctx, const char *address, int rc, jv unread)
{
	char *file = home_object_path(ctx, NULL, address);
	const char *why = bakery_error();
	char *error = strstr(why, file) ? bakery_xasprintf("%s", why)
	    : bakery_xasprintf("cannot read '%s': %s", file, why);
	unread = object_unread_add(unread, address, file, error, rc);
	free(error);
	free(file);
	return unread;
}

int
order_list(bakery_ctx *ctx, jv *orders, jv *unread)
{
	jv all;
	*orders = jv_array();
	int rc = object_list_unread(ctx, NULL, "order", &all, unread);
	if (rc)
		return rc;
	jv_array_foreach(all, i, address) {
		const char *a = jv_string_value(address);
		jv one;
		int got = strncmp(a, "order/", 6) == 0
		    ? order_get(ctx, a + 6, &one) : EX_NOINPUT;
		if (!got)
			*orders = jv_array_append(*orders, one);
		/* EX_NOINPUT: no order there (another kind, a file removed
		 * meanwhile, one whose placing never committed). */
		else if (got != EX_NOINPUT)
			*unread = unread_order(ctx, a, got, *unread);
		jv_free(address);
	}
	jv_free(all);
	if (rc) {
		jv_free(*orders);
		*orders = jv_array();
		return rc;
	}
	/* Oldest first, by placed_at then id. */
	jv keys = jv_array();
	jv_array_foreach(*orders, i, one) {
		jv k = jv_array();
		k = jv_array_append(k, jv_object_get(jv_copy(one),
		    jv_string("placed_at")));
		k = jv_array_append(k, jv_object_get(one, jv_string("id")));
		keys = jv_array_append(keys, k);
	}
	*orders = jv_sort(*orders, keys);
	return 0;
}

int
order_events(bakery_ctx *ctx, const char *id, jv *events)
{
	bakery_object *o;
	int rc = open_order(ctx, NULL, id, &o);
	if (!rc)
		rc = object_events(o, events);
	object_close(o);
	return rc;
}

int
order_terms_match(jv order, jv payment)
{
	jv amount = jv_object_get(jv_copy(payment), jv_string("amount_cents"));
	jv total = jv_object_get(jv_copy(order), jv_string("total_cents"));
	const char *paid_in = envelope_str(payment, "currency");
	const char *priced_in = envelope_str(order, "currency");
	int same = jv_get_kind(amount) == JV_KIND_NUMBER &&
	    jv_get_kind(total) == JV_KIND_NUMBER &&
	    jv_number_value(amount) == jv_number_value(total);
	jv_free(amount);
	jv_free(total);
	/* ISO 4217 codes: Stripe writes them in lower case. */
	return same && paid_in && priced_in &&
	    strcasecmp(paid_in, priced_in) == 0;
}

/* 0 when Billing recorded the payment env carries as the one paying its
 * order (billing/ORDER in the order's sandbox); else 422, or 503 when
 * Billing's file cannot be read now. Billing records the payment in the
 * transaction that writes the event's outbox row, so a genuine event,
 * redelivered or replayed, always finds it; one made by hand and sent to
 * the queue does not, whatever its envelope says of its source. */
static int
recorded_by_billing(bakery_object *o, jv env, char *error, size_t size)
{
	jv state;
	if (billing_read_in(o->ctx, o->sandbox, o->key, &state)) {
		snprintf(error, size, "cannot read Billing's record: %s",
		    bakery_error());
		return ANSWER_UNAVAILABLE;
	}
	if (billing_counts(billing_counted_payment(state),
		envelope_data_str(env, "payment_intent")))
		return 0;
	snprintf(error, size, "no payment recorded by Billing: Billing holds "
	    "no payment of this order with this payment intent");
	return ANSWER_MALFORMED;
}

/* PaymentSucceeded: the order becomes paid and records OrderPaid, in the
 * same transaction as the payment's event id. */
static int
order_apply(bakery_object *o, jv env, const char *type, char *error,
    size_t size)
{
	if (strcmp(type, "PaymentSucceeded") != 0)
		return ANSWER_MALFORMED;
	if (jv_get_kind(o->state) != JV_KIND_OBJECT) {
		snprintf(error, size, "no such order yet");
		return ANSWER_NOT_YET;
	}
	const char *status = envelope_str(o->state, "status");
	if (status && strcmp(status, "paid") == 0)
		return ANSWER_APPLIED; /* another payment for a paid order */
	jv data = jv_object_get(jv_copy(env), jv_string("data"));
	if (!order_terms_match(o->state, data)) {
		jv_free(data);
		snprintf(error, size, "amount or currency differs from the "
		    "order's");
		return ANSWER_MALFORMED;
	}
	jv_free(data);
	int billed = recorded_by_billing(o, env, error, size);
	if (billed)
		return billed;
	char ts[32];
	bakery_format_time(bakery_now_ms(), ts, sizeof ts);
	const char *intent = envelope_data_str(env, "payment_intent");
	jv state = jv_copy(o->state);
	state = jv_object_set(state, jv_string("status"), jv_string("paid"));
	state = jv_object_set(state, jv_string("paid_at"), jv_string(ts));
	state = jv_object_set(state, jv_string("payment_intent"),
	    intent ? jv_string(intent) : jv_null());
	object_set_state(o, jv_copy(state));
	if (object_record(o, "OrderPaid", order_data(state), NULL)) {
		jv_free(state);
		snprintf(error, size, "%s", bakery_error());
		return ANSWER_UNAVAILABLE;
	}
	jv_free(state);
	return ANSWER_APPLIED;
}

const object_kind order_kind = {
	.name = "order",
	.key_field = "order",
	.hears = { "PaymentSucceeded" },
	.apply = order_apply,
	.create = 0,
	.records = { "OrderPlaced", "OrderPaid" },
};
