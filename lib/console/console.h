/*
 * console.h — bakery-console's pages: the bakery in a browser, over CGI.
 *
 * One request is one process (lighttpd runs bakery-console for each):
 * console_serve reads it from the CGI environment and stdin, checks it,
 * and writes the whole answer on stdout. What a request must pass, in
 * this order (request.c):
 *
 *   1. its method (GET, HEAD, POST; else 405 with Allow, the methods
 *      its path takes, or 404 when it is no page); its Host, which must name
 *      the loopback unless BAKERY_CONSOLE_ORIGIN is set (else 400: DNS
 *      rebinding); and its path, under /console/, matched against the
 *      table of pages (else 404); a part of the path that stands for a
 *      sandbox, an order or a dead letter must be a bakery name, or the
 *      answer is 400;
 *   2. a POST: its Origin, else its Sec-Fetch-Site, else its Referer,
 *      must be the console's own (BAKERY_CONSOLE_ORIGIN, else the scheme
 *      and Host of the request), else 403; then its body: no
 *      Content-Length or a bad one 400, over CONSOLE_MAX_BODY 413 (not
 *      read), not a form 400 (form.h);
 *   3. the session of its cookie (session.h): without one a page answers
 *      303 to the sign-in page and an action 403; an action's form must
 *      carry the session's CSRF token, else 403;
 *   4. the sandbox of its path: an account's own, or any for an
 *      operator; another's is 404, as a sandbox that does not exist.
 *
 * Only then does a page run. A GET changes nothing of the bakery (the
 * dead-letters page drains the sandbox's dead-letter queue into its dead
 * letters first, the move bakery-dlq makes; a session's last use is
 * noted, and an expired one ended); an action answers 303 to the page that shows its outcome.
 * Every answer carries the headers of console_headers (a strict
 * Content-Security-Policy: the pages have no script and no inline style),
 * and every value is written through html.h.
 *
 * The pages call the library the other programs call (order.h,
 * payments.h, faults.h, deadletter.h, trace.h, status.h, subscriber.h);
 * the console never runs another bakery program.
 */
#ifndef BAKERY_CONSOLE_H
#define BAKERY_CONSOLE_H

#include "../store/store.h"
#include "../web/form.h"
#include "../web/html.h"
#include "../web/session.h"
#include "../net/span.h"

/* The largest form body read; a larger one is 413 and is not read. */
#define CONSOLE_MAX_BODY (64 * 1024)
/* The Retry-After of a 503 when bakery is busy (a lock held past the
 * busy timeout). */
#define CONSOLE_BUSY_RETRY_S 5

typedef struct console_req {
	bakery_ctx *ctx;       /* its sandbox is the page's, once checked */
	const char *method;    /* "GET", "HEAD" or "POST" */
	const char *arg[2];    /* the names the path gave: sandbox, then id */
	form query;            /* QUERY_STRING */
	form body;             /* a POST's form */
	char origin[256];      /* the console's own origin */
	int https;
	char token[SESSION_TOKEN_HEX + 1]; /* the cookie's, or "" */
	int signed_in;
	session s;
	const char *sandbox;   /* the page's sandbox (arg[0]) */

	/* The answer. */
	int status;
	char location[512];    /* for a 303 */
	char cookie[256];      /* a Set-Cookie, or "" */
	const char *type;      /* Content-Type; NULL: an HTML page */
	const char *fixed;     /* a fixed body (the stylesheet), or NULL */
	int retry_after;       /* seconds, for a 429 or a busy 503 */
	char allow[32];        /* a 405's Allow: the path's methods */
	int exit_code;         /* a 503's cause (console_fail_code), or 0 */
	html page;

	span action;           /* a POST's span (action.c) */
	int acting;            /* 1 while it is begun */
} console_req;

/* Serves the request of the CGI environment on the home and queue given
 * (NULL: the environment's, as ctx_init reads them); the exit code is
 * for the server's log only: 0 for an answer below 500, else the
 * failure's (78 a bad setting, or a home a newer bakery wrote), or 69. */
int console_serve(const char *home, const char *queue);

/* An action's span (action.c): begun before a POST's page runs, named
 * after its route (pattern, a page's); of_order: the action is on the
 * order arg[1], and continues its trace unless the request's traceparent
 * header gave one (then linked to it). Ended with the answer's status. */
void console_action_begin(console_req *r, const char *pattern,
    int of_order);
void console_action_end(console_req *r);

/* The pages and actions (one file each, under lib/console/). */
void console_style(console_req *r);
void console_icon(console_req *r);
void console_signin_page(console_req *r);
void console_signin(console_req *r);
void console_signout(console_req *r);
void console_menu_page(console_req *r);
void console_place(console_req *r);
void console_orders_page(console_req *r);
void console_order_page(console_req *r);
void console_pay(console_req *r);
void console_faults_page(console_req *r);
void console_faults_save(console_req *r);
void console_dead_page(console_req *r);
void console_redrive(console_req *r);
void console_boards_page(console_req *r);
void console_status_page(console_req *r);

/* For the pages (request.c). */

/* The page's head and navigation, its title an <h1>. */
void console_page_start(console_req *r, const char *title);
void console_page_end(console_req *r);
/* A page of its own for a refusal or failure: status and a sentence. */
void console_fail(console_req *r, int status, const char *sentence);
/* A failure of the library (code, bakery_error()): 404 for EX_NOINPUT,
 * 422 with its message for EX_USAGE and EX_DATAERR (what was asked is
 * wrong) unless the message names the home (a file of it corrupt or
 * foreign), else console_fail_server. */
void console_fail_code(console_req *r, int code, const char *what);
/* A failure that is the server's, whatever its code (console.db, the
 * accounts and sessions, locked, unreadable or corrupt: nothing a
 * visitor asked for): 503 with a sentence, and for EX_TEMPFAIL (busy)
 * a Retry-After of CONSOLE_BUSY_RETRY_S; its message logged, not shown
 * (it may name the home's files). */
void console_fail_server(console_req *r, int code, const char *what);
/* A 303 to /console/s/SANDBOX/WHERE, where is a path of the program's
 * own and names of the library's; done (may be NULL) the outcome's code,
 * which the page turns into a sentence (console_notice). */
void console_see(console_req *r, const char *where, const char *done);

/* What an action's outcome code says, on the page it was sent to. */
typedef struct console_notice_text {
	const char *done;
	const char *text;
	int bad; /* shown as a warning */
} console_notice_text;
/* Writes the sentence of the query's done, when the table knows it;
 * anything else in done is ignored, never shown. */
void console_notice(console_req *r, const console_notice_text *table);

/* The hidden field of the session's CSRF token, for every form. */
void console_csrf_field(console_req *r);
/* A time as shown: "2026-12-01 10:00:00" of an ISO string; "" for NULL. */
void console_time(console_req *r, const char *iso);
/* An order's items as "2 × cardamom-bun, 1 × country-loaf". */
void console_items(console_req *r, jv items);

#endif
