/*
 * bakery-dlq — move dead-lettered messages into their sandbox's dead
 * letters, and list or show them.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/deadletter.h"
#include "../lib/base/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-dlq drain [--follow]\n" \
	"       bakery-dlq list\n" \
	"       bakery-dlq show ID\n"

enum { OPT_FOLLOW = CLI_OPT_FIRST_FREE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ NULL, 0, NULL, 0 },
};

/* A drained message's line, flushed at once (a follower's output is
 * read as it comes). */
static void
print_line(void *unused, jv line)
{
	(void)unused;
	cli_print(line);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int follow = CLI_GIVEN(&c, OPT_FOLLOW) != NULL;
	if (argc < 1)
		cli_usage_error(&c, "missing command");
	const char *cmd = argv[0];
	if (follow && strcmp(cmd, "drain") != 0)
		cli_usage_error(&c, "--follow goes with drain");
	bakery_ctx ctx;
	c.home_writes = strcmp(cmd, "drain") == 0;
	cli_context(&c, &ctx);
	/* list and show only look: a home a newer bakery wrote is read. */
	ctx.look_only = strcmp(cmd, "drain") != 0;
	int rc = 0;
	if (strcmp(cmd, "drain") == 0) {
		if (argc != 1)
			cli_usage_error(&c, "drain takes no operands");
		rc = deadletter_drain(&ctx, c.sandbox ? ctx.sandbox : NULL,
		    follow, print_line, NULL);
	} else if (strcmp(cmd, "list") == 0) {
		if (argc != 1)
			cli_usage_error(&c, "list takes no operands");
		jv all;
		if (!(rc = deadletter_list(&ctx, NULL, &all))) {
			jv_array_foreach(all, i, d)
				cli_print(d);
		}
		jv_free(all);
	} else if (strcmp(cmd, "show") == 0) {
		if (argc != 2)
			cli_usage_error(&c, "show needs one ID");
		jv d;
		if (!(rc = deadletter_get(&ctx, NULL, argv[1], &d)))
			cli_print(d);
	} else {
		cli_usage_error(&c, "unknown command: '%s'", cmd);
	}
	if (rc)
		bakery_die_last(rc);
	cli_exit(&ctx, 0);
}
