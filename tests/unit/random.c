/*
 * random.c — bakery_random_id: ids drawn from a pool that one getrandom
 * fills never repeat, in a process or across a fork.
 */
#include "tap.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/base/util.h"

static int
compare(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Whether the id is "ord_" and 24 lowercase hex digits. */
static int
shaped(const char *id)
{
	if (strncmp(id, "ord_", 4) != 0 || strlen(id) != 28)
		return 0;
	for (const char *p = id + 4; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

int
main(void)
{
	char a[64], b[64];
	bakery_random_id("ord_", a, sizeof a);
	bakery_random_id("ord_", b, sizeof b);
	ok(shaped(a) && shaped(b), "an id is its prefix and 24 hex digits");
	ok(strcmp(a, b) != 0, "two ids in a row differ");

	/* 1,000 ids draw 12,000 bytes: the pool is filled again twice. */
	enum { N = 1000 };
	static char many[N][64];
	for (int i = 0; i < N; i++)
		bakery_random_id("ord_", many[i], sizeof many[i]);
	qsort(many, N, sizeof many[0], compare);
	int repeated = 0;
	for (int i = 1; i < N; i++)
		repeated |= strcmp(many[i - 1], many[i]) == 0;
	ok(!repeated, "1,000 ids, past the pool's refills, all differ");

	/* The pool is partly used when the process forks: the child must
	 * not draw the bytes its parent draws next. */
	int fds[2];
	if (pipe(fds) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char c[64];
		bakery_random_id("ord_", c, sizeof c);
		ssize_t w = write(fds[1], c, strlen(c) + 1);
		_exit(w > 0 ? 0 : 1);
	}
	char child[64] = "", parent[64];
	bakery_random_id("ord_", parent, sizeof parent);
	ssize_t r = read(fds[0], child, sizeof child - 1);
	int status;
	waitpid(pid, &status, 0);
	ok(r > 0 && shaped(child), "the forked child draws an id");
	ok(strcmp(child, parent) != 0,
	    "a forked child's id differs from its parent's next one");
	return done_testing();
}
