/*
 * keep.c — connections kept open for the next use (keep.h).
 *
 * A short array of pointers, most recently used last: a consumer keeps
 * tens of objects, and a walk over them costs less than the one stat(2)
 * each use makes anyway. An entry holds its statements (half a
 * kilobyte): moved in the array at each drop, they cost more than the
 * walk, so the array holds pointers.
 */
#define _GNU_SOURCE
#include "keep.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct kept {
	char *path;
	dev_t dev;
	ino_t ino;
	sqlite3 *db;
	db_stmts stmts;
	int64_t used_ms; /* the monotonic clock: BAKERY_NOW may be pinned */
};

struct keep_pool {
	int max, n;
	long idle_ms;
	struct kept **e;
};

static int64_t
monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

keep_pool *
keep_new(int max, long idle_ms)
{
	keep_pool *k = bakery_xmalloc(sizeof *k);
	k->max = max > 0 ? max : 1;
	k->n = 0;
	k->idle_ms = idle_ms;
	k->e = bakery_xmalloc((size_t)k->max * sizeof *k->e);
	return k;
}

static void
close_kept(struct kept *e)
{
	db_stmts_free(&e->stmts);
	sqlite3_close(e->db);
	free(e->path);
	free(e);
}

/* Closes the gap entry i leaves, keeping the order. */
static void
forget(keep_pool *k, int i)
{
	memmove(&k->e[i], &k->e[i + 1], (size_t)(k->n - i - 1) * sizeof *k->e);
	k->n--;
}

/* Closes entry i and forgets it. */
static void
drop(keep_pool *k, int i)
{
	close_kept(k->e[i]);
	forget(k, i);
}

void
keep_free(keep_pool *k)
{
	if (!k)
		return;
	while (k->n)
		drop(k, k->n - 1);
	free(k->e);
	free(k);
}

int
keep_take(keep_pool *k, const char *path, sqlite3 **db, db_stmts *stmts)
{
	int i = k->n - 1;
	while (i >= 0 && strcmp(k->e[i]->path, path) != 0)
		i--;
	if (i < 0)
		return 0;
	struct stat sb;
	if (stat(path, &sb) != 0 || sb.st_dev != k->e[i]->dev ||
	    sb.st_ino != k->e[i]->ino) {
		/* Moved aside by a wipe, removed, or replaced: the
		 * connection writes a file nobody will read. */
		drop(k, i);
		return 0;
	}
	*db = k->e[i]->db;
	*stmts = k->e[i]->stmts;
	free(k->e[i]->path);
	free(k->e[i]);
	forget(k, i);
	return 1;
}

void
keep_put(keep_pool *k, const char *path, sqlite3 *db, db_stmts *stmts)
{
	struct kept *e = bakery_xmalloc(sizeof *e);
	*e = (struct kept){ .db = db, .stmts = *stmts };
	memset(stmts, 0, sizeof *stmts);
	struct stat sb;
	if (stat(path, &sb) != 0) {
		close_kept(e);
		return;
	}
	e->path = bakery_xstrdup(path);
	e->dev = sb.st_dev;
	e->ino = sb.st_ino;
	e->used_ms = monotonic_ms();
	/* The same file opened twice at once: the older connection goes. */
	for (int i = 0; i < k->n; i++)
		if (strcmp(k->e[i]->path, path) == 0) {
			drop(k, i);
			break;
		}
	if (k->n == k->max)
		drop(k, 0); /* the least recently used */
	k->e[k->n++] = e;
}

void
keep_idle(keep_pool *k)
{
	if (!k)
		return;
	int64_t now = monotonic_ms();
	/* Oldest first: the first one used recently enough ends it. */
	while (k->n && now - k->e[0]->used_ms >= k->idle_ms)
		drop(k, 0);
}

int
keep_count(const keep_pool *k)
{
	return k ? k->n : 0;
}
