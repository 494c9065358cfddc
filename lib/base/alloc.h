/*
 * alloc.h — allocation that never returns NULL.
 *
 * Owns: bakery's answer to memory exhausted where a caller could do
 * nothing useful with NULL.
 *
 * Promises: these abort() on out of memory instead of returning NULL; an
 * abort is an assertion, not an exit (util.h, "Errors"). A size of 0 is
 * allocated as 1, so the result is never NULL either.
 */
#ifndef BAKERY_ALLOC_H
#define BAKERY_ALLOC_H

#include <stddef.h>

/* malloc, realloc, strdup and asprintf that abort on out of memory
 * instead of returning NULL. */
void *bakery_xmalloc(size_t n);
void *bakery_xrealloc(void *p, size_t n);
char *bakery_xstrdup(const char *s);
char *bakery_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
