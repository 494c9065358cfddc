/*
 * standby_pull.c — the standby's consumer of BAKERY_REPLICA: records
 * fetched in batches, each applied (standby.c) then acknowledged, a
 * hostile one terminated, one that stops the standby given back
 * (standby.h).
 */
#define _GNU_SOURCE
#include "standby.h"
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
 * it again: a batch is applied one commit at a time, each synced, in
 * well under it. Short, because a batch whose delivery was lost (a node
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

/* One message: applied and acked, skipped and acked, refused and
 * terminated; or given back, with what stops the standby. */
static int
one(standby *s, natsMsg *m)
{
	jsMsgMetaData *meta = NULL;
	if (natsMsg_GetMetaData(&meta, m) != NATS_OK) {
		natsMsg_Term(m, NULL);
		return 0; /* not JetStream's: nothing to apply */
	}
	standby_record r = {
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
	enum standby_outcome outcome;
	int rc = standby_apply(s->ctx, s->files, &r, &outcome);
	if (rc) {
		natsMsg_Nak(m, NULL);
		return rc;
	}
	char seq[24];
	snprintf(seq, sizeof seq, "%llu", (unsigned long long)r.stream_seq);
	if (outcome == STANDBY_REFUSED) {
		s->tally.refused++;
		bakery_log(LOG_ERROR, "replica_refused", "stream_seq", seq,
		    "error", bakery_error(), (char *)NULL);
		natsMsg_Term(m, NULL);
		return 0;
	}
	if (outcome == STANDBY_APPLIED)
		s->tally.applied++;
	else
		s->tally.skipped++;
	bakery_log(LOG_DEBUG, outcome == STANDBY_APPLIED ? "replica_applied"
	    : "replica_skipped", "file", r.file, "seq", r.seq, "stream_seq",
	    seq, (char *)NULL);
	jsErrCode jerr = 0;
	natsStatus st = natsMsg_AckSync(m, NULL, &jerr);
	if (st != NATS_OK) /* applied: sent again, it is skipped */
		return failed(EX_TEMPFAIL, "ack", st, jerr);
	return outcome == STANDBY_APPLIED ? saw_epoch(s, r.subject) : 0;
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
	int rc = 0;
	for (int i = 0; i < list.Count; i++) {
		if (rc)
			natsMsg_Nak(list.Msgs[i], NULL); /* for the next run */
		else
			rc = one(s, list.Msgs[i]);
	}
	natsMsgList_Destroy(&list);
	return rc;
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
