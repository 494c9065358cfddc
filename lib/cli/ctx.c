/*
 * ctx.c — the context: settings from flags and the environment, and the
 * handles opened on first use (the queue, the alarm index), closed here,
 * with the routes loaded into it.
 */
#include "../store/store.h"
#include "../net/external.h"
#include "../net/otlp.h"
#include "../net/span.h"
#include "../store/keep.h"
#include "../queue/queue.h"
#include "../replica/replica.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

static int
env_number(const char *s, int min, int max, int *out)
{
	long long v;
	if (bakery_parse_number(s, min, max, &v))
		return 0;
	*out = (int)v;
	return 1;
}

int
ctx_init(bakery_ctx *ctx, const char *home, const char *sandbox,
    const char *queue_url)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->home = home ? bakery_xstrdup(home) : home_default();
	otlp_home(ctx->home);
	/* Export's settings read now, a getenv when off: a bad one warned of
	 * once, and, when on, every event recorded from the start carries the
	 * span it is recorded in (tracectx_own). */
	(void)span_on();
	if (!sandbox)
		sandbox = getenv("BAKERY_SANDBOX");
	if (!sandbox || !*sandbox)
		sandbox = "default";
	ctx->sandbox = bakery_xstrdup(sandbox);
	if (!queue_url)
		queue_url = getenv("BAKERY_QUEUE");
	ctx->queue_url = queue_url && *queue_url ? bakery_xstrdup(queue_url)
						 : NULL;
	const char *sync = getenv("BAKERY_SYNC");
	ctx->sync_normal = sync && strcmp(sync, "normal") == 0;
	const char *busy = getenv("BAKERY_BUSY_TIMEOUT_MS");
	ctx->busy_timeout_ms = 30000;
	const char *delay = getenv("BAKERY_ALARM_DELAY");
	ctx->alarm_delay_s = 30;
	ctx->subscriber_timeout_s = EXTERNAL_DEFAULT_TIMEOUT_S;
	if (delay && *delay && !env_number(delay, 1, 86400, &ctx->alarm_delay_s))
		return bakery_fail(EX_CONFIG, "bad BAKERY_ALARM_DELAY: '%s': %s",
		    delay, "want 1 to 86400 seconds");
	if (busy && *busy && !env_number(busy, 1, 3600000, &ctx->busy_timeout_ms))
		return bakery_fail(EX_CONFIG, "bad BAKERY_BUSY_TIMEOUT_MS: '%s': %s",
		    busy, "want 1 to 3600000");
	const char *now = getenv("BAKERY_NOW");
	if (now && *now && !bakery_now_valid(now))
		return bakery_fail(EX_CONFIG, "bad BAKERY_NOW: '%s': %s", now,
		    "want seconds since the epoch or YYYY-MM-DDTHH:MM:SSZ");
	const char *log = getenv("BAKERY_LOG");
	if (log && *log && strcmp(log, "json") != 0)
		return bakery_fail(EX_CONFIG, "bad BAKERY_LOG: '%s': %s", log,
		    "want json, or nothing for plain lines");
	const char *boot = getenv("BAKERY_BOOT_ID");
	if (boot && *boot && !bakery_name_valid(boot))
		return bakery_fail(EX_CONFIG, "bad BAKERY_BOOT_ID: '%s': %s",
		    boot, "want [a-z0-9][a-z0-9_.-]{0,63} without '..'");
	if (!bakery_name_valid(ctx->sandbox))
		return bakery_fail(EX_USAGE, "bad sandbox name: '%s': %s",
		    ctx->sandbox,
		    "want [a-z0-9][a-z0-9_.-]{0,63} without '..'");
	if (sync && *sync && strcmp(sync, "normal") != 0 &&
	    strcmp(sync, "full") != 0)
		return bakery_fail(EX_CONFIG, "bad BAKERY_SYNC: '%s': %s", sync,
		    "want full or normal");
	int rc = home_init(ctx);
	/* The queue's URL is checked here, once, with the rest of the
	 * configuration: opening the queue takes it as checked. */
	if (!rc)
		rc = queue_url_check(ctx->queue_url);
	/* A replicated home's role: a primary's commits recorded from the
	 * first, a standby's writers refused (replica.h). */
	return rc ? rc : replica_attach(ctx);
}

void
ctx_free(bakery_ctx *ctx)
{
	(void)birth_group_end(ctx); /* each birth answered for its own */
	/* Before the queue, whose close waits for every NATS connection. */
	replica_detach(ctx);
	if (ctx->queue)
		queue_close(ctx->queue);
	if (ctx->alarms)
		sqlite3_close(ctx->alarms);
	keep_free(ctx->kept);
	if (ctx->routes && ctx->routes_free)
		ctx->routes_free(ctx->routes);
	free(ctx->home);
	free(ctx->sandbox);
	free(ctx->sandboxes);
	free(ctx->queue_url);
	memset(ctx, 0, sizeof *ctx);
}
