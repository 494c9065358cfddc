/*
 * queue_nats_stream.c — the NATS driver's streams (queue_nats.c has the
 * connection and send, queue_nats_receive.c receive and the answers to
 * one message, queue_nats_peek.c peek): the
 * assets made or checked (init), a stream healed that moved back under its
 * consumer, the deletes that remove an answered message from its stream
 * (one, or a batch's together), stats and the wipe's purge. What
 * each promises is in queue_nats.c's opening comment and docs/nats.md.
 */
#include "queue_nats-internal.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNANSWERED_WAIT_MS 30000 /* see unanswered() */
#define ASK_AGAIN_PAUSE_MS 250

/* ---- assets ---- */

static int
ensure_stream(nats_queue *n, const char *name, const char *subject,
    int replicas, const char **status, jv *report)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetStreamInfo(&si, n->js, name, NULL, &jerr);
	if (s == NATS_OK && report && si->Config->Replicas != replicas) {
		/* init --replicas N on a stream with another count. */
		jsStreamConfig cfg = *si->Config;
		cfg.Replicas = replicas;
		jsStreamInfo *up = NULL;
		s = js_UpdateStream(&up, n->js, &cfg, NULL, &jerr);
		if (s == NATS_OK) {
			jsStreamInfo_Destroy(si);
			si = up;
			*status = "updated";
		}
	}
	if (s != NATS_OK && (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr)) {
		jsStreamConfig cfg;
		jsStreamConfig_Init(&cfg);
		cfg.Name = name;
		cfg.Subjects = &subject;
		cfg.SubjectsLen = 1;
		cfg.Storage = js_FileStorage;
		cfg.Retention = js_LimitsPolicy;
		cfg.Discard = js_DiscardNew;
		cfg.MaxBytes = 1LL << 30;
		cfg.MaxMsgSize = 1 << 20;
		cfg.Duplicates = 600LL * 1000000000LL;
		cfg.Replicas = replicas;
		cfg.AllowDirect = true;
		jerr = 0;
		s = js_AddStream(&si, n->js, &cfg, NULL, &jerr);
		*status = "created";
	}
	if (s != NATS_OK)
		return queue_nats_failed(EX_UNAVAILABLE, name, s, jerr);
	if (report) {
		jv r = jv_object();
		r = jv_object_set(r, jv_string("stream"), jv_string(name));
		r = jv_object_set(r, jv_string("status"), jv_string(*status));
		r = jv_object_set(r, jv_string("subjects"), jv_string(
		    si->Config->SubjectsLen ? si->Config->Subjects[0] : ""));
		r = jv_object_set(r, jv_string("storage"), jv_string(
		    si->Config->Storage == js_FileStorage ? "file" : "memory"));
		r = jv_object_set(r, jv_string("replicas"),
		    jv_number((double)si->Config->Replicas));
		r = jv_object_set(r, jv_string("duplicate_window_s"),
		    jv_number((double)(si->Config->Duplicates / 1000000000LL)));
		r = jv_object_set(r, jv_string("max_bytes"),
		    jv_number((double)si->Config->MaxBytes));
		r = jv_object_set(r, jv_string("messages"),
		    jv_number((double)si->State.Msgs));
		*report = jv_array_append(*report, r);
	}
	jsStreamInfo_Destroy(si);
	return 0;
}

/* Creates what is missing (status "created"), or finds it ("exists"); with
 * a report (init), also sets the streams' replicas ("updated"). */
int
queue_nats_ensure_assets(nats_queue *n, int replicas, jv *report)
{
	int rc;
	if ((rc = ensure_stream(n, STREAM_EVENTS, "bakery.events.>", replicas,
		 &n->created[0], report)) ||
	    (rc = ensure_stream(n, STREAM_DLQ, "bakery.dlq.>", replicas,
		 &n->created[1], report)))
		return rc;
	natsStatus s = n->fences ? NATS_OK
	    : js_KeyValue(&n->fences, n->js, FENCE_BUCKET);
	if (s != NATS_OK) {
		kvConfig cfg;
		kvConfig_Init(&cfg);
		cfg.Bucket = FENCE_BUCKET;
		cfg.History = 1;
		cfg.StorageType = js_FileStorage;
		cfg.Replicas = n->replicas;
		s = js_CreateKeyValue(&n->fences, n->js, &cfg);
		n->created[2] = "created";
	}
	if (s != NATS_OK)
		return queue_nats_failed(EX_UNAVAILABLE, FENCE_BUCKET, s, 0);
	if (report) {
		jv r = jv_object();
		r = jv_object_set(r, jv_string("bucket"), jv_string(FENCE_BUCKET));
		r = jv_object_set(r, jv_string("status"), jv_string(n->created[2]));
		*report = jv_array_append(*report, r);
	}
	return 0;
}

/* The stream's last sequence below what the consumer has delivered: a
 * nats-server 2.9 SIGKILLed between emptying its last block and rewriting
 * its index comes back with a lower last sequence, and new messages take
 * numbers the consumer has passed, never to be delivered. Found at start
 * and after a reconnect (a restarted server), the consumer is made again,
 * delivering all the stream holds: what is still owed, and what a 2.9
 * server brought back, which the subscribers absorb. Messages held from
 * before lie above the stream's end: they were deleted, so their answers
 * are dropped (see queue_nats_held_is_stale()). Returns 1 when the
 * consumer went. */
int
queue_nats_heal_behind(nats_queue *n, const char *stream, const char *name,
    jsConsumerInfo *ci)
{
	jsStreamInfo *si = NULL;
	if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) != NATS_OK)
		return 0;
	uint64_t last = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	if (ci->Delivered.Stream <= last)
		return 0;
	char l[24], d[24];
	snprintf(l, sizeof l, "%llu", (unsigned long long)last);
	snprintf(d, sizeof d, "%llu", (unsigned long long)ci->Delivered.Stream);
	bakery_log(LOG_WARN, "stream_behind_consumer", "stream", stream,
	    "consumer", name, "last_seq", l, "delivered_seq", d, (char *)NULL);
	if (js_DeleteConsumer(n->js, stream, name, NULL, NULL) != NATS_OK)
		return 0;
	n->generation++;
	if (!n->stale_above || last < n->stale_above)
		n->stale_above = last ? last : 1;
	return 1;
}

/* A delete with no answer in time may have been applied all the same: a
 * stream leader that commits it and dies before answering (SIGKILL, a
 * failover). Reported as failed, it would be lease-lost, said to come
 * again, and never come. So an unanswered delete is asked again until an
 * answer settles it: deleted now, or nothing there (the first one did
 * it). A process waits for that up to UNANSWERED_WAIT_MS from its first
 * unanswered delete, longer than a cluster takes to elect a new leader;
 * once that has run out, a delete is asked once, until one is answered. */
static void
unanswered(nats_queue *n)
{
	if (!n->unanswered_until)
		n->unanswered_until = nats_Now() + UNANSWERED_WAIT_MS;
}

static int
still_waiting(nats_queue *n)
{
	return n->unanswered_until && nats_Now() < n->unanswered_until;
}

/* One delete: 0 when the message is gone, deleted now or before (another
 * consumer, a purge); EX_TEMPFAIL when refused or not answered. The same
 * request as queue_nats_ack_many's, its answer read by
 * queue_nats_delete_gone().
 *
 * A plain delete, not an erase. nats-server 2.9 keeps a delete of a message
 * inside a block only in the block's index, written lazily, so a SIGKILLed
 * server can bring a deleted message back: it was applied and acked, it
 * lies below the consumer's ack floor and is not delivered again to that
 * consumer, but it shows in stats and peek (and a new consumer would
 * deliver it, absorbed). An erase stays erased, but under the soak's
 * server kills 2.9.10 then lost track of live messages in the block being
 * written ("no message found" for a message on disk): retried events were
 * never delivered again, lost. 2.10 writes a tombstone for each delete:
 * nothing comes back. See docs/nats.md. */
static int
delete_once(nats_queue *n, const char *queue, uint64_t seq)
{
	char subject[80], body[64];
	snprintf(subject, sizeof subject, "$JS.API.STREAM.MSG.DELETE.%s",
	    queue_nats_stream_of(queue));
	snprintf(body, sizeof body, "{\"seq\":%llu,\"no_erase\":true}",
	    (unsigned long long)seq);
	natsMsg *answer = NULL;
	natsStatus s = natsConnection_RequestString(&answer, n->nc, subject,
	    body, PUBLISH_WAIT_MS);
	if (s == NATS_OK) {
		int gone = queue_nats_delete_gone(natsMsg_GetData(answer),
		    natsMsg_GetDataLength(answer));
		char why[200];
		queue_nats_one_line(natsMsg_GetData(answer), why, sizeof why);
		natsMsg_Destroy(answer);
		if (gone) {
			n->unanswered_until = 0;
			return 0;
		}
		return bakery_fail(EX_TEMPFAIL, "nats: delete of %llu refused: %s",
		    (unsigned long long)seq, why);
	}
	if (s == NATS_TIMEOUT)
		unanswered(n);
	return queue_nats_failed(EX_TEMPFAIL, "delete", s, 0);
}

/* After a delete went unanswered: asked again while the process waits. */
static int
ask_again(nats_queue *n, const char *queue, uint64_t seq)
{
	char sq[24];
	snprintf(sq, sizeof sq, "%llu", (unsigned long long)seq);
	bakery_log(LOG_WARN, "delete_asked_again", "stream",
	    queue_nats_stream_of(queue), "seq", sq, (char *)NULL);
	int rc;
	do {
		nats_Sleep(ASK_AGAIN_PAUSE_MS);
		rc = delete_once(n, queue, seq);
	} while (rc && still_waiting(n));
	return rc;
}

/* Removes an answered message from the stream: what stays is what is owed.
 * This comes before the ack: a delete that fails leaves the message
 * unacked, to come back and be absorbed; an ack first could leave an acked
 * message in the stream that no consumer of that filter would ever deliver
 * again. */
int
queue_nats_forget(nats_queue *n, const char *queue, uint64_t seq)
{
	int rc = delete_once(n, queue, seq);
	if (rc && still_waiting(n))
		rc = ask_again(n, queue, seq);
	return rc;
}

/* 10057 (message delete failed) carries the store's error as its
 * description: these say the message is not there; any other (the store
 * closed, a snapshot in progress, a block that did not load) is a refusal,
 * to be tried again. */
static const char *const gone_descriptions[] = {
	"no message found", "stream store EOF", "deleted message", NULL,
};

/* Gone: deleted now (success), or before: 10037 no message found, 10043
 * sequence not found (a delete asked again of a message in the middle of
 * the stream), or a 10057 whose description says so. */
int
queue_nats_delete_gone(const char *answer, int len)
{
	jv r = jv_parse_sized(answer, len);
	if (jv_get_kind(r) != JV_KIND_OBJECT) {
		jv_free(r);
		return 0;
	}
	jv ok = jv_object_get(jv_copy(r), jv_string("success"));
	jv error = jv_object_get(r, jv_string("error"));
	int code = 0;
	const char *text = "";
	if (jv_get_kind(error) == JV_KIND_OBJECT) {
		jv c = jv_object_get(jv_copy(error), jv_string("err_code"));
		code = jv_get_kind(c) == JV_KIND_NUMBER ? (int)jv_number_value(c) : 0;
		jv_free(c);
		jv d = jv_object_get(jv_copy(error), jv_string("description"));
		if (jv_get_kind(d) == JV_KIND_STRING)
			text = jv_string_value(d);
		jv_free(error);
		error = d; /* keeps text alive */
	}
	int gone = jv_get_kind(ok) == JV_KIND_TRUE ||
	    code == JSNoMessageFoundErr || code == JSSequenceNotFoundErr;
	for (int i = 0; !gone && code == JSStreamMsgDeleteFailed &&
	     gone_descriptions[i]; i++)
		gone = strcmp(text, gone_descriptions[i]) == 0;
	jv_free(ok);
	jv_free(error);
	return gone;
}


/* The deletes of a batch go out together as requests on one inbox, and
 * their answers are read after: about one round trip for the batch, where
 * queue_nats_ack takes two per message (the delete, then a synchronous
 * ack). A
 * message whose delete was answered (or found it gone) is acked without
 * waiting: the ack only spares the server a redelivery attempt. One whose
 * delete was refused stays unacked and comes back; one not answered is
 * asked again (see unanswered()). */
int
queue_nats_ack_many(bakery_queue *q, const char *queue, queue_message **m,
    size_t n, int *rcs)
{
	nats_queue *nq = NQ(q);
	struct held **held = bakery_xmalloc(n * sizeof *held);
	natsInbox *inbox = NULL;
	natsSubscription *replies = NULL;
	char *wildcard = NULL;
	natsStatus s = natsInbox_Create(&inbox);
	if (s == NATS_OK) {
		wildcard = bakery_xasprintf("%s.*", (const char *)inbox);
		s = natsConnection_SubscribeSync(&replies, nq->nc, wildcard);
	}
	char *subject = bakery_xasprintf("$JS.API.STREAM.MSG.DELETE.%s",
	    queue_nats_stream_of(queue));
	size_t asked = 0;
	for (size_t i = 0; i < n; i++) {
		rcs[i] = EX_TEMPFAIL;
		held[i] = queue_nats_held_of(nq, m[i]);
		if (held[i] &&
		    queue_nats_held_is_stale(nq, held[i], m[i]->id)) {
			/* its ack would reach the consumer made again */
			rcs[i] = 0;
			queue_nats_release(held[i]);
			held[i] = NULL;
			continue;
		}
		if (!held[i] || s != NATS_OK)
			continue;
		char reply[128], body[64];
		snprintf(reply, sizeof reply, "%s.%zu", (const char *)inbox, i);
		snprintf(body, sizeof body, "{\"seq\":%llu,\"no_erase\":true}",
		    (unsigned long long)held[i]->seq);
		if (natsConnection_PublishRequestString(nq->nc, subject, reply,
			body) == NATS_OK) {
			rcs[i] = -1; /* asked, not answered yet */
			asked++;
		}
	}
	while (asked > 0) {
		natsMsg *answer = NULL;
		if (natsSubscription_NextMsg(&answer, replies,
			PUBLISH_WAIT_MS) != NATS_OK)
			break;
		const char *dot = strrchr(natsMsg_GetSubject(answer), '.');
		size_t i = dot ? (size_t)strtoull(dot + 1, NULL, 10) : n;
		if (i < n && rcs[i] == -1) {
			rcs[i] = queue_nats_delete_gone(natsMsg_GetData(answer),
			    natsMsg_GetDataLength(answer)) ? 0 : EX_TEMPFAIL;
			if (rcs[i] == 0)
				nq->unanswered_until = 0;
			asked--;
		}
		natsMsg_Destroy(answer);
	}
	for (size_t i = 0; i < n; i++) {
		if (rcs[i] == -1) {
			unanswered(nq);
			rcs[i] = still_waiting(nq)
			    ? ask_again(nq, queue, held[i]->seq)
			    : bakery_fail(EX_TEMPFAIL, "nats: the delete of"
				  " '%s' was not answered", m[i]->id);
		}
		if (!held[i])
			continue;
		if (rcs[i] == 0 && natsMsg_Ack(held[i]->msg, NULL) != NATS_OK)
			bakery_log(LOG_WARN, "ack_failed", "id", m[i]->id,
			    (char *)NULL);
		/* an unacked one comes back after AckWait */
		queue_nats_release(held[i]);
	}
	natsSubscription_Destroy(replies);
	natsInbox_Destroy(inbox);
	free(wildcard);
	free(subject);
	free(held);
	return 0;
}

/* ---- stats ---- */

int
queue_nats_stats(bakery_queue *q, jv *out)
{
	nats_queue *n = NQ(q);
	const char *queues[] = { QUEUE_EVENTS, QUEUE_DLQ };
	const char *consumers[] = { "bakery-all", "bakery-dlq-all" };
	*out = jv_object();
	for (int i = 0; i < 2; i++) {
		jsStreamInfo *si = NULL;
		jsErrCode jerr = 0;
		natsStatus s = js_GetStreamInfo(&si, n->js,
		    queue_nats_stream_of(queues[i]), NULL, &jerr);
		if (s != NATS_OK) {
			jv_free(*out);
			*out = jv_invalid();
			return queue_nats_failed(EX_UNAVAILABLE, "stats", s,
			    jerr);
		}
		int64_t msgs = (int64_t)si->State.Msgs, leased = 0;
		jsStreamInfo_Destroy(si);
		jsConsumerInfo *ci = NULL;
		if (js_GetConsumerInfo(&ci, n->js,
			queue_nats_stream_of(queues[i]), consumers[i], NULL,
			NULL) == NATS_OK) {
			leased = ci->NumAckPending;
			jsConsumerInfo_Destroy(ci);
		}
		if (leased > msgs)
			leased = msgs;
		jv st = jv_object();
		st = jv_object_set(st, jv_string("ready"),
		    jv_number((double)(msgs - leased)));
		st = jv_object_set(st, jv_string("leased"), jv_number((double)leased));
		st = jv_object_set(st, jv_string("delayed"), jv_number(0));
		*out = jv_object_set(*out, jv_string(queues[i]), st);
	}
	return 0;
}

/* ---- wipe ---- */

int
queue_nats_wipe_sandbox(bakery_queue *q, const char *sandbox, int64_t fence_ms)
{
	nats_queue *n = NQ(q);
	/* The fence first: a send after it drops the sandbox's old events,
	 * so the purge below cannot be undone by a relay. */
	int64_t was = queue_nats_fence(q, sandbox);
	if (fence_ms > was) {
		char v[24];
		snprintf(v, sizeof v, "%lld", (long long)fence_ms);
		natsStatus s = kvStore_PutString(NULL, n->fences, sandbox, v);
		if (s != NATS_OK)
			return queue_nats_failed(EX_UNAVAILABLE, "fence", s, 0);
	}
	const char *queues[] = { QUEUE_EVENTS, QUEUE_DLQ };
	char sb[80], filter[200];
	queue_nats_token(sandbox, sb, sizeof sb);
	for (int i = 0; i < 2; i++) {
		jsOptions o;
		jsOptions_Init(&o);
		snprintf(filter, sizeof filter, "%s.%s.>",
		    queue_nats_prefix_of(queues[i]), sb);
		o.Stream.Purge.Subject = filter;
		jsErrCode jerr = 0;
		natsStatus s = js_PurgeStream(n->js,
		    queue_nats_stream_of(queues[i]), &o, &jerr);
		if (s != NATS_OK)
			return queue_nats_failed(EX_UNAVAILABLE, "purge", s,
			    jerr);
	}
	return 0;
}

int
queue_nats_init(bakery_queue *q, int replicas, jv *out)
{
	*out = jv_array();
	return queue_nats_ensure_assets(NQ(q), replicas, out);
}
