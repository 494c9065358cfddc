/*
 * lazy.c — dlopen() a library and resolve the functions bakery calls;
 * each library's table is in its own file (lazy_crypto.c, lazy_curl.c,
 * lazy_nats.c).
 */
#include "lazy.h"
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
