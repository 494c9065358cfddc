/*
 * lease.c — the primary's lease in BAKERY_REPLICA_LEASE (lease.h).
 */
#define _GNU_SOURCE
#include "lease.h"
#include "../base/json.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

static int
unreachable(int code, const char *what, natsStatus s)
{
	const char *text = nats_GetLastError(NULL);
	return bakery_fail(code, "nats: the lease %s/%s: %s: %s",
	    REPLICA_LEASE_BUCKET, REPLICA_LEASE_KEY, what,
	    text && *text ? text : natsStatus_GetText(s));
}

static int
bucket(replica_nats *rn, kvStore **kv)
{
	*kv = NULL;
	natsStatus s = js_KeyValue(kv, rn->js, REPLICA_LEASE_BUCKET);
	if (s == NATS_NOT_FOUND)
		return bakery_fail(EX_UNAVAILABLE, "nats: no bucket %s: no "
		    "primary was made (bakery-standby --primary)",
		    REPLICA_LEASE_BUCKET);
	return s == NATS_OK ? 0 : unreachable(EX_UNAVAILABLE, "read", s);
}

int
lease_make_bucket(replica_nats *rn, int replicas)
{
	kvStore *kv = NULL;
	natsStatus s = js_KeyValue(&kv, rn->js, REPLICA_LEASE_BUCKET);
	if (s == NATS_NOT_FOUND) {
		kvConfig kc;
		kvConfig_Init(&kc);
		kc.Bucket = REPLICA_LEASE_BUCKET;
		kc.History = 1;
		kc.Replicas = replicas > 0 ? replicas
		    : rn->servers < 3 ? rn->servers : 3;
		s = js_CreateKeyValue(&kv, rn->js, &kc);
	}
	if (kv)
		kvStore_Destroy(kv);
	return s == NATS_OK ? 0 : unreachable(EX_UNAVAILABLE, "make", s);
}

/* The value's text, checked: bakery wrote it, or it is refused. */
static int
parse(const char *text, int len, lease *l)
{
	jv v;
	int ok = len > 0 && json_parse(text, (size_t)len, &v) == 0;
	if (ok) {
		jv host = jv_object_get(jv_copy(v), jv_string("host"));
		jv epoch = jv_object_get(jv_copy(v), jv_string("epoch"));
		jv until = jv_object_get(jv_copy(v), jv_string("until_ms"));
		ok = jv_get_kind(host) == JV_KIND_STRING &&
		    jv_get_kind(epoch) == JV_KIND_STRING &&
		    jv_get_kind(until) == JV_KIND_NUMBER &&
		    replica_id_valid(jv_string_value(host)) &&
		    replica_id_valid(jv_string_value(epoch)) &&
		    jv_number_value(until) >= 0 &&
		    jv_number_value(until) <= (double)BAKERY_TIME_MAX_MS &&
		    jv_number_value(until) ==
		    (double)(int64_t)jv_number_value(until);
		if (ok) {
			memcpy(l->host, jv_string_value(host), REPLICA_ID_SIZE);
			memcpy(l->epoch, jv_string_value(epoch),
			    REPLICA_ID_SIZE);
			l->until_ms = (int64_t)jv_number_value(until);
		}
		jv_free(host);
		jv_free(epoch);
		jv_free(until);
		jv_free(v);
	}
	return ok ? 0 : bakery_fail(EX_DATAERR, "the lease %s/%s holds a "
	    "value bakery did not write", REPLICA_LEASE_BUCKET,
	    REPLICA_LEASE_KEY);
}

static int
read_in(kvStore *kv, lease *l)
{
	*l = (lease){ 0 };
	kvEntry *e = NULL;
	natsStatus s = kvStore_Get(&e, kv, REPLICA_LEASE_KEY);
	if (s == NATS_NOT_FOUND) /* never written, or deleted */
		return 0;
	if (s != NATS_OK)
		return unreachable(EX_UNAVAILABLE, "read", s);
	int rc = parse(kvEntry_Value(e), kvEntry_ValueLen(e), l);
	if (!rc) {
		l->held = 1;
		l->revision = kvEntry_Revision(e);
	}
	kvEntry_Destroy(e);
	return rc;
}

int
lease_read(replica_nats *rn, lease *l)
{
	kvStore *kv;
	*l = (lease){ 0 };
	int rc = bucket(rn, &kv);
	if (!rc)
		rc = read_in(kv, l);
	if (kv)
		kvStore_Destroy(kv);
	return rc;
}

int
lease_held_by_other(const lease *l, const char *host, int64_t now_ms)
{
	return l->held && strcmp(l->host, host) != 0 && l->until_ms > now_ms;
}

void
lease_describe(const lease *l, char *buf, size_t size)
{
	char until[32];
	bakery_format_time(l->until_ms, until, sizeof until);
	snprintf(buf, size, "host %s (epoch %s) until %s", l->host, l->epoch,
	    until);
}

/* Writes l's value for host, epoch and until_ms on the revision l was
 * read at (none: created). On success l is the lease written; else
 * *moved says whether the lease is there at another revision now (and
 * l is it), or the bucket did not answer. */
static int
write_on(replica_nats *rn, lease *l, const char *host, const char *epoch,
    int64_t until_ms, int *moved)
{
	kvStore *kv;
	*moved = 0;
	int rc = bucket(rn, &kv);
	if (rc)
		return rc;
	char value[128];
	snprintf(value, sizeof value, "{\"host\":\"%s\",\"epoch\":\"%s\","
	    "\"until_ms\":%lld}", host, epoch, (long long)until_ms);
	uint64_t rev = 0;
	natsStatus s = l->held
	    ? kvStore_UpdateString(&rev, kv, REPLICA_LEASE_KEY, value,
		  l->revision)
	    : kvStore_CreateString(&rev, kv, REPLICA_LEASE_KEY, value);
	if (s == NATS_OK) {
		*l = (lease){ .held = 1, .until_ms = until_ms, .revision = rev };
		memcpy(l->host, host, REPLICA_ID_SIZE);
		memcpy(l->epoch, epoch, REPLICA_ID_SIZE);
	} else {
		/* Told apart by reading again: a lease at another revision
		 * was written since; no answer is no answer. */
		lease now;
		rc = unreachable(EX_TEMPFAIL, "write", s);
		if (read_in(kv, &now) == 0 && now.revision != l->revision) {
			*moved = 1;
			*l = now;
		}
	}
	kvStore_Destroy(kv);
	return rc;
}

int
lease_take(replica_nats *rn, lease *l, const char *host, const char *epoch,
    int64_t until_ms)
{
	char who[128];
	if (lease_held_by_other(l, host, bakery_now_ms())) {
		lease_describe(l, who, sizeof who);
		return bakery_fail(EX_TEMPFAIL, "the lease is held by %s", who);
	}
	int moved;
	int rc = write_on(rn, l, host, epoch, until_ms, &moved);
	if (rc && moved) {
		lease_describe(l, who, sizeof who);
		return bakery_fail(EX_TEMPFAIL, "the lease was taken meanwhile "
		    "by %s", who);
	}
	return rc;
}

int
lease_renew(replica_nats *rn, lease *l, int64_t until_ms)
{
	char host[REPLICA_ID_SIZE], epoch[REPLICA_ID_SIZE], who[128];
	memcpy(host, l->host, sizeof host);
	memcpy(epoch, l->epoch, sizeof epoch);
	int moved;
	int rc = write_on(rn, l, host, epoch, until_ms, &moved);
	if (rc && moved) {
		if (!l->held)
			return bakery_fail(EX_UNAVAILABLE, "the lease was "
			    "removed: this host (%s) is no longer the primary",
			    host);
		lease_describe(l, who, sizeof who);
		return bakery_fail(EX_UNAVAILABLE, "the lease was taken by %s: "
		    "this host (%s, epoch %s) is no longer the primary", who,
		    host, epoch);
	}
	return rc;
}
