/*
 * billing.c — verify Stripe's webhook and record PaymentSucceeded; the
 * payments Billing kept, read (billing.h).
 */
#define _GNU_SOURCE
#include "billing.h"
#include "../core/envelope.h"
#include "../base/json.h"
#include "../store/file.h"
#include "order.h"
#include "../net/secret.h"
#include "../net/stripe.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
answer(billing_answer *a, int http, int code, const char *msg)
{
	a->http = http;
	a->exit_code = code;
	snprintf(a->message, sizeof a->message, "%s", msg);
	return code;
}

int
billing_webhook_secret(bakery_ctx *ctx, char **secret)
{
	const char *env = getenv("BAKERY_STRIPE_WEBHOOK_SECRET");
	if (env && *env) {
		*secret = bakery_xstrdup(env);
		return 0;
	}
	char *path = bakery_xasprintf("%s/webhook-secret", ctx->home);
	int rc = home_make(ctx);
	if (!rc && access(path, F_OK) != 0 && errno == ENOENT) {
		/* First use: a fresh secret, put in place whole; when another
		 * process won the race, its secret is the one read. */
		char fresh[64];
		bakery_random_id("whsec_", fresh, sizeof fresh);
		int existed;
		rc = file_put(path, fresh, 0600, 0, &existed);
		explicit_bzero(fresh, sizeof fresh);
	}
	if (!rc) {
		/* bakery's own file: its path is no secret. */
		char *what = bakery_xasprintf("the webhook secret '%s'", path);
		rc = secret_read_file(path, what, secret);
		free(what);
	}
	free(path);
	return rc;
}

int
billing_endpoint_secret(const char *path, char **secret)
{
	*secret = NULL;
	const char *what = "the webhook secret file (--secret-file)";
	if (!path || !*path) {
		path = getenv("BAKERY_STRIPE_WEBHOOK_SECRET_FILE");
		what = "the webhook secret file "
		       "(BAKERY_STRIPE_WEBHOOK_SECRET_FILE)";
	}
	if (!path || !*path) {
		const char *env = getenv("BAKERY_STRIPE_WEBHOOK_SECRET");
		if (!env || !*env)
			return bakery_fail(EX_CONFIG, "no webhook secret: give "
			    "--secret-file or set BAKERY_STRIPE_WEBHOOK_SECRET");
		*secret = bakery_xstrdup(env);
		return 0;
	}
	return secret_read_file(path, what, secret);
}

/* The payment intent, data.object, or jv_invalid() whatever the shape
 * of the event (Stripe's JSON is read, never assumed). */
static jv
intent_object(jv event)
{
	jv data = envelope_field(event, "data");
	jv obj = envelope_field(data, "object");
	jv_free(data);
	return obj;
}

/* A field of the payment intent: data.object.FIELD, or jv_invalid(). */
static jv
intent_field(jv event, const char *field)
{
	jv obj = intent_object(event);
	jv v = envelope_field(obj, field);
	jv_free(obj);
	return v;
}

/* A string field of the intent (data.object.FIELD, or its SUB): 0 when
 * absent or null, 1 when text of 1 to max bytes without NUL or control
 * characters, else -1. */
static int
intent_text(jv event, const char *field, const char *sub, size_t max)
{
	jv obj = sub ? intent_field(event, field) : intent_object(event);
	const char *s;
	int got = envelope_opt_str(obj, sub ? sub : field, &s);
	if (got == 1 && !bakery_text_valid(s, max))
		got = -1;
	jv_free(obj);
	return got;
}

/* The shape of a payment_intent.succeeded, before anything is read from
 * it: whatever a signed body holds, the answer is a 400 that says what is
 * wrong, never an abort (libjq asserts on a get from a non-object). */
static int
intent_shape(jv event, billing_answer *a)
{
	jv data = envelope_field(event, "data");
	jv obj = intent_object(event);
	jv amount = envelope_field(obj, "amount");
	jv meta = envelope_field(obj, "metadata");
	int data_kind = jv_get_kind(data), obj_kind = jv_get_kind(obj);
	int amount_kind = jv_get_kind(amount), meta_kind = jv_get_kind(meta);
	double cents = amount_kind == JV_KIND_NUMBER ? jv_number_value(amount)
						     : -1;
	jv_free(data);
	jv_free(obj);
	jv_free(amount);
	jv_free(meta);
	if (data_kind != JV_KIND_OBJECT)
		return answer(a, 400, EX_DATAERR, "event without a data object");
	if (obj_kind != JV_KIND_OBJECT)
		return answer(a, 400, EX_DATAERR,
		    "event without a payment intent in data.object");
	if (intent_text(event, "id", NULL, 255) != 1)
		return answer(a, 400, EX_DATAERR,
		    "payment intent without a valid id");
	if (!(cents >= 0 && cents <= 1e15 && cents == (double)(int64_t)cents))
		return answer(a, 400, EX_DATAERR, "payment intent without a "
		    "valid amount: want a whole number of cents");
	jv currency = intent_field(event, "currency");
	const char *code = envelope_string(currency);
	int currency_ok = code && bakery_currency_valid(code);
	jv_free(currency);
	if (!currency_ok)
		return answer(a, 400, EX_DATAERR, "payment intent without a "
		    "valid currency: want three lowercase letters");
	if (meta_kind != JV_KIND_OBJECT)
		return answer(a, 400, EX_DATAERR,
		    "payment intent without a metadata object");
	if (intent_text(event, "metadata", "order_id", 64) != 1)
		return answer(a, 400, EX_DATAERR,
		    "payment intent without a valid metadata.order_id");
	if (intent_text(event, "metadata", "sandbox", 64) < 0)
		return answer(a, 400, EX_DATAERR,
		    "payment intent with a bad metadata.sandbox");
	return 0;
}

/* The first payment in payments that pays the order (has no flag), or
 * jv_invalid(). Consumes payments. */
static jv
counted_payment(jv payments)
{
	jv found = jv_invalid();
	if (jv_get_kind(payments) == JV_KIND_ARRAY)
		jv_array_foreach(payments, i, p) {
			jv flag = jv_object_get(jv_copy(p), jv_string("flag"));
			int counts = !jv_is_valid(found) &&
			    jv_get_kind(p) == JV_KIND_OBJECT &&
			    jv_get_kind(flag) != JV_KIND_STRING;
			jv_free(flag);
			if (counts)
				found = p;
			else
				jv_free(p);
		}
	jv_free(payments);
	return found;
}

int
billing_payments(sqlite3 *db, const char *address, jv *out)
{
	*out = jv_array();
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db,
	    "SELECT json_extract(p.value, '$.order'),"
	    " json_extract(p.value, '$.payment_intent'),"
	    " json_extract(p.value, '$.flag'), json_extract(p.value, '$.reason'),"
	    " json_extract(p.value, '$.amount_cents'),"
	    " json_extract(p.value, '$.currency')"
	    " FROM state, json_each(state.json, '$.payments') p"
	    " WHERE json_valid(state.json)"
	    "  AND json_type(state.json, '$.payments') = 'array'"
	    "  AND json_type(p.value) = 'object' ORDER BY p.id",
	    -1, &st, NULL);
	while (src == SQLITE_OK || src == SQLITE_ROW) {
		if ((src = sqlite3_step(st)) != SQLITE_ROW)
			break;
		static const char *const fields[] = { "order", "payment_intent",
			"flag", "reason", "amount_cents", "currency", NULL };
		jv f = jv_object();
		for (int i = 0; fields[i]; i++)
			f = jv_object_set(f, jv_string(fields[i]),
			    sqlite3_column_type(st, i) == SQLITE_TEXT
				? jv_string((const char *)sqlite3_column_text(st, i))
			    : sqlite3_column_type(st, i) == SQLITE_NULL ? jv_null()
			    : jv_number(sqlite3_column_double(st, i)));
		*out = jv_array_append(*out, f);
	}
	sqlite3_finalize(st);
	return src == SQLITE_DONE ? 0 : db_fail(db, src, address);
}

jv
billing_counted_payment(jv state)
{
	if (jv_get_kind(state) != JV_KIND_OBJECT) {
		jv_free(state);
		return jv_invalid();
	}
	return counted_payment(jv_object_get(state, jv_string("payments")));
}

int
billing_counts(jv counted, const char *payment_intent)
{
	const char *pi = jv_is_valid(counted)
	    ? envelope_str(counted, "payment_intent") : NULL;
	int same = pi && payment_intent && strcmp(pi, payment_intent) == 0;
	jv_free(counted);
	return same;
}

/* Whether the payment in data pays its order: NULL when it does, else
 * why not (flag and reason). order is the order's state, jv_null() when
 * there is no such order; paid_by the payment that paid it already. */
static const char *
payment_flag(jv order, jv data, jv paid_by, char *reason, size_t size)
{
	if (jv_get_kind(order) != JV_KIND_OBJECT) {
		snprintf(reason, size, "no such order in the sandbox");
		return "no_order";
	}
	if (!order_terms_match(order, data)) {
		jv amount = jv_object_get(jv_copy(data), jv_string("amount_cents"));
		jv total = jv_object_get(jv_copy(order), jv_string("total_cents"));
		snprintf(reason, size, "paid %.0f %s where the order is %.0f %s",
		    jv_number_value(amount), envelope_str(data, "currency"),
		    jv_get_kind(total) == JV_KIND_NUMBER
			? jv_number_value(total) : 0,
		    envelope_str(order, "currency")
			? envelope_str(order, "currency") : "?");
		jv_free(amount);
		jv_free(total);
		return "mismatch";
	}
	if (jv_is_valid(paid_by)) {
		snprintf(reason, size, "second payment: the order was paid by %s",
		    envelope_str(paid_by, "payment_intent")
			? envelope_str(paid_by, "payment_intent") : "?");
		return "double";
	}
	return NULL;
}

/* A payment being recorded: what was read from the event, and what is
 * held until record_payment ends (freed by payment_free). */
struct payment {
	const char *event_id, *order, *sandbox;
	jv intent, amount, currency, meta;
	jv terms; /* the order's state, jv_null() when there is no order */
	char *by_event, *by_intent; /* the command keys that make it once */
};

static void
payment_free(struct payment *p)
{
	free(p->by_event);
	free(p->by_intent);
	jv_free(p->terms);
	jv_free(p->intent);
	jv_free(p->amount);
	jv_free(p->currency);
	jv_free(p->meta);
}

/* The intent's fields, checked, and the order's terms. */
static int
payment_read(bakery_ctx *ctx, jv event, struct payment *p, billing_answer *a,
    int traced)
{
	p->event_id = envelope_str(event, "id");
	p->intent = intent_field(event, "id");
	p->amount = intent_field(event, "amount");
	p->currency = intent_field(event, "currency");
	p->meta = intent_field(event, "metadata");
	p->terms = jv_null();
	p->order = envelope_str(p->meta, "order_id");
	p->sandbox = envelope_str(p->meta, "sandbox");
	if (!p->sandbox)
		p->sandbox = "default";
	if (jv_get_kind(p->intent) != JV_KIND_STRING ||
	    jv_get_kind(p->amount) != JV_KIND_NUMBER ||
	    jv_get_kind(p->currency) != JV_KIND_STRING)
		return answer(a, 400, EX_DATAERR,
		    "payment intent without id, amount or currency");
	if (!p->order || !bakery_name_valid(p->order) ||
	    !bakery_name_valid(p->sandbox))
		return answer(a, 400, EX_DATAERR,
		    "payment intent without a valid metadata.order_id");
	/* The order's total and currency never change once it is placed:
	 * read before Billing's transaction, they are still the order's. */
	int r = order_get_in(ctx, p->sandbox, p->order, &p->terms);
	if (r)
		p->terms = jv_null();
	if (r && r != EX_NOINPUT)
		return answer(a, 503, EX_TEMPFAIL, bakery_error());
	/* Its PaymentSucceeded continues the order's trace, unless the
	 * request gave one of its own: one trace for the order's events. */
	if (!r && !traced && order_trace(ctx, p->sandbox, p->order,
	    &a->order_trace) == 0) {
		a->order_traced = 1;
		tracectx_set(&a->order_trace);
	}
	p->by_event = bakery_xasprintf("stripe-event:%s", p->event_id);
	p->by_intent = bakery_xasprintf("payment-intent:%s",
	    jv_string_value(p->intent));
	return 0;
}

/* The order's Billing object, in a transaction. 503 asks Stripe to try
 * again; the exit code says why: a busy file (75) passes, a read-only
 * home (77) or a full disk (74) needs an operator. */
static int
payment_open(bakery_ctx *ctx, const struct payment *p, billing_answer *a,
    bakery_object **o)
{
	char address[80];
	snprintf(address, sizeof address, "billing/%s", p->order);
	int w = object_open(ctx, p->sandbox, address, 1, o);
	if (!w)
		w = object_begin(*o);
	return w ? answer(a, 503, w, bakery_error()) : 0;
}

/* Whether Stripe's event, or another event for the same intent, was
 * recorded already. */
static int
payment_seen(bakery_object *o, const struct payment *p)
{
	jv ignored;
	int seen = object_command_result(o, p->by_event, &ignored);
	jv_free(ignored);
	if (!seen) {
		seen = object_command_result(o, p->by_intent, &ignored);
		jv_free(ignored);
	}
	return seen;
}

/* The PaymentSucceeded event's data. */
static jv
payment_data(const struct payment *p)
{
	jv data = jv_object();
	data = jv_object_set(data, jv_string("order"), jv_string(p->order));
	data = jv_object_set(data, jv_string("payment_intent"),
	    jv_copy(p->intent));
	data = jv_object_set(data, jv_string("amount_cents"),
	    jv_copy(p->amount));
	data = jv_object_set(data, jv_string("currency"), jv_copy(p->currency));
	data = jv_object_set(data, jv_string("stripe_event"),
	    jv_string(p->event_id));
	return data;
}

/* The object's payments so far (an empty array when none). */
static jv
payments_of(jv state)
{
	jv payments = jv_get_kind(state) == JV_KIND_OBJECT
	    ? jv_object_get(jv_copy(state), jv_string("payments")) : jv_null();
	if (jv_get_kind(payments) != JV_KIND_ARRAY) {
		jv_free(payments);
		payments = jv_array();
	}
	return payments;
}

/* Appends the payment to the object's state: kept as received, and when
 * flag, flagged for an operator to refund (it then pays nothing). */
static void
payment_append(bakery_object *o, const struct payment *p, jv payments,
    jv entry, const char *flag, const char *reason)
{
	if (flag) {
		entry = jv_object_set(entry, jv_string("flag"), jv_string(flag));
		entry = jv_object_set(entry, jv_string("reason"),
		    jv_string(reason));
	}
	payments = jv_array_append(payments, entry);
	jv state = jv_copy(o->state);
	if (jv_get_kind(state) != JV_KIND_OBJECT) {
		jv_free(state);
		state = jv_object();
	}
	state = jv_object_set(state, jv_string("order"), jv_string(p->order));
	state = jv_object_set(state, jv_string("payments"), payments);
	object_set_state(o, state);
}

/* The answer to a payment kept: recorded, or recorded and flagged (then
 * logged, for an operator to refund). */
static void
payment_answer(const struct payment *p, jv paid_by, const char *flag,
    const char *reason, billing_answer *a)
{
	if (!flag) {
		answer(a, 200, 0, "recorded");
		a->recorded = 1;
		return;
	}
	char msg[256];
	snprintf(msg, sizeof msg, "recorded, flagged: %s", reason);
	answer(a, 200, 0, msg);
	a->flagged = 1;
	const char *by = jv_is_valid(paid_by)
	    ? envelope_str(paid_by, "payment_intent") : NULL;
	bakery_log(LOG_WARN, "payment_flagged", "order", p->order, "sandbox",
	    p->sandbox, "payment_intent", jv_string_value(p->intent),
	    "paid_by", by ? by : "-", "flag", flag, "reason", reason,
	    "hint", "refund it", (char *)NULL);
}

/* Records the payment in the open transaction and commits it: a
 * PaymentSucceeded when it pays the order, only the state when flagged;
 * both command keys remembered. */
static int
payment_keep(bakery_object *o, const struct payment *p, billing_answer *a)
{
	jv data = payment_data(p);
	jv payments = payments_of(o->state);
	jv paid_by = counted_payment(jv_copy(payments));
	char reason[200];
	const char *flag = payment_flag(p->terms, data, paid_by, reason,
	    sizeof reason);
	payment_append(o, p, payments, jv_copy(data), flag, reason);
	int w = 0;
	if (flag)
		jv_free(data);
	else
		w = object_record(o, "PaymentSucceeded", data, NULL);
	if (!w)
		w = object_remember_command(o, p->by_event, jv_true());
	if (!w)
		w = object_remember_command(o, p->by_intent, jv_true());
	if (!w)
		w = object_commit(o);
	if (w)
		answer(a, 503, w, bakery_error());
	else
		payment_answer(p, paid_by, flag, reason, a);
	jv_free(paid_by);
	return w;
}

static int
record_payment(bakery_ctx *ctx, jv event, int traced, billing_answer *a,
    bakery_object **out)
{
	struct payment p = { 0 };
	bakery_object *o = NULL;
	int rc = payment_read(ctx, event, &p, a, traced);
	if (!rc)
		rc = payment_open(ctx, &p, a, &o);
	if (!rc && payment_seen(o, &p)) {
		object_rollback(o);
		answer(a, 200, 0, "already recorded");
	} else if (!rc) {
		rc = payment_keep(o, &p, a);
	}
	payment_free(&p);
	if (rc) {
		object_close(o);
		return rc;
	}
	*out = o;
	return 0;
}

int
billing_receive(bakery_ctx *ctx, const char *body, size_t len,
    const char *signature, const billing_options *opt, billing_answer *a,
    bakery_object **o)
{
	*o = NULL;
	memset(a, 0, sizeof *a);
	if (len > opt->max_body)
		return answer(a, 413, EX_DATAERR, "body too large");
	int64_t now_s = bakery_now_ms() / 1000;
	if (stripe_signature_verify(signature, body, len, opt->secret, now_s,
		opt->tolerance_s))
		return answer(a, 401, EX_NOPERM, bakery_error());
	jv event;
	if (json_parse(body, len, &event)) {
		/* json_parse's own reason, or none: libjq's words quote the
		 * body ("while parsing '…'"). */
		const char *why = bakery_error();
		char reason[128];
		if (strncmp(why, "malformed JSON: ", 16) == 0)
			why += 16;
		snprintf(reason, sizeof reason, "malformed JSON body%s%s",
		    strstr(why, "while parsing") ? "" : ": ",
		    strstr(why, "while parsing") ? "" : why);
		return answer(a, 400, EX_DATAERR, reason);
	}
	if (jv_get_kind(event) != JV_KIND_OBJECT) {
		jv_free(event);
		return answer(a, 400, EX_DATAERR, "event is not a JSON object");
	}
	const char *type = envelope_str(event, "type");
	const char *id = envelope_str(event, "id");
	int rc;
	if (!type || !id || !bakery_text_valid(id, 255))
		rc = answer(a, 400, EX_DATAERR, "event without id or type");
	else if (strcmp(type, "payment_intent.succeeded") != 0)
		rc = answer(a, 200, 0, "ignored");
	else if (!(rc = intent_shape(event, a)))
		rc = record_payment(ctx, event, opt->traced, a, o);
	jv_free(event);
	return rc;
}

int
billing_read(bakery_ctx *ctx, const char *order, jv *state)
{
	return billing_read_in(ctx, NULL, order, state);
}

int
billing_read_in(bakery_ctx *ctx, const char *sandbox, const char *order,
    jv *state)
{
	char address[80];
	snprintf(address, sizeof address, "billing/%s", order);
	return object_peek(ctx, sandbox ? sandbox : ctx->sandbox, address,
	    state);
}
