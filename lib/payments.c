/*
 * payments.c — the test gateway and the pay command's path to Billing.
 */
#include "payments.h"
#include "billing.h"
#include "envelope.h"
#include "order.h"
#include "stripe.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct test_card {
	const char *number;
	const char *decline_code; /* NULL: succeeds */
} test_cards[] = {
	{ "4242424242424242", NULL },
	{ "4000000000000002", "card_declined" },
	{ "4000000000009995", "insufficient_funds" },
	{ NULL, NULL },
};

/* Stripe's payment_intent.succeeded event for the intent, as bytes. */
static char *
succeeded_event(const char *intent_id, jv order, const char *sandbox,
    int64_t now_s)
{
	char event_id[40], hex[25];
	stripe_hash_hex(intent_id, strlen(intent_id), hex, 24);
	snprintf(event_id, sizeof event_id, "evt_%s", hex);
	jv meta = jv_object();
	meta = jv_object_set(meta, jv_string("order_id"),
	    jv_object_get(jv_copy(order), jv_string("id")));
	meta = jv_object_set(meta, jv_string("sandbox"), jv_string(sandbox));
	jv pi = jv_object();
	pi = jv_object_set(pi, jv_string("id"), jv_string(intent_id));
	pi = jv_object_set(pi, jv_string("object"), jv_string("payment_intent"));
	pi = jv_object_set(pi, jv_string("amount"),
	    jv_object_get(jv_copy(order), jv_string("total_cents")));
	pi = jv_object_set(pi, jv_string("currency"),
	    jv_object_get(jv_copy(order), jv_string("currency")));
	pi = jv_object_set(pi, jv_string("status"), jv_string("succeeded"));
	pi = jv_object_set(pi, jv_string("livemode"), jv_false());
	pi = jv_object_set(pi, jv_string("metadata"), meta);
	jv ev = jv_object();
	ev = jv_object_set(ev, jv_string("id"), jv_string(event_id));
	ev = jv_object_set(ev, jv_string("object"), jv_string("event"));
	ev = jv_object_set(ev, jv_string("api_version"), jv_string("2024-06-20"));
	ev = jv_object_set(ev, jv_string("created"), jv_number((double)now_s));
	ev = jv_object_set(ev, jv_string("livemode"), jv_false());
	ev = jv_object_set(ev, jv_string("type"),
	    jv_string("payment_intent.succeeded"));
	ev = jv_object_set(ev, jv_string("data"),
	    jv_object_set(jv_object(), jv_string("object"), pi));
	jv s = jv_dump_string(ev, 0);
	char *body = bakery_xstrdup(jv_string_value(s));
	jv_free(s);
	return body;
}

int
payment_pay(bakery_ctx *ctx, const char *order_id, const char *card,
    jv *result, bakery_object **billing)
{
	*billing = NULL;
	*result = jv_null();
	jv order;
	int rc = order_get(ctx, order_id, &order);
	if (rc)
		return rc;
	const struct test_card *tc = test_cards;
	while (tc->number && strcmp(tc->number, card) != 0)
		tc++;
	if (!tc->number) {
		jv_free(order);
		return bakery_fail(EX_USAGE, "unknown test card: '%s': %s", card,
		    "the test gateway knows 4242424242424242, "
		    "4000000000000002 and 4000000000009995");
	}
	jv r = jv_object();
	r = jv_object_set(r, jv_string("order"), jv_string(order_id));
	const char *status = envelope_str(order, "status");
	if (status && strcmp(status, "paid") == 0) {
		r = jv_object_set(r, jv_string("status"), jv_string("paid"));
		r = jv_object_set(r, jv_string("payment_intent"),
		    jv_object_get(jv_copy(order), jv_string("payment_intent")));
		*result = r;
		jv_free(order);
		return 0;
	}
	if (tc->decline_code) {
		r = jv_object_set(r, jv_string("status"), jv_string("declined"));
		r = jv_object_set(r, jv_string("decline_code"),
		    jv_string(tc->decline_code));
		*result = r;
		jv_free(order);
		return 1;
	}
	/* The idempotency key is the order id: the same order always gets
	 * the same intent, however often it is paid. */
	char intent_id[40], hex[25];
	char *seed = bakery_xasprintf("%s\n%s", ctx->sandbox, order_id);
	stripe_hash_hex(seed, strlen(seed), hex, 24);
	free(seed);
	snprintf(intent_id, sizeof intent_id, "pi_%s", hex);
	int64_t now_s = bakery_now_ms() / 1000;
	char *body = succeeded_event(intent_id, order, ctx->sandbox, now_s);
	char *secret = NULL;
	if ((rc = billing_webhook_secret(ctx, &secret))) {
		free(body);
		jv_free(order);
		jv_free(r);
		return rc;
	}
	char sig[128];
	stripe_signature_make(secret, now_s, body, strlen(body), sig, sizeof sig);
	billing_options opt = { secret, STRIPE_TOLERANCE_S, BILLING_MAX_BODY };
	billing_answer a;
	rc = billing_receive(ctx, body, strlen(body), sig, &opt, &a, billing);
	free(body);
	free(secret);
	if (rc) {
		jv_free(order);
		jv_free(r);
		return bakery_fail(rc == EX_TEMPFAIL ? EX_TEMPFAIL : EX_SOFTWARE,
		    "billing answered %d: %s", a.http, a.message);
	}
	r = jv_object_set(r, jv_string("status"), jv_string("succeeded"));
	r = jv_object_set(r, jv_string("payment_intent"), jv_string(intent_id));
	r = jv_object_set(r, jv_string("amount_cents"),
	    jv_object_get(jv_copy(order), jv_string("total_cents")));
	r = jv_object_set(r, jv_string("currency"),
	    jv_object_get(order, jv_string("currency")));
	*result = r;
	return 0;
}
