/*
 * bakery-standby — a home replicated to a standby on a second host:
 * the primary made, the standby made, the standby promoted, and the loop
 * that keeps each in its role (lib/replica/takeover.h).
 */
#include "../lib/cli/cli.h"
#include "../lib/core/alarm.h"
#include "../lib/core/loop.h"
#include "../lib/ops/wipe.h"
#include "../lib/orders/refunds.h"
#include "../lib/replica/takeover.h"
#include "../lib/web/account.h"
#include "../lib/base/util.h"

#include <string.h>

#define USAGE \
	"usage: bakery-standby --primary [--replicas N] [--lease-seconds S]\n" \
	"       bakery-standby --standby\n" \
	"       bakery-standby --promote [--auto] [--lease-seconds S]\n" \
	"       bakery-standby [--once] [--auto] [--lease-seconds S]\n" \
	"the queue is nats:// (BAKERY_QUEUE, --queue); --replicas: the\n" \
	"stream's, 1 to 3 (a server each, up to 3); --lease-seconds: the\n" \
	"primary's lease, 2 to 3600 (10); --auto: a lease held by another\n" \
	"host is waited for, then taken\n"

enum { OPT_PRIMARY = CLI_OPT_FIRST_FREE, OPT_STANDBY, OPT_PROMOTE,
	OPT_ONCE, OPT_AUTO, OPT_REPLICAS, OPT_LEASE_SECONDS };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "primary", no_argument, NULL, OPT_PRIMARY },
	{ "standby", no_argument, NULL, OPT_STANDBY },
	{ "promote", no_argument, NULL, OPT_PROMOTE },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "auto", no_argument, NULL, OPT_AUTO },
	{ "replicas", required_argument, NULL, OPT_REPLICAS },
	{ "lease-seconds", required_argument, NULL, OPT_LEASE_SECONDS },
	{ NULL, 0, NULL, 0 },
};

/* The home's own files a record may name, and their schemas. */
static const standby_file home_files[] = {
	{ "alarms.db", &alarms_schema },
	{ "wipe.db", &wipe_schema },
	{ "refunds.db", &refunds_schema },
	{ "console.db", &console_schema },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	if (argc)
		cli_usage_error(&c, "too many operands");
	int mode = 0;
	for (int opt = OPT_PRIMARY; opt <= OPT_PROMOTE; opt++) {
		if (CLI_GIVEN(&c, opt) && mode)
			cli_usage_error(&c, "--primary, --standby and --promote "
			    "exclude each other");
		if (CLI_GIVEN(&c, opt))
			mode = opt;
	}
	takeover_opts o = { .lease_s = 10, .files = home_files,
		.report = cli_report };
	const char *arg;
	if ((arg = CLI_GIVEN(&c, OPT_REPLICAS))) {
		if (mode != OPT_PRIMARY)
			cli_usage_error(&c, "--replicas goes with --primary");
		o.replicas = cli_number(&c, "replicas", arg, 1, 3);
	}
	if ((arg = CLI_GIVEN(&c, OPT_LEASE_SECONDS))) {
		if (mode == OPT_STANDBY)
			cli_usage_error(&c, "--standby takes no lease");
		o.lease_s = cli_number(&c, "lease seconds", arg, 2, 3600);
	}
	o.once = CLI_GIVEN(&c, OPT_ONCE) != NULL;
	o.auto_take = CLI_GIVEN(&c, OPT_AUTO) != NULL;
	if (o.once && mode)
		cli_usage_error(&c, "--once goes with no --primary, --standby "
		    "or --promote");
	if (o.auto_take && mode && mode != OPT_PROMOTE)
		cli_usage_error(&c, "--auto goes with --promote, or with none");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	/* The one program that writes a standby's home; a home a newer
	 * bakery wrote is refused before anything is received. */
	ctx.replica_applying = 1;
	int rc = home_may_write(&ctx);
	if (!rc && mode == OPT_PROMOTE && o.auto_take)
		loop_catch_signals();
	if (!rc)
		rc = mode == OPT_PRIMARY ? takeover_primary(&ctx, &o)
		    : mode == OPT_STANDBY ? takeover_standby(&ctx, &o)
		    : mode == OPT_PROMOTE ? takeover_promote(&ctx, &o)
		    : takeover_run(&ctx, &o);
	if (rc)
		bakery_print_error("%s", bakery_error());
	cli_exit(&ctx, rc);
}
