/*
 * routing.c — the routing table: which addresses hear which event.
 */
#define _GNU_SOURCE
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../lib/store/store.h"
#include "../../lib/core/envelope.h"
#include "../../lib/core/kind.h"
#include "../../lib/flow/routing.h"
#include "../../lib/flow/subscriber.h"
#include "../../lib/base/util.h"

/* The context whose routes the tests read (share/routes, loaded on first
 * use when BAKERY_ROUTES names it, or by routes_are_whole). */
static bakery_ctx ctx;

static jv
event(const char *type, const char *data_json)
{
	return envelope_new("default", "order/ord_1", type, jv_parse(data_json));
}

static void
expect(const char *type, const char *data_json, const char *const *want)
{
	jv env = event(type, data_json);
	char addr[ROUTING_MAX_SUBSCRIBERS][BAKERY_ADDRESS_SIZE];
	size_t n = 99;
	is_int(routing_subscribers(&ctx, env, addr, &n), 0, "%s routes", type);
	size_t w = 0;
	while (want[w])
		w++;
	is_int((long long)n, (long long)w, "  to %zu addresses", w);
	for (size_t i = 0; i < w && i < n; i++)
		is_str(addr[i], want[i], "  #%zu is %s", i + 1, want[i]);
	jv_free(env);
}

static void
refuses(const char *type, const char *data_json, const char *what)
{
	jv env = event(type, data_json);
	char addr[ROUTING_MAX_SUBSCRIBERS][BAKERY_ADDRESS_SIZE];
	size_t n;
	is_int(routing_subscribers(&ctx, env, addr, &n), EX_DATAERR,
	    "%s %s is EX_DATAERR", type, what);
	ok(strstr(bakery_error(), "data.") != NULL, "  error names the field (%s)",
	    bakery_error());
	jv_free(env);
}

/* The default routes file: every route names a known event type, a
 * built-in kind that records it... a route added without its subscriber,
 * its kind or its event type (docs/design.md, "How to add a kind of
 * object, an event, or a subscriber") fails here rather than as a 422 at
 * the first delivery. */
static void
routes_are_whole(void)
{
	is_int(routing_load(&ctx, "share/routes"), 0, "share/routes loads (%s)",
	    bakery_error());
	const routes *t = routing_current(&ctx);
	size_t n = t ? t->n : 0;
	for (size_t i = 0; i < n; i++) {
		const route *r = &t->r[i];
		ok(envelope_type_known(r->type), "route %zu: %s is a known event "
		    "type", i + 1, r->type);
		ok(r->how == ROUTE_BUILTIN, "  built in");
		ok(kind_find(r->kind) != NULL, "  heard by %s, a valid kind",
		    r->kind);
		const object_kind *sub = subscriber_find(r->kind);
		ok(sub && strcmp(sub->name, r->kind) == 0 && sub->apply,
		    "  %s has a subscriber", r->kind);
		if (r->key_field)
			ok(!r->key[0], "  keyed by data.%s", r->key_field);
		else
			ok(bakery_name_valid(r->key), "  keyed by the fixed name %s",
			    r->key);
	}
	is_int((long long)n, 9, "the default routes file has nine routes");
	for (int i = 0; object_kinds[i]; i++) {
		const object_kind *k = object_kinds[i];
		ok(!k->hears[0] == !k->apply, "kind %s hears events exactly "
		    "when it applies them", k->name);
		if (k->hears[0])
			ok(!k->key_field != !k->key, "  and has a key: a data "
			    "field or a fixed name, one of them");
	}
	ok(!subscriber_find("billing") && !subscriber_find("nonesuch"),
	    "billing, which only records, and an unknown kind have none");
}

/* text parses, into n routes. */
static void
parses(const char *text, size_t n, const char *what)
{
	routes t;
	int rc = routing_parse(text, strlen(text), "f", &t);
	is_int(rc, 0, "%s parses (%s)", what, rc ? bakery_error() : "");
	if (!rc) {
		is_int((long long)t.n, (long long)n, "  into %zu routes", n);
		routing_free(&t);
	}
}

/* len bytes of text are refused: EX_CONFIG, naming the file and line. */
static void
refused(const char *text, size_t len, int line, const char *why,
    const char *what)
{
	routes t;
	is_int(routing_parse(text, len, "f", &t), EX_CONFIG, "%s: EX_CONFIG",
	    what);
	char want[32];
	if (line)
		snprintf(want, sizeof want, "f:%d: ", line);
	else
		snprintf(want, sizeof want, "f: ");
	ok(strncmp(bakery_error(), want, strlen(want)) == 0 &&
	    strstr(bakery_error(), why) != NULL, "  names line %d and '%s' (%s)",
	    line, why, bakery_error());
}

#define REFUSED(text, line, why) \
	refused(text, sizeof text - 1, line, why, #text)

static void
parsing(void)
{
	parses("# c\n\n  \t\nOrderPaid builtin:crm\r\n", 1,
	    "comments, blanks and CRLF");
	parses("OrderPaid\texec:/bin/true name=t\n"
	    "OrderPlaced exec:/bin/true name=t\n"
	    "OrderPaid https://h.example/x name=w secret=/s\n"
	    "OrderPaid http://127.0.0.1:8/x name=l secret=/s", 4,
	    "external subscribers, one named twice for two types");
	REFUSED("OrderPaid builtin:crm\nOrderPaid", 2, "want EVENT-TYPE");
	REFUSED("Nope builtin:crm\n", 1, "unknown event type");
	REFUSED("OrderPaid ftp://x name=a\n", 1, "unknown subscriber kind");
	REFUSED("OrderPaid builtin:billing\n", 1, "unknown built-in");
	REFUSED("PaymentSucceeded builtin:kitchen\n", 1, "cannot apply");
	REFUSED("OrderPaid exec:bin/true name=a\n", 1, "absolute path");
	REFUSED("OrderPaid exec:/bin/true\n", 1, "name=NAME");
	REFUSED("OrderPaid exec:/bin/true name=../x\n", 1, "name=NAME");
	REFUSED("OrderPaid exec:/bin/true name=a colour=red\n", 1,
	    "unknown or repeated option");
	REFUSED("OrderPaid exec:/bin/true name=a\nOrderPaid exec:/bin/true "
	    "name=a\n", 2, "on line 1 already");
	REFUSED("OrderPaid exec:/bin/true name=a\nOrderPlaced exec:/bin/false "
	    "name=a\n", 2, "names another subscriber on line 1");
	REFUSED("OrderPaid http://example.com/x name=a secret=/s\n", 1,
	    "http:// is for");
	REFUSED("OrderPaid https://example.com/x name=a\n", 1, "secret=");
	REFUSED("OrderPaid https://example.com/x name=a secret=s\n", 1,
	    "secret=");
	REFUSED("# x\nOrderPaid builtin:crm\0\n", 2, "NUL");
	REFUSED("OrderPaid builtin:crm\n\xff\n", 2, "not UTF-8");
	REFUSED("OrderPaid builtin:\x01crm\n", 1, "control character");
	REFUSED("# only a comment\n", 0, "no routes");
	char *huge = bakery_xmalloc(ROUTING_MAX_LINE + 100);
	memset(huge, '#', ROUTING_MAX_LINE + 99);
	memcpy(huge, "OrderPaid builtin:crm\n", 22);
	refused(huge, ROUTING_MAX_LINE + 99, 2, "longer than", "a huge line");
	free(huge);
	/* 17 subscribers of one type: one past the most. */
	char many[2048] = "";
	for (int i = 0; i <= ROUTING_MAX_SUBSCRIBERS; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many),
		    "OrderPaid exec:/bin/true name=n%d\n", i);
	refused(many, strlen(many), ROUTING_MAX_SUBSCRIBERS + 1,
	    "more than", "too many subscribers of one type");
}

/*
 * http(s) subscribers: the host is what libcurl's parser says it is, not
 * what the URL starts with (url.h). Each URL is one route, line 1.
 */
static void
hostile_urls(void)
{
	static const struct {
		const char *url, *why; /* why NULL: accepted */
	} cases[] = {
		{ "http://127.0.0.1:8/x", NULL },
		{ "http://127.255.255.254:9/hook", NULL },
		{ "http://localhost:8080/hook", NULL },
		{ "http://LOCALHOST/x", NULL },
		{ "HTTP://127.0.0.1/x", NULL },
		{ "http://[::1]:9/x", NULL },
		{ "http://[0:0:0:0:0:0:0:1]/x", NULL },
		{ "http://127.1/x", NULL },
		{ "http://%6c%6fcalhost/x", NULL },
		{ "https://h.example/x", NULL },
		{ "HTTPS://h.example:8443/x", NULL },
		{ "http://127.0.0.1:80@example.com/hook", "userinfo" },
		{ "http://[::1]@evil/", "userinfo" },
		{ "http://@127.0.0.1/", "userinfo" },
		{ "http://u:p@127.0.0.1/", "userinfo" },
		{ "http://127.0.0.1\\@evil/", "userinfo" },
		{ "https://user:pw@h.example/", "userinfo" },
		{ "https://user@h.example/", "userinfo" },
		{ "http://127.0.0.1.example.com/", "http:// is for" },
		{ "http://localhost.evil/", "http:// is for" },
		{ "http://127.0.0.1%2eexample.com/", "http:// is for" },
		{ "http://%6c%6fcalhost.evil/", "http:// is for" },
		{ "HTTP://example.com/", "http:// is for" },
		{ "http://[::2]/", "http:// is for" },
		{ "http://[::ffff:127.0.0.1]/", "http:// is for" },
		{ "http://0.0.0.0/", "http:// is for" },
		{ "http://128.0.0.1/", "http:// is for" },
		{ "http:///hook", "without a host" },
		{ "http://", "without a host" },
		{ "https:///x", "without a host" },
		{ "http:example.com", "without a host" },
		{ "http://127.0.0.1:99999/", "not a URL libcurl can parse" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[256];
		int len = snprintf(text, sizeof text,
		    "OrderPaid %s name=a secret=/s\n", cases[i].url);
		if (!cases[i].why)
			parses(text, 1, cases[i].url);
		else
			refused(text, (size_t)len, 1, cases[i].why, cases[i].url);
	}
}

/* Two contexts in one process hold two tables: a routes file loaded into
 * one is not the other's, and freeing one leaves the other's whole. */
static void
two_contexts_two_tables(void)
{
	char path[] = "/tmp/bakery-routes-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!ok(f != NULL, "a routes file is made in /tmp"))
		return;
	fputs("OrderPaid builtin:crm\n", f);
	fclose(f);
	bakery_ctx one = { 0 }, two = { 0 };
	int rc = routing_load(&one, "share/routes");
	is_int(rc, 0, "share/routes loads into one context %s",
	    rc ? bakery_error() : "");
	rc = routing_load(&two, path);
	is_int(rc, 0, "a one-route file loads into another %s",
	    rc ? bakery_error() : "");
	unlink(path);
	const routes *a = routing_current(&one), *b = routing_current(&two);
	ok(a && b && a != b, "each context has a table of its own");
	is_int(a ? (long long)a->n : -1, 9, "  the first keeps nine routes");
	is_int(b ? (long long)b->n : -1, 1, "  the second has one");
	ctx_free(&two);
	a = routing_current(&one);
	is_int(a ? (long long)a->n : -1, 9,
	    "freeing one context leaves the other's table whole");
	ok(a && strcmp(a->r[0].type, "OrderPlaced") == 0 &&
	    strcmp(a->r[0].kind, "schedule") == 0,
	    "  its first route as share/routes has it");
	ctx_free(&one);
}

int
main(void)
{
	parsing();
	hostile_urls();
	routes_are_whole();
	two_contexts_two_tables();

	const char *placed[] = { "schedule/2027-01-15", "kitchen/board", NULL };
	expect("OrderPlaced", "{\"order\":\"ord_1\",\"day\":\"2027-01-15\","
	    "\"customer\":\"cus_1\"}", placed);
	const char *payment[] = { "order/ord_1", NULL };
	expect("PaymentSucceeded", "{\"order\":\"ord_1\",\"amount_cents\":900}",
	    payment);
	const char *paid[] = { "schedule/2027-01-15", "kitchen/board",
		"crm/customers", "customer/cus_1", "inbox/cus_1",
		"dispatch/2027-01-15", NULL };
	expect("OrderPaid", "{\"order\":\"ord_1\",\"day\":\"2027-01-15\","
	    "\"customer\":\"cus_1\"}", paid);

	refuses("OrderPlaced", "{\"order\":\"ord_1\"}", "without data.day");
	refuses("OrderPaid", "{\"order\":\"ord_1\",\"customer\":\"cus_1\"}",
	    "without data.day");
	refuses("OrderPaid", "{\"order\":\"ord_1\",\"day\":\"2027-01-15\"}",
	    "without data.customer");
	refuses("OrderPaid", "{\"order\":\"ord_1\",\"day\":\"../../etc\","
	    "\"customer\":\"cus_1\"}", "with a path for a day");
	refuses("OrderPlaced", "{\"order\":\"ord_1\",\"day\":20270115}",
	    "with a numeric day");
	refuses("PaymentSucceeded", "{}", "without data.order");

	jv notype = jv_parse("{\"data\":{}}");
	char addr[ROUTING_MAX_SUBSCRIBERS][BAKERY_ADDRESS_SIZE];
	size_t n;
	is_int(routing_subscribers(&ctx, notype, addr, &n), EX_DATAERR,
	    "an envelope without a type is EX_DATAERR");
	jv_free(notype);

	jv table = routing_describe(&ctx);
	is_int(jv_array_length(jv_copy(table)), 9, "the table has nine routes");
	jv row = jv_array_get(jv_copy(table), 1);
	is_str(envelope_str(row, "subscriber"), "builtin:kitchen",
	    "routes print their subscriber");
	jv_free(row);
	jv first = jv_array_get(jv_copy(table), 0);
	is_str(envelope_str(first, "to"), "schedule/{data.day}",
	    "routes print their key field");
	jv_free(first);
	/* share/routes and the descriptors agree: each built-in route's kind
	 * hears its type, each type a kind hears has its route, and each
	 * route comes from the kind that records its type. */
	for (int k = 0; object_kinds[k]; k++)
		for (int h = 0; h < 4 && object_kinds[k]->hears[h]; h++) {
			char want[BAKERY_ADDRESS_SIZE];
			snprintf(want, sizeof want, "builtin:%s",
			    object_kinds[k]->name);
			int found = 0;
			jv_array_foreach(table, i, r) {
				found |= strcmp(envelope_str(r, "type"),
				    object_kinds[k]->hears[h]) == 0 &&
				    strcmp(envelope_str(r, "subscriber"), want) == 0;
				jv_free(r);
			}
			ok(found, "share/routes routes %s to %s, which hears it",
			    object_kinds[k]->hears[h], want);
		}
	jv_array_foreach(table, i, r) {
		const char *sub = envelope_str(r, "subscriber");
		const char *type = envelope_str(r, "type");
		const object_kind *k = strncmp(sub, "builtin:", 8) == 0
		    ? kind_find(sub + 8) : NULL;
		int hears = 0;
		for (int h = 0; k && h < 4 && k->hears[h]; h++)
			hears |= strcmp(k->hears[h], type) == 0;
		ok(hears, "route %s -> %s: a kind that hears it", type, sub);
		const object_kind *from = kind_recording(type);
		is_str(envelope_str(r, "from"), from ? from->name : "(none)",
		    "  and it comes from the kind that records it");
		jv_free(r);
	}
	jv_free(table);
	return done_testing();
}
