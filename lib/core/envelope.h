/*
 * envelope.h — an event as it travels: one CloudEvents 1.0 JSON object in
 * structured form, one per line in pipes (JSON Lines). See bakery-envelope(5).
 *
 *   {"specversion":"1.0","id":"evt_…","type":"OrderPlaced",
 *    "source":"bakery:default/order/ord_…","subject":"order/ord_…",
 *    "time":"2026-11-30T10:00:00.000Z","datacontenttype":"application/json",
 *    "sandbox":"default","traceparent":"00-…-…-01","data":{…}}
 *
 * Owns: the shape of an envelope and the list of event types bakery knows.
 * Promises: envelope_parse() accepts only a whole, valid envelope of a
 * known type, read by json_parse (json.h: no repeated key, no NUL in any
 * string, valid UTF-8), and otherwise says exactly what is wrong
 * (EX_DATAERR). Its trace context (traceparent, tracestate: W3C Trace
 * Context, the CloudEvents distributed-tracing extension) is never a reason
 * to refuse it: a bad one is replaced by a new trace, with a warning
 * (tracectx.h).
 * Envelopes are jv values (libjq); every function here consumes nothing it
 * is given unless it says so.
 */
#ifndef BAKERY_ENVELOPE_H
#define BAKERY_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jv.h>

#include "../base/tracectx.h"

/* The event types bakery knows, NULL-terminated. */
extern const char *const envelope_types[];
int envelope_type_known(const char *type);

/* A new envelope with a fresh id and the current time, or the time at_ms.
 * Consume data. */
jv envelope_new(const char *sandbox, const char *address, const char *type,
    jv data);
jv envelope_new_at(const char *sandbox, const char *address,
    const char *type, jv data, int64_t at_ms);

/* env with the traceparent and tracestate (none when t has none) of t.
 * Consumes env. */
jv envelope_set_trace(jv env, const trace_ctx *t);
/* The event's trace: 1 and *t when it carries a valid traceparent (and
 * its tracestate when valid), else 0 and a new trace in *t. */
int envelope_trace(jv env, trace_ctx *t);
/* The same of an envelope's text, not parsed by json_parse: its two
 * fields read by SQLite's JSON functions, on a connection of its own (in
 * memory), for a tenth of what libjq's reading of the whole envelope
 * costs (the relay's send span, docs/costs.md). Text that is no valid
 * JSON (json_valid) carries none. */
int envelope_text_trace(const char *text, trace_ctx *t);

/* The trace context of obj's "traceparent" and "tracestate" fields (an
 * envelope's, a --batch line's): 0 when it has neither (*t untouched);
 * else *t as tracectx_from makes it, 1 when both were good, -1 when one
 * was dropped (malformed, or no string) with a warning naming from and
 * id (may be NULL). */
int envelope_trace_fields(jv obj, const char *from, const char *id,
    trace_ctx *t);

/* Parses and checks one envelope. On success *out owns the envelope. */
int envelope_parse(const char *text, size_t len, jv *out);

/* The envelope's time in ms since the epoch, 0 when absent or bad. */
int64_t envelope_time_ms(jv env);

/* One line, without the newline. Caller frees. */
char *envelope_dump(jv env);

/*
 * bakery's one set of JSON field getters, for any document (an envelope,
 * an object's state, a payment's result, bakery-status's and
 * bakery-trace's documents): every string bakery takes out of JSON goes
 * through them. A string that holds a NUL (an escaped \u0000) is no string
 * here, since C would cut it at the NUL ("ord_1\u0000x" read as "ord_1").
 * Nothing here asserts on a shape: any jv may be given.
 */
/* v's text when v is a string without NUL, else NULL; valid while v lives. */
const char *envelope_string(jv v);
/* v.field when v is an object, else jv_invalid(). Borrows v; caller frees
 * the result. */
jv envelope_field(jv v, const char *field);
/* A string field of env, or NULL; valid while env lives. */
const char *envelope_str(jv env, const char *field);
/* An optional string field: 0 when absent or null (*out NULL), 1 when a
 * string without NUL (*out its text, valid while obj lives), -1 when
 * anything else (*out NULL): present, yet no string bakery can use. */
int envelope_opt_str(jv obj, const char *field, const char **out);
/* obj.field's text, or otherwise when it is no string (as envelope_str);
 * for output that shows a placeholder. */
const char *envelope_text(jv obj, const char *field, const char *otherwise);
/* obj.field as a number, or otherwise when it is not a number. */
double envelope_number(jv obj, const char *field, double otherwise);
/* A string field of env's data, or NULL; valid while env lives. */
const char *envelope_data_str(jv env, const char *field);

/*
 * Reads lines from in and calls fn for each non-blank one with its number.
 * Stops early when fn returns non-zero and returns that; else returns 0.
 */
typedef int (*envelope_line_fn)(void *arg, const char *line, size_t len,
    long lineno);
int envelope_each_line(FILE *in, envelope_line_fn fn, void *arg);

#endif
