/*
 * capture_batch.c — a --batch group's records (capture.h,
 * ctx->replica_batched): each commit's held in memory in the order of
 * the commits, published together at the group's settle, and the files
 * still open noted as sent.
 */
#define _GNU_SOURCE
#include "capture-internal.h"
#include "capture.h"
#include "ctx.h"
#include "dberr.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

/* A --batch group's record, held from its commit to the settle. */
struct capture_held {
	char *relpath;
	long long seq;
	int version;
	void *data;
	int len;
	int unnamed; /* a birth's, its file at no name yet */
	struct capture_held *next;
};

static void
held_free(struct capture_held *h)
{
	free(h->relpath);
	free(h->data);
	free(h);
}

/* c's file in its sink's list of files to note at the settle (undone by
 * capture_unlist). */
static void
list(struct capture *c)
{
	if (c->listed)
		return;
	c->next = c->sink->batched;
	c->sink->batched = c;
	c->listed = 1;
}

/* A --batch group's record, kept for the settle, where the group's are
 * published together in the order of their commits. A birth's waits for
 * its file's name (capture_born); one never named, a copy made again or
 * abandoned, is freed unsent. Another's file is listed, to be noted at
 * the settle. */
void
capture_hold(struct capture *c, long long seq, int version,
    const void *data, int len)
{
	struct capture_sink *sink = c->sink;
	struct capture_held *h = bakery_xmalloc(sizeof *h);
	*h = (struct capture_held){ .relpath = bakery_xstrdup(c->relpath),
		.seq = seq, .version = version, .data = bakery_xmalloc(
		(size_t)len), .len = len, .unnamed = c->copy };
	memcpy(h->data, data, (size_t)len);
	if (!sink->held)
		sink->held_tail = &sink->held;
	*sink->held_tail = h;
	sink->held_tail = &h->next;
	if (c->copy)
		return;
	c->published = seq;
	list(c);
}

void
capture_born(bakery_ctx *ctx, const char *path)
{
	struct capture_sink *sink = ctx->replica;
	size_t hl = strlen(ctx->home);
	if (!sink || strncmp(path, ctx->home, hl) != 0 || path[hl] != '/')
		return;
	/* The newest copy of the path is the one named. */
	struct capture_held *newest = NULL;
	for (struct capture_held *h = sink->held; h; h = h->next)
		if (h->unnamed && strcmp(h->relpath, path + hl + 1) == 0)
			newest = h;
	if (newest)
		newest->unnamed = 0;
}

/* In a --batch group, what a file held unsent when it was opened (its
 * own commits wait in memory for the settle, capture_hold): published
 * without waiting, synced first (capture_sync_log); the file listed to
 * be noted once the group settles. No lock: a record another process
 * sends too has the same Nats-Msg-Id. */
int
capture_publish_log(struct capture *c)
{
	int synced = capture_sync_log(c, 1);
	if (synced)
		return synced;
	sqlite3_stmt *log = NULL;
	int rc = sqlite3_prepare_v2(c->db, "SELECT seq, version, changeset "
	    "FROM bakery_replica_log WHERE seq > ?1 ORDER BY seq", -1, &log,
	    NULL);
	if (rc != SQLITE_OK)
		return db_fail(c->db, rc, "cannot read the records to send");
	sqlite3_bind_int64(log, 1, c->published);
	capture_record r = { .relpath = c->relpath };
	int code = 0;
	while (!code && (rc = capture_next_record(log, &r)) == SQLITE_ROW) {
		code = c->sink->send_async(c->sink, &r);
		if (!code)
			c->published = r.seq;
	}
	sqlite3_finalize(log);
	if (!code && rc != SQLITE_DONE)
		code = db_fail(c->db, rc, "cannot read the records to send");
	if (c->published)
		list(c);
	return code;
}

/* A file whose records the stream took: its log emptied of them. The
 * stream's sequences came back to the group, not to the file: the next
 * record of the file expects none (capture_record.expect). */
static void
note_published(struct capture *c)
{
	char *sql = sqlite3_mprintf("PRAGMA synchronous=OFF; BEGIN IMMEDIATE; "
	    "DELETE FROM bakery_replica_log WHERE seq <= %lld; UPDATE "
	    "bakery_replica SET epoch = 'none', stream_seq = 0; COMMIT",
	    c->published);
	if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
	/* Else the records stay, and are sent again later. */
	capture_sync_back(c);
	sqlite3_free(sql);
}

/* The group's held records freed. */
static void
drop_held(struct capture_sink *sink)
{
	while (sink->held) {
		struct capture_held *h = sink->held;
		sink->held = h->next;
		held_free(h);
	}
}

int
capture_settle(bakery_ctx *ctx)
{
	struct capture_sink *sink = ctx->replica;
	if (!sink || !ctx->replica_batched)
		return 0;
	/* The group's records published together: the stream's servers
	 * take them in a few batches, not one at a time. */
	int rc = 0;
	for (struct capture *c = sink->batched; c && !rc; c = c->next)
		rc = capture_sync_log(c, 0);
	for (struct capture_held *h = sink->held; h && !rc; h = h->next) {
		capture_record r = { .relpath = h->relpath, .seq = h->seq,
			.version = h->version, .data = h->data, .len = h->len };
		if (!h->unnamed)
			rc = sink->send_async(sink, &r);
	}
	drop_held(sink);
	int waited = sink->wait_async(sink);
	rc = rc ? rc : waited;
	while (sink->batched) {
		struct capture *c = sink->batched;
		if (!rc)
			note_published(c);
		capture_unlist(c);
	}
	return rc;
}

void
capture_sink_gone(struct capture_sink *sink)
{
	while (sink->batched)
		capture_unlist(sink->batched);
	drop_held(sink);
}
