/*
 * lazy_nats.c — libnats's table, loaded on first use, and a connection
 * made as bakery makes every one (lazy_nats.h).
 */
#define _GNU_SOURCE
#include "lazy_nats.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

LAZY_TABLE(lazy_nats, LAZY_NATS_SONAME, LAZY_NATS_FUNCTIONS)

int
lazy_nats_connect(const char *url, natsConnectionHandler reconnected,
    void *closure, natsConnection **nc, int *servers)
{
	*nc = NULL;
	*servers = 0;
	int rc = lazy_nats();
	if (rc)
		return rc;
	/* nats://A:1,B:2 -> { "nats://A:1", "nats://B:2" } */
	const char *list = url + strlen("nats://");
	char *copy = bakery_xstrdup(list);
	size_t count = 1;
	for (const char *p = list; *p; p++)
		count += *p == ',';
	char **names = bakery_xmalloc(count * sizeof *names);
	size_t k = 0;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
	    tok = strtok_r(NULL, ",", &save))
		names[k++] = bakery_xasprintf("nats://%s", tok);
	free(copy);
	*servers = (int)k;
	if (k == 0) {
		free(names);
		return bakery_fail(EX_CONFIG, "bad queue URL: '%s': %s", url,
		    "want nats://HOST:PORT[,HOST:PORT...]");
	}
	natsOptions *opts = NULL;
	natsStatus s = natsOptions_Create(&opts);
	if (s == NATS_OK)
		s = natsOptions_SetServers(opts, (const char **)names, (int)k);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(opts, 2000);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(opts, 100);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(opts, 100);
	if (s == NATS_OK && reconnected)
		s = natsOptions_SetReconnectedCB(opts, reconnected, closure);
	if (s == NATS_OK)
		s = natsConnection_Connect(nc, opts);
	natsOptions_Destroy(opts);
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	free(names);
	if (s != NATS_OK) {
		*nc = NULL;
		return bakery_fail(EX_UNAVAILABLE, "nats: cannot connect to "
		    "'%s': %s", url, natsStatus_GetText(s));
	}
	return 0;
}
