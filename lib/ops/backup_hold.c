/*
 * backup_hold.c — the home held still for a backup's second pass: every
 * sandbox's lock, then the queue's write lock (backup-internal.h).
 */
#define _GNU_SOURCE
#include "backup-internal.h"
#include "../store/store.h"
#include "../base/util.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sandboxes: folders under HOME/sandboxes and the home's .NAME.lock
 * files (a wiped sandbox keeps its lock file and its clock floor). */
static size_t
sandbox_names(bakery_ctx *ctx, char ***out)
{
	char **names = NULL;
	size_t n = 0;
	const char *dirs[2] = { ctx->sandboxes, ctx->home };
	for (int i = 0; i < 2; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char *name = i == 0 ? bakery_xstrdup(e->d_name)
					    : home_lock_file_sandbox(e->d_name);
			int seen = 0;
			for (size_t j = 0; name && j < n && !seen; j++)
				seen = strcmp(names[j], name) == 0;
			if (!name || seen || !bakery_name_valid(name) || (i == 0
			    && e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)) {
				free(name);
				continue;
			}
			names = bakery_xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = name;
		}
		if (d)
			closedir(d);
	}
	if (n)
		qsort(names, n, sizeof *names, compare_names);
	*out = names;
	return n;
}

static void
release_queue(struct hold *h)
{
	if (h->queue) {
		sqlite3_exec(h->queue, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(h->queue);
		h->queue = NULL;
	}
}

void
backup_release(struct hold *h)
{
	release_queue(h);
	for (size_t i = 0; i < h->n; i++) {
		home_unlock_sandbox(h->locks[i]);
		free(h->names[i]);
	}
	free(h->names);
	free(h->locks);
	memset(h, 0, sizeof *h);
}

int
backup_holds(const struct hold *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->names[i], name) == 0)
			return 1;
	return 0;
}

/* Takes the lock of every sandbox there is that h does not hold yet,
 * waiting for each (wait), or trying each once: then 1 when one was
 * busy. No process holds two sandboxes' locks, so waiting for one while
 * holding others waits for no one who waits for these. */
static int
hold_sandboxes(bakery_ctx *ctx, struct hold *h, int wait)
{
	char **names;
	size_t n = sandbox_names(ctx, &names);
	int rc = 0, saved = ctx->busy_timeout_ms;
	if (!wait)
		ctx->busy_timeout_ms = 1; /* one try, and one a millisecond on */
	for (size_t i = 0; i < n; i++) {
		int fd = -1;
		if (!rc && !backup_holds(h, names[i])) {
			rc = home_lock_sandbox(ctx, names[i], 1, 0, &fd);
			/* No lock file and none can be made: not held, so
			 * refused. */
			if (!rc && fd < 0)
				rc = bakery_fail(EX_NOPERM, "cannot lock sandbox "
				    "'%s': no lock file, and none can be made",
				    names[i]);
			if (rc == EX_TEMPFAIL && !wait)
				rc = 1;
		}
		if (fd >= 0) {
			h->names = bakery_xrealloc(h->names, (h->n + 1) *
			    sizeof *h->names);
			h->locks = bakery_xrealloc(h->locks, (h->n + 1) *
			    sizeof *h->locks);
			h->names[h->n] = names[i];
			h->locks[h->n++] = fd;
		} else {
			free(names[i]);
		}
	}
	free(names);
	ctx->busy_timeout_ms = saved;
	return rc;
}

/* The queue's write lock, on a connection of its own. */
static int
hold_queue(bakery_ctx *ctx, const char *queue, struct hold *h)
{
	int src = sqlite3_open_v2(queue, &h->queue, SQLITE_OPEN_READWRITE, NULL);
	if (src == SQLITE_OK) {
		sqlite3_busy_timeout(h->queue, ctx->busy_timeout_ms);
		src = sqlite3_exec(h->queue, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	}
	return src == SQLITE_OK ? 0
	    : db_fail(h->queue, src, "cannot hold the queue still");
}

/* How many times the sandboxes are listed again under the queue's lock
 * before a home whose sandboxes are made faster than it can be held is
 * given up on (75). */
#define HOLD_ROUNDS 20

/*
 * Every sandbox's lock, then the queue's. A sandbox made between the
 * listing and the queue's lock could have sent events the queue's copy
 * would hold while its files were not held: so under the queue's lock the
 * sandboxes are listed again, and one made meanwhile is taken at once if
 * it is free, else the queue let go, that sandbox waited for, and the
 * queue taken again. The list under the queue's lock is the copy's: a
 * sandbox made after it sent nothing the queue's copy holds, and is left
 * out of the copy whole (copy_one, backup.c).
 */
int
backup_hold_still(bakery_ctx *ctx, const char *queue, struct hold *h)
{
	memset(h, 0, sizeof *h);
	int rc = hold_sandboxes(ctx, h, 1);
	if (rc || access(queue, F_OK) != 0)
		return rc;
	for (int round = 0; !(rc = hold_queue(ctx, queue, h)); round++) {
		rc = hold_sandboxes(ctx, h, 0);
		if (rc != 1)
			return rc;
		release_queue(h);
		if (round + 1 == HOLD_ROUNDS)
			return bakery_fail(EX_TEMPFAIL, "sandboxes were made "
			    "faster than the backup could hold them: try again");
		if ((rc = hold_sandboxes(ctx, h, 1)))
			return rc;
	}
	return rc;
}

/* The sandboxes made since the home was held, left out of the copy. */
jv
backup_left_out(bakery_ctx *ctx, const struct hold *h)
{
	char **now;
	size_t n = sandbox_names(ctx, &now);
	jv out = jv_array();
	for (size_t i = 0; i < n; i++) {
		if (!backup_holds(h, now[i])) {
			bakery_log(LOG_INFO, "backup_left_out", "sandbox", now[i],
			    "why", "made after the home was held", (char *)NULL);
			out = jv_array_append(out, jv_string(now[i]));
		}
		free(now[i]);
	}
	free(now);
	return out;
}
