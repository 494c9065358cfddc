/*
 * faults.c — the sandbox's faults as checkboxes, one per fault
 * bakery-fault knows: refuses:KIND for every built-in subscriber, and
 * queue-refuses (console.h, faults.h).
 */
#include "console.h"
#include "../core/envelope.h"
#include "../core/faults.h"
#include "../core/kind.h"
#include "../flow/subscriber.h"
#include "../base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const console_notice_text notices[] = {
	{ "saved", "Faults saved.", 0 },
	{ NULL, NULL, 0 },
};

/* The i-th fault bakery-fault knows, in name (65 + 8 bytes) and words
 * (128 bytes); 0 past the last. */
static int
nth_fault(size_t i, char *name, char *words)
{
	for (size_t k = 0; object_kinds[k]; k++) {
		const char *kind = object_kinds[k]->name;
		if (!subscriber_find(kind) || i--)
			continue;
		snprintf(name, 73, FAULT_REFUSES "%s", kind);
		snprintf(words, 128, "%c%s refuses deliveries",
		    toupper((unsigned char)kind[0]), kind + 1);
		return 1;
	}
	if (i)
		return 0;
	snprintf(name, 73, FAULT_QUEUE_REFUSES);
	snprintf(words, 128, "The queue refuses this sandbox's sends");
	return 1;
}

static int
is_set(jv set, const char *name)
{
	int found = 0;
	jv_array_foreach(set, i, f) {
		found |= strcmp(envelope_text(f, "name", ""), name) == 0;
		jv_free(f);
	}
	jv_free(set);
	return found;
}

void
console_faults_page(console_req *r)
{
	jv set;
	int rc = fault_list(r->ctx, r->sandbox, &set);
	if (rc) {
		jv_free(set);
		return console_fail_code(r, rc, "reading faults");
	}
	html *h = &r->page;
	console_page_start(r, "Faults");
	console_notice(r, notices);
	html_f(h, "<p>A fault makes a part of the bakery refuse its work in "
	    "this sandbox, as <code>bakery-fault set</code> does.</p>\n"
	    "<form method=\"post\" action=\"/console/s/%s/faults\">",
	    r->sandbox);
	console_csrf_field(r);
	char name[73], words[128];
	for (size_t i = 0; nth_fault(i, name, words); i++)
		html_f(h, "<label><input type=\"checkbox\" name=\"fault\" "
		    "value=\"%s\"%s> %s <span class=\"muted\">(%s)</span>"
		    "</label>\n", name, is_set(jv_copy(set), name)
		    ? " checked" : "", words, name);
	html_raw(h, "<p><button>Save</button></p></form>\n");
	jv_free(set);
	console_page_end(r);
}

/* Whether the form ticks name; -1 when it names a fault nobody knows. */
static int
ticked(const console_req *r, const char *name)
{
	int found = 0;
	const char *v;
	for (size_t i = 0; (v = form_nth(&r->body, "fault", i)); i++) {
		char known[73], words[128];
		int ok = 0;
		for (size_t k = 0; nth_fault(k, known, words); k++)
			ok |= strcmp(known, v) == 0;
		if (!ok)
			return -1;
		found |= strcmp(v, name) == 0;
	}
	return found;
}

void
console_faults_save(console_req *r)
{
	char name[73], words[128];
	/* Every fault named must be known before any is changed. */
	if (ticked(r, "") < 0)
		return console_fail(r, 400, "Malformed form: an unknown fault.");
	jv set;
	int rc = fault_list(r->ctx, r->sandbox, &set);
	for (size_t i = 0; !rc && nth_fault(i, name, words); i++) {
		int want = ticked(r, name), now = is_set(jv_copy(set), name);
		if (want && !now)
			rc = fault_set(r->ctx, r->sandbox, name);
		else if (!want && now)
			rc = fault_clear(r->ctx, r->sandbox, name);
		if (!rc && want != now)
			bakery_log(LOG_WARN, want ? "fault_set" : "fault_cleared",
			    "account", r->s.who.name, "sandbox", r->sandbox,
			    "fault", name, (char *)NULL);
	}
	jv_free(set);
	if (rc)
		return console_fail_code(r, rc, "saving faults");
	console_see(r, "faults", "saved");
}
