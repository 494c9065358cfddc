/*
 * payments.c — the pay command: the test gateway, or Stripe's API.
 */
#include "payments.h"
#include "billing.h"
#include "billing_attempts.h"
#include "../core/envelope.h"
#include "../net/gateway.h"
#include "order.h"
#include "../net/stripe.h"
#include "../net/stripe_api.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct test_card {
	const char *number;
	const char *payment_method;
	const char *decline_code; /* NULL: succeeds */
} test_cards[] = {
	{ "4242424242424242", "pm_card_visa", NULL },
	{ "4000000000000002", "pm_card_chargeDeclined", "card_declined" },
	{ "4000000000009995", "pm_card_chargeDeclinedInsufficientFunds",
	    "insufficient_funds" },
	{ NULL, NULL, NULL },
};

const char *
payment_test_card(size_t i, const char **decline_code)
{
	if (i >= sizeof test_cards / sizeof test_cards[0] - 1)
		return NULL;
	*decline_code = test_cards[i].decline_code;
	return test_cards[i].number;
}

#define KNOWN_CARDS "4242424242424242, 4000000000000002 and 4000000000009995"

static int
payment_method_valid(const char *pm)
{
	size_t n = strlen(pm);
	return n > 3 && n <= 128 && strncmp(pm, "pm_", 3) == 0 &&
	    strspn(pm, "abcdefghijklmnopqrstuvwxyz"
		       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

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

/* The built-in gateway: Stripe's answer for a test card, and its webhook
 * handed to Billing. */
static int
gateway_pay(bakery_ctx *ctx, const char *order_id, jv order,
    const struct test_card *tc, jv r, jv *result, bakery_object **billing)
{
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
	int rc;
	if ((rc = billing_webhook_secret(ctx, &secret))) {
		free(body);
		jv_free(order);
		jv_free(r);
		return rc;
	}
	char sig[128];
	stripe_signature_make(secret, now_s, body, strlen(body), sig, sizeof sig);
	/* The pay has made its trace the current one (span_continue). */
	billing_options opt = { secret, STRIPE_TOLERANCE_S, BILLING_MAX_BODY,
		1 };
	billing_answer a;
	rc = billing_receive(ctx, body, strlen(body), sig, &opt, &a, billing);
	free(body);
	free(secret);
	if (rc) {
		jv_free(order);
		jv_free(r);
		/* Billing could not record (503): its code says why, a busy
		 * file (75) or a read-only home (77); a refusal (4xx) of the
		 * event we built ourselves is a bug here. */
		return bakery_fail(a.http >= 400 && a.http < 500 ? EX_SOFTWARE
		    : rc,
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

/* Sends one attempt: POST /v1/payment_intents with the attempt's key. */
static int
send_attempt(bakery_ctx *ctx, const stripe_api *api, jv order, jv attempt,
    stripe_response *resp)
{
	char amount[32];
	snprintf(amount, sizeof amount, "%.0f",
	    envelope_number(order, "total_cents", -1));
	const char *currency = envelope_str(order, "currency");
	const stripe_param params[] = {
		{ "amount", amount },
		{ "currency", currency ? currency : "eur" },
		{ "confirm", "true" },
		{ "payment_method", envelope_str(attempt, "payment_method") },
		{ "payment_method_types[]", "card" },
		{ "metadata[order_id]", envelope_str(order, "id") },
		{ "metadata[sandbox]", ctx->sandbox },
	};
	return stripe_api_post(api, "/v1/payment_intents",
	    envelope_str(attempt, "idempotency_key"), params,
	    (int)(sizeof params / sizeof params[0]), resp);
}

/* Stripe's answer to an attempt, recorded in Billing: 0 succeeded (or
 * processing), 1 declined, else an error. Consumes body. */
static int
settle_attempt(bakery_ctx *ctx, const char *order_id, int n, long status,
    jv body, jv *r)
{
	int rc;
	if (status >= 200 && status < 300) {
		const char *intent = envelope_str(body, "id");
		const char *state = envelope_str(body, "status");
		if (!intent || !state) {
			jv_free(body);
			return bakery_fail(EX_UNAVAILABLE,
			    "stripe answered without a payment intent");
		}
		int ok = strcmp(state, "succeeded") == 0 ||
		    strcmp(state, "processing") == 0;
		/* Anything else (requires_action: a card that needs 3-D
		 * Secure) cannot complete here: the attempt ends, as a
		 * decline would, and the next pay gets a new key. */
		rc = ok ? billing_attempt_end(ctx, order_id, n, state,
			      "payment_intent", intent)
			: billing_attempt_end(ctx, order_id, n, "declined",
			      "decline_code", state);
		*r = jv_object_set(*r, jv_string("status"),
		    jv_string(ok ? state : "declined"));
		*r = jv_object_set(*r, jv_string(ok ? "payment_intent"
		    : "decline_code"), jv_string(ok ? intent : state));
		jv_free(body);
		return rc ? rc : ok ? 0 : 1;
	}
	if (status == 402) {
		const char *code = stripe_api_error(body, "decline_code");
		if (!code)
			code = stripe_api_error(body, "code");
		if (!code)
			code = "card_error";
		rc = billing_attempt_end(ctx, order_id, n, "declined",
		    "decline_code", code);
		*r = jv_object_set(*r, jv_string("status"), jv_string("declined"));
		*r = jv_object_set(*r, jv_string("decline_code"), jv_string(code));
		jv_free(body);
		return rc ? rc : 1;
	}
	if (status == 401 || status == 403) {
		/* Stripe's message quotes part of the key: not repeated. */
		jv_free(body);
		return bakery_fail(EX_CONFIG, "stripe refused the API key "
		    "(HTTP %ld)", status);
	}
	const char *type = stripe_api_error(body, "type");
	const char *message = stripe_api_error(body, "message");
	rc = bakery_fail(EX_SOFTWARE, "stripe refused the payment: HTTP %ld "
	    "%s: %s", status, type ? type : "error", message ? message : "");
	jv_free(body);
	return rc;
}

/* Stripe's API: the pending attempt first, whatever its payment method,
 * then (once it was declined) a new attempt for this one. */
static int
stripe_pay(bakery_ctx *ctx, const stripe_api *api, const char *order_id,
    jv order, const char *pm, jv r, jv *result)
{
	int rc = 0;
	for (int round = 0; round < 3; round++) {
		jv attempt;
		if ((rc = billing_attempt_next(ctx, order_id, pm, &attempt)))
			break;
		int n = (int)envelope_number(attempt, "attempt", -1);
		const char *status = envelope_str(attempt, "status");
		r = jv_object_set(r, jv_string("attempt"), jv_number(n));
		r = jv_object_set(r, jv_string("idempotency_key"),
		    jv_object_get(jv_copy(attempt), jv_string("idempotency_key")));
		r = jv_object_set(r, jv_string("payment_method"),
		    jv_object_get(jv_copy(attempt), jv_string("payment_method")));
		r = jv_object_delete(r, jv_string("decline_code"));
		if (!status || !envelope_str(attempt, "payment_method")) {
			jv_free(attempt);
			rc = bakery_fail(EX_SOFTWARE, "malformed attempt %d in "
			    "'billing/%s'", n, order_id);
			break;
		}
		int ours = strcmp(envelope_str(attempt, "payment_method"), pm) == 0;
		if (strcmp(status, "succeeded") == 0) {
			r = jv_object_set(r, jv_string("status"),
			    jv_string("succeeded"));
			r = jv_object_set(r, jv_string("payment_intent"),
			    jv_object_get(jv_copy(attempt),
				jv_string("payment_intent")));
			jv_free(attempt);
			break;
		}
		stripe_response resp;
		rc = send_attempt(ctx, api, order, attempt, &resp);
		jv_free(attempt);
		if (rc)
			break;
		char tries[12];
		snprintf(tries, sizeof tries, "%d", resp.tries);
		bakery_log(LOG_INFO, "stripe_answer", "order", order_id,
		    "tries", tries, "replayed", resp.replayed ? "true" : "false",
		    (char *)NULL);
		bakery_crash_point("pay.after_stripe");
		rc = settle_attempt(ctx, order_id, n, resp.status, resp.body, &r);
		/* A pending attempt of another payment method was declined:
		 * now this one gets its own attempt. */
		if (rc != 1 || ours)
			break;
	}
	if (rc > 1) {
		jv_free(r);
		r = jv_null();
	} else {
		r = jv_object_set(r, jv_string("amount_cents"),
		    jv_object_get(jv_copy(order), jv_string("total_cents")));
		r = jv_object_set(r, jv_string("currency"),
		    jv_object_get(jv_copy(order), jv_string("currency")));
	}
	jv_free(order);
	*result = r;
	return rc;
}

/* The answer when Billing already holds the payment that pays the order:
 * that payment, whatever the card. Consumes payment. */
static jv
recorded_success(jv r, jv payment)
{
	r = jv_object_set(r, jv_string("status"), jv_string("succeeded"));
	static const char *const fields[] = { "payment_intent", "amount_cents",
		"currency", NULL };
	for (int i = 0; fields[i]; i++)
		r = jv_object_set(r, jv_string(fields[i]),
		    jv_object_get(jv_copy(payment), jv_string(fields[i])));
	jv_free(payment);
	return r;
}

/* The home's gateway and the key agree: a home that uses Stripe needs a
 * key and never falls back to the test gateway; a test home takes none. */
static int
gateway_check(bakery_ctx *ctx, gateway_kind g, const stripe_api *api)
{
	if (g == GATEWAY_NONE)
		return bakery_fail(EX_CONFIG, "no payment gateway chosen for "
		    "home '%s': run 'bakery-order gateway stripe' (or 'test' "
		    "for a home where no money moves)", ctx->home);
	if (g == GATEWAY_STRIPE && !api->key)
		return bakery_fail(EX_CONFIG, "home '%s' pays through Stripe "
		    "and no Stripe key is configured: set BAKERY_STRIPE_KEY or "
		    "give --stripe-key-file", ctx->home);
	if (g == GATEWAY_TEST && api->key)
		return bakery_fail(EX_CONFIG, "home '%s' uses the test gateway "
		    "and a Stripe key was given: to pay through Stripe, run "
		    "'bakery-order gateway stripe'", ctx->home);
	return 0;
}

int
payment_pay(bakery_ctx *ctx, const payment_request *req, jv *result,
    bakery_object **billing)
{
	*billing = NULL;
	*result = jv_null();
	const struct test_card *tc = test_cards;
	if (req->payment_method) {
		if (!payment_method_valid(req->payment_method))
			return bakery_fail(EX_USAGE, "bad payment method: '%s': %s",
			    req->payment_method, "want pm_ and letters, digits, _");
		while (tc->number && strcmp(tc->payment_method,
		    req->payment_method) != 0)
			tc++;
	} else {
		const char *card = req->card ? req->card : PAYMENTS_TEST_CARD;
		while (tc->number && strcmp(tc->number, card) != 0)
			tc++;
		if (!tc->number)
			return bakery_fail(EX_USAGE, "unknown test card: '%s': %s",
			    card, "the test cards are " KNOWN_CARDS
			    "; for others use --payment-method pm_…");
	}
	gateway_kind g;
	int rc = gateway_read(ctx->home, &g);
	if (rc)
		return rc;
	stripe_api api;
	if ((rc = stripe_api_open(&api, req->stripe_key_file)))
		return rc;
	if ((rc = gateway_check(ctx, g, &api))) {
		stripe_api_free(&api);
		return rc;
	}
	if (g == GATEWAY_TEST && !tc->number) {
		stripe_api_free(&api);
		return bakery_fail(EX_USAGE, "unknown payment method: '%s': %s",
		    req->payment_method, "the test gateway knows pm_card_visa, "
		    "pm_card_chargeDeclined and "
		    "pm_card_chargeDeclinedInsufficientFunds");
	}
	jv order, state = jv_null();
	if ((rc = order_get(ctx, req->order_id, &order)) ||
	    (rc = billing_read(ctx, req->order_id, &state))) {
		if (!rc)
			jv_free(order);
		stripe_api_free(&api);
		return rc;
	}
	jv r = jv_object();
	r = jv_object_set(r, jv_string("order"), jv_string(req->order_id));
	const char *status = envelope_str(order, "status");
	jv counted = billing_counted_payment(jv_copy(state));
	jv attempts = jv_get_kind(state) == JV_KIND_OBJECT
	    ? jv_object_get(jv_copy(state), jv_string("attempts")) : jv_null();
	int stripe_tried = jv_get_kind(attempts) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(attempts)) > 0;
	jv_free(attempts);
	jv_free(state);
	if (status && strcmp(status, "paid") == 0) {
		jv_free(counted);
		r = jv_object_set(r, jv_string("status"), jv_string("paid"));
		r = jv_object_set(r, jv_string("payment_intent"),
		    jv_object_get(jv_copy(order), jv_string("payment_intent")));
		*result = r;
		jv_free(order);
	} else if (jv_is_valid(counted)) {
		/* Billing holds the payment: it is the answer, before any
		 * consume has made the order paid. */
		*result = recorded_success(r, counted);
		jv_free(order);
	} else if (g == GATEWAY_STRIPE) {
		rc = stripe_pay(ctx, &api, req->order_id, order,
		    req->payment_method ? req->payment_method
					: tc->payment_method, r, result);
	} else if (stripe_tried) {
		jv_free(order);
		jv_free(r);
		rc = bakery_fail(EX_CONFIG, "order '%s' has an attempt with "
		    "Stripe: it is settled through Stripe only, and home '%s' "
		    "uses the test gateway", req->order_id, ctx->home);
	} else {
		rc = gateway_pay(ctx, req->order_id, order, tc, r, result,
		    billing);
	}
	stripe_api_free(&api);
	return rc;
}
