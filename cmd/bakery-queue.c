/*
 * bakery-queue — plumbing: create or check the queue, send envelopes,
 * peek, stats.
 */
#include "../lib/cli/cli.h"
#include "../lib/core/envelope.h"
#include "../lib/core/outbox.h"
#include "../lib/queue/queue.h"
#include "../lib/base/util.h"

#include <stdlib.h>
#include <string.h>

#define USAGE \
	"usage: bakery-queue init [--replicas N]\n" \
	"       bakery-queue send < envelopes.jsonl\n" \
	"       bakery-queue peek [--dlq] [--limit N]\n" \
	"       bakery-queue stats\n"

enum { OPT_DLQ = CLI_OPT_FIRST_FREE, OPT_LIMIT, OPT_REPLICAS };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "dlq", no_argument, NULL, OPT_DLQ },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "replicas", required_argument, NULL, OPT_REPLICAS },
	{ NULL, 0, NULL, 0 },
};

/* Envelopes are checked line by line and sent in batches; a bad line is
 * reported with its number and the good ones still go. */
struct sender {
	bakery_queue *q;
	char *ids[OUTBOX_BATCH], *sandboxes[OUTBOX_BATCH], *bodies[OUTBOX_BATCH];
	queue_item items[OUTBOX_BATCH];
	size_t n;
	long sent;
	int rc;
};

static void
flush_batch(struct sender *s)
{
	if (s->n == 0)
		return;
	int rc = queue_send(s->q, QUEUE_EVENTS, s->items, s->n);
	for (size_t i = 0; i < s->n; i++) {
		if (s->items[i].accepted) {
			jv line = jv_object_set(jv_object(), jv_string("id"),
			    jv_string(s->ids[i]));
			line = jv_object_set(line, jv_string("status"),
			    jv_string("sent"));
			cli_print(line);
			s->sent++;
		}
		free(s->ids[i]);
		free(s->sandboxes[i]);
		free(s->bodies[i]);
	}
	if (rc) {
		bakery_print_error("%s", bakery_error());
		if (!s->rc || s->rc == EX_DATAERR)
			s->rc = rc;
	}
	s->n = 0;
}

static int
send_line(void *arg, const char *line, size_t len, long lineno)
{
	struct sender *s = arg;
	jv env;
	if (envelope_parse(line, len, &env)) {
		bakery_print_error("line %ld: %s", lineno,
		    bakery_error());
		if (!s->rc)
			s->rc = EX_DATAERR;
		return 0;
	}
	s->ids[s->n] = bakery_xstrdup(envelope_str(env, "id"));
	s->sandboxes[s->n] = bakery_xstrdup(envelope_str(env, "sandbox"));
	s->bodies[s->n] = envelope_dump(env);
	s->items[s->n] = (queue_item){ s->ids[s->n], s->sandboxes[s->n],
		s->bodies[s->n], envelope_time_ms(env), 0, 0 };
	jv_free(env);
	if (++s->n == OUTBOX_BATCH)
		flush_batch(s);
	return 0;
}

int
main(int argc, char **argv)
{
	cli c = cli_start(USAGE, options, &argc, &argv);
	int dlq = CLI_GIVEN(&c, OPT_DLQ) != NULL, replicas = 0;
	const char *arg;
	long long limit = 100;
	if ((arg = CLI_GIVEN(&c, OPT_LIMIT)) &&
	    bakery_parse_number(arg, 1, 1000000, &limit))
		cli_usage_error(&c, "bad limit: '%s'", arg);
	if ((arg = CLI_GIVEN(&c, OPT_REPLICAS))) {
		if (strlen(arg) != 1 || arg[0] < '1' || arg[0] > '5')
			cli_usage_error(&c, "bad replicas: '%s': want 1 to 5", arg);
		replicas = arg[0] - '0';
	}
	if (argc != 1)
		cli_usage_error(&c, argc ? "too many operands" : "missing command");
	const char *cmd = argv[0];
	if (strcmp(cmd, "send") && strcmp(cmd, "peek") && strcmp(cmd, "stats") &&
	    strcmp(cmd, "init"))
		cli_usage_error(&c, "unknown command: '%s'", cmd);
	if (replicas && strcmp(cmd, "init"))
		cli_usage_error(&c, "--replicas goes with init");
	/* stats and peek only look: they read a read-only home, and a
	 * queue file that does not exist is an error, not made empty. */
	int look = strcmp(cmd, "stats") == 0 || strcmp(cmd, "peek") == 0;
	bakery_ctx ctx;
	c.queue_may_be_missing = strcmp(cmd, "init") == 0;
	c.home_writes = !look;
	cli_context(&c, &ctx);
	ctx.look_only = look;
	bakery_queue *q;
	int rc = look ? queue_get_existing(&ctx, &q) : strcmp(cmd, "init") == 0
	    ? queue_make(&ctx, &q) : queue_get(&ctx, &q);
	if (rc == EX_NOINPUT) { /* the home's queue, not made yet: empty */
		if (cmd[1] == 't')
			cli_print(queue_empty_stats());
		cli_exit(&ctx, 0);
	}
	if (rc)
		bakery_die_last(rc);
	jv out;
	if (strcmp(cmd, "send") == 0) {
		struct sender *s = calloc(1, sizeof *s);
		if (!s)
			bakery_die(EX_OSERR, "out of memory");
		s->q = q;
		envelope_each_line(stdin, send_line, s);
		flush_batch(s);
		rc = s->rc;
		free(s);
	} else if (strcmp(cmd, "peek") == 0) {
		if (!(rc = queue_peek(q, dlq ? QUEUE_DLQ : QUEUE_EVENTS,
			  (size_t)limit, &out))) {
			jv_array_foreach(out, i, m)
				cli_print(m);
			jv_free(out);
		}
	} else if (strcmp(cmd, "init") == 0) {
		if (!(rc = queue_init(q, replicas ? replicas : 1, &out))) {
			jv_array_foreach(out, i, a)
				cli_print(a);
			jv_free(out);
		}
	} else {
		if (!(rc = queue_stats(q, &out)))
			cli_print(out);
	}
	if (rc && strcmp(cmd, "send") != 0)
		bakery_die_last(rc);
	cli_exit(&ctx, rc);
}
