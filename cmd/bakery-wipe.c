/*
 * bakery-wipe — reset every sandbox (the daily wipe), resumably.
 */
#include "../lib/cli.h"
#include "../lib/util.h"
#include "../lib/wipe.h"

#define USAGE \
	"usage: bakery-wipe             start a wipe (or finish an unfinished one)\n" \
	"       bakery-wipe --resume    finish an unfinished wipe, else do nothing\n" \
	"       bakery-wipe --daily     the timer's wipe: none if one started today\n"

enum { OPT_RESUME = CLI_OPT_FIRST_FREE, OPT_DAILY };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ "daily", no_argument, NULL, OPT_DAILY },
	{ NULL, 0, NULL, 0 },
};

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	enum wipe_mode mode = WIPE_START;
	int opt;
	while ((opt = cli_getopt(&c, argc, argv, options)) != -1) {
		if (opt != OPT_RESUME && opt != OPT_DAILY) {
			cli_common(&c, opt, optarg);
			continue;
		}
		enum wipe_mode m = opt == OPT_RESUME ? WIPE_RESUME : WIPE_DAILY;
		if (mode != WIPE_START && mode != m)
			cli_usage_error(&c, "--resume and --daily exclude "
			    "each other");
		mode = m;
	}
	if (optind < argc)
		cli_usage_error(&c, "unexpected operand: '%s'", argv[optind]);
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	int ran;
	int rc = wipe_run(&ctx, mode, cli_report, NULL, &ran);
	if (rc)
		bakery_die_last(rc);
	bakery_log(LOG_INFO, ran ? "wipe_done" : mode == WIPE_DAILY
	    ? "wipe_done_today" : "wipe_nothing_to_resume", (char *)NULL);
	cli_exit(&ctx, 0);
}
