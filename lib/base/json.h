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
 */
#ifndef BAKERY_JSON_H
#define BAKERY_JSON_H

#include <stddef.h>

#include <jv.h>

/* Parses len bytes of JSON text. EX_DATAERR, with the reason, for text
 * libjq refuses, and for a NUL byte, invalid UTF-8 (RFC 3629), a string
 * (key or value, at any depth) holding an escaped NUL, and an object
 * naming a key twice. On success *out owns the value, of any kind. */
int json_parse(const char *text, size_t len, jv *out);

/* v (consumed) as one line of JSON text, NUL-terminated, in a buffer the
 * caller frees; *len (when len is not NULL) is its length. */
char *json_dump(jv v, size_t *len);

#endif
