/*
 * standby_pull.c — the standby's consumer of BAKERY_REPLICA: records
 * fetched in batches, each batch applied together (standby_batch.c)
 * then acknowledged, a hostile one terminated, one that stops the
 * standby given back with those after it (standby.h).
 */
#define _GNU_SOURCE
#include "standby-internal.h"
#include "../core/loop.h"
#include "../store/file.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* How long a record fetched may wait for its ack before JetStream sends
 * it again: a batch is applied, a commit a file, each synced, in well
 * under it. Short, because a batch whose delivery was lost (a node
 * killed midway) holds up a promotion's drain until then; one sent again
 * after it was applied is skipped. */
#define ACK_WAIT_S 5
#define DRAIN_BATCH 64
#define DRAIN_WAIT_MS 250
/* JetStream's "stream not found". */
#define STREAM_NOT_FOUND 10059
/* Held by the one process that applies the home: two pulling from one
 * consumer would each meet records of a file out of their order. */
#define APPLY_LOCK ".replica-apply"

struct standby {
	bakery_ctx *ctx;
	replica_nats *rn;
	replica_conf *conf;
	const standby_file *files;
	natsSubscription *sub;
	int lock;
	char name[32];
	standby_tally tally;
};

static int
failed(int code, const char *what, natsStatus s, jsErrCode jerr)
{
	const char *text = nats_GetLastError(NULL);
	return bakery_fail(code, "nats: %s: %s%s", what,
	    text && *text ? text : natsStatus_GetText(s),
	    jerr == STREAM_NOT_FOUND ? " (no primary has made the stream "
	    REPLICA_STREAM " yet)" : "");
}

/* The durable consumer, made when missing: every subject, every record
 * from the first, each acknowledged. */
static int
ensure_consumer(standby *s)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus st = js_GetConsumerInfo(&ci, s->rn->js, REPLICA_STREAM,
	    s->name, NULL, &jerr);
	int64_t ack_wait = (int64_t)ACK_WAIT_S * 1000000000LL;
	if (st == NATS_OK && ci->Config->AckWait != ack_wait) {
		/* One a bakery of another AckWait made. */
		jsConsumerConfig cfg = *ci->Config;
		cfg.AckWait = ack_wait;
		jsConsumerInfo *up = NULL;
		st = js_UpdateConsumer(&up, s->rn->js, REPLICA_STREAM, &cfg, NULL,
		    &jerr);
		jsConsumerInfo_Destroy(up);
	}
	if (ci)
		jsConsumerInfo_Destroy(ci);
	if (st == NATS_OK)
		return 0;
	ci = NULL;
	if (jerr == 0 && st != NATS_NOT_FOUND)
		return failed(EX_TEMPFAIL, s->name, st, jerr);
	if (jerr == STREAM_NOT_FOUND || (st != NATS_NOT_FOUND &&
	    jerr != JSConsumerNotFoundErr))
		return failed(EX_UNAVAILABLE, s->name, st, jerr);
	jsConsumerConfig cfg;
	jsConsumerConfig_Init(&cfg);
	cfg.Durable = s->name;
	cfg.AckPolicy = js_AckExplicit;
	cfg.DeliverPolicy = js_DeliverAll;
	cfg.AckWait = ack_wait;
	cfg.MaxDeliver = -1;
	jerr = 0;
	st = js_AddConsumer(&ci, s->rn->js, REPLICA_STREAM, &cfg, NULL, &jerr);
	jsConsumerInfo_Destroy(ci);
	return st == NATS_OK ? 0 : failed(EX_UNAVAILABLE, s->name, st, jerr);
}

/* The home's apply lock, taken without waiting. */
static int
apply_lock(standby *s)
{
	int rc = home_make(s->ctx);
	if (rc)
		return rc;
	char *path = bakery_xasprintf("%s/%s", s->ctx->home, APPLY_LOCK);
	s->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lock < 0)
		rc = bakery_fail(db_errno_code(errno), "cannot open '%s': %s",
		    path, strerror(errno));
	else if (flock(s->lock, LOCK_EX | LOCK_NB) != 0) {
		char *who = file_lock_holders(s->lock);
		rc = bakery_fail(EX_TEMPFAIL, "another bakery-standby applies "
		    "'%s'%s%s%s: one at a time (stop it first, or run it with "
		    "--auto)", s->ctx->home, who ? " (" : "", who ? who : "",
		    who ? ")" : "");
		free(who);
	}
	free(path);
	return rc;
}

int
standby_open(bakery_ctx *ctx, replica_nats *rn, replica_conf *conf,
    const standby_file *files, standby **out)
{
	*out = NULL;
	standby *s = bakery_xmalloc(sizeof *s);
	*s = (standby){ .ctx = ctx, .rn = rn, .conf = conf, .files = files,
		.lock = -1 };
	snprintf(s->name, sizeof s->name, "standby_%s", conf->host);
	int rc = apply_lock(s);
	if (!rc)
		rc = ensure_consumer(s);
	if (!rc) {
		jsSubOptions so;
		jsSubOptions_Init(&so);
		so.Stream = REPLICA_STREAM;
		so.Consumer = s->name;
		jsErrCode jerr = 0;
		natsStatus st = js_PullSubscribe(&s->sub, rn->js, NULL, s->name,
		    NULL, &so, &jerr);
		if (st != NATS_OK)
			rc = failed(EX_UNAVAILABLE, s->name, st, jerr);
	}
	if (rc) {
		standby_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

static const char *
header(natsMsg *m, const char *key)
{
	const char *v = NULL;
	return natsMsgHeader_Get(m, key, &v) == NATS_OK ? v : NULL;
}

/* The epoch of a record applied, kept in HOME/.replica when it is one
 * this standby had not seen. */
static int
saw_epoch(standby *s, const char *subject)
{
	const char *e = subject + strlen(REPLICA_PREFIX) + 1;
	if (strncmp(s->conf->epoch, e, REPLICA_ID_SIZE - 1) == 0)
		return 0;
	memcpy(s->conf->epoch, e, REPLICA_ID_SIZE - 1);
	s->conf->epoch[REPLICA_ID_SIZE - 1] = '\0';
	return replica_conf_write(s->ctx, s->conf);
}

/* A message's record: its subject, headers and body (the message's,
 * alive with it). 0 when it is not JetStream's. */
static int
record_of(natsMsg *m, standby_record *r)
{
	jsMsgMetaData *meta = NULL;
	if (natsMsg_GetMetaData(&meta, m) != NATS_OK)
		return 0;
	*r = (standby_record){
		.subject = natsMsg_GetSubject(m),
		.file = header(m, "Bakery-File"),
		.seq = header(m, "Bakery-Seq"),
		.version = header(m, "Bakery-Version"),
		.host = header(m, "Bakery-Host"),
		.op = header(m, "Bakery-Op"),
		.changeset = natsMsg_GetData(m),
		.size = natsMsg_GetDataLength(m),
		.stream_seq = meta->Sequence.Stream,
	};
	jsMsgMetaData_Destroy(meta);
	return 1;
}

static void
refused(standby *s, const standby_record *r)
{
	char seq[24];
	snprintf(seq, sizeof seq, "%llu", (unsigned long long)r->stream_seq);
	s->tally.refused++;
	bakery_log(LOG_ERROR, "replica_refused", "stream_seq", seq, "error",
	    bakery_error(), (char *)NULL);
}

/* The batch's records applied up to the first that stops the standby
 * (there: *stop, and the index of its message): each message's outcome
 * and whether it is durable (the others are given back). */
static int
apply_list(standby *s, natsMsgList *list, standby_record *r,
    enum standby_outcome *outcome, int *durable)
{
	standby_batch *b = standby_batch_new(s->ctx);
	int rc = 0;
	for (int i = 0; i < list->Count && !rc; i++) {
		if (!record_of(list->Msgs[i], &r[i])) {
			/* Not JetStream's: nothing to apply. */
			natsMsg_Term(list->Msgs[i], NULL);
			outcome[i] = STANDBY_REFUSED; /* neither acked nor given
						       * back */
			continue;
		}
		struct checked c;
		/* A removal waits for the records before it. */
		if (r[i].op && !(rc = standby_batch_run(b, outcome, durable)))
			rc = standby_removal(s->ctx, &r[i], &outcome[i]);
		else if (!r[i].op)
			rc = standby_check(s->ctx, s->files, &r[i], &c,
			    &outcome[i]);
		if (rc)
			break;
		if (outcome[i] == STANDBY_REFUSED) {
			refused(s, &r[i]);
			natsMsg_Term(list->Msgs[i], NULL);
		} else if (r[i].op) {
			durable[i] = 1;
		} else {
			standby_batch_add(b, &r[i], &c, i);
		}
	}
	/* Those before a record that stops the standby are applied. */
	char *why = rc ? bakery_xstrdup(bakery_error()) : NULL;
	int ran = standby_batch_run(b, outcome, durable);
	standby_batch_free(b);
	if (why) {
		bakery_fail(rc, "%s", why);
		free(why);
	}
	return rc ? rc : ran;
}

/* Each record of the list durable acknowledged, in order (the last
 * waited for: the stream has them all then), the rest given back for the
 * next run, which meets them first. */
static int
acknowledge(standby *s, natsMsgList *list, const standby_record *r,
    const enum standby_outcome *outcome, const int *durable)
{
	int last = -1, rc = 0;
	for (int i = 0; i < list->Count; i++)
		if (durable[i])
			last = i;
	for (int i = 0; i < list->Count; i++) {
		if (!durable[i]) {
			if (outcome[i] != STANDBY_REFUSED)
				natsMsg_Nak(list->Msgs[i], NULL);
			continue;
		}
		char seq[24];
		snprintf(seq, sizeof seq, "%llu",
		    (unsigned long long)r[i].stream_seq);
		if (outcome[i] == STANDBY_APPLIED)
			s->tally.applied++;
		else
			s->tally.skipped++;
		bakery_log(LOG_DEBUG, outcome[i] == STANDBY_APPLIED
		    ? "replica_applied" : "replica_skipped", "file", r[i].file,
		    "seq", r[i].seq, "stream_seq", seq, (char *)NULL);
		bakery_crash_point("standby.before_ack");
		jsErrCode jerr = 0;
		natsStatus st = i == last ? natsMsg_AckSync(list->Msgs[i],
		    NULL, &jerr) : natsMsg_Ack(list->Msgs[i], NULL);
		/* Applied: sent again, it is skipped. */
		if (st != NATS_OK && !rc)
			rc = failed(EX_TEMPFAIL, "ack", st, jerr);
		if (!rc && outcome[i] == STANDBY_APPLIED)
			rc = saw_epoch(s, r[i].subject);
	}
	return rc;
}

/* A message and its sequence in the stream (0: not JetStream's). */
struct delivered {
	uint64_t seq;
	natsMsg *m;
};

static int
by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct delivered *)a)->seq;
	uint64_t y = ((const struct delivered *)b)->seq;
	return x < y ? -1 : x > y;
}

/* The list in the stream's order: what is delivered again (a standby
 * killed before its acks) may come in another, and a file's records
 * must be met in theirs. */
static void
in_stream_order(natsMsgList *list)
{
	struct delivered *d = bakery_xmalloc(((size_t)list->Count + 1) *
	    sizeof *d);
	for (int i = 0; i < list->Count; i++) {
		jsMsgMetaData *meta = NULL;
		d[i] = (struct delivered){ .m = list->Msgs[i] };
		if (natsMsg_GetMetaData(&meta, list->Msgs[i]) == NATS_OK) {
			d[i].seq = meta->Sequence.Stream;
			jsMsgMetaData_Destroy(meta);
		}
	}
	qsort(d, (size_t)list->Count, sizeof *d, by_seq);
	for (int i = 0; i < list->Count; i++)
		list->Msgs[i] = d[i].m;
	free(d);
}

/* A gap (EX_SOFTWARE, in bakery_error()) met while records delivered
 * before, to a standby killed before its acks, wait to be delivered
 * again (the consumer has more unacknowledged than this batch): they
 * may be the missing ones, so it is EX_TEMPFAIL, tried again later. */
static int
gap_or_redelivery(standby *s, int fetched)
{
	char *why = bakery_xstrdup(bakery_error());
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	int again = js_GetConsumerInfo(&ci, s->rn->js, REPLICA_STREAM,
	    s->name, NULL, &jerr) == NATS_OK &&
	    ci->NumAckPending > (int64_t)fetched;
	if (ci)
		jsConsumerInfo_Destroy(ci);
	int rc = bakery_fail(again ? EX_TEMPFAIL : EX_SOFTWARE, "%s%s", why,
	    again ? " (records delivered before, not acknowledged, are to "
	    "be delivered again: tried again later)" : "");
	free(why);
	return rc;
}

int
standby_pull(standby *s, int max, int wait_ms)
{
	natsMsgList list = { NULL, 0 };
	jsErrCode jerr = 0;
	natsStatus st = natsSubscription_Fetch(&list, s->sub, max, wait_ms,
	    &jerr);
	if (st == NATS_TIMEOUT)
		return 0;
	if (st != NATS_OK)
		return failed(EX_TEMPFAIL, "fetch", st, jerr);
	size_t n = list.Count > 0 ? (size_t)list.Count : 1;
	standby_record *r = bakery_xmalloc(n * sizeof *r);
	enum standby_outcome *outcome = bakery_xmalloc(n * sizeof *outcome);
	int *durable = bakery_xmalloc(n * sizeof *durable);
	for (size_t i = 0; i < n; i++) {
		outcome[i] = STANDBY_SKIPPED;
		durable[i] = 0;
	}
	in_stream_order(&list);
	int rc = apply_list(s, &list, r, outcome, durable);
	if (rc == EX_SOFTWARE)
		rc = gap_or_redelivery(s, list.Count);
	char *why = rc ? bakery_xstrdup(bakery_error()) : NULL;
	int acked = acknowledge(s, &list, r, outcome, durable);
	if (why) {
		bakery_fail(rc, "%s", why);
		free(why);
	}
	natsMsgList_Destroy(&list);
	free(r);
	free(outcome);
	free(durable);
	return rc ? rc : acked;
}

/* Whether the consumer has acknowledged the stream up to last. */
static int
caught_up(standby *s, uint64_t last, int *done)
{
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus st = js_GetConsumerInfo(&ci, s->rn->js, REPLICA_STREAM,
	    s->name, NULL, &jerr);
	if (st != NATS_OK)
		return failed(EX_TEMPFAIL, s->name, st, jerr);
	*done = ci->AckFloor.Stream >= last ||
	    (ci->NumPending == 0 && ci->NumAckPending == 0);
	jsConsumerInfo_Destroy(ci);
	return 0;
}

int
standby_drain(standby *s)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus st = js_GetStreamInfo(&si, s->rn->js, REPLICA_STREAM, NULL,
	    &jerr);
	if (st != NATS_OK)
		return failed(EX_TEMPFAIL, REPLICA_STREAM, st, jerr);
	uint64_t last = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	int done = 0, rc;
	while (!(rc = caught_up(s, last, &done)) && !done) {
		if (loop_stopping())
			return bakery_fail(EX_TEMPFAIL, "stopped before every "
			    "record of the stream was applied");
		if ((rc = standby_pull(s, DRAIN_BATCH, DRAIN_WAIT_MS)))
			return rc;
	}
	return rc;
}

const standby_tally *
standby_counts(const standby *s)
{
	return &s->tally;
}

void
standby_close(standby *s)
{
	if (!s)
		return;
	if (s->sub)
		natsSubscription_Destroy(s->sub);
	if (s->lock >= 0)
		close(s->lock);
	free(s);
}
