/*
 * queue_sqlite-internal.h — what the two files of the embedded driver
 * share and nobody else needs: the handle's insides and the calls one
 * makes of the other. queue_sqlite.c holds the file and its schema, send,
 * receive and its leases, and the answers to a message (ack, retry, dead
 * letter, several acks with the next batch's lease); queue_sqlite_admin.c
 * the rest of the operations: init's report, stats, peek (all, or one
 * event's), a sandbox's wipe and its fence.
 */
#ifndef BAKERY_QUEUE_SQLITE_INTERNAL_H
#define BAKERY_QUEUE_SQLITE_INTERNAL_H

#include "queue-internal.h"
#include "../store/store.h"

#include <sqlite3.h>
#include <stdint.h>

#define PREFETCH_MAX 100

typedef struct sqlite_queue {
	sqlite3 *db;
	/* The last receive, which an ack_many repeats for the next batch. */
	char *queue, *sandbox;
	size_t max;
	int visibility_s;
	queue_message next[PREFETCH_MAX]; /* leased, not received yet */
	int64_t next_visible[PREFETCH_MAX]; /* their visible_at before */
	size_t next_n;
	int64_t held_checked; /* bakery_monotonic_ms of the last hold_from_now */
	db_stmts stmts;
} sqlite_queue;

#define SQ(q) ((sqlite_queue *)(q)->impl)
#define DB(q) (SQ(q)->db)

/* queue_sqlite.c */

/* A statement of the queue's from its cache (db_prepare); db_fail's code
 * when it cannot be had. queue_sqlite_finish gives it back. */
int queue_sqlite_prepare(sqlite_queue *sq, const char *sql,
    sqlite3_stmt **st);
void queue_sqlite_finish(sqlite_queue *sq, sqlite3_stmt *st);

/* queue_sqlite_admin.c: the operations of queue-internal.h done there. */
int queue_sqlite_stats(bakery_queue *q, jv *out);
int queue_sqlite_peek(bakery_queue *q, const char *queue, size_t max,
    jv *out);
int queue_sqlite_peek_event(bakery_queue *q, const char *queue,
    const char *sandbox, const char *id, const char *type, jv *out,
    int *complete);
int queue_sqlite_wipe_sandbox(bakery_queue *q, const char *sandbox,
    int64_t fence_ms);
int64_t queue_sqlite_fence(bakery_queue *q, const char *sandbox);
int queue_sqlite_init(bakery_queue *q, int replicas, jv *out);

#endif
