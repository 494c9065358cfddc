/*
 * subscriber.c — apply an event at each routed object, idempotently.
 */
#include "subscriber.h"
#include "envelope.h"
#include "outbox.h"
#include "queue.h"
#include "routing.h"
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const subscriber *const subscribers[] = {
	&schedule_subscriber, &kitchen_subscriber, &crm_subscriber,
	&customer_subscriber, &inbox_subscriber, &dispatch_subscriber,
	&order_subscriber, NULL,
};

static const subscriber *
find_subscriber(const char *kind)
{
	for (int i = 0; subscribers[i]; i++)
		if (strcmp(subscribers[i]->kind, kind) == 0)
			return subscribers[i];
	return NULL;
}

/* "kitchen" -> "Kitchen": how the error names the subscriber. */
static void
answered(apply_result *r, const char *kind, int status, const char *why)
{
	r->status = status;
	int n = snprintf(r->error, sizeof r->error, "%c%s answered %d",
	    toupper((unsigned char)kind[0]), kind + 1, status);
	if (why && *why && n > 0 && (size_t)n < sizeof r->error)
		snprintf(r->error + n, sizeof r->error - (size_t)n, ": %s", why);
}

/* Whether env was recorded before its sandbox's last wipe (the fence the
 * wipe sets in the queue, see queue.h and wipe.h). */
static int
wiped_since(bakery_ctx *ctx, jv env)
{
	bakery_queue *q;
	return queue_get(ctx, &q) == 0 &&
	    queue_fenced(q, envelope_str(env, "sandbox"), envelope_time_ms(env));
}

int
subscriber_apply(bakery_ctx *ctx, const char *address, jv env,
    apply_result *r)
{
	char kind[65], key[65];
	r->status = 200;
	r->error[0] = '\0';
	if (store_parse_address(address, kind, key)) {
		answered(r, "routing", 422, bakery_error());
		return 0;
	}
	const subscriber *sub = find_subscriber(kind);
	if (!sub) {
		answered(r, kind, 422, "not a subscriber");
		return 0;
	}
	const char *sandbox = envelope_str(env, "sandbox");
	const char *id = envelope_str(env, "id");
	const char *type = envelope_str(env, "type");
	if (wiped_since(ctx, env)) {
		r->status = 205;
		return 0;
	}
	bakery_object *o;
	int rc = object_open(ctx, sandbox, address, sub->create, &o);
	if (rc == EX_NOINPUT) {
		answered(r, kind, 409, bakery_error());
		return 0;
	}
	if (!rc)
		rc = object_begin(o);
	if (rc) {
		/* Locked past the busy timeout, a full disk: retry later. */
		answered(r, kind, 503, bakery_error());
		object_close(o);
		return 0;
	}
	/* Checked again under the object's lock: a wipe that came between
	 * the first check and the open must not see this event applied. */
	if (object_seen(o, id) || wiped_since(ctx, env)) {
		if (!object_seen(o, id))
			r->status = 205;
		object_rollback(o);
		object_close(o);
		return 0;
	}
	char why[200] = "";
	int status = sub->apply(o, env, type, why, sizeof why);
	if (status >= 200 && status < 300) {
		rc = object_mark_seen(o, id, type);
		if (!rc)
			rc = object_commit(o);
		if (rc)
			answered(r, kind, 503, bakery_error());
		else
			bakery_crash_point("consume.after_apply");
	} else {
		object_rollback(o);
		answered(r, kind, status, why);
	}
	/* What the object recorded goes out now (an order's OrderPaid); a
	 * refusal leaves it in the outbox for the alarm. */
	if (!rc && r->status < 300 && outbox_count(o) > 0)
		outbox_send(o, NULL);
	object_close(o);
	return 0;
}

int
subscriber_show(bakery_ctx *ctx, const char *address, jv *out)
{
	bakery_object *o;
	int rc = object_open(ctx, NULL, address, 0, &o);
	if (!rc)
		rc = object_show(o, out);
	if (!rc) {
		const subscriber *sub = find_subscriber(o->kind);
		if (sub && sub->arrays) {
			jv state = jv_object_get(jv_copy(*out), jv_string("state"));
			*out = jv_object_set(*out, jv_string("state"),
			    subscriber_state(state, sub->arrays));
		}
	}
	object_close(o);
	return rc;
}

int
subscriber_deliver(bakery_ctx *ctx, jv env, apply_result *r)
{
	char addresses[ROUTING_MAX_SUBSCRIBERS][130];
	size_t n;
	r->status = 200;
	r->error[0] = '\0';
	if (routing_subscribers(env, addresses, &n)) {
		r->status = 422;
		snprintf(r->error, sizeof r->error, "%s", bakery_error());
		return 0;
	}
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		apply_result one;
		subscriber_apply(ctx, addresses[i], env, &one);
		if (one.status == 205) {
			r->status = 205; /* the whole event is dropped */
			return 0;
		}
		if (one.status >= 200 && one.status < 300)
			continue;
		if (r->status < 300)
			r->status = one.status;
		int w = snprintf(r->error + used, sizeof r->error - used, "%s%s",
		    used ? "; " : "", one.error);
		if (w > 0)
			used += (size_t)w < sizeof r->error - used
			    ? (size_t)w : sizeof r->error - used - 1;
	}
	return 0;
}

int
subscriber_find_order(jv arr, const char *order)
{
	if (jv_get_kind(arr) != JV_KIND_ARRAY)
		return -1;
	int n = jv_array_length(jv_copy(arr));
	for (int i = 0; i < n; i++) {
		jv el = jv_array_get(jv_copy(arr), i);
		const char *o = envelope_str(el, "order");
		int match = o && strcmp(o, order) == 0;
		jv_free(el);
		if (match)
			return i;
	}
	return -1;
}

jv
subscriber_state(jv state, const char *const *arrays)
{
	if (jv_get_kind(state) != JV_KIND_OBJECT) {
		jv_free(state);
		state = jv_object();
	}
	for (int i = 0; arrays && arrays[i]; i++)
		if (!jv_object_has(jv_copy(state), jv_string(arrays[i])))
			state = jv_object_set(state, jv_string(arrays[i]),
			    jv_array());
	return state;
}

jv
subscriber_pick(jv env, const char *const *fields)
{
	jv data = jv_object_get(jv_copy(env), jv_string("data"));
	jv out = jv_object();
	for (int i = 0; fields[i]; i++) {
		jv v = jv_object_get(jv_copy(data), jv_string(fields[i]));
		if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL)
			out = jv_object_set(out, jv_string(fields[i]), v);
		else
			jv_free(v);
	}
	jv_free(data);
	return out;
}

jv
subscriber_remove_at(jv arr, int i)
{
	jv out = jv_array();
	jv_array_foreach(arr, j, el) {
		if (j != i)
			out = jv_array_append(out, el);
		else
			jv_free(el);
	}
	jv_free(arr);
	return out;
}

int
subscriber_append_once(bakery_object *o, const char *key_field,
    const char *array, jv record)
{
	const char *const arrays[] = { array, NULL };
	jv state = subscriber_state(jv_copy(o->state), arrays);
	state = jv_object_set(state, jv_string(key_field), jv_string(o->key));
	jv list = jv_object_get(jv_copy(state), jv_string(array));
	const char *order = envelope_str(record, "order");
	if (order && subscriber_find_order(list, order) < 0)
		list = jv_array_append(list, jv_copy(record));
	jv_free(record);
	state = jv_object_set(state, jv_string(array), list);
	object_set_state(o, state);
	return 200;
}
