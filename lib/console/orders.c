/*
 * orders.c — the menu as an order form, placing an order, and the
 * sandbox's orders (console.h).
 */
#include "console.h"
#include "../core/envelope.h"
#include "../core/menu.h"
#include "../orders/order.h"
#include "../core/outbox.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
console_menu_page(console_req *r)
{
	menu m;
	int rc = menu_load(&m);
	if (rc)
		return console_fail_code(r, rc, "reading the menu");
	char today[11];
	bakery_format_day(bakery_now_ms(), today, sizeof today);
	html *h = &r->page;
	console_page_start(r, "Order");
	html_f(h, "<form method=\"post\" action=\"/console/s/%s/orders\">",
	    r->sandbox);
	console_csrf_field(r);
	/* A fresh key a form: the same form sent twice (a button pressed
	 * again, a POST re-sent after no answer) is one order. */
	char key[64];
	bakery_random_id("form_", key, sizeof key);
	html_f(h, "<input type=\"hidden\" name=\"key\" value=\"%s\">",
	    key);
	html_f(h, "<label>Customer <input name=\"customer\" required "
	    "value=\"%s\"></label><label>Day <input name=\"day\" type=\"date\""
	    " required value=\"%s\"></label>\n<table><tr><th>Item</th><th>"
	    "Price (EUR)</th><th>Quantity</th></tr>\n", r->s.who.name, today);
	for (size_t i = 0; i < m.n; i++) {
		html_f(h, "<tr><td><label for=\"qty.%s\">%s</label></td><td>",
		    m.items[i].name, m.items[i].title);
		html_money(h, (double)m.items[i].price_cents);
		html_f(h, "</td><td><input type=\"number\" id=\"qty.%s\" "
		    "name=\"qty.%s\" min=\"0\" max=\"%d\" value=\"0\"></td></tr>\n",
		    m.items[i].name, m.items[i].name, MENU_MAX_QTY);
	}
	html_f(h, "</table><label>Delivery address (empty: collected at the "
	    "shop) <input name=\"delivery\" maxlength=\"%d\"></label>"
	    "<p><button>Place order</button></p></form>\n", ORDER_MAX_DELIVERY);
	menu_free(&m);
	console_page_end(r);
}

/* The menu's items the form asks for, as ITEM=QTY (caller frees each);
 * -1 when a quantity is not a number of 0 to MENU_MAX_QTY. */
static int
wanted_items(const console_req *r, const menu *m, char **items)
{
	int n = 0;
	for (size_t i = 0; i < m->n; i++) {
		char field[80];
		const char *v;
		long long qty = 0;
		snprintf(field, sizeof field, "qty.%s", m->items[i].name);
		int got = form_one(&r->body, field, &v);
		if (got < 0 || (got && *v &&
		    bakery_parse_number(v, 0, MENU_MAX_QTY, &qty)))
			return -1;
		if (qty > 0)
			items[n++] = bakery_xasprintf("%s=%lld",
			    m->items[i].name, qty);
	}
	return n;
}

static const char *
optional(const char *field)
{
	return field && *field ? field : NULL;
}

void
console_place(console_req *r)
{
	order_request req = { 0 };
	const char *delivery;
	if (form_one(&r->body, "customer", &req.customer) != 1 ||
	    form_one(&r->body, "day", &req.day) != 1 ||
	    form_one(&r->body, "delivery", &delivery) < 0 ||
	    form_one(&r->body, "key", &req.key) < 0)
		return console_fail(r, 400, "Malformed form.");
	/* The form's key is the page's, but anyone may post any: checked
	 * as place checks --key. A form without one (a page from before
	 * it had one) places a fresh order. */
	if (req.key && !order_key_valid(req.key))
		return console_fail(r, 400, "Malformed form: the order's key "
		    "is not 1 to " DIGITS_OF(ORDER_MAX_KEY) " bytes of UTF-8 "
		    "without spaces or control characters.");
	req.delivery = optional(delivery);
	menu m;
	int rc = menu_load(&m);
	if (rc)
		return console_fail_code(r, rc, "reading the menu");
	char **items = bakery_xmalloc((m.n + 1) * sizeof *items);
	int n = wanted_items(r, &m, items);
	menu_free(&m);
	jv order = jv_invalid();
	bakery_object *o = NULL;
	if (n < 0)
		console_fail(r, 400, "Malformed form: a quantity is not a "
		    "number of 0 to " DIGITS_OF(MENU_MAX_QTY) ".");
	else if (n == 0)
		console_fail(r, 422, "Choose at least one item.");
	else if ((req.items = items, req.n_items = n,
	    rc = order_place(r->ctx, &req, &order, &o)))
		console_fail_code(r, rc, "placing an order");
	else {
		/* A send the queue refused leaves the event to the alarm,
		 * as on the shell (bakery-order place). */
		int down = outbox_send(o, NULL) != 0;
		if (down && object_arm(o))
			bakery_log(LOG_WARN, "alarm_error", "object", o->address,
			    "error", bakery_error(), (char *)NULL);
		bakery_log(LOG_WARN, "order_placed", "account", r->s.who.name,
		    "sandbox", r->sandbox, "order", envelope_str(order, "id"),
		    (char *)NULL);
		char *where = bakery_xasprintf("orders/%s",
		    envelope_str(order, "id"));
		console_see(r, where, down ? "placed-queue-down" : "placed");
		free(where);
	}
	object_close(o);
	jv_free(order);
	for (int i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

/* A row for each file the listing could not read, first: the order it
 * holds, or its folder, said unreadable; the file and the failure go to
 * the server's log, as the page names none of the home's files. */
static void
unread_rows(console_req *r, jv unread)
{
	html *h = &r->page;
	jv_array_foreach(unread, i, one) {
		const char *address = envelope_str(one, "address");
		bakery_log(LOG_ERROR, "console_unread", "file",
		    envelope_text(one, "file", "?"), "error",
		    envelope_text(one, "error", "?"), (char *)NULL);
		if (address)
			html_f(h, "<tr><td>%s</td><td colspan="
			    "\"5\" class=\"dead\">This order's file could not be "
			    "read: the failure is in the server's log.</td></tr>"
			    "\n", strchr(address, '/') + 1);
		else
			html_raw(h, "<tr><td></td><td colspan="
			    "\"5\" class=\"dead\">A folder of orders could not "
			    "be read: the failure is in the server's log.</td>"
			    "</tr>\n");
		jv_free(one);
	}
}

void
console_orders_page(console_req *r)
{
	jv orders, unread;
	int rc = order_list(r->ctx, &orders, &unread);
	if (rc)
		return console_fail_code(r, rc, "listing orders");
	html *h = &r->page;
	console_page_start(r, "Orders");
	int n = jv_array_length(jv_copy(orders));
	int bad = jv_array_length(jv_copy(unread));
	if (!n && !bad)
		html_f(h, "<p class=\"muted\">No order yet: <a href=\"/console/"
		    "s/%s/\">place one</a>.</p>\n", r->sandbox);
	else
		html_raw(h, "<table><tr><th>Order</th><th>Customer</th><th>Day"
		    "</th><th>Status</th><th>Total (EUR)</th><th>Placed</th>"
		    "</tr>\n");
	unread_rows(r, unread);
	jv_free(unread);
	/* Newest first. */
	for (int i = n - 1; i >= 0; i--) {
		jv o = jv_array_get(jv_copy(orders), i);
		html_f(h, "<tr><td><a href=\"/console/s/%s/orders/%s\">%s</a>"
		    "</td><td>%s</td><td>%s</td><td>%s</td><td>", r->sandbox,
		    envelope_text(o, "id", ""), envelope_text(o, "id", ""),
		    envelope_text(o, "customer", ""), envelope_text(o, "day", ""),
		    envelope_text(o, "status", ""));
		html_money(h, envelope_number(o, "total_cents", 0));
		html_raw(h, "</td><td>");
		console_time(r, envelope_str(o, "placed_at"));
		html_raw(h, "</td></tr>\n");
		jv_free(o);
	}
	if (n || bad)
		html_raw(h, "</table>\n");
	jv_free(orders);
	console_page_end(r);
}
