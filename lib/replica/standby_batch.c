/*
 * standby_batch.c — a batch of records applied (standby-internal.h): the
 * records of one file in one transaction, each file committed synced,
 * the files the batch makes named together (birth.h's group); then, and
 * only then, the caller acknowledges them.
 *
 * Why a batch: a record a commit, each synced, each file opened and its
 * schema read again, cost the standby a core and the disk the primary
 * shares with it (docs/costs.md, B11). A file's records keep their order;
 * the files of a batch are independent of one another, and a kill
 * before the acks leaves every record of the batch to be delivered
 * again: those committed are skipped then, the others applied.
 */
#define _GNU_SOURCE
#include "standby-internal.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char tables_sql[] =
    "CREATE TABLE IF NOT EXISTS bakery_replica(one INTEGER PRIMARY KEY "
    "CHECK (one = 1), seq INTEGER NOT NULL, epoch TEXT NOT NULL, "
    "stream_seq INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS bakery_replica_log(seq INTEGER PRIMARY KEY, "
    "version INTEGER NOT NULL, changeset BLOB NOT NULL);";


/* Counts the changes the apply reaches: one it does not reach is of a
 * table the file does not have as the record has it, which SQLite skips
 * with a mere log line. */
struct applying {
	long reached;
	int conflict; /* SQLITE_CHANGESET_DATA, ..., 0: none */
	char table[128];
};

static int
reached(void *arg, sqlite3_changeset_iter *it)
{
	(void)it;
	((struct applying *)arg)->reached++;
	return 1;
}

static int
conflicted(void *arg, int why, sqlite3_changeset_iter *it)
{
	struct applying *a = arg;
	const char *table = NULL;
	int columns, op, indirect;
	if (!a->conflict) {
		a->conflict = why;
		if (why != SQLITE_CHANGESET_FOREIGN_KEY &&
		    sqlite3changeset_op(it, &table, &columns, &op, &indirect) ==
		    SQLITE_OK)
			snprintf(a->table, sizeof a->table, "%s", table);
	}
	return SQLITE_CHANGESET_ABORT;
}

static const char *
conflict_name(int why)
{
	switch (why) {
	case SQLITE_CHANGESET_DATA: return "a row not as the primary had it";
	case SQLITE_CHANGESET_NOTFOUND: return "a row the primary had is missing";
	case SQLITE_CHANGESET_CONFLICT: return "a row is there already";
	case SQLITE_CHANGESET_CONSTRAINT: return "a constraint fails";
	default: return "a foreign key fails";
	}
}

/* The file's last record applied (0: none), its tables made if missing;
 * in the caller's transaction. */
static int
local_seq(sqlite3 *db, long long *seq)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(db, tables_sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT seq FROM bakery_replica "
		    "WHERE one = 1", -1, &st, NULL);
	*seq = 0;
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		*seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int
note_applied(sqlite3 *db, long long seq, const char *epoch,
    uint64_t stream_seq)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO bakery_replica(one, seq, "
	    "epoch, stream_seq) VALUES (1, ?1, ?2, ?3) ON CONFLICT (one) DO "
	    "UPDATE SET seq = ?1, epoch = ?2, stream_seq = ?3", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, seq);
		sqlite3_bind_text(st, 2, epoch, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)stream_seq);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Steps 3 to 5 on db, the file t names, its write transaction begun and
 * *local its last record applied: set to seq once applied. */
static int
apply_in(sqlite3 *db, const struct target *t, const standby_record *r,
    long long seq, const char *epoch, long changes, long long *local_in,
    enum standby_outcome *outcome)
{
	long long local = *local_in;
	int src;
	if (seq <= local) {
		*outcome = STANDBY_SKIPPED;
		return 0;
	}
	if (seq != local + 1 && seq == local + 2)
		return bakery_fail(EX_SOFTWARE, "'%s': record %lld comes after "
		    "record %lld: record %lld is missing from the stream",
		    t->path, seq, local, local + 1);
	if (seq != local + 1)
		return bakery_fail(EX_SOFTWARE, "'%s': record %lld comes after "
		    "record %lld: records %lld to %lld are missing from the "
		    "stream", t->path, seq, local, local + 1, seq - 1);
	struct applying a = { 0 };
#if SQLITE_VERSION_NUMBER >= 3050000
	src = sqlite3changeset_apply_v3(db, r->size,
	    r->size ? (void *)r->changeset : (void *)"", reached, conflicted,
	    &a, NULL, NULL, 0);
#else
	/* A library without apply_v3 (SQLITE=system) has no capture either
	 * (capture.c): no home it runs is replicated. */
	(void)reached;
	(void)conflicted;
	return bakery_fail(EX_CONFIG, "a standby needs SQLite 3.50 or later: "
	    "this bakery runs %s", sqlite3_libversion());
#endif
	if (a.conflict)
		return bakery_fail(EX_DATAERR, "'%s': record %lld conflicts "
		    "with the file (%s%s%s): nothing of it applied, nothing "
		    "replaced; this standby no longer follows the primary",
		    t->path, seq, conflict_name(a.conflict),
		    *a.table ? ", table " : "", a.table);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot apply a record");
	if (a.reached != changes)
		return bakery_fail(EX_DATAERR, "'%s': record %lld changes a "
		    "table this file does not have as the record has it: "
		    "nothing of it applied", t->path, seq);
	src = note_applied(db, seq, epoch, r->stream_seq);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot note the record applied");
	*local_in = seq;
	*outcome = STANDBY_APPLIED;
	return 0;
}

/* One record queued: its message's fields (alive until the batch runs),
 * its checks' reading, its place in the caller's list. */
struct queued {
	standby_record r;
	struct checked c;
	int tag;
	int done; /* taken by its file's apply */
};

/* A file of the batch, open from its apply until its birth is named. */
struct opened {
	struct target *t;
	sqlite3 *db;
	db_stmts stmts;
	birth b;
	int lock;
	size_t *idx; /* its records, in order */
	size_t m;
	enum standby_outcome *out;
	size_t done; /* its first records applied (all, but for a stop) */
	int ok; /* those durable (once its birth, if any, is named) */
};

struct standby_batch {
	bakery_ctx *ctx;
	struct queued *q;
	size_t n, cap;
};

standby_batch *
standby_batch_new(bakery_ctx *ctx)
{
	standby_batch *b = bakery_xmalloc(sizeof *b);
	*b = (standby_batch){ .ctx = ctx };
	return b;
}

void
standby_batch_add(standby_batch *b, const standby_record *r,
    struct checked *c, int tag)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->q = bakery_xrealloc(b->q, b->cap * sizeof *b->q);
	}
	b->q[b->n++] = (struct queued){ .r = *r, .c = *c, .tag = tag };
	c->t.path = NULL; /* the batch's now */
}

/* One record applied in the file's transaction, in a savepoint of its
 * own: a failure leaves the records before it as they were applied. */
static int
apply_one(sqlite3 *db, const struct target *t, const struct queued *q,
    long long *local, enum standby_outcome *outcome)
{
	int src = sqlite3_exec(db, "SAVEPOINT record", NULL, NULL, NULL);
	if (src != SQLITE_OK)
		return db_fail(db, src, "cannot apply a record");
	int rc = apply_in(db, t, &q->r, q->c.seq, q->c.epoch, q->c.changes,
	    local, outcome);
	if (rc)
		sqlite3_exec(db, "ROLLBACK TO record", NULL, NULL, NULL);
	sqlite3_exec(db, "RELEASE record", NULL, NULL, NULL);
	return rc;
}

/* The file's records applied in one transaction, committed synced (a
 * birth's: its copy committed, named when the group settles), up to the
 * first that stops the standby: 0, or that failure, the records before
 * it applied (f->ok: those f->done of them). */
static int
apply_file(standby_batch *b, struct opened *f)
{
	bakery_ctx *ctx = b->ctx;
	struct target *t = f->t;
	int rc = 0, any = 0;
	long long local = 0;
	/* As an object's writer does: no wipe moves the folder aside
	 * meanwhile. */
	if (*t->sandbox)
		rc = home_lock_sandbox(ctx, t->sandbox, 0, 1, &f->lock);
	if (!rc && t->object)
		rc = birth_object_open(ctx, t->path, t->schema, &f->b, &f->db,
		    &f->stmts);
	else if (!rc && *t->sandbox)
		rc = birth_open_sandbox(ctx, t->sandbox, 1, &f->db);
	else if (!rc)
		rc = birth_open(ctx, t->path, t->schema, &f->db);
	if (!rc && !birth_begun(&f->b, f->db))
		rc = db_begin(f->db);
	if (!rc) {
		int src = local_seq(f->db, &local);
		if (src != SQLITE_OK)
			rc = db_fail(f->db, src, "cannot read the file's last "
			    "record");
	}
	if (rc)
		return rc;
	for (f->done = 0; f->done < f->m && !rc; f->done++) {
		rc = apply_one(f->db, t, &b->q[f->idx[f->done]], &local,
		    &f->out[f->done]);
		if (rc)
			break;
		any |= f->out[f->done] == STANDBY_APPLIED;
	}
	char *why = rc ? bakery_xstrdup(bakery_error()) : NULL;
	int committed = 0;
	if (any) {
		committed = db_commit(f->db);
		if (!committed && t->object)
			committed = birth_committed(&f->b, &f->db, &f->stmts);
	}
	f->ok = !committed;
	if (why) {
		bakery_fail(rc, "%s", why);
		free(why);
	}
	/* Committed, not yet acknowledged: delivered again, skipped. */
	if (!committed && any)
		bakery_crash_point("standby.after_file");
	return rc ? rc : committed;
}

/* What apply_file opened, closed: a birth's copy named first. 0, or the
 * naming's failure (its records then not durable). */
static int
close_file(struct opened *f)
{
	int rc = birth_settled(&f->b);
	if (rc)
		f->ok = 0;
	if (f->t->object || f->b.state != BIRTH_NONE)
		birth_close(&f->b, &f->db, &f->stmts, f->t->path);
	if (f->db) {
		db_rollback(f->db);
		sqlite3_close(f->db);
	}
	home_unlock_sandbox(f->lock);
	return rc;
}

int
standby_batch_run(standby_batch *b, enum standby_outcome *outcome,
    int *durable)
{
	struct opened *f = bakery_xmalloc((b->n ? b->n : 1) * sizeof *f);
	size_t nf = 0;
	int rc = 0;
	int own = birth_group_begin(b->ctx, 0);
	for (size_t i = 0; i < b->n && !rc; i++) {
		if (b->q[i].done)
			continue;
		struct opened *o = &f[nf++];
		*o = (struct opened){ .t = &b->q[i].c.t, .lock = -1,
			.idx = bakery_xmalloc((b->n - i) * sizeof(size_t)),
			.out = bakery_xmalloc((b->n - i) * sizeof *o->out) };
		memset(&o->stmts, 0, sizeof o->stmts);
		for (size_t j = i; j < b->n; j++)
			if (!b->q[j].done && strcmp(b->q[j].c.t.path,
			    o->t->path) == 0) {
				b->q[j].done = 1;
				o->idx[o->m++] = j;
			}
		rc = apply_file(b, o);
	}
	/* The batch's births named together, then every file closed. */
	if (own)
		(void)birth_group_end(b->ctx); /* each birth answers below */
	char *why = rc ? bakery_xstrdup(bakery_error()) : NULL;
	for (size_t i = 0; i < nf; i++) {
		int named = close_file(&f[i]);
		if (named && !rc) {
			rc = named;
			why = bakery_xstrdup(bakery_error());
		}
		for (size_t k = 0; f[i].ok && k < f[i].done; k++) {
			struct queued *q = &b->q[f[i].idx[k]];
			outcome[q->tag] = f[i].out[k];
			durable[q->tag] = 1;
		}
		free(f[i].idx);
		free(f[i].out);
	}
	free(f);
	for (size_t i = 0; i < b->n; i++)
		free(b->q[i].c.t.path);
	b->n = 0;
	if (why) {
		bakery_fail(rc, "%s", why);
		free(why);
	}
	return rc;
}

void
standby_batch_free(standby_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->q[i].c.t.path);
	free(b->q);
	free(b);
}

int
standby_apply(bakery_ctx *ctx, const standby_file *files,
    const standby_record *r, enum standby_outcome *outcome)
{
	if (r->op)
		return standby_removal(ctx, r, outcome);
	struct checked c;
	int rc = standby_check(ctx, files, r, &c, outcome);
	if (rc || *outcome == STANDBY_REFUSED)
		return rc;
	standby_batch *b = standby_batch_new(ctx);
	int durable = 0;
	*outcome = STANDBY_REFUSED; /* until applied */
	standby_batch_add(b, r, &c, 0);
	rc = standby_batch_run(b, outcome, &durable);
	standby_batch_free(b);
	return rc;
}
