/*
 * envelope.c — CloudEvents 1.0 envelopes with libjq's jv.
 */
#define _GNU_SOURCE
#include "envelope.h"
#include "../base/json.h"
#include "../base/tracectx.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

const char *const envelope_types[] = {
	"OrderPlaced", "PaymentSucceeded", "OrderPaid", NULL,
};

int
envelope_type_known(const char *type)
{
	for (int i = 0; envelope_types[i]; i++)
		if (strcmp(envelope_types[i], type) == 0)
			return 1;
	return 0;
}

jv
envelope_new(const char *sandbox, const char *address, const char *type,
    jv data)
{
	return envelope_new_at(sandbox, address, type, data, bakery_now_ms());
}

jv
envelope_new_at(const char *sandbox, const char *address, const char *type,
    jv data, int64_t at_ms)
{
	char id[64], ts[32];
	bakery_random_id("evt_", id, sizeof id);
	bakery_format_time(at_ms, ts, sizeof ts);
	jv e = jv_object();
	e = jv_object_set(e, jv_string("specversion"), jv_string("1.0"));
	e = jv_object_set(e, jv_string("id"), jv_string(id));
	e = jv_object_set(e, jv_string("type"), jv_string(type));
	e = jv_object_set(e, jv_string("source"),
	    jv_string_fmt("bakery:%s/%s", sandbox, address));
	e = jv_object_set(e, jv_string("subject"), jv_string(address));
	e = jv_object_set(e, jv_string("time"), jv_string(ts));
	e = jv_object_set(e, jv_string("datacontenttype"),
	    jv_string("application/json"));
	e = jv_object_set(e, jv_string("sandbox"), jv_string(sandbox));
	trace_ctx t;
	tracectx_next(&t);
	e = envelope_set_trace(e, &t);
	e = jv_object_set(e, jv_string("data"), data);
	return e;
}

jv
envelope_set_trace(jv env, const trace_ctx *t)
{
	char tp[TRACEPARENT_SIZE];
	tracectx_format(t, tp);
	env = jv_object_set(env, jv_string("traceparent"), jv_string(tp));
	if (t->state[0])
		env = jv_object_set(env, jv_string("tracestate"),
		    jv_string(t->state));
	else
		env = jv_object_delete(env, jv_string("tracestate"));
	return env;
}

int
envelope_trace(jv env, trace_ctx *t)
{
	return tracectx_read(envelope_str(env, "traceparent"),
	    envelope_str(env, "tracestate"), t);
}

int
envelope_text_trace(const char *text, trace_ctx *t)
{
	/* Prepared once, on a connection of its own that holds no file. */
	static sqlite3 *db;
	static sqlite3_stmt *st;
	if (!st && (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE,
	    NULL) != SQLITE_OK || sqlite3_prepare_v3(db,
	    "SELECT iif(json_valid(?1), ?1 ->> '$.traceparent', NULL),"
	    " iif(json_valid(?1), ?1 ->> '$.tracestate', NULL)", -1,
	    SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)) {
		sqlite3_close(db);
		db = NULL;
		st = NULL;
		tracectx_new(t);
		return 0;
	}
	int has = 0;
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		has = tracectx_read((const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1), t);
	else
		tracectx_new(t);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return has;
}

int
envelope_trace_fields(jv obj, const char *from, const char *id,
    trace_ctx *t)
{
	const char *tp, *ts;
	int has_tp = envelope_opt_str(obj, "traceparent", &tp);
	int has_ts = envelope_opt_str(obj, "tracestate", &ts);
	if (has_tp == 0 && has_ts == 0)
		return 0;
	/* A value that is no string is as bad as a malformed one. */
	const char *parent = has_tp ? (tp ? tp : "(not a string)") : NULL;
	const char *state = has_ts ? (ts ? ts : "(not a string)") : NULL;
	return tracectx_from(parent, state, from, id, t) ? -1 : 1;
}

/* A traceparent or tracestate that is no valid one is dropped, never the
 * envelope: a new trace in its place. Both absent: left so, as an
 * envelope written before bakery carried them. A good one (the common
 * case) is left as it is: nothing copied. id is env's, for the warning. */
static jv
checked_trace(jv env, const char *id)
{
	trace_ctx t;
	if (envelope_trace_fields(env, "envelope", id, &t) >= 0)
		return env;
	return envelope_set_trace(env, &t);
}

const char *
envelope_string(jv v)
{
	if (jv_get_kind(v) != JV_KIND_STRING)
		return NULL;
	const char *s = jv_string_value(v);
	/* jv strings carry their length; C's ends at the first NUL. */
	if (strlen(s) != (size_t)jv_string_length_bytes(jv_copy(v)))
		return NULL;
	return s;
}

jv
envelope_field(jv v, const char *field)
{
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return jv_invalid();
	return jv_object_get(jv_copy(v), jv_string(field));
}

const char *
envelope_str(jv env, const char *field)
{
	jv v = envelope_field(env, field);
	/* The string stays alive inside env after this reference is freed. */
	const char *s = envelope_string(v);
	jv_free(v);
	return s;
}

int
envelope_opt_str(jv obj, const char *field, const char **out)
{
	jv v = envelope_field(obj, field);
	int kind = jv_get_kind(v);
	*out = envelope_string(v);
	jv_free(v);
	if (kind == JV_KIND_INVALID || kind == JV_KIND_NULL)
		return 0;
	return *out ? 1 : -1;
}

const char *
envelope_text(jv obj, const char *field, const char *otherwise)
{
	const char *s = envelope_str(obj, field);
	return s ? s : otherwise;
}

double
envelope_number(jv obj, const char *field, double otherwise)
{
	jv v = envelope_field(obj, field);
	double d = jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v)
						    : otherwise;
	jv_free(v);
	return d;
}

const char *
envelope_data_str(jv env, const char *field)
{
	jv data = envelope_field(env, "data");
	const char *s = envelope_str(data, field);
	jv_free(data);
	return s;
}

static int
want_string(jv env, const char *field, const char **out)
{
	*out = envelope_str(env, field);
	if (!*out || !**out)
		return bakery_fail(EX_DATAERR, "missing '%s'", field);
	return 0;
}

int
envelope_parse(const char *text, size_t len, jv *out)
{
	*out = jv_invalid();
	if (len > 1 << 20)
		return bakery_fail(EX_DATAERR, "envelope larger than 1 MiB");
	jv env;
	if (json_parse(text, len, &env))
		return EX_DATAERR;
	int rc = 0;
	const char *s, *id = NULL;
	if (jv_get_kind(env) != JV_KIND_OBJECT) {
		rc = bakery_fail(EX_DATAERR, "not a JSON object");
	} else if ((rc = want_string(env, "specversion", &s))) {
	} else if (strcmp(s, "1.0") != 0) {
		rc = bakery_fail(EX_DATAERR, "specversion '%s': want '1.0'", s);
	} else if ((rc = want_string(env, "id", &id))) {
	} else if (strlen(id) > 128) {
		rc = bakery_fail(EX_DATAERR, "id longer than 128 bytes");
	} else if ((rc = want_string(env, "source", &s))) {
	} else if ((rc = want_string(env, "type", &s))) {
	} else if (!envelope_type_known(s)) {
		rc = bakery_fail(EX_DATAERR, "unknown event type: '%s'", s);
	} else if ((rc = want_string(env, "sandbox", &s))) {
	} else if (!bakery_name_valid(s)) {
		rc = bakery_fail(EX_DATAERR, "bad sandbox name: '%s'", s);
	} else {
		jv data = jv_object_get(jv_copy(env), jv_string("data"));
		if (jv_get_kind(data) != JV_KIND_OBJECT)
			rc = bakery_fail(EX_DATAERR, "'data' is not an object");
		jv_free(data);
	}
	if (rc) {
		jv_free(env);
		return rc;
	}
	*out = checked_trace(env, id);
	return 0;
}

int64_t
envelope_time_ms(jv env)
{
	const char *s = envelope_str(env, "time");
	const char *end;
	int64_t secs = s ? bakery_parse_datetime(s, &end) : -1;
	if (secs < 0)
		return 0;
	int64_t ms = secs * 1000;
	if (*end == '.') {
		/* Fractions of a second: the first three digits are ms. */
		int scale = 100;
		for (end++; *end >= '0' && *end <= '9'; end++, scale /= 10)
			if (scale >= 1)
				ms += (*end - '0') * scale;
	}
	return *end == 'Z' ? ms : 0;
}

char *
envelope_dump(jv env)
{
	return json_dump(jv_copy(env), NULL);
}

int
envelope_each_line(FILE *in, envelope_line_fn fn, void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	int rc = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		size_t start = strspn(line, " \t");
		if ((size_t)n == start)
			continue;
		if ((rc = fn(arg, line + start, (size_t)n - start, lineno)))
			break;
	}
	free(line);
	return rc;
}
