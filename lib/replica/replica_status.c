/*
 * replica_status.c — what bakery-status and bakery-doctor show of a
 * replicated home (replica_status.h): its role, who holds the lease and
 * until when, and how far each standby is behind, in records and in
 * seconds.
 */
#define _GNU_SOURCE
#include "replica_status.h"
#include "lease.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STANDBY_PREFIX "standby_"

/* One standby's lag: the records its consumer has not acknowledged, and
 * the age of the oldest of them (0 when none). */
static jv
standby_lag(replica_nats *rn, jsConsumerInfo *ci, int64_t now_ms)
{
	uint64_t behind = ci->NumPending + (uint64_t)ci->NumAckPending;
	double seconds = 0;
	if (behind > 0) {
		natsMsg *m = NULL;
		jsErrCode jerr = 0;
		if (js_GetMsg(&m, rn->js, REPLICA_STREAM, ci->AckFloor.Stream + 1,
		    NULL, &jerr) == NATS_OK) {
			int64_t at_ms = natsMsg_GetTime(m) / 1000000;
			seconds = now_ms > at_ms ? (double)(now_ms - at_ms) / 1000
						 : 0;
		}
		if (m)
			natsMsg_Destroy(m);
	}
	jv s = jv_object();
	s = jv_object_set(s, jv_string("host"),
	    jv_string(ci->Name + strlen(STANDBY_PREFIX)));
	s = jv_object_set(s, jv_string("records"), jv_number((double)behind));
	s = jv_object_set(s, jv_string("seconds"), jv_number(seconds));
	return s;
}

/* Every standby's lag, by its durable consumer on the stream. */
static int
standbys(replica_nats *rn, int64_t now_ms, jv *out)
{
	jsConsumerInfoList *list = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_Consumers(&list, rn->js, REPLICA_STREAM, NULL, &jerr);
	*out = jv_array();
	if (s == NATS_NOT_FOUND)
		return 0; /* none yet */
	if (s != NATS_OK)
		return bakery_fail(EX_UNAVAILABLE, "nats: the standbys' "
		    "consumers: %s", natsStatus_GetText(s));
	for (int i = 0; i < list->Count; i++) {
		jsConsumerInfo *ci = list->List[i];
		if (ci->Name && strncmp(ci->Name, STANDBY_PREFIX,
		    strlen(STANDBY_PREFIX)) == 0 &&
		    replica_id_valid(ci->Name + strlen(STANDBY_PREFIX)))
			*out = jv_array_append(*out, standby_lag(rn, ci, now_ms));
	}
	jsConsumerInfoList_Destroy(list);
	return 0;
}

static jv
lease_jv(const lease *l)
{
	if (!l->held)
		return jv_null();
	jv j = jv_object();
	j = jv_object_set(j, jv_string("host"), jv_string(l->host));
	j = jv_object_set(j, jv_string("epoch"), jv_string(l->epoch));
	j = jv_object_set(j, jv_string("until"), bakery_time_jv(l->until_ms));
	j = jv_object_set(j, jv_string("until_ms"), jv_number((double)l->until_ms));
	return j;
}

static void
note(jv *attention, char *sentence)
{
	*attention = jv_array_append(*attention, jv_string(sentence));
	free(sentence);
}

jv
replica_status(bakery_ctx *ctx, int64_t max_age_s, jv *attention)
{
	replica_conf c;
	if (replica_conf_read(ctx, &c)) {
		note(attention, bakery_xstrdup(bakery_error()));
		return jv_null();
	}
	if (c.role == REPLICA_NONE)
		return jv_null();
	int64_t now = bakery_now_ms();
	jv r = jv_object();
	r = jv_object_set(r, jv_string("role"), jv_string(c.role ==
	    REPLICA_PRIMARY ? "primary" : "standby"));
	r = jv_object_set(r, jv_string("host"), jv_string(c.host));
	r = jv_object_set(r, jv_string("epoch"), jv_string(c.epoch));
	replica_nats *rn = NULL;
	lease l = { 0 };
	jv lag = jv_array();
	int rc = replica_connect(ctx, &rn);
	if (!rc)
		rc = lease_read(rn, &l);
	if (!rc) {
		jv_free(lag);
		rc = standbys(rn, now, &lag);
	}
	replica_disconnect(rn);
	if (rc) {
		note(attention, bakery_xasprintf("replica: %s", bakery_error()));
		r = jv_object_set(r, jv_string("error"),
		    jv_string(bakery_error()));
	}
	r = jv_object_set(r, jv_string("lease"), lease_jv(&l));
	if (!rc && c.role == REPLICA_PRIMARY &&
	    (!l.held || strcmp(l.host, c.host) != 0))
		note(attention, bakery_xasprintf("replica: this home is the "
		    "primary, but the lease is %s%s: it may be fenced",
		    l.held ? "held by " : "free", l.held ? l.host : ""));
	if (!rc && l.held && l.until_ms < now)
		note(attention, bakery_xasprintf("replica: the lease of %s "
		    "ended %lld s ago: no primary renews it", l.host,
		    (long long)((now - l.until_ms) / 1000)));
	jv_array_foreach(lag, i, s) {
		double seconds = jv_number_value(jv_object_get(jv_copy(s),
		    jv_string("seconds")));
		if (seconds > (double)max_age_s) {
			jv host = jv_object_get(jv_copy(s), jv_string("host"));
			note(attention, bakery_xasprintf("replica: standby %s is "
			    "%.0f s behind (over %lld s)", jv_string_value(host),
			    seconds, (long long)max_age_s));
			jv_free(host);
		}
		jv_free(s);
	}
	return jv_object_set(r, jv_string("standbys"), lag);
}

char *
replica_prometheus(jv r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *t = open_memstream(&text, &len);
	if (!t) {
		jv_free(r);
		return bakery_xstrdup("");
	}
	if (jv_get_kind(r) != JV_KIND_OBJECT) {
		jv_free(r);
		fclose(t);
		return text;
	}
	jv held = jv_object_get(jv_copy(r), jv_string("lease"));
	jv role = jv_object_get(jv_copy(r), jv_string("role"));
	fprintf(t, "# HELP bakery_replica_role This home's role: 1 for the one "
	    "it has.\n# TYPE bakery_replica_role gauge\n"
	    "bakery_replica_role{role=\"%s\"} 1\n", jv_string_value(role));
	jv_free(role);
	if (jv_get_kind(held) == JV_KIND_OBJECT) {
		jv host = jv_object_get(jv_copy(held), jv_string("host"));
		double ms = envelope_number(held, "until_ms", 0);
		fprintf(t, "# HELP bakery_replica_lease_seconds Seconds the "
		    "primary's lease has left (negative: ended), by its "
		    "host.\n# TYPE bakery_replica_lease_seconds gauge\n"
		    "bakery_replica_lease_seconds{host=\"%s\"} %.3f\n",
		    jv_string_value(host),
		    (ms - (double)bakery_now_ms()) / 1000);
		jv_free(host);
	}
	jv_free(held);
	fprintf(t, "# HELP bakery_replica_lag_records Records a standby has not "
	    "applied.\n# TYPE bakery_replica_lag_records gauge\n"
	    "# HELP bakery_replica_lag_seconds Age of the oldest record a "
	    "standby has not applied.\n"
	    "# TYPE bakery_replica_lag_seconds gauge\n");
	jv standbys = jv_object_get(r, jv_string("standbys"));
	jv_array_foreach(standbys, i, sb) {
		jv host = jv_object_get(jv_copy(sb), jv_string("host"));
		fprintf(t, "bakery_replica_lag_records{standby=\"%s\"} %.0f\n"
		    "bakery_replica_lag_seconds{standby=\"%s\"} %.3f\n",
		    jv_string_value(host), envelope_number(sb, "records", 0),
		    jv_string_value(host), envelope_number(sb, "seconds", 0));
		jv_free(host);
		jv_free(sb);
	}
	jv_free(standbys);
	fclose(t);
	return text;
}
