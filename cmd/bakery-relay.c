/*
 * bakery-relay — send objects' outboxes to the queue; fire due alarms.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/loop.h"
#include "../lib/core/alarm.h"
#include "../lib/core/envelope.h"
#include "../lib/store/keep.h"
#include "../lib/core/object.h"
#include "../lib/core/progress.h"
#include "../lib/flow/relay.h"
#include "../lib/base/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-relay ADDRESS...\n" \
	"       bakery-relay --all\n" \
	"       bakery-relay --due\n" \
	"       bakery-relay --watch\n" \
	"       ... | bakery-relay          (addresses on stdin)\n"

enum { OPT_ALL = CLI_OPT_FIRST_FREE, OPT_DUE, OPT_WATCH };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "all", no_argument, NULL, OPT_ALL },
	{ "due", no_argument, NULL, OPT_DUE },
	{ "watch", no_argument, NULL, OPT_WATCH },
	{ NULL, 0, NULL, 0 },
};

struct relay {
	bakery_ctx *ctx;
	int rc;
};

static void
relay_one(struct relay *r, const char *address)
{
	int rc = relay_object(r->ctx, NULL, address, cli_report, NULL);
	if (rc) {
		if (rc != EX_UNAVAILABLE) /* a refusal was logged as relay_error */
			bakery_print_error("%s", bakery_error());
		if (!r->rc || rc == EX_USAGE)
			r->rc = rc;
	}
}

static int
relay_line(void *arg, const char *line, size_t len, long lineno)
{
	(void)len;
	(void)lineno;
	relay_one(arg, line);
	return 0;
}

/* Fires the alarms due at now. Returns a failure of the run itself; else
 * *unfired is the status of the first object that could not be fired,
 * its message in bakery_error(), or 0 when every due alarm fired. */
static int
due(bakery_ctx *ctx, int64_t now, int *unfired)
{
	relay_tally t;
	int rc = relay_due(ctx, now, cli_report, NULL, &t);
	char n[24], f[24];
	snprintf(n, sizeof n, "%d", t.objects);
	snprintf(f, sizeof f, "%d", t.failed);
	bakery_log(t.failed ? LOG_WARN : LOG_INFO, "alarm_run", "objects", n,
	    "failed", f, (char *)NULL);
	*unfired = 0;
	if (rc || !t.failed)
		return rc;
	*unfired = bakery_fail(t.status, "%d of %d due alarms could not be "
	    "fired, each left for the next run; the first: sandbox %s: %s: %s",
	    t.failed, t.objects, t.first.sandbox, t.first.address, t.error);
	return 0;
}

/* Fires due alarms, then sleeps until the next one; a new alarm is at
 * least the alarm delay away, so the sleep never exceeds it. An object
 * that could not be fired is tried again an alarm delay later, and stops
 * nothing: only a failure of the run itself does. */
static int
watch(bakery_ctx *ctx)
{
	loop_catch_signals();
	/* An object whose alarm fires again is found open (keep.h). */
	ctx->kept = keep_new(KEEP_MAX, KEEP_IDLE_MS);
	while (!loop_stopping()) {
		/* A newer bakery may have written in the home meanwhile. */
		int rc = home_recheck(ctx);
		if (rc)
			return rc;
		int unfired;
		int64_t run = bakery_now_ms();
		rc = due(ctx, run, &unfired);
		if (rc && rc != EX_UNAVAILABLE && rc != EX_TEMPFAIL)
			return rc;
		/* Every entry due at run was visited: the next to look at
		 * fires later, or is one that failed (a delay from now). */
		int64_t next, now = bakery_now_ms();
		int64_t wait = (int64_t)ctx->alarm_delay_s * 1000;
		if (!alarm_index_next(ctx, run, &next) && next && next - now < wait)
			wait = next > now ? next - now : 0;
		if (wait < 100)
			wait = 100; /* at most ten runs a second */
		keep_idle(ctx->kept);
		loop_sleep_ms(wait);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int mode = 0;
	for (int opt = OPT_ALL; opt <= OPT_WATCH; opt++) {
		if (CLI_GIVEN(&c, opt) && mode)
			cli_usage_error(&c, "--all, --due and --watch "
			    "exclude each other");
		if (CLI_GIVEN(&c, opt))
			mode = opt;
	}
	if (mode && argc)
		cli_usage_error(&c, "--all, --due and --watch take no addresses");
	bakery_ctx ctx;
	c.home_writes = 1;
	cli_context(&c, &ctx);
	struct relay r = { &ctx, 0 };
	if (mode == OPT_DUE) {
		int unfired;
		r.rc = due(&ctx, bakery_now_ms(), &unfired);
		r.rc = r.rc ? r.rc : unfired;
	} else if (mode == OPT_WATCH) {
		r.rc = watch(&ctx);
	} else if (mode == OPT_ALL) {
		jv list;
		if ((r.rc = object_list(&ctx, NULL, &list)))
			bakery_die_last(r.rc);
		bakery_progress progress;
		progress_start(&progress, "relay",
		    jv_array_length(jv_copy(list)));
		jv_array_foreach(list, i, a) {
			relay_one(&r, jv_string_value(a));
			progress_step(&progress);
			jv_free(a);
		}
		progress_end(&progress);
		jv_free(list);
	} else if (argc) {
		for (int i = 0; i < argc; i++)
			relay_one(&r, argv[i]);
	} else if (cli_read_stdin(argc)) {
		envelope_each_line(stdin, relay_line, &r);
	} else {
		cli_usage_error(&c, "no address: give ADDRESS..., --all, --due, "
		    "--watch, or addresses on stdin");
	}
	if (r.rc && (mode == OPT_DUE || mode == OPT_WATCH) &&
	    r.rc != EX_UNAVAILABLE)
		bakery_print_error("%s", bakery_error());
	cli_exit(&ctx, r.rc);
}
