/*
 * json.h — a jv written as compact JSON text, fast.
 *
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

/* v (consumed) as one line of JSON text, NUL-terminated, in a buffer the
 * caller frees; *len (when len is not NULL) is its length. */
char *json_dump(jv v, size_t *len);

#endif
