/*
 * bakery-console — the bakery in a browser: a CGI program under
 * lighttpd (share/lighttpd/), and the accounts that may sign in to it.
 *
 * Under a web server (GATEWAY_INTERFACE set) it serves one request of
 * the console's pages (lib/console/console.h says what each request must
 * pass); otherwise it manages the accounts (lib/web/account.h) in the home.
 */
#define _GNU_SOURCE
#include "../lib/web/account.h"
#include "../lib/cli/cli.h"
#include "../lib/console/console.h"
#include "../lib/net/span.h"
#include "../lib/base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define USAGE \
	"usage: bakery-console user add NAME [--sandbox S] [--operator]\n" \
	"       bakery-console user passwd NAME\n" \
	"       bakery-console user del NAME\n" \
	"       bakery-console user list\n" \
	"       as a CGI program (GATEWAY_INTERFACE set): the console's pages\n" \
	"       under /console/ (bakery-console(1))\n" \
	"the password is read from the terminal without echo, twice, or as one\n" \
	"line on stdin; the sandbox of a new account is its name unless given\n"

enum { OPT_OPERATOR = CLI_OPT_FIRST_FREE };

static const struct option options[] = {
	CLI_COMMON_OPTIONS,
	{ "operator", no_argument, NULL, OPT_OPERATOR },
	{ NULL, 0, NULL, 0 },
};

/* One line of at most ACCOUNT_PASSWORD_MAX bytes from fd into buf (its
 * newline dropped); -1 when longer, or when nothing could be read. */
static int
read_line(FILE *in, char *buf, size_t size)
{
	if (!fgets(buf, (int)size, in))
		return -1;
	size_t len = strcspn(buf, "\n");
	if (buf[len] != '\n' && !feof(in))
		return -1; /* longer than the buffer */
	buf[len] = '\0';
	if (len && buf[len - 1] == '\r')
		buf[len - 1] = '\0';
	return 0;
}

/* From a terminal: asked for, not echoed. */
static int
ask(const char *prompt, char *buf, size_t size)
{
	struct termios old, quiet;
	if (tcgetattr(STDIN_FILENO, &old))
		return -1;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	fputs(prompt, stderr);
	fflush(stderr);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	int rc = read_line(stdin, buf, size);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
	fputc('\n', stderr);
	return rc;
}

/* The new password, from the terminal (twice) or stdin; exits on a
 * failure. The caller wipes buf. */
static void
new_password(char *buf, size_t size)
{
	if (!isatty(STDIN_FILENO)) {
		if (read_line(stdin, buf, size))
			bakery_die(EX_DATAERR, "no password on stdin, or one "
			    "longer than " DIGITS_OF(ACCOUNT_PASSWORD_MAX)
			    " bytes");
		return;
	}
	char again[ACCOUNT_PASSWORD_MAX + 2];
	int bad = ask("password: ", buf, size) ||
	    ask("password again: ", again, sizeof again);
	int differ = !bad && strcmp(buf, again) != 0;
	explicit_bzero(again, sizeof again);
	if (bad || differ) {
		explicit_bzero(buf, size);
		bakery_die(EX_DATAERR, bad ? "no password read" : "the two "
		    "passwords differ");
	}
}

static jv
account_line(const char *name, const char *change)
{
	jv line = jv_object_set(jv_object(), jv_string("account"),
	    jv_string(name));
	return jv_object_set(line, jv_string("change"), jv_string(change));
}

static int
user(cli *c, bakery_ctx *ctx, int operator, int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int list = strcmp(cmd, "list") == 0;
	int add = strcmp(cmd, "add") == 0;
	if (!list && !add && strcmp(cmd, "passwd") && strcmp(cmd, "del"))
		cli_usage_error(c, argc > 1 ? "unknown user command: '%s'"
		    : "user needs add, passwd, del or list", cmd);
	if (list ? argc != 2 : argc != 3)
		cli_usage_error(c, list ? "user list takes no operands"
		    : "user %s needs one NAME", cmd);
	if ((operator || c->sandbox) && !add)
		cli_usage_error(c, "--operator and --sandbox go with user add");
	if (list) {
		jv all;
		int rc = account_list(ctx, &all);
		if (!rc)
			jv_array_foreach(all, i, a)
				cli_print(a);
		jv_free(all);
		return rc;
	}
	const char *name = argv[2];
	if (strcmp(cmd, "del") == 0) {
		int rc = account_delete(ctx, name);
		if (!rc)
			cli_print(account_line(name, "deleted"));
		return rc;
	}
	char password[ACCOUNT_PASSWORD_MAX + 2];
	new_password(password, sizeof password);
	const char *sandbox = c->sandbox ? c->sandbox : name;
	int rc = add ? account_add(ctx, name, password, sandbox, operator)
		     : account_passwd(ctx, name, password);
	explicit_bzero(password, sizeof password);
	if (!rc) {
		jv line = account_line(name, add ? "added" : "password changed");
		if (add) {
			line = jv_object_set(line, jv_string("sandbox"),
			    jv_string(sandbox));
			line = jv_object_set(line, jv_string("operator"),
			    jv_bool(operator));
		}
		cli_print(line);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	/* Under a web server the request is the only input: an operand or
	 * option there may come from a query string (a server may pass one
	 * with no '=' as arguments, RFC 3875 4.4), so none is read. */
	const char *gateway = getenv("GATEWAY_INTERFACE");
	if (gateway && *gateway) {
		if (argc > 1) {
			bakery_log(LOG_ERROR, "console_refused", "reason",
			    "arguments under a web server", (char *)NULL);
			fputs("Status: 400 Bad Request\r\nContent-Type: "
			    "text/plain; charset=utf-8\r\n\r\nbakery-console "
			    "takes no arguments under a web server.\n", stdout);
			bakery_close_stdout();
			return EX_USAGE;
		}
		/* The events this request records continue its caller's
		 * trace, or one of their own. */
		tracectx_set_request();
		/* A web server ends a CGI program whose answer is complete
		 * with SIGTERM (lighttpd does): ignored while spans are
		 * exported, so that they are sent at the end, within the
		 * exporter's bound. */
		if (span_on())
			signal(SIGTERM, SIG_IGN);
		int rc = console_serve(NULL, NULL);
		if (bakery_close_stdout())
			bakery_log(LOG_ERROR, "answer_lost", "reason",
			    bakery_error(), (char *)NULL);
		return rc;
	}
	cli c = { .usage = USAGE, .argv = argv };
	cli_parse(&c, &argc, &argv, options);
	int operator = CLI_GIVEN(&c, OPT_OPERATOR) != NULL;
	if (argc < 1 || strcmp(argv[0], "user") != 0)
		cli_usage_error(&c, argc ? "unknown command: '%s'"
		    : "missing command (user), or no CGI environment", argc
		    ? argv[0] : "");
	bakery_ctx ctx;
	cli_context(&c, &ctx);
	int rc = user(&c, &ctx, operator, argc, argv);
	if (rc)
		bakery_die_last(rc);
	cli_exit(&ctx, 0);
}
