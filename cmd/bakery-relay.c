/*
 * bakery-relay — send objects' outboxes to the queue.
 */
#include "../lib/cli.h"
#include "../lib/envelope.h"
#include "../lib/outbox.h"
#include "../lib/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-relay ADDRESS...\n" \
	"       bakery-relay --all\n" \
	"       ... | bakery-relay          (addresses on stdin)\n"

enum { OPT_ALL = CLI_OPT_FIRST_FREE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "all", no_argument, NULL, OPT_ALL },
	{ NULL, 0, NULL, 0 },
};

struct relay {
	bakery_ctx *ctx;
	int rc;
};

/* Sends one object's outbox and prints {"address","sent","left"}. */
static void
relay_one(struct relay *r, const char *address)
{
	bakery_object *o;
	int rc = object_open(r->ctx, NULL, address, 0, &o);
	if (rc) {
		fprintf(stderr, "%s: error: %s\n", bakery_prog, bakery_error());
		if (!r->rc || rc == EX_USAGE)
			r->rc = rc;
		return;
	}
	int sent = 0;
	rc = outbox_send(o, &sent);
	jv line = jv_object();
	line = jv_object_set(line, jv_string("address"), jv_string(address));
	line = jv_object_set(line, jv_string("sandbox"), jv_string(o->sandbox));
	line = jv_object_set(line, jv_string("sent"), jv_number(sent));
	line = jv_object_set(line, jv_string("left"), jv_number(outbox_count(o)));
	cli_print(line);
	object_close(o);
	if (rc && !r->rc)
		r->rc = rc;
}

static int
relay_line(void *arg, const char *line, size_t len, long lineno)
{
	(void)len;
	(void)lineno;
	relay_one(arg, line);
	return 0;
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE };
	int all = 0, opt;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORT, options,
		    NULL)) != -1) {
		if (opt == OPT_ALL)
			all = 1;
		else
			cli_common(&c, opt, optarg);
	}
	argc -= optind;
	argv += optind;
	if (all && argc)
		cli_usage_error(&c, "--all takes no addresses");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	struct relay r = { &ctx, 0 };
	if (all) {
		jv list;
		if ((r.rc = object_list(&ctx, NULL, &list)))
			bakery_die_last(r.rc);
		jv_array_foreach(list, i, a) {
			relay_one(&r, jv_string_value(a));
			jv_free(a);
		}
		jv_free(list);
	} else if (argc) {
		for (int i = 0; i < argc; i++)
			relay_one(&r, argv[i]);
	} else if (cli_read_stdin(argc)) {
		envelope_each_line(stdin, relay_line, &r);
	} else {
		cli_usage_error(&c, "no address: give ADDRESS..., --all, or "
		    "addresses on stdin");
	}
	cli_exit(&ctx, r.rc);
}
