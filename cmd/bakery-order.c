/*
 * bakery-order — place, pay, show and list orders; mark a flagged payment
 * refunded.
 */
#include "../lib/orders/batch.h"
#include "../lib/cli/cli.h"
#include "../lib/core/envelope.h"
#include "../lib/net/gateway.h"
#include "../lib/net/span.h"
#include "../lib/store/keep.h"
#include "../lib/orders/order.h"
#include "../lib/core/outbox.h"
#include "../lib/orders/payments.h"
#include "../lib/orders/refunds.h"
#include "../lib/queue/queue.h"
#include "../lib/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE \
	"usage: bakery-order place --customer ID --day YYYY-MM-DD\n" \
	"                          [--delivery ADDRESS] [--key KEY] ITEM=QTY...\n" \
	"       bakery-order pay ORDER [--card NUMBER | --payment-method PM]\n" \
	"                              [--stripe-key-file FILE]\n" \
	"       bakery-order gateway [test | stripe]\n" \
	"       bakery-order show ORDER\n" \
	"       bakery-order list\n" \
	"       bakery-order events ORDER\n" \
	"       bakery-order refunded ORDER PAYMENT_INTENT\n" \
	"       bakery-order --batch [--stripe-key-file FILE] < COMMANDS\n" \
	"         one JSON command a line: {\"cmd\":\"place\",\"customer\":ID,\n" \
	"         \"day\":DAY,\"items\":[\"ITEM=QTY\",...]}, {\"cmd\":\"pay\",\"order\":ID},\n" \
	"         {\"cmd\":\"show\",\"order\":ID}; one JSON answer a line\n"

enum { OPT_CUSTOMER = CLI_OPT_FIRST_FREE, OPT_DAY, OPT_DELIVERY, OPT_KEY,
	OPT_CARD, OPT_PAYMENT_METHOD, OPT_STRIPE_KEY_FILE, OPT_BATCH };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "customer", required_argument, NULL, OPT_CUSTOMER },
	{ "day", required_argument, NULL, OPT_DAY },
	{ "delivery", required_argument, NULL, OPT_DELIVERY },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "card", required_argument, NULL, OPT_CARD },
	{ "payment-method", required_argument, NULL, OPT_PAYMENT_METHOD },
	{ "stripe-key-file", required_argument, NULL, OPT_STRIPE_KEY_FILE },
	{ "batch", no_argument, NULL, OPT_BATCH },
	{ NULL, 0, NULL, 0 },
};

/* The command has answered: close stdout, then send what it recorded. A
 * refused send is logged (relay_error) and leaves the rows for the alarm;
 * the command still succeeded. lost is what the error says when the
 * answer could not be given, its reader gone (EPIPE) included: the order
 * and what became of it, so that a caller whose stdout failed does not
 * place or pay again blindly. */
static void
answer_then_send(bakery_object *o, const char *lost)
{
	if (bakery_close_answer())
		bakery_die(EX_IOERR, "%s, but its answer was lost: %s", lost,
		    bakery_error());
	bakery_crash_point("order.after_commit");
	/* A refused send leaves the rows to the alarm: a command may always
	 * arm it, whatever the re-arm guard says. */
	if (o && outbox_send(o, NULL) && object_arm(o))
		bakery_log(LOG_WARN, "alarm_error", "object", o->address,
		    "error", bakery_error(), (char *)NULL);
	object_close(o);
}

/* What the command line asks for: the options, then the command and its
 * operands (argv[0] is the command). */
struct args {
	order_request req;
	payment_request pay;
	int batch;
	int argc;
	char **argv;
};

/* The options into a; a usage error exits 64. */
static void
parse(cli *c, int argc, char **argv, struct args *a)
{
	*a = (struct args){ 0 };
	int opt;
	while ((opt = cli_getopt(c, argc, argv, options)) != -1) {
		switch (opt) {
		case OPT_CUSTOMER: a->req.customer = optarg; break;
		case OPT_DAY: a->req.day = optarg; break;
		case OPT_DELIVERY: a->req.delivery = optarg; break;
		case OPT_KEY: a->req.key = optarg; break;
		case OPT_CARD: a->pay.card = optarg; break;
		case OPT_PAYMENT_METHOD: a->pay.payment_method = optarg; break;
		case OPT_STRIPE_KEY_FILE: a->pay.stripe_key_file = optarg; break;
		case OPT_BATCH: a->batch = 1; break;
		default: cli_common(c, opt, optarg);
		}
	}
	a->argc = argc - optind;
	a->argv = argv + optind;
	if (a->batch && (a->argc > 0 || a->req.customer || a->req.day ||
	    a->req.delivery || a->req.key || a->pay.card ||
	    a->pay.payment_method))
		cli_usage_error(c, "--batch takes its commands on stdin, and "
		    "no option but --stripe-key-file and the common ones");
	if (a->argc < 1 && !a->batch)
		cli_usage_error(c, "missing command");
}

/* The command's span (span.h), when spans are exported: a child of the
 * caller's TRACEPARENT, or a new trace; the events it records carry it. */
static span command;

static void
command_begin(const bakery_ctx *ctx, const char *name, const char *order)
{
	if (!span_on())
		return;
	trace_ctx caller;
	int called = tracectx_environment(&caller);
	span_begin(&command, name, SPAN_SERVER, called ? &caller : NULL);
	span_str(&command, "bakery.sandbox", ctx->sandbox);
	span_str(&command, "bakery.order", order);
	tracectx_set(&command.ctx);
}

/* A pay's span and trace: the order's, so that its events and the
 * order's are one trace; with a TRACEPARENT, the caller's, linked to the
 * order's (span_continue). */
static void
pay_begin(bakery_ctx *ctx, const char *order)
{
	trace_ctx caller, placed;
	int called = tracectx_environment(&caller);
	int known = order_trace(ctx, NULL, order, &placed) == 0;
	span_continue(&command, "pay order", SPAN_SERVER,
	    called ? &caller : NULL, known ? &placed : NULL);
	span_str(&command, "bakery.sandbox", ctx->sandbox);
	span_str(&command, "bakery.order", order);
}

static void
command_end(int rc, const char *order)
{
	if (!span_on())
		return;
	span_str(&command, "bakery.order", order);
	if (rc > 1)
		span_error(&command, bakery_error());
	span_end(&command);
}

static int
place(cli *c, bakery_ctx *ctx, struct args *a)
{
	if (!a->req.customer || !a->req.day)
		cli_usage_error(c, "place needs --customer and --day");
	a->req.items = a->argv + 1;
	a->req.n_items = a->argc - 1;
	bakery_object *o;
	jv out;
	command_begin(ctx, "place order", NULL);
	int rc = order_place(ctx, &a->req, &out, &o);
	if (rc) {
		command_end(rc, NULL);
		bakery_die_last(rc);
	}
	cli_print(jv_copy(out));
	char *lost = bakery_xasprintf("order %s was placed",
	    envelope_text(out, "id", "?"));
	answer_then_send(o, lost);
	free(lost);
	command_end(0, envelope_str(out, "id"));
	jv_free(out);
	return 0;
}

/* 0 paid, 1 declined (the answer is printed all the same). */
static int
pay(cli *c, bakery_ctx *ctx, struct args *a)
{
	if (a->argc != 2)
		cli_usage_error(c, "pay needs one ORDER");
	if (a->pay.card && a->pay.payment_method)
		cli_usage_error(c, "pay takes --card or --payment-method");
	a->pay.order_id = a->argv[1];
	bakery_object *billing;
	jv out;
	pay_begin(ctx, a->argv[1]);
	int rc = payment_pay(ctx, &a->pay, &out, &billing);
	if (rc > 1) {
		command_end(rc, NULL);
		bakery_die_last(rc);
	}
	if (rc == 1)
		bakery_print_error("payment declined: '%s': %s", a->argv[1],
		    envelope_str(out, "decline_code"));
	char *lost = bakery_xasprintf("order %s: payment %s", a->argv[1],
	    envelope_text(out, "status", "answered"));
	cli_print(out);
	answer_then_send(billing, lost);
	free(lost);
	command_end(rc, NULL);
	return rc;
}

static int
gateway(cli *c, bakery_ctx *ctx, const struct args *a)
{
	int argc = a->argc;
	if (argc > 2)
		cli_usage_error(c, "gateway takes at most one NAME");
	gateway_kind g = GATEWAY_NONE, was;
	if (argc == 2 && (g = gateway_parse(a->argv[1])) == GATEWAY_NONE)
		cli_usage_error(c, "unknown gateway: '%s': want test or "
		    "stripe", a->argv[1]);
	int rc = argc == 2 ? gateway_choose(ctx, g, &was)
			   : gateway_read(ctx->home, &was);
	if (rc)
		bakery_die_last(rc);
	jv out = jv_object_set(jv_object(), jv_string("home"),
	    jv_string(ctx->home));
	out = jv_object_set(out, jv_string("gateway"),
	    argc == 2 ? jv_string(gateway_name(g))
	    : was ? jv_string(gateway_name(was)) : jv_null());
	if (argc == 2)
		out = jv_object_set(out, jv_string("was"),
		    was ? jv_string(gateway_name(was)) : jv_null());
	cli_print(out);
	return 0;
}

static int
show(cli *c, bakery_ctx *ctx, const struct args *a)
{
	if (a->argc != 2)
		cli_usage_error(c, "%s needs one ORDER", a->argv[0]);
	ctx->look_only = 1; /* read as bakery-show reads */
	jv out;
	int rc = order_get(ctx, a->argv[1], &out);
	if (rc)
		bakery_die_last(rc);
	cli_print(out);
	return 0;
}

/* Prints each element of an array, one a line. */
static void
print_each(jv list)
{
	jv_array_foreach(list, i, e)
		cli_print(e);
	jv_free(list);
}

static int
events(cli *c, bakery_ctx *ctx, const struct args *a)
{
	if (a->argc != 2)
		cli_usage_error(c, "%s needs one ORDER", a->argv[0]);
	ctx->look_only = 1;
	jv out;
	int rc = order_events(ctx, a->argv[1], &out);
	if (rc)
		bakery_die_last(rc);
	print_each(out);
	return 0;
}

static int
list(cli *c, bakery_ctx *ctx, const struct args *a)
{
	if (a->argc != 1)
		cli_usage_error(c, "list takes no operands");
	ctx->look_only = 1;
	jv out, unread;
	int rc = order_list(ctx, &out, &unread);
	if (rc)
		bakery_die_last(rc);
	print_each(out);
	/* The orders it read, then each file it could not: the first
	 * one's status. */
	return cli_say_unread(unread);
}

static int
refunded(cli *c, bakery_ctx *ctx, const struct args *a)
{
	if (a->argc != 3)
		cli_usage_error(c, "refunded needs ORDER and PAYMENT_INTENT");
	jv out;
	int rc = refunds_mark(ctx, a->argv[1], a->argv[2], &out);
	if (rc)
		bakery_die_last(rc);
	cli_print(out);
	return 0;
}

/* A group's answers, one a line, flushed: they are given only now that
 * the group is committed and sent. */
static int
print_answers(void *unused, jv lines)
{
	(void)unused;
	print_each(lines);
	if (fflush(stdout) == EOF || ferror(stdout))
		return bakery_fail(EX_IOERR, "cannot write the answers: %s",
		    strerror(errno));
	return 0;
}

static int
batch(bakery_ctx *ctx, const struct args *a)
{
	batch_options opt = { a->pay.stripe_key_file, print_answers, NULL };
	/* An order a later line of the batch pays or cancels is found open
	 * (keep.h). */
	ctx->kept = keep_new(KEEP_MAX, KEEP_IDLE_MS);
	int status;
	/* A line's failure is in its answer; only the batch's own is said
	 * here (before, the last error recorded, a later line's, was). */
	int rc = batch_run(ctx, STDIN_FILENO, &opt, &status);
	if (rc)
		bakery_print_error("%s", bakery_error());
	return rc ? rc : status;
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	struct args a;
	parse(&c, argc, argv, &a);
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	/* Its sends are the command's own (QUEUE_BRIEF_WAIT_MS). */
	ctx.queue_wait_ms = QUEUE_BRIEF_WAIT_MS;
	const char *cmd = a.batch ? "--batch" : a.argv[0];
	int rc;
	if (a.batch)
		rc = batch(&ctx, &a);
	else if (strcmp(cmd, "place") == 0)
		rc = place(&c, &ctx, &a);
	else if (strcmp(cmd, "pay") == 0)
		rc = pay(&c, &ctx, &a);
	else if (strcmp(cmd, "gateway") == 0)
		rc = gateway(&c, &ctx, &a);
	else if (strcmp(cmd, "show") == 0)
		rc = show(&c, &ctx, &a);
	else if (strcmp(cmd, "events") == 0)
		rc = events(&c, &ctx, &a);
	else if (strcmp(cmd, "list") == 0)
		rc = list(&c, &ctx, &a);
	else if (strcmp(cmd, "refunded") == 0)
		rc = refunded(&c, &ctx, &a);
	else
		cli_usage_error(&c, "unknown command: '%s'", cmd);
	cli_exit(&ctx, rc);
}
