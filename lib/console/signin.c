/*
 * signin.c — the console's sign-in and sign-out (console.h, account.h,
 * session.h).
 */
#define _GNU_SOURCE
#include "console.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

/* The cookie of a session: sent back on every request under /console/
 * only, never to a script, never on a request another site starts, and
 * only over HTTPS when the console is served so. */
static void
set_cookie(console_req *r, const char *token)
{
	snprintf(r->cookie, sizeof r->cookie, "bakery_session=%s; Path=/console/;"
	    " HttpOnly; SameSite=Strict%s%s", token,
	    *token ? "" : "; Max-Age=0", r->https ? "; Secure" : "");
}

static void
form_page(console_req *r, int status, const char *warning)
{
	r->status = status;
	console_page_start(r, "Sign in");
	if (warning)
		html_f(&r->page, "<p class=\"warn\" role=\"alert\">%s</p>\n",
		    warning);
	html_raw(&r->page, "<form method=\"post\" action=\"/console/signin\">"
	    "<label>Name <input name=\"name\" autocomplete=\"username\" "
	    "required autofocus></label>"
	    "<label>Password <input name=\"password\" type=\"password\" "
	    "autocomplete=\"current-password\" required></label>"
	    "<p><button>Sign in</button></p></form>\n");
	console_page_end(r);
}

void
console_signin_page(console_req *r)
{
	form_page(r, 200, NULL);
}

void
console_signin(console_req *r)
{
	const char *name, *password;
	if (form_one(&r->body, "name", &name) != 1 ||
	    form_one(&r->body, "password", &password) != 1)
		return console_fail(r, 400, "Malformed form.");
	/* A new session at every sign-in: the one the browser came with,
	 * if any, ends. */
	r->signed_in = 0;
	int rc = r->token[0] ? session_end(r->ctx, r->token) : 0;
	if (rc)
		return console_fail_server(r, rc, "ending the session before a "
		    "sign-in");
	account who;
	int slowed;
	rc = account_signin(r->ctx, name, password, &who, &slowed);
	if (rc == EX_NOPERM)
		return form_page(r, 403, "Wrong name or password.");
	if (slowed) {
		r->retry_after = SIGNIN_WINDOW_S;
		return form_page(r, 429, "Too many failed sign-ins for this "
		    "name: wait a minute.");
	}
	char token[SESSION_TOKEN_HEX + 1];
	if (!rc)
		rc = session_new(r->ctx, &who, token, &r->s);
	if (rc)
		return console_fail_server(r, rc, "signing in");
	set_cookie(r, token);
	explicit_bzero(token, sizeof token);
	bakery_log(LOG_WARN, "signed_in", "account", who.name, "sandbox",
	    who.sandbox, "operator", who.operator ? "yes" : "no",
	    (char *)NULL);
	r->status = 303;
	snprintf(r->location, sizeof r->location, "/console/s/%s/",
	    who.sandbox);
}

void
console_signout(console_req *r)
{
	int rc = session_end(r->ctx, r->token);
	if (rc)
		return console_fail_server(r, rc, "signing out");
	bakery_log(LOG_WARN, "signed_out", "account", r->s.who.name,
	    (char *)NULL);
	set_cookie(r, "");
	r->signed_in = 0;
	r->status = 303;
	snprintf(r->location, sizeof r->location, "/console/signin");
}
