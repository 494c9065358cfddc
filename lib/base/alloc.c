/*
 * alloc.c — allocation that never returns NULL (alloc.h).
 */
#define _GNU_SOURCE
#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *
bakery_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *
bakery_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *
bakery_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		abort();
	return p;
}

char *
bakery_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p;
	if (vasprintf(&p, fmt, ap) < 0)
		abort();
	va_end(ap);
	return p;
}
