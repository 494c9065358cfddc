/*
 * dead.c — the sandbox's dead letters, newest first, after the messages
 * still in the dead-letter queue have been drained into them (as
 * bakery-dlq drain does); Redrive one, or the selected ones in the order
 * shown, each as bakery-redrive does: the same envelope and id sent
 * again, the row removed once the queue took it (console.h).
 */
#include "console.h"
#include "../core/deadletter.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

static const console_notice_text notices[] = {
	{ "redriven", "Sent to the queue again, with the same id.", 0 },
	{ "none", "Select a dead letter first.", 1 },
	{ "queue-down", "The queue cannot be reached: what was not sent is "
	  "still listed here.", 1 },
	{ "partial", "Some were sent to the queue again; the others failed "
	  "and are still listed here.", 1 },
	{ "refused", "None could be sent to the queue again: the failure is "
	  "in the server's log, and they are still listed here.", 1 },
	{ NULL, NULL, 0 },
};

static void
drained(void *unused, jv line)
{
	(void)unused;
	jv_free(line);
}

/* The subscribers that refused, as the error bakery recorded names them:
 * its parts joined by "; ", each "Name answered NNN" or "Name answered
 * NNN: why", the name first (subscriber.h: a why never holds ';', so
 * a subscriber's own words cannot make a part of their own). "Kitchen
 * answered 503; Crm answered 503" names Kitchen and Crm; a part that
 * does not start so names nobody. */
static void
subscribers(html *h, const char *error)
{
	static const char answered[] = " answered ";
	const size_t alen = sizeof answered - 1;
	for (int first = 1; error && *error;) {
		size_t len = strcspn(error, ";");
		size_t name = strcspn(error, " ;");
		const char *code = error + name + alen;
		if (name > 0 && name < 128 && name + alen + 3 <= len &&
		    strncmp(error + name, answered, alen) == 0 &&
		    strspn(code, "0123456789") == 3 &&
		    (code + 3 == error + len || code[3] == ':')) {
			char n[128];
			snprintf(n, sizeof n, "%.*s", (int)name, error);
			html_f(h, "%s%s", first ? "" : ", ", n);
			first = 0;
		}
		error += len;
		error += strspn(error, "; ");
	}
}

/* The order an event is of: its data's order, else its subject's. */
static const char *
order_of(jv envelope)
{
	const char *o = envelope_data_str(envelope, "order");
	const char *subject = envelope_str(envelope, "subject");
	if (!o && subject && strncmp(subject, "order/", 6) == 0)
		o = subject + 6;
	return o && bakery_name_valid(o) ? o : NULL;
}

static void
letter_row(console_req *r, jv d)
{
	html *h = &r->page;
	const char *id = envelope_text(d, "id", "");
	jv env = envelope_field(d, "envelope");
	const char *order = order_of(env);
	html_f(h, "<tr><td><input type=\"checkbox\" name=\"id\" value=\"%s\" "
	    "aria-label=\"select %s\"></td><td class=\"type\">%s</td>"
	    "<td class=\"id\">%s</td><td>", id, id,
	    envelope_text(d, "type", "?"), id);
	subscribers(h, envelope_str(d, "error"));
	html_f(h, "</td><td class=\"error\">%s</td><td>%d</td><td>",
	    envelope_text(d, "error", ""), (int)envelope_number(d, "attempts",
	    0));
	console_time(r, envelope_str(d, "updated_at"));
	html_raw(h, "</td><td>");
	if (order)
		html_f(h, "<a href=\"/console/s/%s/orders/%s\">%s</a>",
		    r->sandbox, order, order);
	html_f(h, "</td><td><button name=\"one\" value=\"%s\">Redrive</button>"
	    "</td></tr>\n", id);
	jv_free(env);
}

void
console_dead_page(console_req *r)
{
	/* The drain moves messages as bakery-dlq does: it writes. */
	r->ctx->look_only = 0;
	int down = deadletter_drain(r->ctx, r->sandbox, 0, drained, NULL);
	r->ctx->look_only = 1;
	if (down)
		bakery_log(LOG_WARN, "console_drain_failed", "sandbox",
		    r->sandbox, "error", bakery_error(), (char *)NULL);
	jv all;
	int rc = deadletter_list(r->ctx, r->sandbox, &all);
	if (rc)
		return console_fail_code(r, rc, "listing dead letters");
	html *h = &r->page;
	console_page_start(r, "Dead letters");
	console_notice(r, notices);
	if (down)
		html_raw(h, "<p class=\"warn\">The queue cannot be reached: "
		    "dead letters still in its dead-letter queue are not listed"
		    ".</p>\n");
	int n = jv_array_length(jv_copy(all));
	if (!n)
		html_raw(h, "<p class=\"muted\" id=\"empty\">No dead letter.</p>\n");
	else {
		html_f(h, "<form method=\"post\" action=\"/console/s/%s/dead/"
		    "redrive\">", r->sandbox);
		console_csrf_field(r);
		html_raw(h, "<table id=\"dead\"><tr><th></th><th>Event</th>"
		    "<th>Id</th><th>Subscriber</th><th>Last error</th>"
		    "<th>Deliveries</th><th>Failed</th><th>Order</th><th></th>"
		    "</tr>\n");
		for (int i = n - 1; i >= 0; i--) {
			jv d = jv_array_get(jv_copy(all), i);
			letter_row(r, d);
			jv_free(d);
		}
		html_raw(h, "</table><p><button name=\"selected\" value=\"1\">"
		    "Redrive selected</button></p></form>\n");
	}
	jv_free(all);
	console_page_end(r);
}

/* The id-th dead letter the form names: its one (a row's own button),
 * else its selected ids in order; NULL past the last. */
static const char *
chosen(const form *body, const char *one, size_t i)
{
	return one ? (i ? NULL : one) : form_nth(body, "id", i);
}

void
console_redrive(console_req *r)
{
	const char *one, *id;
	if (form_one(&r->body, "one", &one) < 0)
		return console_fail(r, 400, "Malformed form.");
	/* Every id is checked before any is sent: one named twice is 400,
	 * one of another sandbox, or none, is 404, and nothing is sent. */
	size_t n = 0;
	for (; (id = chosen(&r->body, one, n)); n++) {
		for (size_t j = 0; j < n; j++)
			if (strcmp(chosen(&r->body, one, j), id) == 0)
				return console_fail(r, 400, "A dead letter is "
				    "named twice in the form.");
		/* An id is the event's, whatever its sender made it: not
		 * always a name. It goes nowhere but into a query's
		 * parameter, the log and the queue, as bakery-redrive's. */
		jv d;
		int rc = deadletter_get(r->ctx, r->sandbox, id, &d);
		if (rc)
			return console_fail_code(r, rc, "reading a dead letter");
		jv_free(d);
	}
	if (!n)
		return console_see(r, "dead", "none");
	/* What was sent stays sent: the page says that some were, and
	 * lists those that were not. One that cannot be sent as it is (a
	 * malformed envelope, EX_DATAERR) is logged and the others still
	 * go, as bakery-redrive does; any other failure (the queue down,
	 * bakery busy) stops there. */
	size_t sent = 0, refused = 0;
	int rc = 0;
	for (size_t i = 0; (id = chosen(&r->body, one, i)); i++) {
		jv d;
		rc = deadletter_redrive(r->ctx, r->sandbox, id, &d);
		if (rc == EX_UNAVAILABLE)
			return console_see(r, "dead", sent ? "partial"
			    : "queue-down");
		if (rc && rc != EX_DATAERR && !sent && !refused)
			return console_fail_code(r, rc, "redriving");
		if (rc) {
			bakery_log(LOG_ERROR, "console_failed", "doing",
			    "redriving", "error", bakery_error(), (char *)NULL);
			refused++;
			if (rc != EX_DATAERR)
				break;
			continue;
		}
		sent++;
		bakery_log(LOG_WARN, "redriven", "account", r->s.who.name,
		    "sandbox", r->sandbox, "id", id, "type",
		    envelope_text(d, "type", ""), (char *)NULL);
		jv_free(d);
	}
	if (refused && !sent && n == 1)
		return console_fail_code(r, rc, "redriving");
	console_see(r, "dead", !refused ? "redriven" : sent ? "partial"
	    : "refused");
}
