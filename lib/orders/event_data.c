/*
 * event_data.c — the one check of an event's data (event_data.h).
 */
#include "event_data.h"
#include "order.h"
#include "../core/answer.h"
#include "../core/envelope.h"
#include "../core/menu.h"
#include "../base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The most cents a total may be. The other limits are the order's
 * (order.h) and the menu's (menu.h): place checks the same ones. */
#define DATA_MAX_CENTS 1e15

/* Whether v is a whole number from min to max. */
static int
whole(jv v, double min, double max)
{
	if (jv_get_kind(v) != JV_KIND_NUMBER)
		return 0;
	double d = jv_number_value(v);
	return d >= min && d <= max && d == (double)(int64_t)d;
}

/* data.FIELD's fault, or NULL: a string field checked as a name (n), a
 * day (d), text of up to max bytes (t), or a currency (c); null allows a
 * JSON null. Absent is fine: each subscriber says what it needs. */
static const char *
string_fault(jv data, const char *field, char how, size_t max, int null)
{
	jv v = envelope_field(data, field);
	int kind = jv_get_kind(v);
	jv_free(v);
	const char *s;
	int got = envelope_opt_str(data, field, &s);
	if (got == 0)
		return kind == JV_KIND_NULL && !null ? "want a string" : NULL;
	if (got < 0)
		return "want a string without NUL";
	switch (how) {
	case 'n':
		return bakery_name_valid(s) ? NULL
		    : "want a name [a-z0-9][a-z0-9_.-]{0,63}";
	case 'd':
		return bakery_day_valid(s) ? NULL : "want a day YYYY-MM-DD";
	case 'c':
		return bakery_currency_valid(s) ? NULL
		    : "want three lowercase letters";
	default:
		return bakery_text_valid(s, max) ? NULL : "want printable UTF-8 text";
	}
}

/* data.items: 1 to ORDER_MAX_LINES lines {item, qty, price_cents}, an
 * item's quantities summing to at most MENU_MAX_QTY; *sum is the total
 * of the lines. */
static int
items_fault(jv items, char *why, size_t size, double *sum)
{
	int n = jv_get_kind(items) == JV_KIND_ARRAY
	    ? jv_array_length(jv_copy(items)) : -1;
	if (n < 1 || n > ORDER_MAX_LINES) {
		snprintf(why, size, "bad data.items: want an array of 1 to %d "
		    "lines", ORDER_MAX_LINES);
		return ANSWER_MALFORMED;
	}
	*sum = 0;
	for (int i = 0; i < n; i++) {
		jv line = jv_array_get(jv_copy(items), i);
		jv qty = envelope_field(line, "qty");
		jv price = envelope_field(line, "price_cents");
		const char *item = envelope_str(line, "item");
		const char *bad = jv_get_kind(line) != JV_KIND_OBJECT
		    ? "want an object {item, qty, price_cents}"
		    : !item || !bakery_name_valid(item) ? "bad item: want a name"
		    : !whole(qty, 1, MENU_MAX_QTY) ? "bad qty: want 1 to "
		    DIGITS_OF(MENU_MAX_QTY)
		    : !whole(price, 1, MENU_MAX_PRICE)
		    ? "bad price_cents: want 1 to "
		    DIGITS_OF(MENU_MAX_PRICE) : NULL;
		int total = 0;
		for (int j = 0; !bad && j <= i; j++) {
			jv other = jv_array_get(jv_copy(items), j);
			const char *name = envelope_str(other, "item");
			if (name && strcmp(name, item) == 0) {
				jv q = envelope_field(other, "qty");
				total += (int)jv_number_value(q);
				jv_free(q);
			}
			jv_free(other);
		}
		if (!bad && total > MENU_MAX_QTY)
			bad = "bad qty: an item's lines sum past "
			    DIGITS_OF(MENU_MAX_QTY);
		if (!bad)
			*sum += jv_number_value(qty) * jv_number_value(price);
		jv_free(qty);
		jv_free(price);
		jv_free(line);
		if (bad) {
			snprintf(why, size, "bad data.items[%d]: %s", i, bad);
			return ANSWER_MALFORMED;
		}
	}
	return 0;
}

int
event_data_check(jv env, char *why, size_t size)
{
	static const struct {
		const char *field;
		char how;
		size_t max;
		int null;
	} strings[] = {
		{ "order", 'n', 0, 0 }, { "customer", 'n', 0, 0 },
		{ "day", 'd', 0, 0 }, { "delivery", 't', ORDER_MAX_DELIVERY, 1 },
		{ "currency", 'c', 0, 0 }, { "payment_intent", 't', 255, 1 },
		{ "stripe_event", 't', 255, 0 }, { "placed_at", 't', 32, 1 },
		{ "paid_at", 't', 32, 1 },
	};
	jv data = envelope_field(env, "data");
	int rc = 0;
	if (jv_get_kind(data) != JV_KIND_OBJECT) {
		snprintf(why, size, "bad data: want an object");
		rc = ANSWER_MALFORMED;
	}
	for (size_t i = 0; !rc && i < sizeof strings / sizeof *strings; i++) {
		const char *bad = string_fault(data, strings[i].field,
		    strings[i].how, strings[i].max, strings[i].null);
		if (bad) {
			snprintf(why, size, "bad data.%s: %s", strings[i].field,
			    bad);
			rc = ANSWER_MALFORMED;
		}
	}
	jv items = envelope_field(data, "items");
	jv total = envelope_field(data, "total_cents");
	jv amount = envelope_field(data, "amount_cents");
	double sum = -1;
	if (!rc && jv_is_valid(items))
		rc = items_fault(items, why, size, &sum);
	if (!rc && jv_is_valid(total) && !whole(total, 0, DATA_MAX_CENTS)) {
		snprintf(why, size, "bad data.total_cents: want a whole number "
		    "of cents");
		rc = ANSWER_MALFORMED;
	} else if (!rc && jv_is_valid(total) && sum >= 0 &&
	    jv_number_value(total) != sum) {
		snprintf(why, size, "bad data.total_cents: not the sum of "
		    "data.items");
		rc = ANSWER_MALFORMED;
	}
	if (!rc && jv_is_valid(amount) && !whole(amount, 0, DATA_MAX_CENTS)) {
		snprintf(why, size, "bad data.amount_cents: want a whole number "
		    "of cents");
		rc = ANSWER_MALFORMED;
	}
	jv_free(items);
	jv_free(total);
	jv_free(amount);
	jv_free(data);
	return rc;
}
