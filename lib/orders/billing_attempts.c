/*
 * billing_attempts.c — the attempts at paying an order through Stripe's
 * API, kept in billing/ORDER (billing_attempts.h).
 */
#include "billing_attempts.h"
#include "../core/envelope.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* billing/ORDER in a write transaction, with its attempts array. */
static int
attempts_begin(bakery_ctx *ctx, const char *order, bakery_object **o,
    jv *attempts)
{
	char address[80];
	snprintf(address, sizeof address, "billing/%s", order);
	int rc = object_open(ctx, NULL, address, 1, o);
	if (rc)
		return rc;
	if ((rc = object_begin(*o))) {
		object_close(*o);
		return rc;
	}
	*attempts = jv_get_kind((*o)->state) == JV_KIND_OBJECT
	    ? jv_object_get(jv_copy((*o)->state), jv_string("attempts"))
	    : jv_invalid();
	if (jv_get_kind(*attempts) != JV_KIND_ARRAY) {
		jv_free(*attempts);
		*attempts = jv_array();
	}
	return 0;
}

static int
attempts_commit(bakery_object *o, const char *order, jv attempts)
{
	jv state = jv_copy(o->state);
	if (jv_get_kind(state) != JV_KIND_OBJECT) {
		jv_free(state);
		state = jv_object_set(jv_object(), jv_string("payments"),
		    jv_array());
	}
	state = jv_object_set(state, jv_string("order"), jv_string(order));
	state = jv_object_set(state, jv_string("attempts"), attempts);
	object_set_state(o, state);
	int rc = object_commit(o);
	object_close(o);
	return rc;
}

int
billing_attempt_next(bakery_ctx *ctx, const char *order,
    const char *payment_method, jv *attempt)
{
	*attempt = jv_null();
	bakery_object *o;
	jv attempts;
	int rc = attempts_begin(ctx, order, &o, &attempts);
	if (rc)
		return rc;
	int n = jv_array_length(jv_copy(attempts));
	jv last = n ? jv_array_get(jv_copy(attempts), n - 1) : jv_null();
	const char *status = n ? envelope_str(last, "status") : NULL;
	if (status && strcmp(status, "declined") != 0) {
		/* pending or succeeded: its outcome decides, not a new key */
		object_rollback(o);
		object_close(o);
		jv_free(attempts);
		*attempt = last;
		return 0;
	}
	jv_free(last);
	char *key = n == 0 ? bakery_xstrdup(order)
			   : bakery_xasprintf("%s-%d", order, n + 1);
	char ts[32];
	bakery_format_time(bakery_now_ms(), ts, sizeof ts);
	jv a = jv_object();
	a = jv_object_set(a, jv_string("attempt"), jv_number(n + 1));
	a = jv_object_set(a, jv_string("idempotency_key"), jv_string(key));
	a = jv_object_set(a, jv_string("payment_method"),
	    jv_string(payment_method));
	a = jv_object_set(a, jv_string("status"), jv_string("pending"));
	a = jv_object_set(a, jv_string("started_at"), jv_string(ts));
	free(key);
	attempts = jv_array_append(attempts, jv_copy(a));
	if ((rc = attempts_commit(o, order, attempts))) {
		jv_free(a);
		return rc;
	}
	*attempt = a;
	return 0;
}

int
billing_attempt_end(bakery_ctx *ctx, const char *order, int n,
    const char *status, const char *field, const char *value)
{
	bakery_object *o;
	jv attempts;
	int rc = attempts_begin(ctx, order, &o, &attempts);
	if (rc)
		return rc;
	if (n < 1 || n > jv_array_length(jv_copy(attempts))) {
		object_rollback(o);
		object_close(o);
		jv_free(attempts);
		return bakery_fail(EX_SOFTWARE, "no attempt %d in 'billing/%s'",
		    n, order);
	}
	char ts[32];
	bakery_format_time(bakery_now_ms(), ts, sizeof ts);
	jv a = jv_array_get(jv_copy(attempts), n - 1);
	a = jv_object_set(a, jv_string("status"), jv_string(status));
	a = jv_object_set(a, jv_string(field), jv_string(value));
	a = jv_object_set(a, jv_string("ended_at"), jv_string(ts));
	attempts = jv_array_set(attempts, n - 1, a);
	return attempts_commit(o, order, attempts);
}
