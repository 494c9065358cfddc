/*
 * bakery-wipe — reset one sandbox (-s) or every sandbox (--all, the
 * daily wipe), resumably; --dry-run says what would go.
 */
#include "../lib/cli/cli.h"
#include "../lib/store/store.h"
#include "../lib/base/util.h"
#include "../lib/ops/wipe.h"

#include <stdlib.h>

#define USAGE \
	"usage: bakery-wipe -s SANDBOX | --all [--resume | --daily] [--dry-run]\n" \
	"  -s SANDBOX     wipe only this sandbox (or BAKERY_SANDBOX)\n" \
	"  --all          wipe every sandbox\n" \
	"  --resume       finish an unfinished wipe of that scope, else nothing\n" \
	"  --daily        the timer's wipe: none if one started today\n" \
	"  --dry-run      print what would go, remove nothing\n"

enum { OPT_RESUME = CLI_OPT_FIRST_FREE, OPT_DAILY, OPT_ALL, OPT_DRY_RUN };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ "daily", no_argument, NULL, OPT_DAILY },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ NULL, 0, NULL, 0 },
};

/* Reads the options into *req and c; the scope is checked here: a wipe
 * of every sandbox is never what a missing option meant. */
static void
parse(cli *c, int argc, char **argv, wipe_request *req, int *all)
{
	int opt;
	while ((opt = cli_getopt(c, argc, argv, options)) != -1) {
		enum wipe_mode m = opt == OPT_RESUME ? WIPE_RESUME : WIPE_DAILY;
		switch (opt) {
		case OPT_ALL: *all = 1; break;
		case OPT_DRY_RUN: req->dry_run = 1; break;
		case OPT_RESUME:
		case OPT_DAILY:
			if (req->mode != WIPE_START && req->mode != m)
				cli_usage_error(c, "--resume and --daily exclude "
				    "each other");
			req->mode = m;
			break;
		default: cli_common(c, opt, optarg);
		}
	}
	if (optind < argc)
		cli_usage_error(c, "unexpected operand: '%s'", argv[optind]);
	const char *env = getenv("BAKERY_SANDBOX");
	int named = c->sandbox || (env && *env);
	if (*all && named)
		cli_usage_error(c, "--all and a sandbox (-s or BAKERY_SANDBOX) "
		    "exclude each other");
	if (!*all && !named)
		cli_usage_error(c, "say which: -s SANDBOX, or --all for every "
		    "sandbox");
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	wipe_request req = { .mode = WIPE_START };
	int all = 0;
	parse(&c, argc, argv, &req, &all);
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	/* A dry run opens wipe.db as it is, read-only. */
	ctx.look_only = req.dry_run;
	req.sandbox = all ? NULL : ctx.sandbox;
	int ran;
	int rc = wipe_run(&ctx, &req, cli_report, NULL, &ran);
	if (rc)
		bakery_die_last(rc);
	if (!req.dry_run)
		bakery_log(LOG_INFO, ran ? "wipe_done" : req.mode == WIPE_DAILY
		    ? "wipe_done_today" : "wipe_nothing_to_resume", (char *)NULL);
	cli_exit(&ctx, 0);
}
