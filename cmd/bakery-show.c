/*
 * bakery-show — one object as JSON, or the sandbox's objects.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/object.h"
#include "../lib/flow/subscriber.h"
#include "../lib/base/util.h"

#define USAGE \
	"usage: bakery-show ADDRESS...\n" \
	"       bakery-show --list\n" \
	"       bakery-show ADDRESS --rows LIST [--after ORDER] [--limit N]\n" \
	"--rows prints the records of one of the object's lists (a day's\n" \
	"holds, reservations or stops, a customer's orders or receipts) as\n" \
	"JSON Lines, at most N (1 to 100000, default 100), from the one\n" \
	"after ORDER's record\n"

enum { OPT_LIST = CLI_OPT_FIRST_FREE, OPT_ROWS, OPT_AFTER, OPT_LIMIT };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "list", no_argument, NULL, OPT_LIST },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "after", required_argument, NULL, OPT_AFTER },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ NULL, 0, NULL, 0 },
};

/* --rows: one page of the list of the object at address, a line each. */
static _Noreturn void
rows(const cli *c, bakery_ctx *ctx, const char *address)
{
	const char *list = CLI_GIVEN(c, OPT_ROWS);
	const char *after = CLI_GIVEN(c, OPT_AFTER);
	const char *limit_arg = CLI_GIVEN(c, OPT_LIMIT);
	long long limit = 100;
	if (limit_arg && bakery_parse_number(limit_arg, 1, 100000, &limit))
		cli_usage_error(c, "bad limit: '%s': want 1 to 100000",
		    limit_arg);
	bakery_object *o;
	jv page;
	int rc = object_open(ctx, NULL, address, 0, &o);
	if (!rc) {
		rc = object_list_rows(o, list, after, limit, &page);
		object_close(o);
	}
	if (rc)
		bakery_die_last(rc);
	jv_array_foreach(page, i, r)
		cli_print(r);
	jv_free(page);
	cli_exit(ctx, 0);
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int list = CLI_GIVEN(&c, OPT_LIST) != NULL;
	if (list == (argc > 0))
		cli_usage_error(&c, list ? "--list takes no addresses"
					 : "missing ADDRESS");
	const char *rows_of = CLI_GIVEN(&c, OPT_ROWS);
	if (!rows_of && (CLI_GIVEN(&c, OPT_AFTER) || CLI_GIVEN(&c, OPT_LIMIT)))
		cli_usage_error(&c, "--after and --limit go with --rows");
	if (rows_of && argc != 1)
		cli_usage_error(&c, "--rows takes one ADDRESS");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	ctx.look_only = 1;
	if (rows_of)
		rows(&c, &ctx, argv[0]);
	int rc = 0;
	if (list) {
		jv all, unread;
		if ((rc = object_list_unread(&ctx, NULL, NULL, &all, &unread)))
			bakery_die_last(rc);
		jv_array_foreach(all, i, a)
			cli_print(a);
		jv_free(all);
		cli_exit(&ctx, cli_say_unread(unread));
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
