/*
 * bakery-doctor — checks a home as an operator would before trusting it:
 * one line per check, exit 0 only when every check passes. Reads, never
 * writes (lib/ops/doctor.h).
 */
#include "../lib/cli/cli.h"
#include "../lib/ops/doctor.h"
#include "../lib/base/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-doctor [--json] [--user NAME] [--min-free SIZE]\n" \
	"                     [--routes-file FILE] [--stripe-key-file FILE]\n" \
	"                     [--max-lag SECONDS]\n" \
	"one line per check: ok, warn or FAIL; exits 1 when a check fails\n" \
	"  --json                 a JSON line per check\n" \
	"  --user NAME            who must write the home (default its owner)\n" \
	"  --min-free SIZE        free space below which disk fails (100M;\n" \
	"                         K, M, G or T)\n" \
	"  --routes-file FILE     the routes to check (default: as consume)\n" \
	"  --stripe-key-file FILE the Stripe key file (else BAKERY_STRIPE_KEY)\n" \
	"  --max-lag SECONDS      a replicated home's standby further behind\n" \
	"                         than this fails replica (60)\n"

enum { OPT_JSON = CLI_OPT_FIRST_FREE, OPT_USER, OPT_MIN_FREE, OPT_ROUTES,
	OPT_KEY, OPT_MAX_LAG };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "json", no_argument, NULL, OPT_JSON },
	{ "user", required_argument, NULL, OPT_USER },
	{ "min-free", required_argument, NULL, OPT_MIN_FREE },
	{ "routes-file", required_argument, NULL, OPT_ROUTES },
	{ "stripe-key-file", required_argument, NULL, OPT_KEY },
	{ "max-lag", required_argument, NULL, OPT_MAX_LAG },
	{ NULL, 0, NULL, 0 },
};

/* "100M" and the like, in bytes; 0 when malformed. */
static uint64_t
parse_size(const char *s)
{
	char digits[24];
	size_t k = strspn(s, "0123456789");
	if (k == 0 || k >= sizeof digits)
		return 0;
	memcpy(digits, s, k);
	digits[k] = '\0';
	const char *unit = s + k;
	int shift = !*unit ? 0 : strchr("kK", *unit) ? 10 : strchr("mM", *unit)
	    ? 20 : strchr("gG", *unit) ? 30 : strchr("tT", *unit) ? 40 : -1;
	long long n;
	if (shift < 0 || (*unit && unit[1]) ||
	    bakery_parse_number(digits, 0, LLONG_MAX >> shift, &n))
		return 0;
	return (uint64_t)n << shift;
}

static void
print_plain(void *arg, enum doctor_status s, const char *check,
    const char *detail)
{
	(void)arg;
	printf("%-4s  %s: %s\n", doctor_status_name(s), check, detail);
}

static void
print_json(void *arg, enum doctor_status s, const char *check,
    const char *detail)
{
	(void)arg;
	jv line = jv_object();
	line = jv_object_set(line, jv_string("check"), jv_string(check));
	line = jv_object_set(line, jv_string("status"),
	    jv_string(doctor_status_name(s)));
	line = jv_object_set(line, jv_string("detail"), jv_string(detail));
	cli_print(line);
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	doctor_options o = { .min_free = 100 << 20, .max_lag_s = 60 };
	int json = CLI_GIVEN(&c, OPT_JSON) != NULL;
	o.user = CLI_GIVEN(&c, OPT_USER);
	o.routes_file = CLI_GIVEN(&c, OPT_ROUTES);
	o.stripe_key_file = CLI_GIVEN(&c, OPT_KEY);
	const char *size = CLI_GIVEN(&c, OPT_MIN_FREE);
	if (size && !(o.min_free = parse_size(size)) &&
	    strspn(size, "0") != strlen(size))
		cli_usage_error(&c, "bad min-free: '%s': want bytes, or a "
		    "number and K, M, G or T", size);
	if (size && !*size)
		cli_usage_error(&c, "--min-free needs a size");
	const char *lag = CLI_GIVEN(&c, OPT_MAX_LAG);
	if (lag)
		o.max_lag_s = cli_number(&c, "max-lag", lag, 1, 86400);
	if (argc)
		cli_usage_error(&c, "unexpected operand: '%s'", argv[0]);
	if (o.user && !*o.user)
		cli_usage_error(&c, "--user needs a name");
	doctor_report_fn print = json ? print_json : print_plain;
	/* A home that is not a folder is a FAIL line, not ctx_init's 78. */
	char *home = c.home ? bakery_xstrdup(c.home) : home_default();
	int failed, rc = doctor_home(home, print, NULL, &failed);
	free(home);
	if (rc)
		bakery_die_last(rc);
	if (failed)
		return bakery_close_stdout() ? EX_IOERR : 1;
	bakery_ctx ctx;
	c.queue_may_be_missing = 1; /* the queue check's FAIL line says so */
	cli_context(&c, &ctx);
	ctx.look_only = 1;
	ctx.write_nothing = 1;
	rc = doctor_run(&ctx, &o, print, NULL, &failed);
	if (rc) {
		ctx_free(&ctx);
		bakery_die_last(rc);
	}
	cli_exit(&ctx, failed ? 1 : 0);
}
