/*
 * span.h — the spans a program records of its work, kept and sent to
 * OpenTelemetry at its end (otlp.h), after the messaging conventions.
 *
 * Owns: a span begun and ended (OTLP/JSON: ids as lowercase hex, times as
 * unix nanoseconds in strings, kinds as integers), its attributes, links
 * and error status, written as JSON text as they come (json.h's json_buf,
 * no jv); the buffer of ended spans, one text that each span_end appends
 * its span to, sent when 512 are waiting, at the end of the program
 * (cli_exit) and at the process's (atexit, in the process that recorded
 * them).
 *
 * Promises: when export is off (span_on() 0) nothing is recorded and
 * nothing allocated: callers test span_on() before they begin one. A
 * span's context (s->ctx) is a child of its parent (a new trace without
 * one), its flags the sampler's decision; while export is on, an event
 * recorded in a span carries the span's own context (tracectx_own), so
 * that who processes it is the span's child.
 */
#ifndef BAKERY_SPAN_H
#define BAKERY_SPAN_H

#include <stdint.h>

#include "../base/json.h"
#include "../base/tracectx.h"

enum span_kind {
	SPAN_INTERNAL = 1,
	SPAN_SERVER = 2,
	SPAN_CLIENT = 3,
	SPAN_PRODUCER = 4,
	SPAN_CONSUMER = 5,
};

/* { 0 } is a span not recorded, which every call below leaves alone. */
typedef struct span {
	int on;          /* recorded: export on and sampled */
	int64_t start;   /* unix nanoseconds */
	size_t attrs;    /* attributes written in text */
	json_buf text;   /* ids, name, kind, then the attributes */
	json_buf links;  /* the links, comma-separated */
	json_buf status; /* the status's object, when there is one */
	trace_ctx ctx;   /* its context: its trace, its own span id */
} span;

/* 1 when spans are exported (otlp_on); the first call reads the
 * settings. */
int span_on(void);
/* Unix time in nanoseconds, the real clock's (not BAKERY_NOW). */
int64_t span_now_ns(void);
/* Begins a span: named name, of kind, child of parent (NULL: a new
 * trace), started now. */
void span_begin(span *s, const char *name, enum span_kind kind,
    const trace_ctx *parent);
/* Begins s for a command that continues what it works on (an order's
 * trace, also): a child of given (the caller's own context: TRACEPARENT,
 * a batch line's, a request's header) with a link to also; without given,
 * a child of also; without either, a new trace. And makes the current
 * trace (tracectx_set) what the events recorded next continue: s's
 * context, or, export off, given, else also (neither: the current one
 * kept). also and given may be NULL. */
void span_continue(span *s, const char *name, enum span_kind kind,
    const trace_ctx *given, const trace_ctx *also);
/* Its start set to start_ns instead. */
void span_start(span *s, int64_t start_ns);
void span_str(span *s, const char *key, const char *value);
void span_int(span *s, const char *key, long long value);
/* A link to the span whose context is t. */
void span_link(span *s, const trace_ctx *t);
/* Status ERROR with message. */
void span_error(span *s, const char *message);
/* Ends it now, puts it in the buffer (and frees what it held): a span
 * ended is a span not recorded. */
void span_end(span *s);
/* Sends what the buffer holds, and empties it. */
void span_flush(void);

#endif
