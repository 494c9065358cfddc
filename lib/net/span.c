/*
 * span.c — spans recorded, buffered and handed to the exporter (span.h).
 */
#include "span.h"
#include "otlp.h"
#include "../base/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPAN_BUFFER 512

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The ended spans' text, comma-separated, and how many. A flush takes
 * the text whole (json_buf_take) under the lock and leaves the buffer
 * empty: the next span_end starts a new one, so nothing ever writes into
 * a text being sent, and no pointer into the buffer outlives the lock. */
static json_buf pending;
static size_t buffered;
static pid_t owner;

int64_t
span_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
at_end(void)
{
	span_flush();
}

void
span_flush(void)
{
	static int again;
	pthread_mutex_lock(&lock);
	size_t n = buffered, len = 0;
	char *text = n ? json_buf_take(&pending, &len) : NULL;
	buffered = 0;
	pthread_mutex_unlock(&lock);
	/* A forked child leaves its parent's spans to the parent. */
	if (!text || getpid() != owner) {
		free(text);
		return;
	}
	otlp_send(text, len, n);
	free(text);
	/* The first send loaded libcurl, and what it loads registers its own
	 * end (OpenSSL's cleanup, at its first init), to run before ours:
	 * a send after it crashes. Ours again, now after theirs. */
	if (!again) {
		again = 1;
		atexit(at_end);
	}
}

int
span_on(void)
{
	static int read, on;
	if (read)
		return on;
	read = 1;
	on = otlp_on();
	if (on) {
		owner = getpid();
		tracectx_own(1);
		atexit(at_end);
	}
	return on;
}

/* s not recorded, holding nothing. */
static void
clear(span *s)
{
	s->on = 0;
	s->attrs = 0;
	s->text = s->links = s->status = (json_buf){ 0 };
}

/* A span id or a trace id: lowercase hex (tracectx.h). */
static void
put_id(json_buf *b, const char *id)
{
	json_buf_put(b, id, strlen(id));
}

void
span_begin(span *s, const char *name, enum span_kind kind,
    const trace_ctx *parent)
{
	clear(s);
	if (parent)
		tracectx_child(parent, &s->ctx);
	else
		tracectx_new(&s->ctx);
	if (!span_on())
		return;
	int sampled = otlp_sample(parent, s->ctx.trace_id);
	memcpy(s->ctx.flags, sampled ? "01" : "00", 3);
	if (!sampled)
		return;
	s->on = 1;
	s->start = span_now_ns();
	json_buf *b = &s->text;
	json_buf_lit(b, "{\"traceId\":\"");
	put_id(b, s->ctx.trace_id);
	json_buf_lit(b, "\",\"spanId\":\"");
	put_id(b, s->ctx.span_id);
	if (parent) {
		json_buf_lit(b, "\",\"parentSpanId\":\"");
		put_id(b, parent->span_id);
	}
	json_buf_lit(b, "\"");
	if (s->ctx.state[0]) {
		json_buf_lit(b, ",\"traceState\":");
		json_buf_str(b, s->ctx.state);
	}
	json_buf_lit(b, ",\"name\":");
	json_buf_str(b, name);
	json_buf_lit(b, ",\"kind\":");
	json_buf_int(b, kind);
}

void
span_continue(span *s, const char *name, enum span_kind kind,
    const trace_ctx *given, const trace_ctx *also)
{
	const trace_ctx *parent = given ? given : also;
	if (!span_on()) {
		clear(s);
		if (parent)
			tracectx_set(parent);
		return;
	}
	span_begin(s, name, kind, parent);
	if (given && also)
		span_link(s, also);
	tracectx_set(&s->ctx);
}

void
span_start(span *s, int64_t start_ns)
{
	if (s->on)
		s->start = start_ns;
}

/* An attribute's key and the start of its value of type (stringValue,
 * intValue): the list opened at the first. */
static void
attribute(span *s, const char *key, const char *type)
{
	json_buf *b = &s->text;
	if (s->attrs++)
		json_buf_lit(b, ",{\"key\":");
	else
		json_buf_lit(b, ",\"attributes\":[{\"key\":");
	json_buf_str(b, key);
	json_buf_lit(b, ",\"value\":{\"");
	json_buf_put(b, type, strlen(type));
	json_buf_lit(b, "\":");
}

void
span_str(span *s, const char *key, const char *value)
{
	if (!s->on || !value)
		return;
	attribute(s, key, "stringValue");
	json_buf_str(&s->text, value);
	json_buf_lit(&s->text, "}}");
}

void
span_int(span *s, const char *key, long long value)
{
	if (!s->on)
		return;
	/* OTLP/JSON writes a 64-bit integer as a string. */
	attribute(s, key, "intValue");
	json_buf_lit(&s->text, "\"");
	json_buf_int(&s->text, value);
	json_buf_lit(&s->text, "\"}}");
}

void
span_link(span *s, const trace_ctx *t)
{
	if (!s->on)
		return;
	json_buf *b = &s->links;
	if (b->n)
		json_buf_lit(b, ",");
	json_buf_lit(b, "{\"traceId\":\"");
	put_id(b, t->trace_id);
	json_buf_lit(b, "\",\"spanId\":\"");
	put_id(b, t->span_id);
	json_buf_lit(b, "\"}");
}

void
span_error(span *s, const char *message)
{
	if (!s->on)
		return;
	json_buf *b = &s->status;
	b->n = 0; /* the last one given */
	json_buf_lit(b, "{\"code\":2,\"message\":");
	json_buf_str(b, message ? message : "");
	json_buf_lit(b, "}");
}

/* Nanoseconds as OTLP/JSON writes a 64-bit integer: a string. */
static void
put_nanos(json_buf *b, int64_t ns)
{
	json_buf_lit(b, "\"");
	json_buf_int(b, ns);
	json_buf_lit(b, "\"");
}

void
span_end(span *s)
{
	if (!s->on)
		return;
	int64_t end = span_now_ns();
	pthread_mutex_lock(&lock);
	json_buf *b = &pending;
	if (buffered)
		json_buf_lit(b, ",");
	json_buf_put(b, s->text.p, s->text.n);
	if (s->attrs)
		json_buf_lit(b, "]");
	json_buf_lit(b, ",\"startTimeUnixNano\":");
	put_nanos(b, s->start);
	json_buf_lit(b, ",\"endTimeUnixNano\":");
	put_nanos(b, end);
	if (s->links.n) {
		json_buf_lit(b, ",\"links\":[");
		json_buf_put(b, s->links.p, s->links.n);
		json_buf_lit(b, "]");
	}
	if (s->status.n) {
		json_buf_lit(b, ",\"status\":");
		json_buf_put(b, s->status.p, s->status.n);
	}
	json_buf_lit(b, "}");
	int full = ++buffered >= SPAN_BUFFER;
	pthread_mutex_unlock(&lock);
	json_buf_free(&s->text);
	json_buf_free(&s->links);
	json_buf_free(&s->status);
	clear(s);
	if (full)
		span_flush();
}
