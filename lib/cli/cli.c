/*
 * cli.c — common options, usage, and the end of every program.
 */
#include "cli.h"
#include "../net/gateway.h"
#include "../net/span.h"
#include "../base/json.h"
#include "../queue/queue.h"
#include "../base/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lazy/lazy_curl.h"
#include "../lazy/lazy_nats.h"
#include <sqlite3.h>

/* jq 1.6's library has no call that says its version and its headers no
 * macro, so the Makefile records the libjq-dev it compiled against. */
#ifndef BAKERY_JQ_VERSION
#define BAKERY_JQ_VERSION "unknown"
#endif
/* "static" when the Makefile linked its own SQLite in (SQLITE=linked),
 * "shared" for the system's library (SQLITE=system). */
#ifndef BAKERY_SQLITE_LINK
#define BAKERY_SQLITE_LINK "shared"
#endif

/* The home's payment gateway, read without creating anything. */
static void
print_gateway(const char *home)
{
	char *h = home ? bakery_xstrdup(home) : home_default();
	gateway_kind g;
	if (gateway_read(h, &g))
		printf("gateway unknown: %s\n", bakery_error());
	else
		printf("gateway %s (home %s)\n", g ? gateway_name(g)
		    : "none chosen", h);
	free(h);
}

void
cli_print_version(const char *home)
{
	printf("%s %s\n", bakery_prog, BAKERY_VERSION);
	printf("sqlite %s (%s, journal_mode=%s)\n", sqlite3_libversion(),
	    BAKERY_SQLITE_LINK, wal_journal_mode());
	printf("libjq %s (compile time)\n", BAKERY_JQ_VERSION);
	/* Loaded here only to be named (lazy.h). */
	if (lazy_curl() == 0)
		printf("libcurl %s\n", curl_version_info(CURLVERSION_NOW)->version);
	else
		printf("libcurl not loaded: %s\n", bakery_error());
	if (lazy_nats() == 0)
		printf("nats.c %s\n", nats_GetVersion());
	else
		printf("nats.c not loaded: %s\n", bakery_error());
	print_gateway(home);
}

/* The option's name as it was given, "--NAME" without "=VALUE": a value
 * is never repeated in a message, since it may be a secret. */
static int
name_len(const char *arg)
{
	return (int)strcspn(arg, "=");
}

/* getopt reports nothing (opterr = 0, bakery_init): say what was wrong in
 * the log's format, naming the option as it was given. */
static _Noreturn void
bad_option(const cli *c)
{
	const char *arg = c->argv && optind > 0 ? c->argv[optind - 1] : NULL;
	if (arg && strncmp(arg, "--", 2) == 0) {
		if (optopt == 0)
			cli_usage_error(c, "unknown option: '%.*s'",
			    name_len(arg), arg);
		if (strchr(arg, '='))
			cli_usage_error(c, "option takes no value: '%.*s'",
			    name_len(arg), arg);
		cli_usage_error(c, "option needs a value: '%s'", arg);
	}
	const char *known = strchr(CLI_COMMON_SHORT, optopt);
	if (optopt > 0 && optopt < 128 && known && known[1] == ':')
		cli_usage_error(c, "option needs a value: '-%c'", optopt);
	if (optopt > 0 && optopt < 128)
		cli_usage_error(c, "unknown option: '-%c'", optopt);
	cli_usage_error(c, "bad option");
}

int
cli_getopt(const cli *c, int argc, char **argv,
    const struct option *options)
{
	int index = -1;
	int opt = getopt_long(argc, argv, CLI_COMMON_SHORT, options, &index);
	if (opt == -1 || opt == '?' || index < 0)
		return opt;
	/* The element that named the option: the one before its value when
	 * the value came as the next argument. */
	const char *arg = optarg && optind >= 2 && optarg == argv[optind - 1]
	    ? argv[optind - 2] : argv[optind - 1];
	if (strncmp(arg, "--", 2) == 0 &&
	    ((size_t)name_len(arg + 2) != strlen(options[index].name) ||
	     strncmp(arg + 2, options[index].name, strlen(options[index].name))))
		cli_usage_error(c, "option not spelled out: '%.*s': write "
		    "--%s in full", name_len(arg), arg, options[index].name);
	return opt;
}

void
cli_parse(cli *c, int *argc, char ***argv, const struct option *options)
{
	int opt;
	while ((opt = cli_getopt(c, *argc, *argv, options)) != -1) {
		if (opt >= CLI_OPT_FIRST_FREE && opt < CLI_OPT_FIRST_FREE +
		    CLI_OPT_MAX)
			c->given[opt - CLI_OPT_FIRST_FREE] = optarg ? optarg
			    : (*argv)[optind - 1];
		else
			cli_common(c, opt, optarg);
	}
	*argc -= optind;
	*argv += optind;
}

const struct option cli_common_options[] = {
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

cli
cli_start(const char *usage, const struct option *options, int *argc,
    char ***argv)
{
	bakery_init((*argv)[0]);
	cli c = { .usage = usage, .argv = *argv };
	cli_parse(&c, argc, argv, options);
	return c;
}

void
cli_common(cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 'h':
		fputs(c->usage, stdout);
		fputs(CLI_COMMON_USAGE, stdout);
		exit(bakery_close_stdout() ? EX_IOERR : 0);
	case 'V':
		cli_print_version(c->home);
		exit(bakery_close_stdout() ? EX_IOERR : 0);
	case 'H':
		c->home = arg;
		break;
	case 's':
		/* An empty -s would quietly mean the default sandbox. */
		if (!*arg)
			cli_usage_error(c, "bad sandbox name: '': want "
			    "[a-z0-9][a-z0-9_.-]{0,63} without '..'");
		c->sandbox = arg;
		break;
	case CLI_OPT_QUEUE:
		c->queue = arg;
		break;
	case 'q':
		bakery_verbosity = LOG_ERROR;
		break;
	case 'v':
		if (bakery_verbosity < LOG_DEBUG)
			bakery_verbosity++;
		break;
	default:
		bad_option(c);
	}
}

int
cli_number(const cli *c, const char *name, const char *arg, int min,
    int max)
{
	long long v;
	if (bakery_parse_number(arg, min, max, &v))
		cli_usage_error(c, "bad %s: '%s': want %d to %d", name, arg, min,
		    max);
	return (int)v;
}

_Noreturn void
cli_usage_error(const cli *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (bakery_log_json()) {
		bakery_log(LOG_ERROR, "usage_error", "message", msg, "usage",
		    c->usage, (char *)NULL);
	} else {
		bakery_print_error("%s", msg);
		fputs(c->usage, stderr);
	}
	exit(EX_USAGE);
}

void
cli_context(const cli *c, bakery_ctx *ctx)
{
	int rc = ctx_init(ctx, c->home, c->sandbox, c->queue);
	if (!rc && c->home_writes)
		rc = home_may_write(ctx);
	if (!rc)
		rc = queue_config_check(ctx, c->queue_may_be_missing);
	if (rc)
		bakery_die_last(rc);
}

void
cli_print(jv v)
{
	size_t len;
	char *s = json_dump(v, &len);
	fwrite(s, 1, len, stdout);
	putchar('\n');
	free(s);
}

void
cli_report(void *unused, jv v)
{
	(void)unused;
	cli_print(v);
	fflush(stdout);
}

int
cli_say_unread(jv unread)
{
	int code = 0;
	jv_array_foreach(unread, i, one) {
		jv error = jv_object_get(jv_copy(one), jv_string("error"));
		jv c = jv_object_get(one, jv_string("code"));
		bakery_print_error("%s", jv_string_value(error));
		if (!code)
			code = (int)jv_number_value(c);
		jv_free(error);
		jv_free(c);
	}
	jv_free(unread);
	return code;
}

_Noreturn void
cli_exit(bakery_ctx *ctx, int code)
{
	if (ctx)
		ctx_free(ctx);
	if (bakery_close_stdout()) {
		bakery_print_error("%s", bakery_error());
		if (!code)
			code = EX_IOERR;
	}
	/* The spans sent now, the output closed, and not by exit's handlers:
	 * a library loaded since span_on() (libcurl for an http: or https:
	 * subscriber, OpenSSL under it) registered its own end after ours,
	 * to run before it. */
	span_flush();
	exit(code);
}

int
cli_read_stdin(int operands)
{
	return operands == 0 && !isatty(STDIN_FILENO);
}
