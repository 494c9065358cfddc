/*
 * health.c — what bakery-status shows, its "needs attention" lines
 * first: of the page's sandbox for an account, of the whole home (the
 * queue, every sandbox) for an operator (console.h, status.h).
 */
#include "console.h"
#include "../core/envelope.h"
#include "../ops/status.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

static const struct count {
	const char *field, *words;
} counts[] = {
	{ "objects", "objects" },
	{ "outbox_rows", "events waiting in outboxes" },
	{ "oldest_age_s", "seconds, the oldest of them" },
	{ "alarms_armed", "alarms armed" },
	{ "rearms_today", "re-arms today" },
	{ "guards_tripped", "re-arm guards tripped" },
	{ "dead_letters", "dead letters" },
	{ "undrained", "messages in the dead-letter queue, not yet drained" },
	{ "flagged_payments", "flagged payments" },
	{ NULL, NULL },
};

static void
attention(console_req *r, jv status)
{
	html *h = &r->page;
	char mine[80];
	snprintf(mine, sizeof mine, "sandbox %s: ", r->sandbox);
	jv lines = envelope_field(status, "attention");
	int shown = 0;
	if (jv_get_kind(lines) == JV_KIND_ARRAY)
		jv_array_foreach(lines, i, l) {
			const char *s = envelope_string(l);
			/* An account sees its own sandbox's lines only. */
			if (s && (r->s.who.operator ||
			    strncmp(s, mine, strlen(mine)) == 0)) {
				if (!shown++)
					html_raw(h, "<h2>Needs attention</h2>"
					    "<ul class=\"warn\" id=\"attention\">");
				html_f(h, "<li>%s</li>", s);
			}
			jv_free(l);
		}
	jv_free(lines);
	html_raw(h, shown ? "</ul>\n" : "<p class=\"notice\" id=\"attention\">"
	    "Nothing needs attention.</p>\n");
}

static void
queue_table(console_req *r, jv status)
{
	html *h = &r->page;
	jv queue = envelope_field(status, "queue");
	html_raw(h, "<h2>Queue</h2>\n<table><tr><th>Queue</th><th>Ready</th>"
	    "<th>Leased</th><th>Delayed</th></tr>\n");
	if (jv_get_kind(queue) == JV_KIND_OBJECT)
		jv_object_foreach(queue, name, q) {
			html_f(h, "<tr><td>%s</td><td>%lld</td><td>%lld</td>"
			    "<td>%lld</td></tr>\n", jv_string_value(name),
			    (long long)envelope_number(q, "ready", 0),
			    (long long)envelope_number(q, "leased", 0),
			    (long long)envelope_number(q, "delayed", 0));
			jv_free(name);
			jv_free(q);
		}
	html_f(h, "</table>\n<p>Payment gateway: %s.</p>\n",
	    envelope_text(status, "gateway", "none chosen"));
	jv_free(queue);
}

/* The faults set in the sandbox, each a part of it refusing its work
 * (faults.h), and where they are changed. */
static void
faults(console_req *r, jv s, const char *sandbox)
{
	html *h = &r->page;
	jv set = envelope_field(s, "faults");
	int n = jv_get_kind(set) == JV_KIND_ARRAY
	    ? jv_array_length(jv_copy(set)) : 0;
	if (!n)
		html_raw(h, "<p class=\"muted faults\">No fault set.</p>\n");
	else {
		html_f(h, "<p class=\"warn faults\">Faults set (<a href=\""
		    "/console/s/%s/faults\">Faults</a>):</p><ul class=\"faults"
		    "\">", sandbox);
		jv_array_foreach(set, i, f) {
			html_f(h, "<li>%s, since ", envelope_text(f, "name", "?"));
			console_time(r, envelope_str(f, "set_at"));
			html_raw(h, "</li>");
			jv_free(f);
		}
		html_raw(h, "</ul>\n");
	}
	jv_free(set);
}

static void
sandbox_table(console_req *r, jv s)
{
	html *h = &r->page;
	const char *name = envelope_text(s, "sandbox", "");
	if (r->s.who.operator)
		html_f(h, "<h2>Sandbox <a href=\"/console/s/%s/status\">%s</a>"
		    "</h2>\n", name, name);
	else
		html_f(h, "<h2>Sandbox %s</h2>\n", name);
	html_raw(h, "<table>");
	for (const struct count *c = counts; c->field; c++)
		html_f(h, "<tr><td>%lld</td><td>%s</td></tr>",
		    (long long)envelope_number(s, c->field, 0), c->words);
	html_raw(h, "</table>\n");
	faults(r, s, name);
}

void
console_status_page(console_req *r)
{
	jv status;
	int rc = status_collect(r->ctx, r->s.who.operator ? NULL : r->sandbox,
	    300, &status);
	if (rc)
		return console_fail_code(r, rc, "reading the status");
	console_page_start(r, "Status");
	attention(r, status);
	if (r->s.who.operator)
		queue_table(r, status);
	jv sandboxes = envelope_field(status, "sandboxes");
	if (jv_get_kind(sandboxes) == JV_KIND_ARRAY)
		jv_array_foreach(sandboxes, i, s) {
			sandbox_table(r, s);
			jv_free(s);
		}
	jv_free(sandboxes);
	jv_free(status);
	console_page_end(r);
}
