/*
 * bakery-trace — where one event has been: recorded, relayed, queued,
 * applied by each subscriber, dead-lettered, redriven; or every event of
 * one order. Reads, never writes.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/envelope.h"
#include "../lib/flow/trace.h"
#include "../lib/base/util.h"

#include <string.h>

#define USAGE \
	"usage: bakery-trace [--json] EVENT_ID\n" \
	"       bakery-trace [--json] ORDER_ID   every event of the order (ord_...)\n"

enum { OPT_JSON = CLI_OPT_FIRST_FREE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

/* The screen's fields: "" and 0 stand for what is missing. */
static const char *text(jv o, const char *f) { return envelope_text(o, f, ""); }
static double number(jv o, const char *f) { return envelope_number(o, f, 0); }

static void
print_step(jv s)
{
	const char *what = text(s, "step");
	printf("%-24s  %-13s  %s", text(s, "at"), what, text(s, "where"));
	jv d = jv_object_get(jv_copy(s), jv_string("detail"));
	if (strcmp(what, "queued") == 0)
		printf(": %.0f deliveries%s", number(d, "deliveries"),
		    jv_equal(jv_object_get(jv_copy(d), jv_string("leased")),
			jv_true()) ? ", leased" : "");
	else if (strcmp(what, "in outbox") == 0)
		printf(": %.0f attempts", number(d, "attempts"));
	else if (strcmp(what, "dead-lettered") == 0)
		printf(": %.0f deliveries, %.0f times", number(d, "attempts"),
		    number(d, "times"));
	else if (strcmp(what, "redriven") == 0)
		printf(": %.0f times", number(d, "times"));
	const char *err = strcmp(what, "dead-lettered") == 0
	    ? text(d, "error") : text(d, "last_error");
	if (*err)
		printf(", last error: %s", err);
	putchar('\n');
	jv_free(d);
}

/* One event's trace as a block of lines. Consumes t. */
static void
print_trace(jv t)
{
	printf("event %s %s in sandbox %s\n", text(t, "id"),
	    *text(t, "type") ? text(t, "type") : "(type unknown)",
	    text(t, "sandbox"));
	printf("trace %s\n", *text(t, "trace_id") ? text(t, "trace_id")
						  : "(none)");
	jv steps = jv_object_get(jv_copy(t), jv_string("timeline"));
	jv_array_foreach(steps, i, s) {
		print_step(s);
		jv_free(s);
	}
	jv_free(steps);
	jv_free(t);
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int json = CLI_GIVEN(&c, OPT_JSON) != NULL;
	if (argc != 1)
		cli_usage_error(&c, argc ? "too many operands" : "missing EVENT_ID");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	ctx.look_only = 1;
	/* An order id (bakery_id "ord_"): every event of the order, one
	 * trace each, JSON Lines with --json. */
	int order = strncmp(argv[0], "ord_", 4) == 0;
	jv traces;
	int rc = order ? trace_order(&ctx, NULL, argv[0], &traces)
		       : trace_event(&ctx, NULL, argv[0], &traces);
	if (rc)
		bakery_die_last(rc);
	if (!order)
		traces = jv_array_append(jv_array(), traces);
	jv_array_foreach(traces, i, t) {
		if (json)
			cli_print(t);
		else {
			if (i > 0)
				putchar('\n');
			print_trace(t);
		}
	}
	jv_free(traces);
	cli_exit(&ctx, 0);
}
