/*
 * lazy.c — dlopen() a library and resolve the functions bakery calls.
 */
#include "lazy.h"
#include "lazy_crypto.h"
#include "lazy_curl.h"
#include "lazy_nats.h"
#include "../base/util.h"

#include <dlfcn.h>

int
lazy_load(lazy_lib *lib)
{
	if (lib->handle)
		return 0;
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return bakery_fail(EX_UNAVAILABLE, "cannot load %s: %s",
		    lib->soname, dlerror());
	for (size_t i = 0; i < lib->n; i++) {
		void *f = dlsym(h, lib->names[i]);
		if (!f) {
			int rc = bakery_fail(EX_UNAVAILABLE, "cannot load %s: "
			    "no %s in it", lib->soname, lib->names[i]);
			dlclose(h);
			return rc;
		}
		*lib->ptrs[i] = f;
	}
	lib->handle = h;
	return 0;
}

/* One table per library, from the lists in its header. */
#define LAZY_TABLE(name, soname, LIST)                                 \
	LIST(LAZY_DEFINE)                                              \
	static const char *const name##_names[] = { LIST(LAZY_NAME) }; \
	static void **const name##_ptrs[] = { LIST(LAZY_PTR) };        \
	static lazy_lib name##_lib = { soname, name##_names,           \
		name##_ptrs, sizeof name##_names / sizeof *name##_names, \
		NULL };                                                \
	int name(void) { return lazy_load(&name##_lib); }

LAZY_TABLE(lazy_crypto, LAZY_CRYPTO_SONAME, LAZY_CRYPTO_FUNCTIONS)
LAZY_TABLE(lazy_curl, LAZY_CURL_SONAME, LAZY_CURL_FUNCTIONS)
LAZY_TABLE(lazy_nats, LAZY_NATS_SONAME, LAZY_NATS_FUNCTIONS)
