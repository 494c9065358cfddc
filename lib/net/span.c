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
static jv buffer;
static size_t buffered;
static pid_t owner;

int64_t
span_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static jv
nanos(int64_t ns)
{
	return jv_string_fmt("%lld", (long long)ns);
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
	jv spans = buffered ? buffer : jv_invalid();
	buffered = 0;
	pthread_mutex_unlock(&lock);
	/* A forked child leaves its parent's spans to the parent. */
	if (!jv_is_valid(spans) || getpid() != owner) {
		jv_free(spans);
		return;
	}
	otlp_send(spans);
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

void
span_begin(span *s, const char *name, enum span_kind kind,
    const trace_ctx *parent)
{
	s->json = jv_invalid();
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
	jv j = jv_object();
	j = jv_object_set(j, jv_string("traceId"), jv_string(s->ctx.trace_id));
	j = jv_object_set(j, jv_string("spanId"), jv_string(s->ctx.span_id));
	if (parent)
		j = jv_object_set(j, jv_string("parentSpanId"),
		    jv_string(parent->span_id));
	if (s->ctx.state[0])
		j = jv_object_set(j, jv_string("traceState"),
		    jv_string(s->ctx.state));
	j = jv_object_set(j, jv_string("name"), jv_string(name));
	j = jv_object_set(j, jv_string("kind"), jv_number(kind));
	j = jv_object_set(j, jv_string("startTimeUnixNano"),
	    nanos(span_now_ns()));
	s->json = j;
}

void
span_continue(span *s, const char *name, enum span_kind kind,
    const trace_ctx *given, const trace_ctx *also)
{
	const trace_ctx *parent = given ? given : also;
	if (!span_on()) {
		s->json = jv_invalid();
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
	if (jv_is_valid(s->json))
		s->json = jv_object_set(s->json,
		    jv_string("startTimeUnixNano"), nanos(start_ns));
}

static void
add(span *s, const char *list, jv item)
{
	jv l = jv_object_get(jv_copy(s->json), jv_string(list));
	if (!jv_is_valid(l))
		l = jv_array();
	s->json = jv_object_set(s->json, jv_string(list),
	    jv_array_append(l, item));
}

static void
attribute(span *s, const char *key, jv value)
{
	jv a = jv_object_set(jv_object(), jv_string("key"), jv_string(key));
	add(s, "attributes", jv_object_set(a, jv_string("value"), value));
}

void
span_str(span *s, const char *key, const char *value)
{
	if (jv_is_valid(s->json) && value)
		attribute(s, key, jv_object_set(jv_object(),
		    jv_string("stringValue"), jv_string(value)));
}

void
span_int(span *s, const char *key, long long value)
{
	if (jv_is_valid(s->json))
		attribute(s, key, jv_object_set(jv_object(),
		    jv_string("intValue"), jv_string_fmt("%lld", value)));
}

void
span_link(span *s, const trace_ctx *t)
{
	if (!jv_is_valid(s->json))
		return;
	jv l = jv_object_set(jv_object(), jv_string("traceId"),
	    jv_string(t->trace_id));
	l = jv_object_set(l, jv_string("spanId"), jv_string(t->span_id));
	add(s, "links", l);
}

void
span_error(span *s, const char *message)
{
	if (!jv_is_valid(s->json))
		return;
	jv st = jv_object_set(jv_object(), jv_string("code"), jv_number(2));
	st = jv_object_set(st, jv_string("message"),
	    jv_string(message ? message : ""));
	s->json = jv_object_set(s->json, jv_string("status"), st);
}

void
span_end(span *s)
{
	if (!jv_is_valid(s->json))
		return;
	jv j = jv_object_set(s->json, jv_string("endTimeUnixNano"),
	    nanos(span_now_ns()));
	s->json = jv_invalid();
	pthread_mutex_lock(&lock);
	if (!buffered)
		buffer = jv_array();
	buffer = jv_array_append(buffer, j);
	int full = ++buffered >= SPAN_BUFFER;
	pthread_mutex_unlock(&lock);
	if (full)
		span_flush();
}
