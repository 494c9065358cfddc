/*
 * bakery-webhook — Billing's receiver for Stripe's webhook.
 *
 * Under a web server (GATEWAY_INTERFACE set) it is a CGI program: the
 * request is REQUEST_METHOD, CONTENT_LENGTH, HTTP_STRIPE_SIGNATURE and the
 * body on stdin; the answer is a Status line and a short JSON body.
 * Otherwise it reads one body on stdin and exits 0, 65 or 77. Either way
 * Billing (billing_receive) checks the signature and records
 * PaymentSucceeded once; the answer goes out before billing's outbox is
 * sent, so Stripe never waits on the queue, and the server's SIGTERM at
 * the end of the answer is ignored until that send is done.
 */
#include "../lib/orders/billing.h"
#include "../lib/cli/cli.h"
#include "../lib/core/outbox.h"
#include "../lib/queue/queue.h"
#include "../lib/net/span.h"
#include "../lib/net/stripe.h"
#include "../lib/base/util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE \
	"usage: bakery-webhook [--signature HEADER] [--secret-file FILE]\n" \
	"                      [--tolerance SECONDS] [--max-body BYTES] < BODY\n" \
	"       as a CGI program: REQUEST_METHOD, CONTENT_LENGTH and\n" \
	"       HTTP_STRIPE_SIGNATURE; the answer is an HTTP response\n"

enum { OPT_SIGNATURE = CLI_OPT_FIRST_FREE, OPT_SECRET_FILE, OPT_TOLERANCE,
	OPT_MAX_BODY };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "signature", required_argument, NULL, OPT_SIGNATURE },
	{ "secret-file", required_argument, NULL, OPT_SECRET_FILE },
	{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
	{ "max-body", required_argument, NULL, OPT_MAX_BODY },
	{ NULL, 0, NULL, 0 },
};

static const char *
reason_phrase(int http)
{
	switch (http) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	default: return "Service Unavailable";
	}
}

/* The answer: an HTTP response under CGI (a refusal is logged to the
 * server's error log; a 503's reason stays there, as it may name files),
 * else a JSON line and, when refused, an error on stderr. */
static void
respond(int cgi, const billing_answer *a)
{
	char status[8];
	snprintf(status, sizeof status, "%d", a->http);
	if (cgi && a->http != 200)
		bakery_log(a->http == 503 ? LOG_ERROR : LOG_WARN,
		    "webhook_refused", "status", status, "reason", a->message,
		    (char *)NULL);
	jv j = jv_object();
	j = jv_object_set(j, jv_string("status"), jv_number(a->http));
	j = jv_object_set(j, jv_string("message"), jv_string(
	    cgi && a->http == 503 ? "unavailable, try again" : a->message));
	if (cgi) {
		printf("Status: %d %s\r\nContent-Type: application/json\r\n",
		    a->http, reason_phrase(a->http));
		if (a->http == 405)
			printf("Allow: POST\r\n");
		printf("\r\n");
	} else if (a->http != 200) {
		bakery_print_error("%s", a->message);
	}
	cli_print(j);
}

/* The request's span, under a web server, after OpenTelemetry's HTTP
 * server conventions: a child of the request's traceparent header, else a
 * new trace (Stripe's event carries none), linked to the trace of the
 * order the payment continues (billing_answer.order_trace). */
static span request;
static int serving;

static void
request_begin(int traced)
{
	if (!span_on())
		return;
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT",
		"DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", NULL };
	const char *given = getenv("REQUEST_METHOD"), *method = "_OTHER";
	for (int i = 0; given && methods[i]; i++)
		if (strcmp(given, methods[i]) == 0)
			method = methods[i];
	/* The script's path is the route: the server's, but checked. */
	const char *route = getenv("SCRIPT_NAME");
	if (route && (route[0] != '/' || !bakery_text_valid(route, 200)))
		route = NULL;
	char name[220];
	snprintf(name, sizeof name, "%s%s%s", method, route ? " " : "",
	    route ? route : "");
	trace_ctx caller;
	int called = traced && tracectx_current(&caller);
	span_begin(&request, name, SPAN_SERVER, called ? &caller : NULL);
	span_str(&request, "http.request.method", method);
	span_str(&request, "http.route", route);
	tracectx_set(&request.ctx);
	serving = 1;
}

static void
request_end(const billing_answer *a)
{
	if (!serving)
		return;
	serving = 0;
	span_int(&request, "http.response.status_code", a->http);
	if (a->order_traced)
		span_link(&request, &a->order_trace);
	if (a->http >= 500) {
		char code[16];
		snprintf(code, sizeof code, "%d", a->http);
		span_str(&request, "error.type", code);
		span_error(&request, a->message);
	}
	span_end(&request);
}

static void
refuse(billing_answer *a, int http, int code, const char *msg)
{
	a->http = http;
	a->exit_code = code;
	snprintf(a->message, sizeof a->message, "%s", msg);
}

/* Reads up to max + 1 bytes (or exactly want, when want >= 0). */
static char *
read_body(ssize_t want, size_t max, size_t *len)
{
	size_t cap = want >= 0 ? (size_t)want + 1 : max + 2, n = 0;
	char *buf = bakery_xmalloc(cap);
	while (n < cap - 1) {
		ssize_t r = read(STDIN_FILENO, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static long
number_arg(const cli *c, const char *name, const char *arg, long max)
{
	long long n;
	if (bakery_parse_number(arg, 1, max, &n))
		cli_usage_error(c, "bad %s: '%s': want 1 to %ld", name, arg, max);
	return (long)n;
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	const char *signature = NULL, *secret_file = NULL;
	billing_options opt = { NULL, STRIPE_TOLERANCE_S, BILLING_MAX_BODY, 0 };
	int o;
	while ((o = cli_getopt(&c, argc, argv, options)) != -1) {
		switch (o) {
		case OPT_SIGNATURE: signature = optarg; break;
		case OPT_SECRET_FILE: secret_file = optarg; break;
		case OPT_TOLERANCE:
			opt.tolerance_s = (int)number_arg(&c, "tolerance",
			    optarg, 86400);
			break;
		case OPT_MAX_BODY:
			opt.max_body = (size_t)number_arg(&c, "max-body", optarg,
			    16 * 1024 * 1024);
			break;
		default: cli_common(&c, o, optarg);
		}
	}
	if (optind != argc)
		cli_usage_error(&c, "no operands: the body comes on stdin");
	const char *gateway = getenv("GATEWAY_INTERFACE");
	int cgi = gateway && *gateway;
	if (!signature)
		signature = getenv("HTTP_STRIPE_SIGNATURE");

	billing_answer a = { 0 };
	char *body = NULL, *secret = NULL;
	size_t len = 0;
	bakery_ctx ctx = { 0 };
	int have_ctx = 0;
	if (cgi) {
		/* PaymentSucceeded continues the caller's trace, else its
		 * order's (billing_options.traced). */
		opt.traced = tracectx_set_request();
		request_begin(opt.traced);
		const char *method = getenv("REQUEST_METHOD");
		const char *length = getenv("CONTENT_LENGTH");
		long long n = -1;
		if (!method || strcmp(method, "POST") != 0)
			refuse(&a, 405, EX_USAGE, "only POST");
		else if (!length || !*length)
			refuse(&a, 400, EX_DATAERR, "no Content-Length");
		/* RFC 9110: 1*DIGIT, nothing else. */
		else if (bakery_parse_number(length, 0, LLONG_MAX, &n))
			refuse(&a, 400, EX_DATAERR, "bad Content-Length: want "
			    "digits only");
		else if ((unsigned long long)n > opt.max_body)
			refuse(&a, 413, EX_DATAERR, "body too large");
		else if ((body = read_body((ssize_t)n, 0, &len)), len != (size_t)n)
			refuse(&a, 400, EX_DATAERR, "body shorter than its "
			    "Content-Length");
	} else {
		body = read_body(-1, opt.max_body, &len);
	}
	if (!a.http && billing_endpoint_secret(secret_file, &secret))
		refuse(&a, 503, EX_CONFIG, bakery_error());
	if (!a.http) {
		/* A queue misnamed is refused before anything is recorded: 503,
		 * and Stripe delivers the event again once it is fixed. */
		int rc = ctx_init(&ctx, c.home, c.sandbox, c.queue);
		have_ctx = 1;
		/* Its send is the request's own (QUEUE_BRIEF_WAIT_MS). */
		ctx.queue_wait_ms = QUEUE_BRIEF_WAIT_MS;
		/* Nor in a home a newer bakery wrote (78, a 503). */
		if (!rc)
			rc = home_may_write(&ctx);
		if (!rc)
			rc = queue_config_check(&ctx, 0);
		if (rc)
			refuse(&a, 503, rc, bakery_error());
	}
	bakery_object *billing = NULL;
	if (!a.http) {
		/* The sandbox is the payment intent's metadata.sandbox. */
		opt.secret = secret;
		billing_receive(&ctx, body, len, signature, &opt, &a, &billing);
		if (a.recorded)
			bakery_log(LOG_INFO, "payment_recorded", "address",
			    billing->address, (char *)NULL);
	}
	/* A web server ends a CGI program whose answer is complete with
	 * SIGTERM (lighttpd does, as soon as it reads the end of stdout):
	 * ignored from here, so that the send below is not cut short. It
	 * is bounded by the queue's own timeouts, and the spans' send at the
	 * end by the exporter's. */
	if (cgi && (billing || serving))
		signal(SIGTERM, SIG_IGN);
	respond(cgi, &a);
	request_end(&a);
	free(body);
	free(secret);
	if (bakery_close_stdout())
		bakery_log(LOG_ERROR, "answer_lost", "reason", bakery_error(),
		    (char *)NULL);
	if (billing)
		outbox_send(billing, NULL);
	object_close(billing);
	/* Under CGI the Status line was the answer; the exit code is for
	 * the server's log only. */
	cli_exit(have_ctx ? &ctx : NULL, a.exit_code);
}
