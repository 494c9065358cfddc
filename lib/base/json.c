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

void
json_buf_grow(json_buf *b, size_t n)
{
	if (b->cap > b->n && b->cap - b->n > n)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->n <= n)
		cap *= 2;
	b->p = bakery_xrealloc(b->p, cap);
	b->cap = cap;
}

/* n bytes of p (UTF-8) as a JSON string, as libjq writes one: '"' and
 * '\' escaped, the control bytes and DEL as \b \t \n \f \r or \u00XX,
 * the rest as it is. 1 when a byte was above 0x7f (for one who must
 * check that the text is UTF-8), else 0. */
static int
put_escaped(json_buf *b, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t from = 0;
	unsigned high = 0;
	json_buf_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		high |= c;
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		json_buf_put(b, (const char *)p + from, i - from);
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
			json_buf_put(b, esc, 6);
			continue;
		}
		json_buf_put(b, esc, 2);
	}
	json_buf_put(b, (const char *)p + from, n - from);
	json_buf_put(b, "\"", 1);
	return high > 0x7f;
}

/* The string s (borrowed): UTF-8, as every jv string is. */
static void
put_string(json_buf *b, jv s)
{
	(void)put_escaped(b, (const unsigned char *)jv_string_value(s),
	    (size_t)jv_string_length_bytes(jv_copy(s)));
}

void
json_buf_str(json_buf *b, const char *s)
{
	size_t n = strlen(s), at = b->n;
	/* ASCII, the usual, in one pass; else checked after. */
	if (!put_escaped(b, (const unsigned char *)s, n) ||
	    bakery_utf8_valid(s, n))
		return;
	/* Invalid UTF-8 written again, as libjq makes it a string (each bad
	 * byte U+FFFD): as jv_string(s) written would have been. */
	b->n = at;
	jv v = jv_string(s);
	put_string(b, v);
	jv_free(v);
}

void
json_buf_int(json_buf *b, int64_t i)
{
	char digits[24], *q = digits + sizeof digits;
	uint64_t u = i < 0 ? -(uint64_t)i : (uint64_t)i;
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	if (i < 0)
		*--q = '-';
	json_buf_put(b, q, (size_t)(digits + sizeof digits - q));
}

char *
json_buf_take(json_buf *b, size_t *len)
{
	json_buf_grow(b, 0);
	char *p = b->p;
	p[b->n] = '\0';
	if (len)
		*len = b->n;
	*b = (json_buf){ 0 };
	return p;
}

void
json_buf_free(json_buf *b)
{
	free(b->p);
	*b = (json_buf){ 0 };
}

/* The number v (borrowed). */
static void
put_number(json_buf *t, jv v)
{
	double d = jv_number_value(v);
	if (d == floor(d) && fabs(d) < 1e15) {
		if (d == 0 && signbit(d))
			json_buf_put(t, "-", 1);
		json_buf_int(t, (int64_t)d);
		return;
	}
	/* A fraction, a large number, NaN: libjq's own digits. */
	jv s = jv_dump_string(jv_copy(v), 0);
	json_buf_put(t, jv_string_value(s),
	    (size_t)jv_string_length_bytes(jv_copy(s)));
	jv_free(s);
}

/* v, borrowed. */
static void
put_value(json_buf *t, jv v)
{
	int first = 1;
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL:
		json_buf_put(t, "null", 4);
		break;
	case JV_KIND_TRUE:
		json_buf_put(t, "true", 4);
		break;
	case JV_KIND_FALSE:
		json_buf_put(t, "false", 5);
		break;
	case JV_KIND_NUMBER:
		put_number(t, v);
		break;
	case JV_KIND_STRING:
		put_string(t, v);
		break;
	case JV_KIND_ARRAY:
		json_buf_put(t, "[", 1);
		jv_array_foreach(v, i, el) {
			if (i > 0)
				json_buf_put(t, ",", 1);
			put_value(t, el);
			jv_free(el);
		}
		json_buf_put(t, "]", 1);
		break;
	case JV_KIND_OBJECT:
		json_buf_put(t, "{", 1);
		jv_object_foreach(v, key, el) {
			if (!first)
				json_buf_put(t, ",", 1);
			first = 0;
			put_string(t, key);
			json_buf_put(t, ":", 1);
			put_value(t, el);
			jv_free(key);
			jv_free(el);
		}
		json_buf_put(t, "}", 1);
		break;
	default: {
		/* Invalid: as libjq writes it. */
		jv s = jv_dump_string(jv_copy(v), 0);
		json_buf_put(t, jv_string_value(s),
		    (size_t)jv_string_length_bytes(jv_copy(s)));
		jv_free(s);
	}
	}
}

char *
json_dump(jv v, size_t *len)
{
	json_buf t = { 0 };
	put_value(&t, v);
	jv_free(v);
	return json_buf_take(&t, len);
}
