/*
 * action.c — the span of a console action (a POST), after OpenTelemetry's
 * HTTP server conventions: SERVER, named "POST ROUTE", with
 * http.request.method, http.route, http.response.status_code, and status
 * ERROR for a 5xx; the events the action records carry its context.
 */
#include "console.h"
#include "../orders/order.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The page's pattern as a route: "/console/" then its parts, the first
 * '*' "{sandbox}", the second "{order}". */
static void
route_of(const char *pattern, char *out, size_t size)
{
	static const char *const names[] = { "{sandbox}", "{order}" };
	size_t n = (size_t)snprintf(out, size, "/console/");
	int star = 0;
	for (const char *p = pattern; *p && n + 10 < size; p++) {
		if (*p == '*' && star < 2) {
			n += (size_t)snprintf(out + n, size - n, "%s",
			    names[star++]);
		} else {
			out[n++] = *p;
			out[n] = '\0';
		}
	}
}

void
console_action_begin(console_req *r, const char *pattern, int of_order)
{
	/* The request's own trace when its header gave one (the current
	 * trace then, its tracestate checked); an action on an order
	 * continues the order's (span_continue). */
	trace_ctx given, placed;
	int called = tracectx_parse(getenv("HTTP_TRACEPARENT"), &given) == 0 &&
	    tracectx_current(&given);
	int known = of_order && r->arg[1] && order_trace(r->ctx, NULL,
	    r->arg[1], &placed) == 0;
	if (!called && !known && !span_on())
		return;
	char route[160], name[168];
	route_of(pattern, route, sizeof route);
	snprintf(name, sizeof name, "%s %s", r->method, route);
	span_continue(&r->action, name, SPAN_SERVER, called ? &given : NULL,
	    known ? &placed : NULL);
	r->acting = 1;
	span_str(&r->action, "http.request.method", r->method);
	span_str(&r->action, "http.route", route);
	span_str(&r->action, "bakery.sandbox", r->sandbox);
	if (of_order)
		span_str(&r->action, "bakery.order", r->arg[1]);
}

void
console_action_end(console_req *r)
{
	if (!r->acting)
		return;
	r->acting = 0;
	span_int(&r->action, "http.response.status_code", r->status);
	if (r->status >= 500) {
		char code[16];
		snprintf(code, sizeof code, "%d", r->status);
		span_str(&r->action, "error.type", code);
		span_error(&r->action, NULL);
	}
	span_end(&r->action);
}
