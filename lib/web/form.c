/*
 * form.c — form bodies, query strings and cookies, read strictly (form.h).
 */
#define _GNU_SOURCE
#include "form.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

/* A form may hold a password: what held it is wiped before it is freed. */
static void
wipe_free(char *s, size_t len)
{
	if (s)
		explicit_bzero(s, len);
	free(s);
}

/* Decodes len bytes of s into a new string; NULL when malformed. */
static char *
decode(const char *s, size_t len)
{
	size_t n;
	return bakery_percent_decode(s, len, 1, &n);
}

int
form_parse(const char *text, size_t len, form *f)
{
	*f = (form){ 0 };
	if (memchr(text, '\0', len))
		return bakery_fail(EX_DATAERR, "malformed form: a NUL byte");
	for (size_t at = 0; at < len;) {
		const char *field = text + at;
		const char *amp = memchr(field, '&', len - at);
		size_t flen = amp ? (size_t)(amp - field) : len - at;
		at += flen + 1;
		if (flen == 0)
			continue; /* "a=1&&b=2": an empty field is nothing */
		const char *eq = memchr(field, '=', flen);
		if (!eq || eq == field) {
			form_free(f);
			return bakery_fail(EX_DATAERR, "malformed form: a field "
			    "without a name or '='");
		}
		if (f->n == FORM_MAX_FIELDS) {
			form_free(f);
			return bakery_fail(EX_DATAERR, "malformed form: more than "
			    DIGITS_OF(FORM_MAX_FIELDS) " fields");
		}
		char *name = decode(field, (size_t)(eq - field));
		char *value = name ? decode(eq + 1, flen - (size_t)(eq - field)
		    - 1) : NULL;
		if (!name || !value) {
			wipe_free(name, name ? strlen(name) : 0);
			form_free(f);
			return bakery_fail(EX_DATAERR, "malformed form: a bad "
			    "%%-escape, a NUL byte or invalid UTF-8");
		}
		f->fields = bakery_xrealloc(f->fields,
		    (f->n + 1) * sizeof *f->fields);
		f->fields[f->n++] = (form_field){ name, value };
	}
	return 0;
}

void
form_free(form *f)
{
	for (size_t i = 0; i < f->n; i++) {
		wipe_free(f->fields[i].name, strlen(f->fields[i].name));
		wipe_free(f->fields[i].value, strlen(f->fields[i].value));
	}
	free(f->fields);
	*f = (form){ 0 };
}

int
form_one(const form *f, const char *name, const char **value)
{
	*value = NULL;
	int found = 0;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->fields[i].name, name) == 0) {
			if (found++)
				return *value = NULL, -1;
			*value = f->fields[i].value;
		}
	return found;
}

const char *
form_nth(const form *f, const char *name, size_t n)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->fields[i].name, name) == 0 && n-- == 0)
			return f->fields[i].value;
	return NULL;
}

int
form_cookie(const char *header, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name);
	int found = 0;
	for (const char *p = header; p && *p;) {
		p += strspn(p, " \t;");
		size_t len = strcspn(p, ";");
		if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
			size_t vlen = len - nlen - 1;
			while (vlen && (p[nlen + 1 + vlen - 1] == ' ' ||
			    p[nlen + 1 + vlen - 1] == '\t'))
				vlen--;
			if (found++ || vlen >= size)
				return -1;
			memcpy(out, p + nlen + 1, vlen);
			out[vlen] = '\0';
		}
		p += len;
	}
	return found;
}
