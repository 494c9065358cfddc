/*
 * bakery-fault — set, clear and list a sandbox's faults.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/faults.h"
#include "../lib/flow/subscriber.h"
#include "../lib/base/util.h"

#include <string.h>

#define USAGE \
	"usage: bakery-fault set NAME\n" \
	"       bakery-fault clear NAME\n" \
	"       bakery-fault list\n" \
	"faults: refuses:KIND (KIND a built-in subscriber's kind, as\n" \
	"        bakery-consume --routes names them), queue-refuses\n"

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, cli_common_options, &argc, &argv);
	if (argc < 1)
		cli_usage_error(&c, "missing command");
	int set = strcmp(argv[0], "set") == 0;
	int clear = strcmp(argv[0], "clear") == 0;
	int list = strcmp(argv[0], "list") == 0;
	if (!set && !clear && !list)
		cli_usage_error(&c, "unknown command: '%s'", argv[0]);
	if (list ? argc != 1 : argc != 2)
		cli_usage_error(&c, list ? "list takes no operands"
					 : "%s needs one NAME", argv[0]);
	const char *kind = NULL;
	if (!list && (!fault_name_known(argv[1], &kind) ||
	    (kind && !subscriber_find(kind))))
		cli_usage_error(&c, "unknown fault: '%s'", argv[1]);
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	ctx.look_only = list;
	int rc;
	if (list) {
		jv faults;
		if ((rc = fault_list(&ctx, NULL, &faults)))
			bakery_die_last(rc);
		jv_array_foreach(faults, i, f)
			cli_print(f);
		jv_free(faults);
	} else {
		rc = set ? fault_set(&ctx, NULL, argv[1])
			 : fault_clear(&ctx, NULL, argv[1]);
		if (rc)
			bakery_die_last(rc);
	}
	cli_exit(&ctx, 0);
}
