/*
 * gateway.c — the home's recorded choice of payment gateway.
 */
#define _GNU_SOURCE
#include "gateway.h"
#include "../store/file.h"
#include "../store/store.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *
gateway_name(gateway_kind g)
{
	return g == GATEWAY_TEST ? "test" : g == GATEWAY_STRIPE ? "stripe"
							      : NULL;
}

gateway_kind
gateway_parse(const char *name)
{
	return strcmp(name, "test") == 0 ? GATEWAY_TEST
	    : strcmp(name, "stripe") == 0 ? GATEWAY_STRIPE : GATEWAY_NONE;
}

int
gateway_read(const char *home, gateway_kind *g)
{
	*g = GATEWAY_NONE;
	char *path = bakery_xasprintf("%s/.gateway", home);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int rc = 0;
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			rc = bakery_fail(EX_CONFIG, "cannot read '%s': %s", path,
			    strerror(errno));
		free(path);
		return rc;
	}
	char buf[16];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int err = errno;
	close(fd);
	if (n < 0) {
		rc = bakery_fail(EX_CONFIG, "cannot read '%s': %s", path,
		    strerror(err));
	} else {
		buf[n] = '\0';
		if (n > 0 && buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		*g = gateway_parse(buf);
		if (*g == GATEWAY_NONE)
			rc = bakery_fail(EX_CONFIG, "bad gateway file '%s': %s",
			    path, "want one line, test or stripe");
	}
	free(path);
	return rc;
}

int
gateway_choose(bakery_ctx *ctx, gateway_kind g, gateway_kind *was)
{
	*was = GATEWAY_NONE;
	const char *home = ctx->home;
	int rc = home_make(ctx);
	if (rc || (rc = gateway_read(home, was)) || *was == g)
		return rc;
	if (*was == GATEWAY_STRIPE)
		return bakery_fail(EX_NOPERM, "home '%s' pays through Stripe: %s",
		    home, "it never goes back to the test gateway "
		    "(make a new home for trials)");
	char *path = bakery_xasprintf("%s/.gateway", home);
	char line[16];
	snprintf(line, sizeof line, "%s\n", gateway_name(g));
	/* The test gateway only ever creates the file: when another process
	 * recorded a choice meanwhile, that choice stands. Stripe replaces
	 * whatever was there. */
	int existed;
	rc = file_put(path, line, 0600, g == GATEWAY_STRIPE, &existed);
	if (!rc && existed) {
		gateway_kind now;
		rc = gateway_read(home, &now);
		if (!rc && now != g)
			rc = bakery_fail(EX_NOPERM, "home '%s' has just "
			    "chosen the gateway '%s'", home, gateway_name(now));
	}
	free(path);
	if (!rc)
		bakery_log(LOG_INFO, "gateway_chosen", "home", home, "gateway",
		    gateway_name(g), "was", *was ? gateway_name(*was) : "none",
		    (char *)NULL);
	return rc;
}
