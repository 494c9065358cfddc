/*
 * text.h — text bakery is given and makes: its checks, names, numbers,
 * hex, and random ids.
 *
 * Owns: what valid UTF-8 is, what text a person gave may hold, what a
 * name is (of a sandbox, a kind, a key, an account, an id), the one
 * integer parser, and the random pool ids are drawn from.
 *
 * Promises: each check says yes or no and changes nothing. The random
 * pool belongs to the process that filled it, one a thread: a forked child
 * fills its own, so two processes never hand out the same id.
 */
#ifndef BAKERY_TEXT_H
#define BAKERY_TEXT_H

#include <stddef.h>

/* Whether len bytes of s are well-formed UTF-8 (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF). */
int bakery_utf8_valid(const char *s, size_t len);
/* Whether s is text a person gave: 1 to max bytes of valid UTF-8 with no
 * control character (C0, DEL) and no bidi control (U+202A-U+202E,
 * U+2066-U+2069: text shown after one would be reordered). */
int bakery_text_valid(const char *s, size_t max);

/* Whether s is a currency as Stripe writes one: three lowercase letters. */
int bakery_currency_valid(const char *s);

/* Whether s ends with end ("queue.db-wal", "-wal"). */
int bakery_ends_with(const char *s, const char *end);

/* The one integer parser: s is 1 or more ASCII digits and nothing else
 * (no sign, no blank, no suffix) naming a number from min to max. 0 with
 * *out set, else -1 (empty, malformed, overflowing or out of bounds) and
 * *out untouched; the caller says what it wanted. */
int bakery_parse_number(const char *s, long long min, long long max,
    long long *out);

/* Names of sandboxes, kinds, keys, accounts and ids:
 * [a-z0-9][a-z0-9_.-]{0,63}, no "..". The sizes that hold one: a name
 * and its NUL; an object's address, KIND/KEY, and its NUL. */
#define BAKERY_NAME_MAX 64
#define BAKERY_NAME_SIZE (BAKERY_NAME_MAX + 1)
#define BAKERY_ADDRESS_SIZE (2 * BAKERY_NAME_MAX + 2)
int bakery_name_valid(const char *name);
/* qsort's comparison of two char * by strcmp. */
int bakery_compare_strings(const void *a, const void *b);
/* n bytes of raw as 2n lowercase hex digits and a NUL in out. */
void bakery_hex(const unsigned char *raw, size_t n, char *out);
/* The value of a hex digit (either case), or -1. */
int bakery_hex_value(char c);
/* n bytes of s with each %XX decoded (and '+' as a blank when plus_blank:
 * a form's encoding), into a new string of *len bytes and a NUL; NULL
 * when a %XX is broken, the bytes hold a NUL, or they are not UTF-8
 * (what was decoded is wiped: a form may hold a password). */
char *bakery_percent_decode(const char *s, size_t n, int plus_blank,
    size_t *len);
/* n random bytes (at most 4096) from the pool ids are drawn from. */
void bakery_random_bytes(unsigned char *out, size_t n);
/* PREFIX + 24 random lowercase hex digits, e.g. "ord_9f2c...". */
void bakery_random_id(const char *prefix, char *buf, size_t size);

#endif
