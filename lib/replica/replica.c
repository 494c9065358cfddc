/*
 * replica.c — a replicated home: its role, its connection, its stream,
 * and the sink its commits are recorded through (replica.h).
 */
#define _GNU_SOURCE
#include "replica.h"
#include "../store/capture.h"
#include "../store/file.h"
#include "../store/store.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPLICA_FILE ".replica"
#define PUBLISH_WAIT_MS 5000
/* JetStream's "wrong last sequence": the subject's last record is not
 * the one this host last had taken. */
#define WRONG_LAST_SEQUENCE 10071

void
replica_new_id(char out[REPLICA_ID_SIZE])
{
	unsigned char raw[8];
	bakery_random_bytes(raw, sizeof raw);
	bakery_hex(raw, sizeof raw, out);
}

int
replica_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n != REPLICA_ID_SIZE - 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int
replica_conf_read(bakery_ctx *ctx, replica_conf *c)
{
	*c = (replica_conf){ .role = REPLICA_NONE };
	char *path = bakery_xasprintf("%s/%s", ctx->home, REPLICA_FILE);
	struct stat st;
	int fd = file_open_regular(path, O_RDONLY, &st);
	if (fd < 0 && errno == ENOENT) {
		free(path);
		return 0;
	}
	/* Not this user's to read: a program that only looks goes on; one
	 * that writes is refused at the home's gate (home_make). */
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		free(path);
		ctx->replica_unread = 1;
		return 0;
	}
	char text[256] = "";
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (fd >= 0)
		close(fd);
	char role[16] = "", host[32] = "", epoch[32] = "";
	int rc = 0;
	if (n < 0 || n == (ssize_t)sizeof text - 1)
		rc = bakery_fail(EX_CONFIG, "'%s': cannot be read, or not "
		    "bakery's", path);
	else if (sscanf(text, "role %15s\nhost %31s\nepoch %31s\n", role,
	    host, epoch) != 3 || !replica_id_valid(host) ||
	    (strcmp(epoch, "none") != 0 && !replica_id_valid(epoch)) ||
	    (strcmp(role, "primary") != 0 && strcmp(role, "standby") != 0) ||
	    (strcmp(role, "primary") == 0 && !replica_id_valid(epoch)))
		rc = bakery_fail(EX_CONFIG, "'%s': not a replica's file bakery "
		    "wrote", path);
	free(path);
	if (rc)
		return rc;
	c->role = strcmp(role, "primary") == 0 ? REPLICA_PRIMARY
					       : REPLICA_STANDBY;
	memcpy(c->host, host, REPLICA_ID_SIZE);
	memcpy(c->epoch, epoch, strlen(epoch) + 1);
	return 0;
}

int
replica_conf_write(bakery_ctx *ctx, const replica_conf *c)
{
	int rc = home_make(ctx);
	if (rc)
		return rc;
	char *path = bakery_xasprintf("%s/%s", ctx->home, REPLICA_FILE);
	char *text = bakery_xasprintf("role %s\nhost %s\nepoch %s\n",
	    c->role == REPLICA_PRIMARY ? "primary" : "standby", c->host,
	    c->epoch);
	rc = file_put(path, text, 0600, 1, NULL);
	free(text);
	free(path);
	return rc;
}

/* The stream's answer to a publish not waited for, on the client's
 * thread: the first failure kept for wait_async. */
static void
on_async_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae,
    void *closure)
{
	(void)js;
	(void)pa;
	replica_nats *rn = closure;
	pthread_mutex_lock(&rn->mu);
	if (pae && rn->async_err == NATS_OK) {
		rn->async_err = pae->Err != NATS_OK ? pae->Err : NATS_ERR;
		snprintf(rn->async_error, sizeof rn->async_error, "%s",
		    pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
	}
	pthread_mutex_unlock(&rn->mu);
	natsMsg_Destroy(msg);
}

int
replica_connect(bakery_ctx *ctx, replica_nats **out)
{
	*out = NULL;
	if (!ctx->queue_url || strncmp(ctx->queue_url, "nats://", 7) != 0)
		return bakery_fail(EX_CONFIG, "a replicated home's queue is "
		    "nats:// (BAKERY_QUEUE, --queue): '%s' is not",
		    ctx->queue_url ? ctx->queue_url : "sqlite:HOME/queue.db");
	replica_nats *rn = bakery_xmalloc(sizeof *rn);
	*rn = (replica_nats){ 0 };
	pthread_mutex_init(&rn->mu, NULL);
	int rc = lazy_nats_connect(ctx->queue_url, NULL, NULL, &rn->nc,
	    &rn->servers);
	if (!rc) {
		jsOptions jo;
		jsOptions_Init(&jo);
		jo.Wait = PUBLISH_WAIT_MS;
		jo.PublishAsync.AckHandler = on_async_ack;
		jo.PublishAsync.AckHandlerClosure = rn;
		jo.PublishAsync.MaxPending = 4096;
		natsStatus s = natsConnection_JetStream(&rn->js, rn->nc, &jo);
		if (s != NATS_OK)
			rc = bakery_fail(EX_UNAVAILABLE, "nats: jetstream: %s",
			    natsStatus_GetText(s));
	}
	if (rc) {
		replica_disconnect(rn);
		return rc;
	}
	*out = rn;
	return 0;
}

void
replica_disconnect(replica_nats *rn)
{
	if (!rn)
		return;
	if (rn->js)
		jsCtx_Destroy(rn->js);
	if (rn->nc)
		natsConnection_Destroy(rn->nc);
	pthread_mutex_destroy(&rn->mu);
	free(rn);
}

/* A JetStream request that failed: EX_TEMPFAIL when it may answer if
 * asked again (no answer in time, or none yet: a leader being elected),
 * EX_UNAVAILABLE else. */
static int
js_failed(const char *what, natsStatus s, jsErrCode jerr)
{
	const char *text = nats_GetLastError(NULL);
	int again = s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS ||
	    s == NATS_CONNECTION_DISCONNECTED || s == NATS_CONNECTION_CLOSED;
	return bakery_fail(again ? EX_TEMPFAIL : EX_UNAVAILABLE,
	    "nats: %s: %s (jetstream error %d)", what,
	    text && *text ? text : natsStatus_GetText(s), (int)jerr);
}

int
replica_stream_epoch(replica_nats *rn, const char *epoch, int replicas)
{
	if (replicas <= 0)
		replicas = rn->servers < 3 ? rn->servers : 3;
	char *subject = bakery_xasprintf("%s.%s.>", REPLICA_PREFIX, epoch);
	const char *subjects[] = { subject };
	jsStreamConfig cfg;
	jsStreamConfig_Init(&cfg);
	cfg.Name = REPLICA_STREAM;
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.Storage = js_FileStorage;
	cfg.Replicas = replicas;
	cfg.AllowDirect = true;
	cfg.DenyDelete = true;
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetStreamInfo(&si, rn->js, REPLICA_STREAM, NULL,
	    &jerr);
	if (s == NATS_OK) {
		/* Moved, its other settings kept as they were made. */
		cfg.Replicas = si->Config->Replicas;
		jsStreamInfo_Destroy(si);
		si = NULL;
		s = js_UpdateStream(&si, rn->js, &cfg, NULL, &jerr);
	} else if (s == NATS_NOT_FOUND) {
		jerr = 0;
		s = js_AddStream(&si, rn->js, &cfg, NULL, &jerr);
	}
	free(subject);
	if (si)
		jsStreamInfo_Destroy(si);
	if (s != NATS_OK)
		return js_failed("the replica's stream " REPLICA_STREAM, s, jerr);
	/* The bucket as the stream: of the replicas it was made with. */
	kvConfig kc;
	kvConfig_Init(&kc);
	kc.Bucket = REPLICA_LEASE_BUCKET;
	kc.History = 1;
	kc.Replicas = cfg.Replicas;
	kvStore *kv = NULL;
	s = js_CreateKeyValue(&kv, rn->js, &kc);
	if (kv)
		kvStore_Destroy(kv);
	return s == NATS_OK ? 0 : js_failed("the lease's bucket "
	    REPLICA_LEASE_BUCKET, s, 0);
}

int
replica_subject(const char *epoch, const char *relpath, char *buf,
    size_t size)
{
	int n = snprintf(buf, size, "%s.%s.", REPLICA_PREFIX, epoch);
	size_t i = n > 0 ? (size_t)n : size;
	for (const char *p = relpath; *p && i + 1 < size; p++)
		buf[i++] = *p == '.' ? '~' : *p == '/' ? '.' : *p;
	if (i + 1 >= size)
		return bakery_fail(EX_SOFTWARE, "'%s': too long a path for a "
		    "subject", relpath);
	buf[i] = '\0';
	return 0;
}

/* ---- the sink ---- */

static uint64_t
fnv1a(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

struct replica_sink {
	struct capture_sink base; /* first: the capture's pointer is ours */
	bakery_ctx *ctx;
	replica_nats *rn;
	char host[REPLICA_ID_SIZE];
};

/* Whether the stream took this record already, its answer lost (a power
 * cut lost the note of it, or the process died before it): the
 * subject's last record is of this epoch, so this home's, and numbered
 * this one or later. Its sequence is then this file's last. */
static int
taken_before(struct replica_sink *rs, const char *subject,
    const capture_record *r, uint64_t *stream_seq)
{
	natsMsg *last = NULL;
	jsErrCode jerr = 0;
	const char *seq = NULL;
	long long n = 0;
	int taken = js_GetLastMsg(&last, rs->rn->js, REPLICA_STREAM, subject,
	    NULL, &jerr) == NATS_OK &&
	    natsMsgHeader_Get(last, "Bakery-Seq", &seq) == NATS_OK &&
	    bakery_parse_number(seq, 1, INT64_MAX, &n) == 0 && n >= r->seq;
	if (taken)
		*stream_seq = natsMsg_GetSequence(last);
	if (last)
		natsMsg_Destroy(last);
	return taken;
}

/* Whether the stream still takes this host's epoch: a publish that
 * found no stream may have met a leader's election, not a promotion.
 * 1 too when the stream cannot be read: not known to be fenced. */
static int
takes_epoch(struct replica_sink *rs)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	char want[64];
	snprintf(want, sizeof want, "%s.%s.>", REPLICA_PREFIX,
	    rs->base.epoch);
	if (js_GetStreamInfo(&si, rs->rn->js, REPLICA_STREAM, NULL, &jerr) !=
	    NATS_OK)
		return jerr != 10059; /* JetStream's "stream not found" */
	int takes = 0;
	for (int i = 0; i < si->Config->SubjectsLen; i++)
		takes |= strcmp(si->Config->Subjects[i], want) == 0;
	jsStreamInfo_Destroy(si);
	return takes;
}

static int
fenced(struct replica_sink *rs, const char *relpath, const char *why)
{
	rs->base.fenced = 1;
	return bakery_fail(EX_UNAVAILABLE, "'%s' was not recorded: %s; this "
	    "host is no longer the primary (bakery-standby --promote moved "
	    "the home to another)", relpath, why);
}

/* The stream did not answer: the record stays in its file. */
static int
unrecorded(const capture_record *r, const char *why)
{
	char *copy = bakery_xstrdup(why);
	int rc = bakery_fail(EX_TEMPFAIL, "'%s' committed here, not yet "
	    "recorded in the replica's stream (%s): it is sent first by the "
	    "next program that writes it; retry with the same key",
	    r->relpath, copy);
	free(copy);
	return rc;
}

/* The sink's connection, made at its first record: 0, or the record
 * unrecorded (75) when no server answers. */
static int
sink_connected(struct replica_sink *rs, const capture_record *r)
{
	if (rs->rn)
		return 0;
	int rc = replica_connect(rs->ctx, &rs->rn);
	return rc == EX_UNAVAILABLE ? unrecorded(r, bakery_error()) : rc;
}

/* A record's message: its subject (in subject), its headers, its body. */
static natsStatus
record_msg(struct replica_sink *rs, const capture_record *r,
    const char *subject, natsMsg **out)
{
	const char *epoch = rs->base.epoch;
	char id[600], num[32];
	/* The hash tells a file made again (its records numbered from 1
	 * again) from the one before; the same record sent twice has one
	 * id, and the stream takes it once. */
	if (r->remove)
		snprintf(id, sizeof id, "%s:%s:remove:%lld", epoch, r->relpath,
		    r->run);
	else
		snprintf(id, sizeof id, "%s:%s:%lld:%016llx", epoch, r->relpath,
		    r->seq, (unsigned long long)fnv1a(r->data, (size_t)r->len));
	natsMsg *m = NULL;
	natsStatus s = natsMsg_Create(&m, subject, NULL, r->data, r->len);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(m, "Nats-Msg-Id", id);
	/* Behind another record than this host's last: fenced. The first
	 * of a file in an epoch expects nothing (a file wiped and made
	 * again follows the records of the one before). */
	snprintf(num, sizeof num, "%llu", (unsigned long long)r->expect);
	if (s == NATS_OK && r->expect)
		s = natsMsgHeader_Set(m, "Nats-Expected-Last-Subject-Sequence",
		    num);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(m, "Bakery-File", r->relpath);
	if (s == NATS_OK && r->remove)
		s = natsMsgHeader_Set(m, "Bakery-Op", "remove");
	snprintf(num, sizeof num, "%lld", r->seq);
	if (s == NATS_OK && !r->remove)
		s = natsMsgHeader_Set(m, "Bakery-Seq", num);
	snprintf(num, sizeof num, "%d", r->version);
	if (s == NATS_OK && !r->remove)
		s = natsMsgHeader_Set(m, "Bakery-Version", num);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(m, "Bakery-Host", rs->host);
	if (s != NATS_OK && m) {
		natsMsg_Destroy(m);
		m = NULL;
	}
	*out = m;
	return s;
}

/* Connected, the record's subject in subject and its message in *m:
 * 0, or why it cannot be sent (unrecorded). */
static int
record_prepared(struct replica_sink *rs, const capture_record *r,
    char *subject, size_t size, natsMsg **m)
{
	int rc = sink_connected(rs, r);
	if (!rc)
		rc = replica_subject(rs->base.epoch, r->relpath, subject, size);
	if (rc)
		return rc;
	natsStatus s = record_msg(rs, r, subject, m);
	return s == NATS_OK ? 0 : unrecorded(r, natsStatus_GetText(s));
}

static int
sink_send(struct capture_sink *sink, const capture_record *r,
    uint64_t *stream_seq)
{
	struct replica_sink *rs = (struct replica_sink *)sink;
	char subject[512];
	natsMsg *m = NULL;
	int rc = record_prepared(rs, r, subject, sizeof subject, &m);
	if (rc)
		return rc;
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MaxWait = PUBLISH_WAIT_MS;
	jsPubAck *pa = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_PublishMsg(&pa, rs->rn->js, m, &po, &jerr);
	natsMsg_Destroy(m);
	if (s == NATS_OK) {
		*stream_seq = pa->Sequence;
		jsPubAck_Destroy(pa);
		return 0;
	}
	if (s == NATS_NO_RESPONDERS && !takes_epoch(rs))
		return fenced(rs, r->relpath, "no stream takes this host's "
		    "epoch");
	if (jerr == WRONG_LAST_SEQUENCE)
		return taken_before(rs, subject, r, stream_seq) ? 0
		    : fenced(rs, r->relpath, "another host wrote it since");
	const char *text = nats_GetLastError(NULL);
	return unrecorded(r, text && *text ? text : natsStatus_GetText(s));
}

/* A --batch group's record, published; its answer waited for by
 * sink_wait_async, with the rest of the group's. */
static int
sink_send_async(struct capture_sink *sink, const capture_record *r)
{
	struct replica_sink *rs = (struct replica_sink *)sink;
	char subject[512];
	natsMsg *m = NULL;
	int rc = record_prepared(rs, r, subject, sizeof subject, &m);
	if (rc)
		return rc;
	natsStatus s = js_PublishMsgAsync(rs->rn->js, &m, NULL);
	natsMsg_Destroy(m); /* NULL once the library took it */
	if (s != NATS_OK)
		return unrecorded(r, natsStatus_GetText(s));
	rs->rn->async_sent++;
	return 0;
}

static int
sink_wait_async(struct capture_sink *sink)
{
	struct replica_sink *rs = (struct replica_sink *)sink;
	replica_nats *rn = rs->rn;
	if (!rn || rn->async_sent == 0)
		return 0;
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MaxWait = PUBLISH_WAIT_MS;
	natsStatus done = js_PublishAsyncComplete(rn->js, &po);
	if (done != NATS_OK) {
		/* Not answered in time: not taken, as far as this knows. */
		natsMsgList pending = { NULL, 0 };
		if (js_PublishAsyncGetPendingList(&pending, rn->js) == NATS_OK)
			natsMsgList_Destroy(&pending);
	}
	pthread_mutex_lock(&rn->mu);
	natsStatus err = rn->async_err != NATS_OK ? rn->async_err : done;
	char why[256];
	snprintf(why, sizeof why, "%s", rn->async_err != NATS_OK
	    ? rn->async_error : natsStatus_GetText(done));
	rn->async_err = NATS_OK;
	rn->async_error[0] = '\0';
	long n = rn->async_sent;
	rn->async_sent = 0;
	pthread_mutex_unlock(&rn->mu);
	if (err == NATS_OK)
		return 0;
	if (err == NATS_NO_RESPONDERS && !takes_epoch(rs))
		return fenced(rs, "a --batch group's files", "no stream takes "
		    "this host's epoch");
	return bakery_fail(EX_TEMPFAIL, "%ld records of a --batch group "
	    "committed here, not all recorded in the replica's stream (%s): "
	    "they are sent first by the next program that writes their "
	    "files; retry the group's lines with the same keys", n, why);
}

int
replica_attach(bakery_ctx *ctx)
{
	replica_conf c;
	int rc = replica_conf_read(ctx, &c);
	if (rc || c.role == REPLICA_NONE)
		return rc;
	if (c.role == REPLICA_STANDBY) {
		ctx->replica_standby = 1;
		return 0;
	}
	if (!ctx->queue_url || strncmp(ctx->queue_url, "nats://", 7) != 0)
		return bakery_fail(EX_CONFIG, "'%s' is a replicated home: its "
		    "queue is nats:// (BAKERY_QUEUE, --queue)", ctx->home);
	/* Its records are numbered by its files' commits, which must not be
	 * lost to a power cut: another commit would take a lost one's
	 * number, and the stream, holding that number, would not take it. */
	if (ctx->sync_normal)
		return bakery_fail(EX_CONFIG, "'%s' is a replicated home: its "
		    "commits are synced (BAKERY_SYNC=full)", ctx->home);
	struct replica_sink *rs = bakery_xmalloc(sizeof *rs);
	*rs = (struct replica_sink){ .base.send = sink_send,
		.base.send_async = sink_send_async,
		.base.wait_async = sink_wait_async, .ctx = ctx };
	memcpy(rs->base.epoch, c.epoch, REPLICA_ID_SIZE);
	memcpy(rs->host, c.host, REPLICA_ID_SIZE);
	ctx->replica = &rs->base;
	return 0;
}

void
replica_detach(bakery_ctx *ctx)
{
	struct replica_sink *rs = (struct replica_sink *)ctx->replica;
	if (!rs)
		return;
	capture_sink_gone(&rs->base);
	replica_disconnect(rs->rn);
	free(rs);
	ctx->replica = NULL;
}
