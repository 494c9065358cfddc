/*
 * standby-internal.h — between the standby's files: a record checked
 * (standby.c) and the batch that applies it (standby_batch.c).
 */
#ifndef BAKERY_STANDBY_INTERNAL_H
#define BAKERY_STANDBY_INTERNAL_H

#include "standby.h"
#include "../base/text.h"

/* The file a record names, as bakery names and makes it. */
struct target {
	char *path;
	const schema_def *schema;
	char sandbox[BAKERY_NAME_SIZE]; /* "": a file of the home's own */
	int object;                     /* an object's: born with a change */
};

/* A record as its checks read it. */
struct checked {
	struct target t; /* t.path allocated */
	long long seq;
	char epoch[REPLICA_ID_SIZE];
	long changes; /* in its changeset */
};

/* Step 1 of standby.h for r, not a removal: 0 with *outcome STANDBY_APPLIED
 * (to be applied) and *c (c->t.path to be freed), or 0 with *outcome
 * STANDBY_REFUSED, or EX_CONFIG (a newer
 * schema: the standby stops). */
int standby_check(bakery_ctx *ctx, const standby_file *files,
    const standby_record *r, struct checked *c,
    enum standby_outcome *outcome);

/* A record of Bakery-Op remove (r->op set): checked, then its sandbox
 * removed; as standby_apply answers. */
int standby_removal(bakery_ctx *ctx, const standby_record *r,
    enum standby_outcome *outcome);

/* Records applied together (standby_batch.c). */
typedef struct standby_batch standby_batch;
standby_batch *standby_batch_new(bakery_ctx *ctx);
/* r (its data alive until the batch runs), checked as *c (whose path the
 * batch takes), queued under its file; tag: its place in the caller's
 * list of outcomes. */
void standby_batch_add(standby_batch *b, const standby_record *r,
    struct checked *c, int tag);
/* Every record queued applied, a file's in one transaction, each file
 * committed synced, the births named together; the batch emptied. For
 * each record now durable, outcome[tag] (STANDBY_APPLIED or
 * STANDBY_SKIPPED) and durable[tag] 1; the others untouched. 0, or what
 * stops the standby (a gap, a conflict, a file that cannot be written):
 * nothing of that file's records applied, nor of the files after it. */
int standby_batch_run(standby_batch *b, enum standby_outcome *outcome,
    int *durable);
void standby_batch_free(standby_batch *b);

#endif
