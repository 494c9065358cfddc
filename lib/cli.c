/*
 * cli.c — common options, usage, and the end of every program.
 */
#include "cli.h"
#include "queue.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

static void
print_version(void)
{
	printf("%s %s (sqlite %s, journal_mode=%s)\n", bakery_prog,
	    BAKERY_VERSION, sqlite3_libversion(), store_journal_mode());
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
		print_version();
		exit(bakery_close_stdout() ? EX_IOERR : 0);
	case 'H':
		c->home = arg;
		break;
	case 's':
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
		/* getopt has said what was wrong. */
		fputs(c->usage, stderr);
		exit(EX_USAGE);
	}
}

_Noreturn void
cli_usage_error(const cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: error: ", bakery_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fputs(c->usage, stderr);
	exit(EX_USAGE);
}

void
cli_context(const cli *c, bakery_ctx *ctx)
{
	int rc = store_ctx_init(ctx, c->home, c->sandbox, c->queue);
	if (!rc)
		rc = queue_url_check(ctx->queue_url);
	if (rc)
		bakery_die_last(rc);
}

void
cli_print(jv v)
{
	jv s = jv_dump_string(v, 0);
	puts(jv_string_value(s));
	jv_free(s);
}

void
cli_report(void *unused, jv v)
{
	(void)unused;
	cli_print(v);
	fflush(stdout);
}

_Noreturn void
cli_exit(bakery_ctx *ctx, int code)
{
	if (ctx)
		store_ctx_free(ctx);
	if (bakery_close_stdout()) {
		fprintf(stderr, "%s: error: %s\n", bakery_prog, bakery_error());
		if (!code)
			code = EX_IOERR;
	}
	exit(code);
}

int
cli_read_stdin(int operands)
{
	return operands == 0 && !isatty(STDIN_FILENO);
}
