/*
 * form.h — what a browser sends, read strictly: a form body or a query
 * string (application/x-www-form-urlencoded), and a cookie of the Cookie
 * header.
 *
 * Nothing is guessed. A '%' not followed by two hex digits, a NUL byte
 * (%00), a byte of invalid UTF-8 after decoding, a field without '=',
 * an empty name or more than FORM_MAX_FIELDS fields make the whole form
 * malformed (EX_DATAERR, answered 400): a field is never read half. '+'
 * is a space, as the encoding says. A field that must appear once and
 * appears twice is malformed too (form_one), so that two values can
 * never be read as one by one check and as the other by the next.
 * A form may hold a password: every copy form.c makes of it is wiped
 * (explicit_bzero) before it is freed, on failure as on form_free.
 */
#ifndef BAKERY_FORM_H
#define BAKERY_FORM_H

#include <stddef.h>

#define FORM_MAX_FIELDS 256

typedef struct form_field {
	char *name, *value;
} form_field;

typedef struct form {
	form_field *fields;
	size_t n;
} form;

/* 0, or EX_DATAERR with the reason in bakery_error(). *f is always
 * usable (empty on failure) and freed by form_free. */
int form_parse(const char *text, size_t len, form *f);
void form_free(form *f);

/* The field name when it appears once: 1 and *value; 0 when absent
 * (*value NULL); -1 when it appears more than once. */
int form_one(const form *f, const char *name, const char **value);
/* The n-th value of a field that may repeat (checkboxes), in the order
 * sent; NULL past the last. */
const char *form_nth(const form *f, const char *name, size_t n);

/* The value of cookie name in a Cookie header (RFC 6265: "a=b; c=d"):
 * 1 when it appears exactly once and fits in size; 0 when absent; -1
 * when it appears twice or is too long (a cookie planted beside ours by
 * a sibling host must not be taken for it). */
int form_cookie(const char *header, const char *name, char *out,
    size_t size);

#endif
