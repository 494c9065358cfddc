/*
 * tracectx.c — W3C trace context: traceparent and tracestate read and
 * checked, new traces and children made, the current trace; and what an
 * envelope does with a bad one (dropped for a new trace, never refused).
 */
#define _GNU_SOURCE
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/core/envelope.h"
#include "../../lib/base/util.h"

#define TRACE "0af7651916cd43dd8448eb211c80319c"
#define TP "00-" TRACE "-b7ad6b7169203331-01"

/* Whether s is a traceparent tracectx_parse takes; a refused one leaves
 * the context untouched. */
static int
takes(const char *s)
{
	trace_ctx t;
	memset(&t, 'x', sizeof t);
	if (tracectx_parse(s, &t) == 0)
		return 1;
	for (size_t i = 0; i < sizeof t; i++)
		if (((char *)&t)[i] != 'x')
			return -1;
	return 0;
}

/* Whether s is a traceparent as bakery writes one: 55 bytes, lowercase
 * hex, neither id all zero. */
static int
shaped(const char *s)
{
	trace_ctx t;
	return s && tracectx_parse(s, &t) == 0;
}

static jv
parsed(const char *extra)
{
	char *text = NULL;
	if (asprintf(&text, "{\"specversion\":\"1.0\",\"id\":\"evt_1\","
	    "\"type\":\"OrderPlaced\",\"source\":\"bakery:default/order/ord_1\","
	    "\"sandbox\":\"default\"%s,\"data\":{}}", extra) < 0)
		abort();
	jv env = jv_invalid();
	int rc = envelope_parse(text, strlen(text), &env);
	free(text);
	if (rc)
		return jv_invalid();
	return env;
}

/* Whether envelope_text_trace reads text (an outbox row's envelope) as
 * envelope_trace reads it parsed: the same answer, the same context when
 * there is one; text libjq cannot read carries none. */
static int
text_trace_same(const char *text)
{
	trace_ctx want, got;
	jv env = jv_parse(text);
	int has = jv_get_kind(env) == JV_KIND_OBJECT
	    ? envelope_trace(env, &want) : 0;
	jv_free(env);
	int got_has = envelope_text_trace(text, &got);
	int same = has == got_has && (!has ||
	    (strcmp(want.trace_id, got.trace_id) == 0 &&
	    strcmp(want.span_id, got.span_id) == 0 &&
	    strcmp(want.flags, got.flags) == 0 &&
	    strcmp(want.state, got.state) == 0));
	char s[TRACEPARENT_SIZE];
	trace_ctx back;
	tracectx_format(&got, s);
	return same && tracectx_parse(s, &back) == 0;
}

static void
text_traces(void)
{
	static const char *const texts[] = {
		"{\"traceparent\":\"" TP "\",\"tracestate\":\"a=1,b=\\\"x\\\"\"}",
		"{\"id\":\"evt_1\",\"traceparent\":\"" TP "\",\"data\":{}}",
		"{\"data\":{\"traceparent\":\"" TP "\"}}",
		"{\"data\":{\"traceparent\":\"" TP "\"},\"traceparent\":"
		    "\"00-" TRACE "-00f067aa0ba902b7-00\"}",
		"{\"traceparent\":42}",
		"{\"traceparent\":\"00-bad\"}",
		"{\"traceparent\":\"" TP "\",\"tracestate\":\"A=1\"}",
		"{\"traceparent\":\"" TP "\",\"tracestate\":[]}",
		"{\"traceparent\":\"" TP "\",\"tracestate\":7}",
		"{}",
		"[1]",
		"{\"traceparent\":\"" TP "\"",
		"{\"traceparent\":\"" TP "\"} trailing",
		"",
	};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
		ok(text_trace_same(texts[i]), "envelope_text_trace reads %s "
		    "as envelope_trace reads it", texts[i]);
	trace_ctx t;
	ok(envelope_text_trace(texts[0], &t) && strcmp(t.state,
	    "a=1,b=\"x\"") == 0, "  an escaped tracestate, unescaped");
}

int
main(void)
{
	bakery_verbosity = -1; /* the warnings are what the CLI tests read */
	trace_ctx t;
	ok(tracectx_parse(TP, &t) == 0 && strcmp(t.trace_id, TRACE) == 0 &&
	    strcmp(t.span_id, "b7ad6b7169203331") == 0 &&
	    strcmp(t.flags, "01") == 0, "W3C's example traceparent is read");
	static const char *const bad[] = {
		"",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-011",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333--01",
		" 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",
		NULL,
	};
	for (int i = 0; bad[i]; i++)
		is_int(takes(bad[i]), 0, "refused, context untouched: '%s'",
		    bad[i]);
	is_int(takes(NULL), 0, "no traceparent is none");

	ok(tracectx_state_check("") == NULL, "an empty tracestate is valid");
	ok(tracectx_state_check("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7") ==
	    NULL, "W3C's example tracestate is valid");
	ok(tracectx_state_check(" a=1 , ,b@x=2\t") == NULL,
	    "blanks around members and an empty member are allowed");
	ok(tracectx_state_check("9a@sys=1") == NULL,
	    "a tenant id may start with a digit");
	static const char *const bad_state[] = {
		"A=1", "1a=1", "a", "a=", "a=1=2", "a=b,a=c", "a@=1",
		"a@1sys=1", "a@systemnamelonger=1", "a=x\x01", "a=\xc3\xa9",
		NULL,
	};
	for (int i = 0; bad_state[i]; i++)
		ok(tracectx_state_check(bad_state[i]) != NULL,
		    "tracestate '%s' refused (%s)", bad_state[i],
		    tracectx_state_check(bad_state[i]));
	char many[400] = "";
	for (int i = 0; i < 33; i++)
		sprintf(many + strlen(many), "%sk%d=v", i ? "," : "", i);
	ok(tracectx_state_check(many) &&
	    strstr(tracectx_state_check(many), "32"),
	    "33 list members refused");
	many[strlen(many) - strlen(",k32=v")] = '\0';
	ok(tracectx_state_check(many) == NULL, "32 list members taken");
	char big[600];
	memset(big, 'v', sizeof big);
	memcpy(big, "k=", 2);
	big[513] = '\0';
	ok(tracectx_state_check(big) &&
	    strstr(tracectx_state_check(big), "512"), "513 bytes refused");

	trace_ctx a, b, c;
	char s[TRACEPARENT_SIZE];
	tracectx_new(&a);
	tracectx_format(&a, s);
	ok(shaped(s) && strlen(s) == TRACEPARENT_LEN &&
	    strncmp(s, "00-", 3) == 0 && strcmp(s + 53, "01") == 0,
	    "a new trace is a valid traceparent, sampled (%s)", s);
	tracectx_new(&b);
	ok(strcmp(a.trace_id, b.trace_id) != 0 &&
	    strcmp(a.span_id, b.span_id) != 0, "two new traces differ");
	strcpy(a.state, "congo=t61rcWkgMzE");
	tracectx_child(&a, &c);
	ok(strcmp(c.trace_id, a.trace_id) == 0 &&
	    strcmp(c.span_id, a.span_id) != 0 &&
	    strcmp(c.state, a.state) == 0 && strcmp(c.flags, a.flags) == 0,
	    "a child keeps the trace, flags and tracestate, not the span id");

	/* From outside: a bad traceparent is a new trace, its tracestate
	 * dropped with it; a bad tracestate alone is dropped. */
	is_int(tracectx_from(TP, "a=1", "test", NULL, &t), 0, "good: kept");
	ok(strcmp(t.trace_id, TRACE) == 0 && strcmp(t.state, "a=1") == 0,
	    "its trace and tracestate");
	is_int(tracectx_from("ff-" TRACE "-b7ad6b7169203331-01", "a=1", "test", NULL, &t), 1,
	    "version ff: dropped");
	ok(strcmp(t.trace_id, TRACE) != 0 && t.state[0] == '\0',
	    "a new trace, no tracestate");
	is_int(tracectx_from(TP, big, "test", NULL, &t), 1,
	    "an oversized tracestate: dropped");
	ok(strcmp(t.trace_id, TRACE) == 0 && t.state[0] == '\0',
	    "the traceparent kept, no tracestate");

	/* The current trace: what envelope_new continues. */
	tracectx_from(TP, "a=1", "test", NULL, &t);
	tracectx_set(&t);
	jv e1 = envelope_new("default", "order/ord_1", "OrderPaid", jv_object());
	jv e2 = envelope_new("default", "order/ord_1", "OrderPaid", jv_object());
	const char *p1 = envelope_str(e1, "traceparent");
	const char *p2 = envelope_str(e2, "traceparent");
	ok(shaped(p1) && shaped(p2) && strncmp(p1, TP, 36) == 0 &&
	    strncmp(p2, TP, 36) == 0, "events recorded under a trace are in it");
	ok(strcmp(p1, p2) != 0 && strcmp(p1, TP) != 0,
	    "each with a span id of its own");
	is_str(envelope_str(e1, "tracestate"), "a=1", "and its tracestate");
	trace_ctx got;
	ok(tracectx_current(&got) && strcmp(got.trace_id, TRACE) == 0,
	    "tracectx_current gives the trace set");
	tracectx_set(NULL);
	ok(!tracectx_current(&got), "none once set back");
	jv e3 = envelope_new("default", "order/ord_1", "OrderPaid", jv_object());
	jv e4 = envelope_new("default", "order/ord_1", "OrderPaid", jv_object());
	ok(shaped(envelope_str(e3, "traceparent")) &&
	    strncmp(envelope_str(e3, "traceparent"),
	    envelope_str(e4, "traceparent"), 36) != 0 &&
	    envelope_str(e3, "tracestate") == NULL,
	    "without one (and no TRACEPARENT) each event starts a trace");
	ok(envelope_trace(e1, &got) && strcmp(got.trace_id, TRACE) == 0 &&
	    strcmp(got.state, "a=1") == 0, "envelope_trace reads it back");
	jv_free(e1);
	jv_free(e2);
	jv_free(e3);
	jv_free(e4);

	/* An envelope from outside: a bad trace context is never a refusal. */
	jv env = parsed(",\"traceparent\":\"" TP "\",\"tracestate\":\"a=1\"");
	is_str(envelope_str(env, "traceparent"), TP, "a good one is kept");
	is_str(envelope_str(env, "tracestate"), "a=1", "with its tracestate");
	jv_free(env);
	env = parsed("");
	ok(jv_is_valid(env) && envelope_str(env, "traceparent") == NULL,
	    "none is accepted, and left none");
	ok(!envelope_trace(env, &got) && tracectx_parse(
	    (tracectx_format(&got, s), s), &t) == 0,
	    "envelope_trace of none: a new trace");
	jv_free(env);
	static const char *const hostile[] = {
		",\"traceparent\":\"00-bad\"",
		",\"traceparent\":\"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"",
		",\"traceparent\":42",
		",\"traceparent\":\"" TP "\",\"tracestate\":\"A=1\"",
		",\"traceparent\":\"" TP "\",\"tracestate\":[]",
		",\"tracestate\":\"a=1\"",
		NULL,
	};
	for (int i = 0; hostile[i]; i++) {
		env = parsed(hostile[i]);
		const char *tp = envelope_str(env, "traceparent");
		ok(jv_is_valid(env) && shaped(tp) &&
		    envelope_str(env, "tracestate") == NULL,
		    "%s: accepted, a valid traceparent (%s), no tracestate",
		    hostile[i], tp ? tp : "none");
		jv_free(env);
	}
	env = parsed(",\"traceparent\":\"" TP "\",\"tracestate\":\"A=1\"");
	is_str(envelope_str(env, "traceparent"), TP,
	    "a bad tracestate alone leaves the traceparent");
	jv_free(env);
	text_traces();
	return done_testing();
}
