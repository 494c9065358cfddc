/*
 * request.c — one request of the console: read, checked, dispatched to
 * its page, answered (console.h says in which order it is checked).
 *
 * In this file: the answer's headers; the table of pages; the request read from the CGI environment; the checks; the
 * helpers the pages share (their frame, refusals, 303s, notices).
 */
#define _GNU_SOURCE
#include "console.h"
#include "../core/envelope.h"
#include "../queue/queue.h"
#include "../base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROOT "/console/"
#define COOKIE "bakery_session"

/* The answer's headers, on every answer. No script or style comes from
 * anywhere but the console itself, nor inline; no page may be framed;
 * no form may post elsewhere. */
static const char headers[] =
	"Content-Security-Policy: default-src 'self'; frame-ancestors 'none'; "
	"form-action 'self'; base-uri 'none'\r\n"
	"X-Content-Type-Options: nosniff\r\n"
	"X-Frame-Options: DENY\r\n"
	"Referrer-Policy: same-origin\r\n";

/* The console's root: a signed-in account's own order page. */
static void
root(console_req *r)
{
	r->status = 303;
	if (r->signed_in)
		snprintf(r->location, sizeof r->location, ROOT "s/%s/",
		    r->s.who.sandbox);
	else
		snprintf(r->location, sizeof r->location, ROOT "signin");
}

enum access {
	OPEN,     /* anyone (the sign-in, the stylesheet) */
	SIGNED,   /* a session */
	SANDBOX,  /* a session allowed in the path's sandbox */
};

/* The pages. A pattern's parts are literals, or '*': a bakery name,
 * handed to the page in arg[] (the first is always the sandbox). */
static const struct page {
	const char *method, *pattern;
	enum access access;
	void (*run)(console_req *);
	int of_order; /* an action on the order arg[1] (action.c) */
} pages[] = {
	{ "GET", "", OPEN, root, 0 },
	{ "GET", "style.css", OPEN, console_style, 0 },
	{ "GET", "icon.svg", OPEN, console_icon, 0 },
	{ "GET", "signin", OPEN, console_signin_page, 0 },
	{ "POST", "signin", OPEN, console_signin, 0 },
	{ "POST", "signout", SIGNED, console_signout, 0 },
	{ "GET", "s/*", SANDBOX, console_menu_page, 0 },
	{ "POST", "s/*/orders", SANDBOX, console_place, 0 },
	{ "GET", "s/*/orders", SANDBOX, console_orders_page, 0 },
	{ "GET", "s/*/orders/*", SANDBOX, console_order_page, 0 },
	{ "POST", "s/*/orders/*/pay", SANDBOX, console_pay, 1 },
	{ "GET", "s/*/faults", SANDBOX, console_faults_page, 0 },
	{ "POST", "s/*/faults", SANDBOX, console_faults_save, 0 },
	{ "GET", "s/*/dead", SANDBOX, console_dead_page, 0 },
	{ "POST", "s/*/dead/redrive", SANDBOX, console_redrive, 0 },
	{ "GET", "s/*/boards", SANDBOX, console_boards_page, 0 },
	{ "GET", "s/*/status", SANDBOX, console_status_page, 0 },
};

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 303: return "See Other";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	default: return "Service Unavailable";
	}
}

/* How a path matched the table. */
enum match { NO_PAGE, BAD_NAME, OTHER_METHOD, MATCHED };

/* Matches path (PATH_INFO without its leading '/', a trailing '/'
 * allowed) against p's pattern; names go to arg[]. */
static enum match
match_pattern(const char *path, const char *pattern, char names[2][BAKERY_NAME_SIZE])
{
	int bad = 0, n = 0;
	for (;;) {
		size_t plen = strcspn(path, "/"), tlen = strcspn(pattern, "/");
		if (tlen == 1 && pattern[0] == '*') {
			if (plen == 0)
				return NO_PAGE;
			if (plen > BAKERY_NAME_MAX || n == 2)
				bad = 1;
			else {
				memcpy(names[n], path, plen);
				names[n][plen] = '\0';
				bad |= !bakery_name_valid(names[n++]);
			}
		} else if (plen != tlen || strncmp(path, pattern, plen) != 0) {
			return NO_PAGE;
		}
		path += plen;
		pattern += tlen;
		if (!*pattern)
			return !*path || strcmp(path, "/") == 0
			    ? bad ? BAD_NAME : MATCHED : NO_PAGE;
		if (*path != '/' || *pattern != '/')
			return NO_PAGE;
		path++;
		pattern++;
	}
}

/* The page for method and path; *why when none. */
static const struct page *
find_page(const char *method, const char *path, char names[2][BAKERY_NAME_SIZE],
    enum match *why)
{
	*why = NO_PAGE;
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		enum match m = match_pattern(path, pages[i].pattern, names);
		int same = strcmp(pages[i].method, method) == 0 ||
		    (strcmp(method, "HEAD") == 0 &&
		     strcmp(pages[i].method, "GET") == 0);
		if (m == MATCHED && same)
			return &pages[i];
		if (m != NO_PAGE && *why != BAD_NAME)
			*why = m == MATCHED ? OTHER_METHOD : m;
	}
	return NULL;
}

/* The methods path takes, as a 405's Allow header lists them: "GET,
 * HEAD", "POST" or both; "" when it is no page. */
static void
allowed(const char *path, char *out, size_t size)
{
	char names[2][BAKERY_NAME_SIZE];
	int get = 0, post = 0;
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
		if (match_pattern(path, pages[i].pattern, names) != NO_PAGE) {
			get |= strcmp(pages[i].method, "GET") == 0;
			post |= strcmp(pages[i].method, "POST") == 0;
		}
	snprintf(out, size, "%s%s%s", get ? "GET, HEAD" : "",
	    get && post ? ", " : "", post ? "POST" : "");
}

/* Whether host (a Host header: name, then ":port" or nothing) names
 * this machine's loopback: 127.0.0.1, localhost or [::1]. */
static int
loopback_host(const char *host)
{
	static const char *const names[] = { "127.0.0.1", "localhost", "[::1]" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		size_t n = strlen(names[i]);
		if (strncmp(host, names[i], n) == 0 && (!host[n] ||
		    (host[n] == ':' && host[n + 1] &&
		     strspn(host + n + 1, "0123456789") == strlen(host + n + 1))))
			return 1;
	}
	return 0;
}

/* The console's own origin: BAKERY_CONSOLE_ORIGIN (a proxy in front, or
 * any name but the loopback's), else the request's scheme and Host, which
 * must then name the loopback: a page of another site whose name was
 * made to point at 127.0.0.1 (DNS rebinding) sends its own name as Host,
 * and must not be taken for the console. -1 when neither is usable. */
static int
own_origin(console_req *r)
{
	const char *set = getenv("BAKERY_CONSOLE_ORIGIN");
	const char *https = getenv("HTTPS");
	r->https = https && strcmp(https, "on") == 0;
	if (set && *set) {
		size_t len = strlen(set);
		int secure = strncmp(set, "https://", 8) == 0;
		size_t scheme = secure ? 8 : 7;
		if ((!secure && strncmp(set, "http://", 7) != 0) ||
		    len <= scheme || len >= sizeof r->origin ||
		    strchr(set + scheme, '/') ||
		    strspn(set, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789.:-/[]") != len)
			return -1;
		r->https |= secure;
		memcpy(r->origin, set, len + 1);
		return 0;
	}
	const char *host = getenv("HTTP_HOST");
	if (!host || strlen(host) > 200 || !loopback_host(host))
		return -1;
	snprintf(r->origin, sizeof r->origin, "%s://%s",
	    r->https ? "https" : "http", host);
	return 0;
}

/* Whether the POST came from a page of the console itself: its Origin,
 * else (a browser that sends none) its Sec-Fetch-Site, else its Referer,
 * must say so. A request with none of the three is refused. */
static int
same_origin(const console_req *r)
{
	const char *origin = getenv("HTTP_ORIGIN");
	const char *site = getenv("HTTP_SEC_FETCH_SITE");
	const char *referer = getenv("HTTP_REFERER");
	size_t n = strlen(r->origin);
	if (origin && *origin)
		return strcmp(origin, r->origin) == 0;
	if (site && *site)
		return strcmp(site, "same-origin") == 0;
	return referer && strncmp(referer, r->origin, n) == 0 &&
	    referer[n] == '/';
}

/* A POST's form: 0, or the answer's status. */
static int
read_form(console_req *r)
{
	const char *length = getenv("CONTENT_LENGTH");
	const char *type = getenv("CONTENT_TYPE");
	long long n;
	if (!length || bakery_parse_number(length, 0, LLONG_MAX, &n))
		return 400;
	if (n > CONSOLE_MAX_BODY)
		return 413;
	static const char form_type[] = "application/x-www-form-urlencoded";
	size_t tl = sizeof form_type - 1;
	if (!type || strncasecmp(type, form_type, tl) != 0 ||
	    (type[tl] && type[tl] != ';'))
		return 400;
	char *buf = bakery_xmalloc((size_t)n + 1);
	size_t got = 0;
	while (got < (size_t)n) {
		ssize_t k = read(STDIN_FILENO, buf + got, (size_t)n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	int bad = got != (size_t)n || form_parse(buf, got, &r->body);
	explicit_bzero(buf, got); /* it may hold a password */
	free(buf);
	return bad ? 400 : 0;
}

/* The session of the request's cookie, if any: 0, or a failure's code
 * (no session is not one). */
static int
find_session(console_req *r)
{
	const char *cookie = getenv("HTTP_COOKIE");
	if (!cookie || form_cookie(cookie, COOKIE, r->token,
	    sizeof r->token) != 1) {
		r->token[0] = '\0';
		return 0;
	}
	int rc = session_find(r->ctx, r->token, &r->s);
	r->signed_in = rc == 0;
	return rc == EX_NOPERM ? 0 : rc;
}

/* Constant time: whether the form's csrf is the session's. */
static int
csrf_ok(const console_req *r)
{
	const char *sent;
	if (form_one(&r->body, "csrf", &sent) != 1 ||
	    strlen(sent) != SESSION_TOKEN_HEX)
		return 0;
	unsigned char diff = 0;
	for (size_t i = 0; i < SESSION_TOKEN_HEX; i++)
		diff |= (unsigned char)sent[i] ^ (unsigned char)r->s.csrf[i];
	return diff == 0;
}

/* The request's checks, in the order console.h gives; then its page. */
static void
dispatch(console_req *r)
{
	const char *method = getenv("REQUEST_METHOD");
	const char *path = getenv("PATH_INFO");
	const char *query = getenv("QUERY_STRING");
	/* A path of at most 400 bytes, without its leading '/', or NULL. */
	const char *page = !path || !*path ? "" : path[0] == '/' &&
	    strlen(path) <= 400 ? path + 1 : NULL;
	if (!method || (strcmp(method, "GET") && strcmp(method, "HEAD") &&
	    strcmp(method, "POST"))) {
		if (page)
			allowed(page, r->allow, sizeof r->allow);
		return r->allow[0] ? console_fail(r, 405, "This method is not "
		    "served here.") : console_fail(r, 404, "There is no such "
		    "page.");
	}
	r->method = method;
	if (own_origin(r)) {
		bakery_log(LOG_ERROR, "console_refused", "reason", "a Host "
		    "that is not the loopback's, and no BAKERY_CONSOLE_ORIGIN, or "
		    "a bad one", (char *)NULL);
		return console_fail(r, 400, "The request names a host this "
		    "console does not serve.");
	}
	if (!path || !*path) {
		r->status = 303;
		snprintf(r->location, sizeof r->location, ROOT);
		return;
	}
	if (!page)
		return console_fail(r, 404, "There is no such page.");
	char names[2][BAKERY_NAME_SIZE] = { "", "" };
	enum match why;
	const struct page *p = find_page(method, page, names, &why);
	if (!p && why == OTHER_METHOD)
		allowed(page, r->allow, sizeof r->allow);
	if (!p)
		return why == BAD_NAME ? console_fail(r, 400, "Bad name: want "
		    "[a-z0-9][a-z0-9_.-]{0,63} without '..'.")
		    : why == OTHER_METHOD ? console_fail(r, 405, "This "
		    "method is not served here.")
		    : console_fail(r, 404, "There is no such page.");
	if (query && form_parse(query, strlen(query), &r->query))
		return console_fail(r, 400, "Malformed query.");
	int post = strcmp(method, "POST") == 0;
	/* A page reads its files as the programs that only look do. */
	r->ctx->look_only = !post;
	if (post && !same_origin(r)) {
		bakery_log(LOG_WARN, "console_refused", "reason", "a POST from "
		    "another origin", (char *)NULL);
		return console_fail(r, 403, "This form was not sent from the "
		    "console's own pages.");
	}
	int status = post ? read_form(r) : 0;
	if (status)
		return console_fail(r, status, status == 413 ? "The form is "
		    "too large." : "Malformed form.");
	int rc = find_session(r);
	if (rc)
		return console_fail_server(r, rc, "reading the session");
	if (p->access != OPEN && !r->signed_in) {
		if (post)
			return console_fail(r, 403, "Sign in first.");
		r->status = 303;
		snprintf(r->location, sizeof r->location, ROOT "signin");
		return;
	}
	if (post && p->access != OPEN && !csrf_ok(r)) {
		bakery_log(LOG_WARN, "console_refused", "reason", "a POST "
		    "without the session's token", "account", r->s.who.name,
		    (char *)NULL);
		return console_fail(r, 403, "This form does not carry this "
		    "session's token: load the page again.");
	}
	r->arg[0] = names[0];
	r->arg[1] = names[1];
	if (p->access == SANDBOX) {
		if (!r->s.who.operator && strcmp(names[0], r->s.who.sandbox))
			return console_fail(r, 404, "There is no such page.");
		free(r->ctx->sandbox);
		r->ctx->sandbox = bakery_xstrdup(names[0]);
		r->sandbox = r->ctx->sandbox;
	}
	if (post)
		console_action_begin(r, p->pattern, p->of_order);
	p->run(r);
}

static void
answer(console_req *r)
{
	if (!r->status)
		r->status = 200;
	printf("Status: %d %s\r\n%s", r->status, reason(r->status), headers);
	printf("Cache-Control: %s\r\n", r->fixed ? "max-age=300" : "no-store");
	if (r->status == 303)
		printf("Location: %s\r\n", r->location);
	if (r->cookie[0])
		printf("Set-Cookie: %s\r\n", r->cookie);
	if (r->status == 405)
		printf("Allow: %s\r\n", r->allow);
	if (r->retry_after)
		printf("Retry-After: %d\r\n", r->retry_after);
	printf("Content-Type: %s\r\n\r\n", r->type ? r->type
	    : "text/html; charset=utf-8");
	if (r->method && strcmp(r->method, "HEAD") == 0)
		return;
	if (r->fixed)
		fputs(r->fixed, stdout);
	else if (r->page.buf)
		fwrite(r->page.buf, 1, r->page.len, stdout);
}

int
console_serve(const char *home, const char *queue)
{
	bakery_ctx ctx;
	console_req r = { .ctx = &ctx };
	int rc = ctx_init(&ctx, home, NULL, queue);
	/* Its sends are the request's own (QUEUE_BRIEF_WAIT_MS). */
	ctx.queue_wait_ms = QUEUE_BRIEF_WAIT_MS;
	if (rc)
		console_fail_code(&r, rc == EX_USAGE ? EX_CONFIG : rc,
		    "reading the settings");
	else
		dispatch(&r);
	answer(&r);
	console_action_end(&r);
	ctx_free(&ctx);
	explicit_bzero(r.token, sizeof r.token);
	form_free(&r.body); /* wiped: it may hold a password */
	form_free(&r.query);
	html_free(&r.page);
	return r.status < 500 ? 0 : r.exit_code ? r.exit_code : EX_UNAVAILABLE;
}

/* The helpers of the pages. */

void
console_page_start(console_req *r, const char *title)
{
	html *h = &r->page;
	html_f(h, "<!doctype html>\n<html lang=\"en\"><head><meta charset="
	    "\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\"><title>%s · bakery</title><link rel=\"stylesheet"
	    "\" href=\"" ROOT "style.css\"><link rel=\"icon\" href=\"" ROOT
	    "icon.svg\"></head>\n<body><header><a href=\"" ROOT "\">bakery"
	    "</a>", title);
	if (r->signed_in) {
		const char *s = r->sandbox ? r->sandbox : r->s.who.sandbox;
		html_f(h, "<a href=\"" ROOT "s/%s/\">Order</a>"
		    "<a href=\"" ROOT "s/%s/orders\">Orders</a>"
		    "<a href=\"" ROOT "s/%s/faults\">Faults</a>"
		    "<a href=\"" ROOT "s/%s/dead\">Dead letters</a>"
		    "<a href=\"" ROOT "s/%s/boards\">Boards</a>"
		    "<a href=\"" ROOT "s/%s/status\">Status</a>"
		    "<span class=\"who\">%s%s, sandbox %s</span>"
		    "<form method=\"post\" action=\"" ROOT "signout\">",
		    s, s, s, s, s, s, r->s.who.name,
		    r->s.who.operator ? " (operator)" : "", s);
		console_csrf_field(r);
		html_raw(h, "<button>Sign out</button></form>");
	}
	html_f(h, "</header>\n<main><h1>%s</h1>\n", title);
}

void
console_page_end(console_req *r)
{
	html_raw(&r->page, "</main></body></html>\n");
}

void
console_fail(console_req *r, int status, const char *sentence)
{
	html_free(&r->page);
	r->status = status;
	r->fixed = NULL;
	r->type = NULL;
	console_page_start(r, reason(status));
	html_f(&r->page, "<p class=\"warn\">%s</p>\n", sentence);
	if (r->signed_in)
		html_raw(&r->page, "<p><a href=\"" ROOT "\">Back to the "
		    "console</a></p>\n");
	else
		html_raw(&r->page, "<p><a href=\"" ROOT "signin\">Sign in"
		    "</a></p>\n");
	console_page_end(r);
}

void
console_fail_code(console_req *r, int code, const char *what)
{
	if (code == EX_NOINPUT)
		return console_fail(r, 404, "There is no such page.");
	/* A file of the home that is not a database, or not bakery's, is
	 * EX_DATAERR too: its message names the file, and is the server's. */
	const char *home = r->ctx->home;
	if ((code == EX_USAGE || code == EX_DATAERR) &&
	    !(home && *home && strstr(bakery_error(), home)))
		return console_fail(r, 422, bakery_error());
	console_fail_server(r, code, what);
}

void
console_fail_server(console_req *r, int code, const char *what)
{
	bakery_log(LOG_ERROR, "console_failed", "doing", what, "error",
	    bakery_error(), (char *)NULL);
	if (code == EX_TEMPFAIL)
		r->retry_after = CONSOLE_BUSY_RETRY_S;
	r->exit_code = code;
	console_fail(r, 503, code == EX_TEMPFAIL ? "bakery is busy: try "
	    "again in a moment." : "bakery could not do this now: the "
	    "failure is in the server's log.");
}

void
console_see(console_req *r, const char *where, const char *done)
{
	r->status = 303;
	snprintf(r->location, sizeof r->location, ROOT "s/%s/%s%s%s",
	    r->sandbox, where, done ? "?done=" : "", done ? done : "");
}

void
console_notice(console_req *r, const console_notice_text *table)
{
	const char *done;
	if (form_one(&r->query, "done", &done) != 1)
		return;
	for (; table->done; table++)
		if (strcmp(table->done, done) == 0) {
			html_f(&r->page, "<p class=\"%s\" role=\"status\">%s"
			    "</p>\n", table->bad ? "warn" : "notice",
			    table->text);
			return;
		}
}

void
console_csrf_field(console_req *r)
{
	html_f(&r->page, "<input type=\"hidden\" name=\"csrf\" value=\"%s\">",
	    r->s.csrf);
}

void
console_time(console_req *r, const char *iso)
{
	if (!iso || strlen(iso) < 19)
		return;
	char t[20];
	memcpy(t, iso, 19);
	t[10] = ' ';
	t[19] = '\0';
	html_text(&r->page, t);
}

void
console_items(console_req *r, jv items)
{
	if (jv_get_kind(items) != JV_KIND_ARRAY) {
		jv_free(items);
		return;
	}
	jv_array_foreach(items, i, it) {
		html_f(&r->page, "%s%d × %s", i ? ", " : "",
		    (int)envelope_number(it, "qty", 0),
		    envelope_text(it, "item", "?"));
		jv_free(it);
	}
	jv_free(items);
}
