/*
 * bakery — runs bakery-CMD the way git runs its commands: from the folder
 * that holds this program first, then from PATH. `bakery help [CMD]` shows
 * the command's page with man(1) when man has it, else its usage.
 */
#define _GNU_SOURCE
#include "../lib/cli/cli.h"
#include "../lib/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE \
	"usage: bakery COMMAND [ARGS...]\n" \
	"       bakery help [COMMAND]   its page (man), else its usage\n" \
	"commands: order relay consume dlq redrive queue fault show status trace wipe webhook\n" \
	"          doctor backup standby\n" \
	"each has its own --help; see bakery(7)\n"

static int
command_valid(const char *cmd)
{
	return bakery_name_valid(cmd) && !strchr(cmd, '.');
}

/* The folder that holds this program, or NULL. */
static char *
self_dir(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return bakery_xstrdup(self);
}

/* Where bakery-CMD is: beside this program, else on PATH; or NULL. */
static char *
command_path(const char *name)
{
	char *dir = self_dir();
	char *path = dir ? bakery_xasprintf("%s/%s", dir, name) : NULL;
	free(dir);
	if (path && access(path, X_OK) == 0)
		return path;
	free(path);
	const char *env = getenv("PATH");
	char *dirs = bakery_xstrdup(env ? env : "/usr/bin:/bin"), *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d;
	    d = strtok_r(NULL, ":", &save)) {
		path = bakery_xasprintf("%s/%s", *d ? d : ".", name);
		if (access(path, X_OK) == 0)
			break;
		free(path);
		path = NULL;
	}
	free(dirs);
	return path;
}

/* Whether man(1) is there and has page: `man -w PAGE` says so quietly. */
static int
man_has(const char *page)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		execlp("man", "man", "-w", page, (char *)NULL);
		_exit(127);
	}
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* bakery help [CMD]: the page, else the usage; exits. */
static _Noreturn void
help(cli *c, int argc, char **argv)
{
	if (argc > 3)
		cli_usage_error(c, "unexpected operand: '%s'", argv[3]);
	if (argc == 3 && !command_valid(argv[2]))
		cli_usage_error(c, "unknown command: '%s'", argv[2]);
	char *page = argc == 3 ? bakery_xasprintf("bakery-%s", argv[2])
			       : bakery_xstrdup("bakery");
	char *path = argc == 3 ? command_path(page) : NULL;
	if (argc == 3 && !path)
		cli_usage_error(c, "unknown command: '%s'", argv[2]);
	fflush(stdout);
	if (man_has(page))
		execlp("man", "man", page, (char *)NULL);
	if (!path) {
		fputs(USAGE, stdout);
		exit(bakery_close_stdout() ? EX_IOERR : 0);
	}
	execl(path, page, "--help", (char *)NULL);
	bakery_print_error("cannot run '%s': %s", page, strerror(errno));
	exit(errno == EACCES ? EX_NOPERM : EX_OSERR);
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
	if (strcmp(argv[1], "help") == 0)
		help(&c, argc, argv);
	if (!command_valid(argv[1]))
		cli_usage_error(&c, "unknown command: '%s'", argv[1]);
	char *name = bakery_xasprintf("bakery-%s", argv[1]);
	argv[1] = name;
	char *self = self_dir();
	if (self) {
		char *path = bakery_xasprintf("%s/%s", self, name);
		execv(path, argv + 1);
		free(path);
		free(self);
	}
	execvp(name, argv + 1);
	int err = errno;
	if (err == ENOENT)
		cli_usage_error(&c, "unknown command: '%s'", name + 7);
	bakery_print_error("cannot run '%s': %s", name, strerror(err));
	return err == EACCES ? EX_NOPERM : EX_OSERR;
}
