/*
 * json.c — JSON text read from outside, and a jv written as compact JSON
 * text (json.h).
 */
#include "json.h"
#include "util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* How many keys the text names, counted from its tokens: a string
 * followed by ':' is a key, and nothing else is. The text is one libjq
 * parsed, so its strings end. */
static long
text_keys(const char *s, size_t len)
{
	long keys = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '"')
			continue;
		for (i++; i < len && s[i] != '"'; i++)
			if (s[i] == '\\')
				i++;
		size_t j = i + 1;
		while (j < len && s[j] && strchr(" \t\r\n", s[j]))
			j++;
		keys += j < len && s[j] == ':';
	}
	return keys;
}

/* The keys of every object in v, at any depth (libjq keeps one of each
 * name); *nul set when a string, key or value, holds a NUL. */
static long
value_keys(jv v, int *nul)
{
	long keys = 0;
	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		*nul |= strlen(jv_string_value(v)) !=
		    (size_t)jv_string_length_bytes(jv_copy(v));
		break;
	case JV_KIND_ARRAY:
		jv_array_foreach(v, i, el) {
			keys += value_keys(el, nul);
			jv_free(el);
		}
		break;
	case JV_KIND_OBJECT:
		jv_object_foreach(v, key, el) {
			keys += 1 + value_keys(key, nul) + value_keys(el, nul);
			jv_free(key);
			jv_free(el);
		}
		break;
	default:
		break;
	}
	return keys;
}

int
json_parse(const char *text, size_t len, jv *out)
{
	*out = jv_invalid();
	if (len > INT_MAX)
		return bakery_fail(EX_DATAERR, "JSON text too large");
	if (memchr(text, '\0', len))
		return bakery_fail(EX_DATAERR, "malformed JSON: NUL byte");
	if (!bakery_utf8_valid(text, len))
		return bakery_fail(EX_DATAERR, "malformed JSON: invalid UTF-8");
	jv v = jv_parse_sized(text, (int)len);
	if (!jv_is_valid(v)) {
		jv msg = jv_invalid_get_msg(v);
		int rc = bakery_fail(EX_DATAERR, "malformed JSON: %s",
		    jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg)
						       : "not JSON");
		jv_free(msg);
		return rc;
	}
	int nul = 0;
	/* libjq kept one value of a key named twice: the text names more
	 * keys than the value holds. */
	long kept = value_keys(v, &nul);
	int rc = nul ? bakery_fail(EX_DATAERR, "a string holds a NUL "
	    "(\\u0000)")
	    : kept != text_keys(text, len) ? bakery_fail(EX_DATAERR,
		"a key named twice in one object") : 0;
	if (rc) {
		jv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

typedef struct text {
	char *p;
	size_t n, cap;
} text;

static void
put(text *t, const char *s, size_t n)
{
	if (t->cap - t->n <= n) {
		while (t->cap - t->n <= n)
			t->cap *= 2;
		t->p = bakery_xrealloc(t->p, t->cap);
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
}

/* The string (borrowed) as libjq writes it: '"' and '\' escaped, the
 * control bytes and DEL as \b \t \n \f \r or \u00XX, the rest (UTF-8,
 * valid in every jv string) as it is. */
static void
put_string(text *t, jv s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)jv_string_value(s);
	size_t n = (size_t)jv_string_length_bytes(jv_copy(s)), from = 0;
	put(t, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		put(t, (const char *)p + from, i - from);
		from = i + 1;
		char esc[6] = { '\\', 0 };
		switch (c) {
		case '"': case '\\': esc[1] = (char)c; break;
		case '\b': esc[1] = 'b'; break;
		case '\t': esc[1] = 't'; break;
		case '\n': esc[1] = 'n'; break;
		case '\f': esc[1] = 'f'; break;
		case '\r': esc[1] = 'r'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			put(t, esc, 6);
			continue;
		}
		put(t, esc, 2);
	}
	put(t, (const char *)p + from, n - from);
	put(t, "\"", 1);
}

/* The number v (borrowed). */
static void
put_number(text *t, jv v)
{
	double d = jv_number_value(v);
	if (d == floor(d) && fabs(d) < 1e15) {
		char digits[24], *q = digits + sizeof digits;
		int64_t i = (int64_t)d;
		uint64_t u = i < 0 ? (uint64_t)-i : (uint64_t)i;
		do
			*--q = (char)('0' + u % 10);
		while (u /= 10);
		if (i < 0 || (i == 0 && signbit(d)))
			*--q = '-';
		put(t, q, (size_t)(digits + sizeof digits - q));
		return;
	}
	/* A fraction, a large number, NaN: libjq's own digits. */
	jv s = jv_dump_string(jv_copy(v), 0);
	put(t, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
	jv_free(s);
}

/* v, borrowed. */
static void
put_value(text *t, jv v)
{
	int first = 1;
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL:
		put(t, "null", 4);
		break;
	case JV_KIND_TRUE:
		put(t, "true", 4);
		break;
	case JV_KIND_FALSE:
		put(t, "false", 5);
		break;
	case JV_KIND_NUMBER:
		put_number(t, v);
		break;
	case JV_KIND_STRING:
		put_string(t, v);
		break;
	case JV_KIND_ARRAY:
		put(t, "[", 1);
		jv_array_foreach(v, i, el) {
			if (i > 0)
				put(t, ",", 1);
			put_value(t, el);
			jv_free(el);
		}
		put(t, "]", 1);
		break;
	case JV_KIND_OBJECT:
		put(t, "{", 1);
		jv_object_foreach(v, key, el) {
			if (!first)
				put(t, ",", 1);
			first = 0;
			put_string(t, key);
			put(t, ":", 1);
			put_value(t, el);
			jv_free(key);
			jv_free(el);
		}
		put(t, "}", 1);
		break;
	default: {
		/* Invalid: as libjq writes it. */
		jv s = jv_dump_string(jv_copy(v), 0);
		put(t, jv_string_value(s),
		    (size_t)jv_string_length_bytes(jv_copy(s)));
		jv_free(s);
	}
	}
}

char *
json_dump(jv v, size_t *len)
{
	text t = { bakery_xmalloc(256), 0, 256 };
	put_value(&t, v);
	jv_free(v);
	t.p[t.n] = '\0';
	if (len)
		*len = t.n;
	return t.p;
}
