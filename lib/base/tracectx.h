/*
 * tracectx.h — W3C Trace Context (level 1): the traceparent and
 * tracestate an event carries (bakery-envelope(5)), read, checked, made
 * and written; and the trace the events this thread records continue.
 *
 * Owns: what a valid traceparent and tracestate are; a new trace (ids
 * from the random pool of text.h); a child of a trace (the same trace id,
 * flags and tracestate, a span id of its own); the current trace.
 *
 * Promises: nothing from outside is taken unchecked. A traceparent must be
 * "00-" 32 lowercase hex digits (not all zero) "-" 16 (not all zero) "-" 2,
 * 55 bytes in all (version ff, or any other, is refused); a tracestate at
 * most 512 bytes of at most 32 list members "key=value", each key unique
 * and of W3C's grammar. A bad one is dropped with a warning
 * (trace_dropped), never refused: a new trace, or no tracestate, in its
 * place.
 *
 * The current trace: tracectx_set() for the applying of an event (its own)
 * or a command (the one it was given); when none is set, the process's:
 * TRACEPARENT and TRACESTATE of its environment (OpenTelemetry's
 * convention for processes), read once, or else a new trace for each
 * event. Spans are recorded and sent elsewhere (span.h, of the layer
 * above), which reads the same trace_ctx.
 */
#ifndef BAKERY_TRACECTX_H
#define BAKERY_TRACECTX_H

#define TRACEPARENT_LEN 55
#define TRACEPARENT_SIZE (TRACEPARENT_LEN + 1)
#define TRACESTATE_MAX 512
#define TRACESTATE_MEMBERS 32

typedef struct trace_ctx {
	char trace_id[33]; /* 32 lowercase hex digits */
	char span_id[17];  /* the parent-id of a traceparent: 16 of them */
	char flags[3];     /* 2 */
	char state[TRACESTATE_MAX + 1]; /* "" when none */
} trace_ctx;

/* 0 and *t's ids and flags (its state untouched) when s is a valid
 * traceparent, else -1 and *t untouched. s may be NULL (-1). */
int tracectx_parse(const char *s, trace_ctx *t);
/* NULL when s is a valid tracestate, else why not. */
const char *tracectx_state_check(const char *s);

/* A new trace: random trace id and span id, flags 01 (sampled: so the
 * subscribers' own tracing records what follows), no tracestate. */
void tracectx_new(trace_ctx *t);
/* The same trace, flags and tracestate as parent, a new span id. */
void tracectx_child(const trace_ctx *parent, trace_ctx *child);
/* The trace of an event's own traceparent and tracestate (either NULL
 * when absent): 1 and *t when the traceparent is valid (with the
 * tracestate when valid), else 0 and a new trace in *t. Nothing warned
 * of: bakery wrote them (tracectx_from is for what comes from outside). */
int tracectx_read(const char *traceparent, const char *tracestate,
    trace_ctx *t);
/* "00-TRACEID-SPANID-FLAGS" in out. */
void tracectx_format(const trace_ctx *t, char out[TRACEPARENT_SIZE]);

/* The trace given by a traceparent and a tracestate from outside (either
 * NULL when absent): theirs when valid; a bad traceparent dropped (and
 * the tracestate with it) for a new trace, a bad tracestate dropped, each
 * with a warning naming from (what gave it: "TRACEPARENT", "header", ...)
 * and, when not NULL, the event's id. Returns 1 when something was
 * dropped, else 0. */
int tracectx_from(const char *traceparent, const char *tracestate,
    const char *from, const char *id, trace_ctx *t);

/* The trace the events recorded next continue (see above); t NULL goes
 * back to the process's. tracectx_set copies *t. */
void tracectx_set(const trace_ctx *t);
/* A CGI request's trace set as the current one: its traceparent and
 * tracestate headers (HTTP_TRACEPARENT, HTTP_TRACESTATE) when given, bad
 * ones dropped as tracectx_from says, else a new trace. 1 when the
 * header gave it, else 0. */
int tracectx_set_request(void);
/* 1 and *t when a trace is set, else 0: for one who sets its own for a
 * while and then puts the one before back. */
int tracectx_current(trace_ctx *t);
/* A child of the current trace: the context of an event recorded now;
 * the current trace itself after tracectx_own(1), when the current one
 * is a span's that is exported (span.h), so that who processes the event
 * is that span's child. */
void tracectx_next(trace_ctx *t);
void tracectx_own(int on);
/* 1 and *t when the environment gave the process a trace (TRACEPARENT,
 * with TRACESTATE), read once; else 0. */
int tracectx_environment(trace_ctx *t);

#endif
