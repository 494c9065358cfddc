/*
 * bakery-status — one screen for an operator: outboxes, alarms, the
 * queue's depth and the dead letters of every sandbox. Reads, never writes.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/envelope.h"
#include "../lib/ops/status.h"
#include "../lib/queue/queue.h"
#include "../lib/base/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-status [--json] [--prom FILE|-] [--max-age SECONDS]\n" \
	"--prom writes the Prometheus text to FILE (- for stdout), and then\n" \
	"prints no screen; --json still prints its line with --prom FILE\n" \
	"exits 1 when something needs attention: dead letters, a tripped\n" \
	"re-arm guard, an outbox row older than --max-age (default 300),\n" \
	"a flagged payment (a double payment, or one not the order's)\n"

enum { OPT_JSON = CLI_OPT_FIRST_FREE, OPT_PROM, OPT_MAX_AGE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "json", no_argument, NULL, OPT_JSON },
	{ "prom", required_argument, NULL, OPT_PROM },
	{ "max-age", required_argument, NULL, OPT_MAX_AGE },
	{ NULL, 0, NULL, 0 },
};

/* The screen's fields: 0 and "-" stand for what is missing. */
static double num(jv o, const char *f) { return envelope_number(o, f, 0); }
static const char *str(jv o, const char *f) { return envelope_text(o, f, "-"); }

static void
print_queue(jv status)
{
	jv queue = jv_object_get(jv_copy(status), jv_string("queue"));
	int first = 1;
	jv_object_foreach(queue, name, s) {
		printf("%-8s %-18s ready %.0f  leased %.0f  delayed %.0f\n",
		    first ? "queue" : "", jv_string_value(name),
		    num(s, "ready"), num(s, "leased"), num(s, "delayed"));
		first = 0;
		jv_free(name);
		jv_free(s);
	}
	jv_free(queue);
}

static void
print_sandbox(jv s)
{
	printf("\nsandbox %s: %.0f objects\n", str(s, "sandbox"),
	    num(s, "objects"));
	printf("  outbox        %.0f rows, oldest %.0f s\n",
	    num(s, "outbox_rows"), num(s, "oldest_age_s"));
	printf("  alarms        %.0f armed, %.0f re-arms today, "
	    "%.0f guards tripped, %.0f not in the index, %.0f overdue\n",
	    num(s, "alarms_armed"), num(s, "rearms_today"),
	    num(s, "guards_tripped"), num(s, "alarms_unfound"),
	    num(s, "alarms_overdue"));
	printf("  dead letters  %.0f, and %.0f in " QUEUE_DLQ " not yet "
	    "drained\n", num(s, "dead_letters"), num(s, "undrained"));
	printf("  payments      %.0f flagged\n", num(s, "flagged_payments"));
	jv faults = jv_object_get(jv_copy(s), jv_string("faults"));
	if (jv_get_kind(faults) != JV_KIND_ARRAY) {
		jv_free(faults);
		faults = jv_array();
	}
	printf("  faults        %s", jv_array_length(jv_copy(faults))
	    ? "" : "none set");
	jv_array_foreach(faults, i, f) {
		printf("%s%s (since %s)", i ? ", " : "", str(f, "name"),
		    str(f, "set_at"));
		jv_free(f);
	}
	printf("\n");
	jv_free(faults);
	jv busy = jv_object_get(jv_copy(s), jv_string("busy"));
	jv_array_foreach(busy, i, b) {
		printf("    %-40s outbox %.0f", str(b, "address"),
		    num(b, "outbox_rows"));
		if (num(b, "outbox_rows"))
			printf("  oldest %.0f s", num(b, "oldest_age_s"));
		printf("  alarm %s  re-arms %.0f%s\n", str(b, "alarm_at"),
		    num(b, "rearms_today"),
		    jv_equal(jv_object_get(jv_copy(b), jv_string("guard_tripped")),
			jv_true()) ? "  GUARD TRIPPED" : "");
		jv_free(b);
	}
	jv_free(busy);
	jv dead = jv_object_get(jv_copy(s), jv_string("dead"));
	jv_array_foreach(dead, i, d) {
		printf("    dead %s %s x%.0f: %s\n", str(d, "id"), str(d, "type"),
		    num(d, "times"), str(d, "error"));
		jv_free(d);
	}
	jv_free(dead);
	jv flagged = jv_object_get(jv_copy(s), jv_string("flagged"));
	jv_array_foreach(flagged, i, f) {
		printf("    flagged %s %s %s: %s\n", str(f, "order"),
		    str(f, "payment_intent"), str(f, "flag"), str(f, "reason"));
		jv_free(f);
	}
	jv_free(flagged);
}

/* A replicated home: its role, the lease, each standby's lag. */
static void
print_replica(jv status)
{
	jv r = jv_object_get(jv_copy(status), jv_string("replica"));
	if (jv_get_kind(r) != JV_KIND_OBJECT) {
		jv_free(r);
		return;
	}
	jv lease = jv_object_get(jv_copy(r), jv_string("lease"));
	printf("replica  %s %s, epoch %s; lease %s%s%s\n", str(r, "role"),
	    str(r, "host"), str(r, "epoch"),
	    jv_get_kind(lease) == JV_KIND_OBJECT ? str(lease, "host") : "free",
	    jv_get_kind(lease) == JV_KIND_OBJECT ? " until " : "",
	    jv_get_kind(lease) == JV_KIND_OBJECT ? str(lease, "until") : "");
	jv_free(lease);
	jv standbys = jv_object_get(r, jv_string("standbys"));
	jv_array_foreach(standbys, i, sb) {
		printf("  standby %s: %.0f records, %.1f s behind\n",
		    str(sb, "host"), envelope_number(sb, "records", 0),
		    envelope_number(sb, "seconds", 0));
		jv_free(sb);
	}
	jv_free(standbys);
}

static void
print_screen(jv status)
{
	printf("bakery status at %s, home %s\n", str(status, "time"),
	    str(status, "home"));
	const char *gateway = str(status, "gateway");
	printf("gateway  %s\n", strcmp(gateway, "-") ? gateway
	    : "none chosen (bakery-order gateway test|stripe)");
	printf("spans    %.0f not sent to OpenTelemetry\n",
	    envelope_number(status, "spans_dropped", 0));
	print_replica(status);
	print_queue(status);
	jv sandboxes = jv_object_get(jv_copy(status), jv_string("sandboxes"));
	jv_array_foreach(sandboxes, i, s) {
		print_sandbox(s);
		jv_free(s);
	}
	jv_free(sandboxes);
	jv attention = jv_object_get(jv_copy(status), jv_string("attention"));
	if (jv_array_length(jv_copy(attention)))
		printf("\nneeds attention:\n");
	else
		printf("\nnothing needs attention\n");
	jv_array_foreach(attention, i, a) {
		printf("  %s\n", jv_string_value(a));
		jv_free(a);
	}
	jv_free(attention);
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int json = CLI_GIVEN(&c, OPT_JSON) != NULL;
	const char *prom = CLI_GIVEN(&c, OPT_PROM);
	const char *age = CLI_GIVEN(&c, OPT_MAX_AGE);
	long long max_age = 300;
	if (age && bakery_parse_number(age, 0, 31622400, &max_age))
		cli_usage_error(&c, "bad max-age: '%s': want 0 to 31622400 "
		    "seconds", age);
	if (argc)
		cli_usage_error(&c, "unexpected operand: '%s'", argv[0]);
	if (prom && !*prom)
		cli_usage_error(&c, "--prom needs a file name");
	int prom_stdout = prom && strcmp(prom, "-") == 0;
	if (prom_stdout && json)
		cli_usage_error(&c, "--prom - and --json would share stdout");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	ctx.look_only = 1;
	jv status;
	/* Every sandbox, unless one was named with -s or BAKERY_SANDBOX. */
	int named = c.sandbox || (getenv("BAKERY_SANDBOX") &&
	    *getenv("BAKERY_SANDBOX"));
	int rc = status_collect(&ctx, named ? ctx.sandbox : NULL, max_age,
	    &status);
	if (rc)
		bakery_die_last(rc);
	if (prom) {
		char *text = status_prometheus(status);
		if (prom_stdout)
			fputs(text, stdout);
		else
			rc = status_write_file(prom, text);
		free(text);
		if (rc) {
			jv_free(status);
			ctx_free(&ctx);
			bakery_die_last(rc);
		}
	}
	int ok = jv_equal(jv_object_get(jv_copy(status), jv_string("ok")),
	    jv_true());
	/* stdout is data: the screen goes only where nothing else was
	 * asked for. */
	if (json)
		cli_print(status);
	else if (prom)
		jv_free(status);
	else {
		print_screen(status);
		jv_free(status);
	}
	cli_exit(&ctx, ok ? 0 : 1);
}
