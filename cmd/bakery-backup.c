/*
 * bakery-backup — a consistent copy of the whole home, taken while it
 * runs, into a new folder (lib/ops/backup.h). The copy is a home.
 */
#include "../lib/ops/backup.h"
#include "../lib/cli/cli.h"
#include "../lib/base/util.h"

#define USAGE \
	"usage: bakery-backup DIR\n" \
	"copies the home into DIR, which must not exist or be an empty\n" \
	"folder outside the home; prints one JSON line when DIR is whole\n"

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	int opt;
	while ((opt = cli_getopt(&c, argc, argv, options)) != -1)
		cli_common(&c, opt, optarg);
	if (optind == argc)
		cli_usage_error(&c, "missing DIR");
	if (optind + 1 < argc)
		cli_usage_error(&c, "unexpected operand: '%s'", argv[optind + 1]);
	if (!*argv[optind])
		cli_usage_error(&c, "DIR is empty");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	jv report;
	int rc = backup_run(&ctx, argv[optind], &report);
	if (rc) {
		ctx_free(&ctx);
		bakery_die_last(rc);
	}
	cli_print(report);
	cli_exit(&ctx, 0);
}
