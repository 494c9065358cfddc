/*
 * cli.h — what every program's command line shares.
 *
 * Common options: -h/--help (usage to stdout, exit 0), -V/--version (the
 * versions of bakery and of the libraries it runs on), -H/--home DIR,
 * -s/--sandbox NAME, --queue URL, -q/--quiet, -v/--verbose.
 * Misuse prints the error and the usage on stderr and exits 64; with
 * BAKERY_LOG=json it is one JSON line (event "usage_error") carrying both.
 *
 * A program lists CLI_COMMON_OPTIONS in its option table, reads its
 * options with cli_getopt(), and hands every option it does not know
 * itself to cli_common(). No message repeats an option's value.
 */
#ifndef BAKERY_CLI_H
#define BAKERY_CLI_H

#include <getopt.h>
#include <stdio.h>

#include <jv.h>

#include "../store/store.h"

enum { CLI_OPT_QUEUE = 1000, CLI_OPT_FIRST_FREE = 1100, CLI_OPT_MAX = 16 };

#define CLI_COMMON_SHORT "hVH:s:qv"
#define CLI_COMMON_OPTIONS                                              \
	{ "help", no_argument, NULL, 'h' },                             \
	{ "version", no_argument, NULL, 'V' },                          \
	{ "home", required_argument, NULL, 'H' },                       \
	{ "sandbox", required_argument, NULL, 's' },                    \
	{ "queue", required_argument, NULL, CLI_OPT_QUEUE },            \
	{ "quiet", no_argument, NULL, 'q' },                            \
	{ "verbose", no_argument, NULL, 'v' }

/* The options of a program that has none of its own. */
extern const struct option cli_common_options[];

#define CLI_COMMON_USAGE                                                \
	"common options:\n"                                             \
	"  -H, --home DIR      state folder (BAKERY_HOME)\n"            \
	"  -s, --sandbox NAME  sandbox (BAKERY_SANDBOX, default 'default')\n" \
	"      --queue URL     sqlite:PATH or nats://HOST:PORT[,...] (BAKERY_QUEUE)\n"     \
	"  -q, --quiet         log errors only\n"                       \
	"  -v, --verbose       log more (twice for debug)\n"            \
	"  -h, --help          show this help\n"                        \
	"  -V, --version       show the version\n"

typedef struct cli {
	const char *usage; /* the program's usage text, ending in '\n' */
	char **argv;       /* main's argv, to name a bad option */
	const char *home;
	const char *sandbox;
	const char *queue;
	/* cli_parse: the program's options given (CLI_GIVEN) */
	const char *given[CLI_OPT_MAX];
	int queue_may_be_missing; /* a sqlite: URL's missing file is not
			    * refused here (queue.h): the program makes it
			    * (bakery-queue init) or reports it (bakery-doctor) */
	int home_writes;   /* the program's work is writing for the home
			    * (consume, relay, redrive, a drain, a send): a
			    * home a newer bakery wrote is refused as the
			    * context is made (home_may_write), before
			    * anything is received or sent, on any queue */
} cli;

/* getopt_long with CLI_COMMON_SHORT and options, but a long option is
 * taken only spelled out in full: getopt_long would take any unambiguous
 * prefix, and a prefix can put a value in a secret option's place
 * (--stripe-key sk_live_… for --stripe-key-file). A prefix is a usage
 * error that names the option and never its value. */
int cli_getopt(const cli *c, int argc, char **argv,
    const struct option *options);
/* Reads the options of *argc and *argv with cli_getopt, then moves both
 * past them to the operands. A common option is handled (cli_common); one
 * of the program's, whose val is CLI_OPT_FIRST_FREE + i, is kept in
 * c->given[i]: its value, or the word that named it when it takes none
 * (the last of a repeated option wins). */
void cli_parse(cli *c, int *argc, char ***argv, const struct option *options);
/* A program's start: bakery_init, its cli (usage the program's usage
 * text), and cli_parse of its options. */
cli cli_start(const char *usage, const struct option *options, int *argc,
    char ***argv);
/* What cli_parse kept of the program's option opt; NULL: not given. */
#define CLI_GIVEN(c, opt) ((c)->given[(opt) - CLI_OPT_FIRST_FREE])
/* Handles a common option or '?'; exits for -h, -V and misuse. */
void cli_common(cli *c, int opt, const char *arg);
/* arg, the value of the option name, as a number from min to max; else
 * a usage error, "bad NAME: 'ARG': want MIN to MAX". */
int cli_number(const cli *c, const char *name, const char *arg, int min,
    int max);
/* Prints "PROG: error: MSG" and the usage on stderr; exits 64. */
_Noreturn void cli_usage_error(const cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Fills ctx from the common options and checks the queue's
 * (queue_config_check), or dies. */
void cli_context(const cli *c, bakery_ctx *ctx);
/* Prints the versions: bakery, SQLite, libjq, libcurl, nats.c; and the
 * payment gateway of home (NULL: the default home, store.h). */
void cli_print_version(const char *home);
/* Prints one JSON value as a line on stdout. Consumes v. */
void cli_print(jv v);
/* cli_print and flush, as a report callback (relay.h, wipe.h). */
void cli_report(void *unused, jv v);
/* Says each file a listing could not read (object_list_unread's
 * {"address","file","error","code"}), one error line each on stderr;
 * returns the first one's code, 0 when there is none. Consumes unread. */
int cli_say_unread(jv unread);
/* Frees ctx, closes stdout, sends the spans held (span.h), exits with
 * code (74 if stdout failed). */
_Noreturn void cli_exit(bakery_ctx *ctx, int code);

/* Whether the program should read its operands from stdin: no operands
 * were given and stdin is not a terminal. */
int cli_read_stdin(int operands);

#endif
