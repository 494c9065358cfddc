/*
 * json.h — JSON text read from outside, and a jv written as compact JSON
 * text, fast.
 *
 * Reading: json_parse is bakery's one reader of JSON that comes from
 * outside (a --batch line, an envelope on stdin or from the queue, a
 * redrive line, a webhook body, Stripe's answers). It takes what libjq
 * parses and refuses what libjq would take and quietly change: libjq
 * keeps the last of a repeated key ("cmd":"show","cmd":"place" is a
 * place), replaces each byte of invalid UTF-8 with U+FFFD, and keeps a
 * string's escaped NUL, where C's reading stops ("key":"k\u0000" read as
 * "k"). So no field is read as absent, or as another value, when the text
 * says otherwise.
 *
 * Writing:
 * The text is jv_dump_string(v, 0)'s, byte for byte, for what bakery
 * writes: libjq's own writer appends its output a byte at a time, which
 * made it the consumer's largest cost after SQLite (docs/costs.md, B7).
 * Objects keep libjq's key order; strings are escaped as libjq escapes
 * them; whole numbers below 10^15 are written here, and any other number
 * by libjq.
 *
 * A json_buf is the same writer's growing buffer, for text written piece
 * by piece (OTLP's spans, span.h): raw bytes, strings escaped as above,
 * integers. Its pointer moves as it grows: keep the buffer, never p.
 */
#ifndef BAKERY_JSON_H
#define BAKERY_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jv.h>

/* Parses len bytes of JSON text. EX_DATAERR, with the reason, for text
 * libjq refuses, and for a NUL byte, invalid UTF-8 (RFC 3629), a string
 * (key or value, at any depth) holding an escaped NUL, and an object
 * naming a key twice. On success *out owns the value, of any kind. */
int json_parse(const char *text, size_t len, jv *out);

/* v (consumed) as one line of JSON text, NUL-terminated, in a buffer the
 * caller frees; *len (when len is not NULL) is its length. */
char *json_dump(jv v, size_t *len);

/* { 0 } is an empty buffer; p is NUL-terminated only by json_buf_take. */
typedef struct json_buf {
	char *p;
	size_t n, cap;
} json_buf;

/* Room in b for n more bytes and a NUL after them. */
void json_buf_grow(json_buf *b, size_t n);
/* n bytes of s as they are (JSON text the caller wrote); inline, for the
 * many short pieces of a span. */
static inline void
json_buf_put(json_buf *b, const char *s, size_t n)
{
	if (b->cap - b->n <= n)
		json_buf_grow(b, n);
	memcpy(b->p + b->n, s, n);
	b->n += n;
}
/* A string literal's bytes, as json_buf_put. */
#define json_buf_lit(b, lit) json_buf_put((b), "" lit, sizeof(lit) - 1)
/* s as a JSON string, escaped as json_dump escapes; invalid UTF-8 made
 * valid as jv_string() makes it (U+FFFD for each bad byte). */
void json_buf_str(json_buf *b, const char *s);
/* i in decimal digits. */
void json_buf_int(json_buf *b, int64_t i);
/* The text, NUL-terminated, now the caller's to free (*len its length
 * when len is not NULL); b is left empty, ready for more. */
char *json_buf_take(json_buf *b, size_t *len);
/* Frees the text; b is left empty. */
void json_buf_free(json_buf *b);

#endif
