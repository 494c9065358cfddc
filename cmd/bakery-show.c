/*
 * bakery-show — one object as JSON, or the sandbox's objects.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/object.h"
#include "../lib/flow/subscriber.h"
#include "../lib/base/util.h"

#define USAGE \
	"usage: bakery-show ADDRESS...\n" \
	"       bakery-show --list\n"

enum { OPT_LIST = CLI_OPT_FIRST_FREE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "list", no_argument, NULL, OPT_LIST },
	{ NULL, 0, NULL, 0 },
};

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int list = CLI_GIVEN(&c, OPT_LIST) != NULL;
	if (list == (argc > 0))
		cli_usage_error(&c, list ? "--list takes no addresses"
					 : "missing ADDRESS");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	ctx.look_only = 1;
	int rc = 0;
	if (list) {
		jv all;
		if ((rc = object_list(&ctx, NULL, &all)))
			bakery_die_last(rc);
		jv_array_foreach(all, i, a)
			cli_print(a);
		jv_free(all);
		cli_exit(&ctx, 0);
	}
	for (int i = 0; i < argc; i++) {
		jv out;
		int one = subscriber_show(&ctx, argv[i], &out);
		if (one) {
			bakery_print_error("%s", bakery_error());
			if (!rc || one == EX_USAGE)
				rc = one;
			continue;
		}
		cli_print(out);
	}
	cli_exit(&ctx, rc);
}
