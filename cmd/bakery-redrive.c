/*
 * bakery-redrive — send dead letters back to the queue, same envelope,
 * same id; each row is deleted only after the queue accepted it.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/deadletter.h"
#include "../lib/core/envelope.h"
#include "../lib/base/json.h"
#include "../lib/core/progress.h"
#include "../lib/base/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-redrive ID...\n" \
	"       bakery-redrive --all\n" \
	"       ... | bakery-redrive        (ids or JSON lines with an id)\n"

enum { OPT_ALL = CLI_OPT_FIRST_FREE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "all", no_argument, NULL, OPT_ALL },
	{ NULL, 0, NULL, 0 },
};

struct redrive {
	bakery_ctx *ctx;
	bakery_progress progress;
	int rc;
};

static void
redrive_one(struct redrive *r, const char *sandbox, const char *id)
{
	jv d;
	int rc = deadletter_redrive(r->ctx, sandbox, id, &d);
	progress_step(&r->progress);
	if (rc) {
		bakery_print_error("%s", bakery_error());
		if (!r->rc)
			r->rc = rc;
		return;
	}
	jv line = jv_object();
	line = jv_object_set(line, jv_string("id"), jv_string(id));
	line = jv_object_set(line, jv_string("type"),
	    jv_object_get(jv_copy(d), jv_string("type")));
	line = jv_object_set(line, jv_string("sandbox"), jv_string(sandbox));
	line = jv_object_set(line, jv_string("status"), jv_string("redriven"));
	cli_print(line);
	fflush(stdout);
	jv_free(d);
}

/* A line is an id, or a JSON object with "id" (and maybe "sandbox"), as
 * `bakery-dlq list` prints. A line that opens as JSON does ('{', '[' or
 * '"') is JSON, and must be such an object. */
static int
redrive_line(void *arg, const char *line, size_t len, long lineno)
{
	struct redrive *r = arg;
	if (!line[0] || !strchr("{[\"", line[0])) {
		redrive_one(r, r->ctx->sandbox, line);
		return 0;
	}
	jv o;
	int bad = json_parse(line, len, &o);
	const char *id = envelope_str(o, "id");
	const char *sandbox;
	int has_sandbox = envelope_opt_str(o, "sandbox", &sandbox);
	if (bad || !id || has_sandbox < 0 ||
	    (sandbox && !bakery_name_valid(sandbox))) {
		bakery_print_error("line %ld: %s", lineno, bad ? bakery_error()
		    : "want a JSON object with an \"id\" (and a valid "
		      "\"sandbox\")");
		if (!r->rc)
			r->rc = EX_DATAERR;
	} else {
		redrive_one(r, sandbox ? sandbox : r->ctx->sandbox, id);
	}
	jv_free(o);
	return 0;
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int all = CLI_GIVEN(&c, OPT_ALL) != NULL;
	if (all && argc)
		cli_usage_error(&c, "--all takes no ids");
	bakery_ctx ctx;
	c.home_writes = 1;
	cli_context(&c, &ctx);
	struct redrive r = { .ctx = &ctx };
	if (all) {
		jv list;
		if ((r.rc = deadletter_list(&ctx, NULL, &list)))
			bakery_die_last(r.rc);
		progress_start(&r.progress, "redrive",
		    jv_array_length(jv_copy(list)));
		jv_array_foreach(list, i, d) {
			redrive_one(&r, ctx.sandbox, envelope_str(d, "id"));
			jv_free(d);
		}
		jv_free(list);
	} else if (argc) {
		progress_start(&r.progress, "redrive", argc);
		for (int i = 0; i < argc; i++)
			redrive_one(&r, ctx.sandbox, argv[i]);
	} else if (cli_read_stdin(argc)) {
		progress_start(&r.progress, "redrive", 0);
		envelope_each_line(stdin, redrive_line, &r);
	} else {
		cli_usage_error(&c, "no id: give ID..., --all, or ids on stdin");
	}
	progress_end(&r.progress);
	cli_exit(&ctx, r.rc);
}
