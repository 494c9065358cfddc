/*
 * capture.h — a replicated home's commits captured: each commit's
 * changes, read by SQLite's session extension, kept in the file with the
 * commit itself, then recorded through the home's sink (the stream,
 * lib/replica/replica.h) before the commit is answered.
 *
 * Owns: the session on each connection of a replicated home that writes,
 * the tables bakery_replica (the file's last record number, and the
 * epoch and stream sequence of the last one the stream took) and
 * bakery_replica_log (records committed here and not yet taken), and
 * their sending, in order, under the file's write lock.
 *
 * The path of a commit (docs/adr/0011-a-standby-on-jetstream.md):
 *   1. before COMMIT (db_commit): the session's changeset, when it holds
 *      a change, becomes the file's next record, written to
 *      bakery_replica_log in the same transaction;
 *   2. COMMIT, synced as ever: a kill from here on loses nothing, the
 *      record is in the file;
 *   3. after it: BEGIN IMMEDIATE, each record of the log sent in order
 *      (the stream answers before the next), the log emptied and the
 *      stream's sequence kept, COMMIT without a sync (a record lost to a
 *      power cut here is sent again, and the stream knows it by its
 *      Nats-Msg-Id). Only then does db_commit return.
 * A record left in the log (a kill after 2, the stream unreachable) is
 * sent by whoever next opens the file to write (capture_attach), before
 * anything else is done with it. A birth's copy (birth.h) is recorded
 * when the file has its name: its maker opens the file to send it.
 *
 * Promises: a commit of a replicated home is answered 0 only once the
 * stream has its record; a file's records reach the stream in the order
 * of its commits, each once; a home that is not replicated (ctx->replica
 * NULL) runs none of this.
 */
#ifndef BAKERY_CAPTURE_H
#define BAKERY_CAPTURE_H

#include <sqlite3.h>
#include <stdint.h>

typedef struct bakery_ctx bakery_ctx;
struct capture;
struct capture_held;

/* One commit's record, as the sink sends it. */
typedef struct capture_record {
	const char *relpath;  /* the file, relative to the home */
	long long seq;        /* the file's record number, from 1 */
	int version;          /* the file's user_version after the commit */
	const void *data;     /* the changeset */
	int len;
	/* The stream's sequence of this file's last record in the sink's
	 * epoch; 0: none yet (the first in this epoch). */
	uint64_t expect;
	/* Not a commit: a folder of the home removed whole (relpath, the
	 * wipe's sandbox); seq, version and data unused. */
	int remove;
	long long run; /* the removal's: the wipe's run */
} capture_record;

/* Where records go: set on the context of a replicated home's primary
 * (lib/replica/replica.c). send answers 0 with the record's sequence in
 * the stream; EX_UNAVAILABLE when this host may write no more (fenced:
 * the stream moved to another primary's epoch); EX_TEMPFAIL when the
 * stream did not answer (the record stays, sent again later). */
struct capture_sink {
	int (*send)(struct capture_sink *sink, const capture_record *r,
	    uint64_t *stream_seq);
	/* A record published without waiting for the stream's answer (a
	 * --batch group's, sent together): 0, or a failure to publish. */
	int (*send_async)(struct capture_sink *sink, const capture_record *r);
	/* Every record send_async published answered: 0 once the stream
	 * took them all; else as send. */
	int (*wait_async)(struct capture_sink *sink);
	char epoch[17];
	int fenced; /* a send answered EX_UNAVAILABLE: the loops stop */
	struct capture *batched; /* open files whose records went by
				  * send_async, not yet noted as taken */
	/* A --batch group's records, in the order of their commits, held
	 * for the settle (a birth's once its file is named). */
	struct capture_held *held, **held_tail;
};

/* The capture's tables, made by a file's first captured commit, and in
 * the image a replicated home's births start from (birth_copy.c): a
 * birth's connection, kept for the next, must not see its schema move. */
extern const char capture_tables_sql[];

/* Attaches the capture to db, a connection to path (a file of ctx's
 * home) that writes, when ctx->replica is set; then sends what the file
 * holds unsent, unless copy (a birth's copy, at no name yet: path is the
 * name it will have). Attaching again replaces what was attached. */
int capture_attach(bakery_ctx *ctx, sqlite3 *db, const char *path, int copy);
/* Inside the write transaction, before COMMIT: the changes become the
 * file's next record, in bakery_replica_log. */
int capture_before_commit(sqlite3 *db);
/* After COMMIT: the records the file holds unsent are sent (not for a
 * copy). 0, or the sink's failure. */
int capture_after_commit(sqlite3 *db);
/* After ROLLBACK: the session starts again empty. */
void capture_rolled_back(sqlite3 *db);
/* The records db's file holds unsent, sent in order: 0 when there were
 * none or all were taken. */
int capture_send_pending(sqlite3 *db);
/* ctx->replica_batched (bakery-order --batch): a commit's record is kept
 * (in its file's log, and in memory) and published here with the rest
 * of the group's, together, without waiting for each; then the group's
 * answers wait for them all, before its outboxes are sent: 0 once the
 * stream took every record of the group (those of files still open
 * noted as taken), or the failure every answer of the group is. */
int capture_settle(bakery_ctx *ctx);
/* ctx->replica_batched: the first record of the birth of path, kept
 * from its copy's commit, to be published at the settle now that the
 * file has its name (birth_copies_record). */
void capture_born(bakery_ctx *ctx, const char *path);
/* db, a connection that stays open as long as its context does (the
 * alarm index's), commits without a sync of its own in a replicated home
 * whose journal is a WAL: its log is synced before any of its records is
 * sent, once a --batch group at the settle (capture_settle), else before
 * each send, as a commit of its own would have synced it. Nothing for a
 * connection without a capture. */
void capture_sync_late(sqlite3 *db);
/* The sink goes (ctx_free): the files still open forget it. */
void capture_sink_gone(struct capture_sink *sink);
/* In a replicated home, the removal of the folder path (a sandbox the
 * wipe takes, run its run) recorded before it is removed: 0, or the
 * sink's failure (the folder must then stay). */
int capture_removal(bakery_ctx *ctx, const char *path, long long run);

#endif
