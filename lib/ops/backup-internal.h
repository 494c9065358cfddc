/*
 * backup-internal.h — what the two files of the backup share and nobody
 * else needs: the home held still. backup.c copies: the two passes, the
 * stamps that spare a file unchanged since the first, the copy synced and
 * renamed into place. backup_hold.c holds the home still for the second
 * pass: every sandbox's lock, in name order, then the queue's write lock,
 * the sandboxes listed again under it (backup.h, "Consistency").
 */
#ifndef BAKERY_BACKUP_INTERNAL_H
#define BAKERY_BACKUP_INTERNAL_H

#include <stddef.h>

#include <jv.h>
#include <sqlite3.h>

#include "../store/store.h"

/* Held still: every sandbox's lock, then the queue's write lock. */
struct hold {
	char **names; /* the sandboxes held */
	int *locks;
	size_t n;
	sqlite3 *queue;
};

/* Takes every sandbox's lock, then the queue's (the file queue, when it
 * exists) into h, which it zeroes first; a sandbox made meanwhile is
 * taken too. EX_TEMPFAIL past the busy timeout, or when sandboxes are
 * made faster than they can be held. backup_release lets go of what it
 * took, whatever it returned. */
int backup_hold_still(bakery_ctx *ctx, const char *queue, struct hold *h);
/* Lets go of the queue, then of every sandbox; h is empty after. */
void backup_release(struct hold *h);
/* Whether h holds the sandbox name. */
int backup_holds(const struct hold *h, const char *name);
/* The sandboxes there are now that h does not hold, made since the home
 * was held and left out of the copy, each logged: a JSON array of names. */
jv backup_left_out(bakery_ctx *ctx, const struct hold *h);

#endif
