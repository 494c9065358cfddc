/*
 * bakery-consume — deliver queued events to their subscribers.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/loop.h"
#include "../lib/flow/consume.h"
#include "../lib/core/envelope.h"
#include "../lib/net/external.h"
#include "../lib/store/keep.h"
#include "../lib/flow/routing.h"
#include "../lib/flow/subscriber.h"
#include "../lib/base/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-consume [--drain | --once | --follow] [--batch N]\n" \
	"                      [--max-retries N] [--visibility S]\n" \
	"                      [--retry-delay S[,S...]] [--routes-file FILE]\n" \
	"                      [--subscriber-timeout S]\n" \
	"       bakery-consume --stdin < envelopes.jsonl\n" \
	"       bakery-consume --routes [--routes-file FILE]\n" \
	"routes: --routes-file, else BAKERY_ROUTES, else HOME/routes, else\n" \
	"the default (bakery-routes(5)); --subscriber-timeout: how long an\n" \
	"exec: or http(s): subscriber may take, 1 to 3600 s (30)\n"

enum { OPT_DRAIN = CLI_OPT_FIRST_FREE, OPT_ONCE, OPT_FOLLOW, OPT_BATCH,
	OPT_MAX_RETRIES, OPT_VISIBILITY, OPT_RETRY_DELAY, OPT_STDIN,
	OPT_ROUTES, OPT_ROUTES_FILE, OPT_SUBSCRIBER_TIMEOUT };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "drain", no_argument, NULL, OPT_DRAIN },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "max-retries", required_argument, NULL, OPT_MAX_RETRIES },
	{ "visibility", required_argument, NULL, OPT_VISIBILITY },
	{ "retry-delay", required_argument, NULL, OPT_RETRY_DELAY },
	{ "stdin", no_argument, NULL, OPT_STDIN },
	{ "routes", no_argument, NULL, OPT_ROUTES },
	{ "routes-file", required_argument, NULL, OPT_ROUTES_FILE },
	{ "subscriber-timeout", required_argument, NULL,
		OPT_SUBSCRIBER_TIMEOUT },
	{ NULL, 0, NULL, 0 },
};

struct stdin_state {
	bakery_ctx *ctx;
	int rc;
};

static int
deliver_line(void *arg, const char *line, size_t len, long lineno)
{
	struct stdin_state *s = arg;
	jv result;
	int refused;
	if (consume_line(s->ctx, line, len, &result, &refused)) {
		bakery_print_error("line %ld: %s", lineno,
		    bakery_error());
		s->rc = EX_DATAERR;
		return 0; /* the good lines still go */
	}
	/* A line refused for good outranks one refused for now: no replay
	 * helps the first. */
	if (refused && s->rc != EX_DATAERR)
		s->rc = refused;
	cli_print(result);
	fflush(stdout);
	return 0;
}

enum mode { DRAIN, ONCE, FOLLOW };

/* What the command line asks for, once parsed and checked. */
struct args {
	enum mode mode;
	const char *mode_given; /* the mode option as given, or NULL */
	int batch, visibility, from_stdin, show_routes;
	int subscriber_timeout; /* 0: the context's default */
	const char *routes_file;
	consume_options copt;
};

/* The options into a; a usage error exits 64. The option values live
 * only here. */
static void
parse(cli *c, int argc, char **argv, struct args *a)
{
	*a = (struct args){ .mode = DRAIN, .batch = 10, .visibility = 30,
		.copt = CONSUME_OPTIONS_DEFAULT };
	int mode_opt = 0, opt;
	while ((opt = cli_getopt(c, argc, argv, options)) != -1) {
		switch (opt) {
		case OPT_DRAIN:
		case OPT_ONCE:
		case OPT_FOLLOW:
			/* One mode: --drain --follow would quietly follow. */
			if (a->mode_given && mode_opt != opt)
				cli_usage_error(c, "%s and %s together: want one "
				    "of --drain, --once, --follow", a->mode_given,
				    argv[optind - 1]);
			a->mode_given = argv[optind - 1];
			mode_opt = opt;
			a->mode = opt == OPT_DRAIN ? DRAIN
			    : opt == OPT_ONCE ? ONCE : FOLLOW;
			break;
		case OPT_BATCH:
			a->batch = cli_number(c, "batch", optarg, 1, 100);
			break;
		case OPT_MAX_RETRIES:
			a->copt.max_retries = cli_number(c, "max-retries", optarg, 0,
			    100);
			break;
		case OPT_VISIBILITY:
			a->visibility = cli_number(c, "visibility", optarg, 1, 43200);
			break;
		case OPT_RETRY_DELAY:
			if (consume_parse_delays(optarg, &a->copt))
				cli_usage_error(c, "bad retry-delay: '%s': %s",
				    optarg, bakery_error());
			break;
		case OPT_STDIN: a->from_stdin = 1; break;
		case OPT_ROUTES: a->show_routes = 1; break;
		case OPT_ROUTES_FILE:
			if (!*optarg)
				cli_usage_error(c, "bad routes-file: want a file");
			a->routes_file = optarg;
			break;
		case OPT_SUBSCRIBER_TIMEOUT:
			a->subscriber_timeout = cli_number(c, "subscriber-timeout",
			    optarg, 1, EXTERNAL_MAX_TIMEOUT_S);
			break;
		default: cli_common(c, opt, optarg);
		}
	}
	if (optind < argc)
		cli_usage_error(c, "unexpected operand: '%s'", argv[optind]);
	if (a->from_stdin && a->mode_given)
		cli_usage_error(c, "--stdin and %s together: --stdin delivers "
		    "its lines and ends", a->mode_given);
}

/* Prints the routes in effect and exits. A context of the home alone:
 * the table is printed without the checks of what a consumer needs (the
 * sandbox, the queue URL, the home itself). */
static void __attribute__((noreturn))
print_routes(const cli *c, const char *routes_file)
{
	bakery_ctx ctx = { 0 };
	ctx.home = c->home ? bakery_xstrdup(c->home) : home_default();
	if (routing_load(&ctx, routes_file))
		bakery_die_last(EX_CONFIG);
	jv table = routing_describe(&ctx);
	jv_array_foreach(table, i, row)
		cli_print(row);
	jv_free(table);
	cli_exit(&ctx, 0);
}

/* Takes batches from the queue and delivers them until the mode says to
 * stop (or a signal does): 0, or the error that stopped it. */
static int
deliver_queue(bakery_ctx *ctx, bakery_queue *q, const char *only,
    const struct args *a)
{
	queue_message *msgs = bakery_xmalloc((size_t)a->batch * sizeof *msgs);
	jv *results = bakery_xmalloc((size_t)a->batch * sizeof *results);
	long idle_ms = 0;
	int rc = 0;
	while (!loop_stopping()) {
		size_t got;
		/* A newer bakery may have written in the home meanwhile. */
		if ((rc = home_recheck(ctx)))
			break;
		if ((rc = queue_receive(q, QUEUE_EVENTS, only, (size_t)a->batch,
			 a->visibility, msgs, &got))) {
			if (rc != EX_TEMPFAIL || a->mode != FOLLOW)
				break;
			bakery_log(LOG_WARN, "queue_busy", "error", bakery_error(),
			    (char *)NULL);
			got = 0;
			rc = 0;
		}
		if (got > 0) {
			int mrc = consume_batch(ctx, q, msgs, got, &a->copt,
			    results);
			for (size_t i = 0; i < got; i++) {
				cli_print(results[i]);
				queue_message_free(&msgs[i]);
			}
			if (mrc && !rc)
				rc = mrc;
		}
		fflush(stdout);
		if (rc && a->mode != FOLLOW)
			break;
		rc = 0;
		if (a->mode == ONCE || (a->mode == DRAIN && got == 0))
			break;
		/* An object not used for a while is closed, busy or not. */
		keep_idle(ctx->kept);
		if (got > 0) {
			idle_ms = 0;
			continue;
		}
		/* Following an idle queue: wait a little longer each time,
		 * up to half a second; SIGTERM cuts the sleep short. */
		loop_idle_wait(&idle_ms);
	}
	free(msgs);
	free(results);
	return rc;
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	struct args a;
	parse(&c, argc, argv, &a);
	if (a.show_routes)
		print_routes(&c, a.routes_file);
	bakery_ctx ctx;
	c.home_writes = 1;
	cli_context(&c, &ctx);
	if (a.subscriber_timeout)
		ctx.subscriber_timeout_s = a.subscriber_timeout;
	/* A bad routes file stops the consumer before it takes a message. */
	if (routing_load(&ctx, a.routes_file))
		bakery_die_last(EX_CONFIG);
	if (a.from_stdin) {
		struct stdin_state s = { &ctx, 0 };
		envelope_each_line(stdin, deliver_line, &s);
		cli_exit(&ctx, s.rc);
	}
	loop_catch_signals();
	bakery_queue *q;
	int rc = queue_get(&ctx, &q);
	if (rc)
		bakery_die_last(rc);
	/* A loop that delivers batch after batch keeps the objects it
	 * applies to open between them (keep.h); --once closes them. */
	if (a.mode != ONCE)
		ctx.kept = keep_new(KEEP_MAX, KEEP_IDLE_MS);
	/* -s names one sandbox; without it every sandbox's events are ours. */
	rc = deliver_queue(&ctx, q, c.sandbox ? ctx.sandbox : NULL, &a);
	if (rc)
		bakery_die_last(rc);
	cli_exit(&ctx, 0);
}
