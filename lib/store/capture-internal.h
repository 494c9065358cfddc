/*
 * capture-internal.h — what capture.c (a commit's record, sent under the
 * file's write lock) and capture_batch.c (a --batch group's records,
 * held and published together) share. Not for other rooms: capture.h
 * is the capture's face.
 */
#ifndef BAKERY_CAPTURE_INTERNAL_H
#define BAKERY_CAPTURE_INTERNAL_H

#include "capture.h"

#include <sqlite3.h>

struct capture {
	sqlite3 *db;
	sqlite3_session *session;
	struct capture_sink *sink;
	bakery_ctx *ctx;
	char *relpath;
	int copy; /* a birth's copy, at no name yet */
	/* Records published by send_async: the last one's number, and the
	 * place in the sink's list of files to note at the settle. */
	long long published;
	int listed;
	struct capture *next;
	int tables; /* the capture's tables are in the file */
	int late;     /* commits unsynced, the log synced before a send */
	int unsynced; /* a commit since the log's last sync (late), or the
		       * records another process left (capture_attach) */
};

/* The capture attached to db, or NULL. */
struct capture *capture_of(sqlite3 *db);
/* Takes c out of its sink's list of files to note. */
void capture_unlist(struct capture *c);
/* The connection's synchronous as it was before a note of records sent
 * (capture.c). */
void capture_sync_back(struct capture *c);
/* The file's WAL synced when records may be sent that a sync has not
 * made durable (capture.c): 0, or the failure. */
int capture_sync_log(struct capture *c, int always);
/* The log's next record in *r: SQLITE_ROW, SQLITE_DONE, or a failure. */
int capture_next_record(sqlite3_stmt *st, capture_record *r);

/* capture_batch.c: a commit's record held for the group's settle, and
 * what a file held unsent when opened in a group, published. */
void capture_hold(struct capture *c, long long seq, int version,
    const void *data, int len);
int capture_publish_log(struct capture *c);

#endif
