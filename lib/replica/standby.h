/*
 * standby.h — the standby's apply of the stream: each record of the
 * primary's commits made again in this home's file, once and in order.
 *
 * A record (replica.h, docs/adr/0011-a-standby-on-jetstream.md) is one
 * message of BAKERY_REPLICA: one commit of one file of the primary, its
 * changes as SQLite's session extension wrote them. Its apply:
 *   1. everything it says is checked as hostile: its subject
 *      (bakery.replica.EPOCH.TOK, TOK its file's path), Bakery-File one
 *      of alarms.db, wipe.db, refunds.db, console.db,
 *      sandboxes/NAME/sandbox.db or sandboxes/NAME/KIND/KEY.db (each a
 *      name, KIND a known kind), Bakery-Seq, Bakery-Version and
 *      Bakery-Host, and the changeset read through to its end, naming
 *      none of SQLite's tables nor bakery_replica*. A record that fails
 *      is refused: never applied, never a path outside the home;
 *   2. a file that is not there is made as bakery makes it (birth.h),
 *      with the schema its path names; an object's with the apply as
 *      its first change;
 *   3. BEGIN IMMEDIATE (one transaction for a file's records in a
 *      fetched batch, each in a savepoint); the file's bakery_replica
 *      read (the tables made when missing): a record at or below its
 *      seq was applied already and is skipped; one that is not the
 *      next is a gap (EX_SOFTWARE);
 *      a Bakery-Version newer than this bakery's schema EX_CONFIG;
 *   4. the changeset applied: a conflict, or a table the file does not
 *      have as the record has it, rolls the record back (EX_DATAERR),
 *      never replaced or skipped, and stops the standby there;
 *   5. bakery_replica set to the record's seq, the epoch of its subject
 *      and its stream sequence; COMMIT, synced, once the file's records
 *      of the batch are applied (the batch's new files named together,
 *      birth.h). Only once every file of the batch is committed are its
 *      messages acknowledged: a kill before leaves them all to be
 *      delivered again, those committed then skipped.
 * A record of Bakery-Op remove names a sandbox the primary wiped
 * (Bakery-File sandboxes/S, no body): the standby's folder of S is moved
 * aside to HOME/.wipe-standby-S, as the wipe moves it, then removed, so
 * that the records of its files made again (from 1) apply.
 *
 * The consumer: durable pull consumer "standby_HOST" on BAKERY_REPLICA,
 * every subject (the stream's subjects move at each promotion; the
 * consumer stays), deliver all, explicit ack. A refused record is
 * terminated (never delivered again) and counted; a record that stops
 * the standby is given back (nak) with the rest of its batch, for the
 * next run, which meets it first.
 *
 * Owns: the checks of a record, the files a standby writes, the
 * consumer and its counts, and the epoch a standby last saw
 * (HOME/.replica).
 */
#ifndef BAKERY_STANDBY_H
#define BAKERY_STANDBY_H

#include <stdint.h>

#include "replica.h"
#include "../store/store.h"

/* A file of the home's own (not a sandbox's) a record may name, and the
 * schema bakery makes it with: the program gives the list, as some of
 * those schemas are the domain's. Ends with a NULL name. */
typedef struct standby_file {
	const char *name;
	const schema_def *schema;
} standby_file;

/* One message as it came: its subject and headers as text, unchecked. */
typedef struct standby_record {
	const char *subject;
	const char *file;    /* Bakery-File */
	const char *seq;     /* Bakery-Seq */
	const char *version; /* Bakery-Version */
	const char *host;    /* Bakery-Host */
	const char *op;      /* Bakery-Op: NULL, or "remove" */
	const void *changeset;
	int size;
	uint64_t stream_seq; /* the message's sequence in the stream */
} standby_record;

enum standby_outcome {
	STANDBY_APPLIED,
	STANDBY_SKIPPED, /* applied before: its seq is the file's or below */
	STANDBY_REFUSED, /* hostile: why in bakery_error() */
};

/* Applies r to ctx's home (ctx->replica_applying set): 0 with *outcome,
 * or what stops the standby (a gap EX_SOFTWARE, a conflict EX_DATAERR, a
 * newer schema EX_CONFIG, a file that cannot be written), with nothing
 * of r applied. */
int standby_apply(bakery_ctx *ctx, const standby_file *files,
    const standby_record *r, enum standby_outcome *outcome);

typedef struct standby_tally {
	long applied, skipped, refused;
} standby_tally;

typedef struct standby standby;
/* The consumer of conf->host (made when missing) on rn's stream.
 * EX_UNAVAILABLE when there is no stream yet (no primary made one).
 * conf's epoch is kept up to date, and written, as records of a new
 * epoch are applied. */
int standby_open(bakery_ctx *ctx, replica_nats *rn, replica_conf *conf,
    const standby_file *files, standby **out);
/* Up to max records, waiting up to wait_ms for the first, each applied
 * then acknowledged: 0 (none may have come), or what stops the standby
 * (standby_apply's), or EX_TEMPFAIL when the stream could not be
 * reached. */
int standby_pull(standby *s, int max, int wait_ms);
/* Every record the stream holds now applied: pulled until the consumer
 * has acknowledged the stream's last sequence as it was when called. */
int standby_drain(standby *s);
const standby_tally *standby_counts(const standby *s);
void standby_close(standby *s);

#endif
