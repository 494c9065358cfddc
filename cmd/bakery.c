/*
 * bakery — runs bakery-CMD the way git runs its commands: from the folder
 * that holds this program first, then from PATH.
 */
#define _GNU_SOURCE
#include "../lib/cli.h"
#include "../lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE \
	"usage: bakery COMMAND [ARGS...]\n" \
	"commands: order relay consume dlq redrive queue fault show status trace wipe webhook\n" \
	"          doctor backup\n" \
	"each has its own --help; see bakery(7)\n"

static int
command_valid(const char *cmd)
{
	return bakery_name_valid(cmd) && !strchr(cmd, '.');
}

int
main(int argc, char **argv)
{
	bakery_init(argv[0]);
	cli c = { .usage = USAGE, .argv = argv };
	if (argc < 2)
		cli_usage_error(&c, "missing command");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(USAGE, stdout);
		return bakery_close_stdout() ? EX_IOERR : 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		cli_print_version(NULL);
		return bakery_close_stdout() ? EX_IOERR : 0;
	}
	if (!command_valid(argv[1]))
		cli_usage_error(&c, "unknown command: '%s'", argv[1]);
	char *name = bakery_xasprintf("bakery-%s", argv[1]);
	argv[1] = name;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			char *path = bakery_xasprintf("%s/%s", self, name);
			execv(path, argv + 1);
			free(path);
		}
	}
	execvp(name, argv + 1);
	int err = errno;
	if (err == ENOENT)
		cli_usage_error(&c, "unknown command: '%s'", name + 7);
	bakery_print_error("cannot run '%s': %s", name, strerror(err));
	return err == EACCES ? EX_NOPERM : EX_OSERR;
}
