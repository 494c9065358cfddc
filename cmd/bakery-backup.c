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

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, cli_common_options, &argc, &argv);
	if (argc == 0)
		cli_usage_error(&c, "missing DIR");
	if (argc > 1)
		cli_usage_error(&c, "unexpected operand: '%s'", argv[1]);
	if (!*argv[0])
		cli_usage_error(&c, "DIR is empty");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	jv report;
	int rc = backup_run(&ctx, argv[0], &report);
	if (rc) {
		ctx_free(&ctx);
		bakery_die_last(rc);
	}
	cli_print(report);
	cli_exit(&ctx, 0);
}
