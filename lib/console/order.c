/*
 * order.c — an order's page: its state, the Pay form, and its trace:
 * every event of the order and, at each subscriber, whether it applied
 * it, waits to retry, or holds it as a dead letter (console.h).
 */
#include "console.h"
#include "../core/envelope.h"
#include "../net/gateway.h"
#include "../orders/order.h"
#include "../core/outbox.h"
#include "../orders/payments.h"
#include "../flow/subscriber.h"
#include "../flow/trace.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const console_notice_text notices[] = {
	{ "placed", "Order placed.", 0 },
	{ "placed-queue-down", "Order placed, but the queue cannot be reached:"
	  " its event waits in the order's outbox, and the alarm "
	  "(bakery-relay) sends it when the queue is back.", 1 },
	{ "paid", "Payment recorded: the order is paid once its "
	  "PaymentSucceeded is delivered.", 0 },
	{ "paid-queue-down", "Payment recorded, but the queue cannot be "
	  "reached: its event waits in Billing's outbox, and the alarm "
	  "(bakery-relay) sends it when the queue is back.", 1 },
	{ "declined:card_declined", "The card was declined: card_declined.", 1 },
	{ "declined:insufficient_funds", "The card was declined: "
	  "insufficient_funds.", 1 },
	{ "unknown-card", "That is not one of the test gateway's cards.", 1 },
	{ NULL, NULL, 0 },
};

/* One row of the order's state. */
static void
row(html *h, const char *name, const char *value)
{
	html_f(h, "<tr><th>%s</th><td>%s</td></tr>\n", name, value);
}

static void
state_table(console_req *r, jv order, jv shown)
{
	html *h = &r->page;
	html_f(h, "<table class=\"order\"><tr><th>Status</th><td id=\"status\">"
	    "%s</td></tr>\n", envelope_text(order, "status", ""));
	row(h, "Customer", envelope_text(order, "customer", ""));
	row(h, "Day", envelope_text(order, "day", ""));
	row(h, "Delivery", envelope_text(order, "delivery",
	    "collected at the shop"));
	html_raw(h, "<tr><th>Items</th><td>");
	console_items(r, jv_object_get(jv_copy(order), jv_string("items")));
	html_raw(h, "</td></tr><tr><th>Total (EUR)</th><td>");
	html_money(h, envelope_number(order, "total_cents", 0));
	html_raw(h, "</td></tr><tr><th>Placed</th><td>");
	console_time(r, envelope_str(order, "placed_at"));
	html_raw(h, "</td></tr><tr><th>Paid</th><td>");
	console_time(r, envelope_str(order, "paid_at"));
	html_raw(h, "</td></tr>\n");
	row(h, "Payment intent", envelope_text(order, "payment_intent", ""));
	jv outbox = envelope_field(shown, "outbox");
	int waiting = jv_get_kind(outbox) == JV_KIND_ARRAY
	    ? jv_array_length(jv_copy(outbox)) : 0;
	jv_free(outbox);
	html_f(h, "<tr><th>Outbox</th><td>%d event%s waiting to be sent"
	    "</td></tr></table>\n", waiting, waiting == 1 ? "" : "s");
}

static void
pay_form(console_req *r, jv order)
{
	html *h = &r->page;
	const char *status = envelope_text(order, "status", "");
	gateway_kind g = GATEWAY_NONE;
	if (strcmp(status, "placed") != 0)
		return;
	html_raw(h, "<h2>Pay</h2>\n");
	if (gateway_read(r->ctx->home, &g) || g == GATEWAY_NONE)
		return html_raw(h, "<p class=\"warn\">This home has no payment "
		    "gateway chosen (bakery-order gateway test).</p>\n");
	if (g == GATEWAY_STRIPE)
		return html_raw(h, "<p class=\"warn\">This home pays through "
		    "Stripe: the console takes test-gateway payments only."
		    "</p>\n");
	html_f(h, "<form method=\"post\" action=\"/console/s/%s/orders/%s/pay\">",
	    r->sandbox, r->arg[1]);
	console_csrf_field(r);
	html_raw(h, "<label>Card number <input name=\"card\" "
	    "inputmode=\"numeric\" autocomplete=\"off\" required></label>"
	    "<p><button>Pay</button></p></form>\n<p class=\"muted\">The test "
	    "gateway's cards (no money moves): ");
	const char *code;
	for (size_t i = 0; payment_test_card(i, &code); i++)
		html_f(h, "%s%s %s", i ? "; " : "", payment_test_card(i, &code),
		    code ? code : "pays");
	html_raw(h, ".</p>\n");
}

/* Where an event stands at one subscriber, from its trace t. */
static void
standing(console_req *r, jv t, jv sub)
{
	html *h = &r->page;
	jv dead = envelope_field(t, "dead_letter");
	jv queue = envelope_field(t, "queue");
	jv outbox = envelope_field(t, "outbox");
	jv q = jv_get_kind(queue) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(queue)) > 0
	    ? jv_array_get(jv_copy(queue), 0) : jv_null();
	if (envelope_str(sub, "applied_at")) {
		html_raw(h, "<td class=\"applied\">applied</td><td>");
		console_time(r, envelope_str(sub, "applied_at"));
		html_raw(h, "</td>");
	} else if (jv_get_kind(dead) == JV_KIND_OBJECT) {
		html_f(h, "<td class=\"dead\">dead letter</td><td>%s, after %d "
		    "deliveries</td>", envelope_text(dead, "error", ""),
		    (int)envelope_number(dead, "attempts", 0));
	} else if (jv_get_kind(q) == JV_KIND_OBJECT &&
	    strcmp(envelope_text(q, "queue", ""), "bakery-events") != 0) {
		html_f(h, "<td class=\"dead\">in the dead-letter queue</td>"
		    "<td>%s</td>", envelope_text(q, "last_error", ""));
	} else if (jv_get_kind(q) == JV_KIND_OBJECT &&
	    envelope_number(q, "deliveries", 0) > 0) {
		html_f(h, "<td class=\"waiting\">waiting to retry</td><td>%s, "
		    "after %d deliveries; next at ", envelope_text(q,
		    "last_error", ""), (int)envelope_number(q, "deliveries", 0));
		console_time(r, envelope_str(q, "visible_at"));
		html_raw(h, "</td>");
	} else if (jv_get_kind(outbox) == JV_KIND_OBJECT) {
		html_f(h, "<td class=\"waiting\">in the outbox</td><td>%s</td>",
		    envelope_text(outbox, "last_error", ""));
	} else {
		html_raw(h, "<td class=\"waiting\">queued</td><td></td>");
	}
	jv_free(dead);
	jv_free(queue);
	jv_free(outbox);
	jv_free(q);
}

#define TRACE_URL_MAX 1024
#define TRACE_ID_MARK "{trace_id}"

/* BAKERY_TRACE_URL, the link to a trace in the operator's tracing tool,
 * read once and checked, as hostile as any input: an http:// or https://
 * URL with a host, at most TRACE_URL_MAX bytes of printable ASCII with no
 * space, quote or angle bracket, naming {trace_id}. NULL when unset or
 * empty, or bad (a warning, once). */
static const char *
trace_url(void)
{
	static int read;
	static const char *url;
	if (read)
		return url;
	read = 1;
	const char *t = getenv("BAKERY_TRACE_URL");
	if (!t || !*t)
		return NULL;
	const char *why = NULL;
	size_t scheme = strncmp(t, "https://", 8) == 0 ? 8
	    : strncmp(t, "http://", 7) == 0 ? 7 : 0;
	if (!scheme)
		why = "not an http:// or https:// URL";
	else if (strlen(t) > TRACE_URL_MAX)
		why = "longer than 1024 bytes";
	else if (t[scheme] == '\0' || strchr("/?#{", t[scheme]))
		why = "no host";
	else if (!strstr(t, TRACE_ID_MARK))
		why = "no {trace_id} in it";
	for (const char *c = t; !why && *c; c++)
		if (*c <= ' ' || *c >= 0x7f || strchr("\"'<>\\`", *c))
			why = "a space, quote, angle bracket, backslash or "
			    "byte that is not printable ASCII";
	if (why) {
		bakery_log(LOG_WARN, "trace_url_ignored", "variable",
		    "BAKERY_TRACE_URL", "error", why, (char *)NULL);
		return NULL;
	}
	url = t;
	return url;
}

/* The trace an event belongs to: its id, a link to it when
 * BAKERY_TRACE_URL is set, each {trace_id} there the id. */
static void
trace_line(console_req *r, jv t)
{
	html *h = &r->page;
	const char *id = envelope_str(t, "trace_id");
	const char *url = trace_url();
	if (!id) {
		html_raw(h, "<p>Trace: <span class=\"muted\">none</span></p>\n");
		return;
	}
	if (!url) {
		html_f(h, "<p>Trace: <code>%s</code></p>\n", id);
		return;
	}
	html_raw(h, "<p>Trace: <a href=\"");
	for (const char *p = url, *at; *p; p = at + strlen(TRACE_ID_MARK)) {
		at = strstr(p, TRACE_ID_MARK);
		char part[TRACE_URL_MAX + 1];
		size_t n = at ? (size_t)(at - p) : strlen(p);
		memcpy(part, p, n);
		part[n] = '\0';
		html_text(h, part);
		if (!at)
			break;
		html_text(h, id);
	}
	html_f(h, "\"><code>%s</code></a></p>\n", id);
}

static void
trace_tables(console_req *r, jv traces)
{
	html *h = &r->page;
	html_raw(h, "<h2>Trace</h2>\n");
	jv_array_foreach(traces, i, t) {
		html_f(h, "<h3>%s <span class=\"muted\">%s</span></h3>\n"
		    "<p>Recorded in %s at ", envelope_text(t, "type", "?"),
		    envelope_text(t, "id", ""),
		    envelope_text(t, "recorded_in", "?"));
		console_time(r, envelope_str(t, "recorded_at"));
		html_raw(h, envelope_str(t, "relayed_at") ? ", sent to the queue"
		    " at " : ", not sent to the queue yet");
		console_time(r, envelope_str(t, "relayed_at"));
		html_raw(h, ".</p>\n");
		trace_line(r, t);
		html_raw(h, "<table><tr><th>Subscriber</th><th>State</th>"
		    "<th>Detail</th></tr>\n");
		jv subs = envelope_field(t, "subscribers");
		if (jv_get_kind(subs) == JV_KIND_ARRAY)
			jv_array_foreach(subs, k, sub) {
				html_f(h, "<tr><td>%s</td>",
				    envelope_text(sub, "address", "?"));
				standing(r, t, sub);
				html_raw(h, "</tr>\n");
				jv_free(sub);
			}
		jv_free(subs);
		html_raw(h, "</table>\n");
		jv_free(t);
	}
	jv_free(traces);
}

void
console_order_page(console_req *r)
{
	jv order, shown, traces;
	char *address = bakery_xasprintf("order/%s", r->arg[1]);
	int rc = order_get(r->ctx, r->arg[1], &order);
	if (rc)
		return free(address), console_fail_code(r, rc, "reading an order");
	if ((rc = subscriber_show(r->ctx, address, &shown)))
		shown = jv_null();
	free(address);
	/* The trace reads the queue too: the queue down, the order is
	 * still shown, and the page says why its trace is not. */
	int traced = trace_order(r->ctx, r->sandbox, r->arg[1], &traces);
	if (traced)
		bakery_log(LOG_WARN, "console_trace_failed", "order", r->arg[1],
		    "error", bakery_error(), (char *)NULL);
	char title[96];
	snprintf(title, sizeof title, "Order %s", r->arg[1]);
	console_page_start(r, title);
	console_notice(r, notices);
	state_table(r, order, shown);
	pay_form(r, order);
	if (traced)
		html_raw(&r->page, "<h2>Trace</h2>\n<p class=\"warn\">The trace "
		    "cannot be read now: the queue cannot be reached, or a file "
		    "is busy.</p>\n");
	else
		trace_tables(r, traces);
	jv_free(order);
	jv_free(shown);
	console_page_end(r);
}

/* The card as typed, its blanks and dashes left out: NULL unless 12 to
 * 19 digits remain. */
static char *
card_digits(const char *typed)
{
	char *card = bakery_xmalloc(strlen(typed) + 1);
	size_t n = 0;
	for (const char *p = typed; *p; p++) {
		if (*p == ' ' || *p == '-')
			continue;
		if (*p < '0' || *p > '9' || n == 19) {
			free(card);
			return NULL;
		}
		card[n++] = *p;
	}
	card[n] = '\0';
	if (n < 12) {
		free(card);
		return NULL;
	}
	return card;
}

void
console_pay(console_req *r)
{
	const char *typed;
	if (form_one(&r->body, "card", &typed) != 1)
		return console_fail(r, 400, "Malformed form.");
	char *card = card_digits(typed);
	if (!card)
		return console_fail(r, 422, "A card number is 12 to 19 digits.");
	gateway_kind g = GATEWAY_NONE;
	int rc = gateway_read(r->ctx->home, &g);
	if (!rc && g != GATEWAY_TEST) {
		free(card);
		return console_fail(r, 409, "The console takes test-gateway "
		    "payments only.");
	}
	payment_request req = { .order_id = r->arg[1], .card = card };
	jv result = jv_invalid();
	bakery_object *billing = NULL;
	/* The pay continues the order's trace: its action's span does
	 * (console_action_begin). */
	if (!rc)
		rc = payment_pay(r->ctx, &req, &result, &billing);
	free(card);
	char *where = bakery_xasprintf("orders/%s", r->arg[1]);
	if (rc == 0) {
		bakery_log(LOG_WARN, "order_paid", "account", r->s.who.name,
		    "sandbox", r->sandbox, "order", r->arg[1], (char *)NULL);
		int down = billing && outbox_send(billing, NULL) != 0;
		if (down && object_arm(billing))
			bakery_log(LOG_WARN, "alarm_error", "object",
			    billing->address, "error", bakery_error(),
			    (char *)NULL);
		console_see(r, where, down ? "paid-queue-down" : "paid");
	} else if (rc == 1) {
		char *done = bakery_xasprintf("declined:%s",
		    envelope_text(result, "decline_code", ""));
		console_see(r, where, done);
		free(done);
	} else if (rc == EX_USAGE) {
		console_see(r, where, "unknown-card");
	} else {
		console_fail_code(r, rc, "paying an order");
	}
	free(where);
	object_close(billing);
	jv_free(result);
}
