/*
 * lazy.h — libraries loaded on first use.
 *
 * libcurl (the real Stripe API), libnats (a nats:// queue) and libcrypto
 * (webhook signatures) cost a process 2 to 6 ms to map and relocate, more
 * than a command's own work, and most runs use none of them. So bakery's
 * programs do not link them: a file that calls one includes lazy_curl.h,
 * lazy_nats.h or lazy_crypto.h instead of the library's header. There each
 * function it calls is a pointer, filled by dlopen()/dlsym() the first time
 * lazy_load() is asked for the library; the call sites keep the library's
 * own names. A library that cannot be loaded is an EX_UNAVAILABLE error
 * naming it, at the point it is needed.
 */
#ifndef BAKERY_LAZY_H
#define BAKERY_LAZY_H

#include <stddef.h>

typedef struct lazy_lib {
	const char *soname;      /* as the linker would have recorded it */
	const char *const *names;
	void **const *ptrs;      /* where each name's address goes */
	size_t n;
	void *handle;            /* once loaded */
} lazy_lib;

/* 0 once every function of lib is resolved; else bakery_fail(). */
int lazy_load(lazy_lib *lib);

/* Helpers for the lazy_*.h headers: pointers declared with the type of
 * the library's own prototype, their names, their addresses. */
#define LAZY_EXTERN(f) extern __typeof__(&f) lazy_##f;
#define LAZY_DEFINE(f) __typeof__(&f) lazy_##f;
#define LAZY_NAME(f) #f,
#define LAZY_PTR(f) (void **)&lazy_##f,

/* A library's table, in its own lazy_NAME.c, from the list in its header:
 * the pointers, their names, and name(), which loads it once. */
#define LAZY_TABLE(name, soname, LIST)                                 \
	LIST(LAZY_DEFINE)                                              \
	static const char *const name##_names[] = { LIST(LAZY_NAME) }; \
	static void **const name##_ptrs[] = { LIST(LAZY_PTR) };        \
	static lazy_lib name##_lib = { soname, name##_names,           \
		name##_ptrs, sizeof name##_names / sizeof *name##_names, \
		NULL };                                                \
	int name(void) { return lazy_load(&name##_lib); }

#endif
