/*
 * boards.c — what the bakery's parts hold, as tables: the kitchen's
 * board (cards and tickets), each day's schedule and dispatch, each
 * customer's receipts; what bakery-show shows of them (console.h).
 */
#include "console.h"
#include "../core/envelope.h"
#include "../core/object.h"
#include "../flow/subscriber.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

enum shown { TEXT, ORDER, ITEMS, MONEY, TIME };

typedef struct column {
	const char *field, *header;
	enum shown as;
} column;

/* One array of one kind's state, as a table. */
static const struct section {
	const char *kind, *array, *title;
	column cols[6];
} sections[] = {
	{ "kitchen", "cards", "Kitchen board: cards", {
		{ "order", "Order", ORDER }, { "day", "Day", TEXT },
		{ "items", "Items", ITEMS }, { "status", "Status", TEXT } } },
	{ "kitchen", "tickets", "Kitchen board: oven tickets", {
		{ "order", "Order", ORDER }, { "items", "Items", ITEMS },
		{ "created_at", "Made", TIME } } },
	{ "schedule", "holds", "Schedule %s: holds", {
		{ "order", "Order", ORDER }, { "customer", "Customer", TEXT },
		{ "items", "Items", ITEMS } } },
	{ "schedule", "reservations", "Schedule %s: reservations", {
		{ "order", "Order", ORDER }, { "customer", "Customer", TEXT },
		{ "items", "Items", ITEMS } } },
	{ "dispatch", "stops", "Dispatch %s: stops", {
		{ "order", "Order", ORDER }, { "customer", "Customer", TEXT },
		{ "address", "Address", TEXT }, { "status", "Status", TEXT } } },
	{ "inbox", "receipts", "Receipts of %s", {
		{ "order", "Order", ORDER }, { "day", "Day", TEXT },
		{ "items", "Items", ITEMS }, { "total_cents", "Total (EUR)", MONEY },
		{ "paid_at", "Paid", TIME } } },
};

static void
cell(console_req *r, jv row, const column *c)
{
	html *h = &r->page;
	jv v = envelope_field(row, c->field);
	const char *text = envelope_string(v);
	switch (c->as) {
	case ORDER:
		if (text && bakery_name_valid(text))
			html_f(h, "<a href=\"/console/s/%s/orders/%s\">%s</a>",
			    r->sandbox, text, text);
		break;
	case ITEMS: console_items(r, jv_copy(v)); break;
	case MONEY:
		if (jv_get_kind(v) == JV_KIND_NUMBER)
			html_money(h, jv_number_value(v));
		break;
	case TIME: console_time(r, text); break;
	case TEXT: html_text(h, text); break;
	}
	jv_free(v);
}

static void
section_table(console_req *r, const struct section *s, const char *key,
    jv state)
{
	html *h = &r->page;
	char title[160];
	snprintf(title, sizeof title, s->title, key);
	jv rows = envelope_field(state, s->array);
	int n = jv_get_kind(rows) == JV_KIND_ARRAY
	    ? jv_array_length(jv_copy(rows)) : 0;
	html_f(h, "<h2>%s</h2>\n", title);
	if (!n)
		html_raw(h, "<p class=\"muted\">None.</p>\n");
	else {
		html_f(h, "<table class=\"%s\"><tr>", s->array);
		for (const column *c = s->cols; c->field; c++)
			html_f(h, "<th>%s</th>", c->header);
		html_raw(h, "</tr>\n");
		jv_array_foreach(rows, i, row) {
			html_raw(h, "<tr>");
			for (const column *c = s->cols; c->field; c++) {
				html_raw(h, "<td>");
				cell(r, row, c);
				html_raw(h, "</td>");
			}
			html_raw(h, "</tr>\n");
			jv_free(row);
		}
		html_raw(h, "</table>\n");
	}
	jv_free(rows);
}

void
console_boards_page(console_req *r)
{
	jv all;
	int rc = object_list(r->ctx, r->sandbox, &all);
	if (rc) {
		jv_free(all);
		return console_fail_code(r, rc, "listing objects");
	}
	console_page_start(r, "Boards");
	int any = 0;
	for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
		size_t klen = strlen(sections[s].kind);
		jv_array_foreach(all, i, a) {
			const char *address = jv_string_value(a);
			jv shown;
			if (strncmp(address, sections[s].kind, klen) == 0 &&
			    address[klen] == '/' &&
			    subscriber_show(r->ctx, address, &shown) == 0) {
				jv state = envelope_field(shown, "state");
				section_table(r, &sections[s], address + klen + 1,
				    state);
				jv_free(state);
				jv_free(shown);
				any = 1;
			}
			jv_free(a);
		}
	}
	if (!any)
		html_raw(&r->page, "<p class=\"muted\">Nothing on the boards yet."
		    "</p>\n");
	jv_free(all);
	console_page_end(r);
}
