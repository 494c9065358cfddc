/*
 * billing.h — Billing, the receiver of Stripe's webhook.
 *
 * billing_receive() takes the raw body and the Stripe-Signature header,
 * verifies the signature (stripe.h) and, for payment_intent.succeeded,
 * records PaymentSucceeded in billing/ORDER — once per Stripe event id and
 * once per payment intent, since Stripe may send two events for one change.
 * Other event types are acknowledged and ignored.
 *
 * A payment pays its order only when its amount and currency are the
 * order's (order_terms_match) and no other payment paid it before. Any
 * other payment — no such order in its sandbox ("no_order"), another
 * amount or currency ("mismatch"), a second payment of the order
 * ("double") — is kept in state.payments with its "flag" and "reason",
 * records no event, is logged (payment_flagged, naming the order and the
 * payment intents) and shows in bakery-status until the wipe, so that an
 * operator refunds it. It is still answered 200: Stripe has delivered it.
 *
 * The answer is HTTP-shaped so the CGI program and the test gateway share
 * it: 200 recorded or ignored, 400 malformed, 401 bad signature, 413 too
 * large, 503 unavailable.
 *
 * Billing's object also keeps the attempts at paying the order through
 * Stripe's API (state.attempts): billing_attempts.h.
 */
#ifndef BAKERY_BILLING_H
#define BAKERY_BILLING_H

#include <stddef.h>

#include "../core/object.h"
#include "../base/tracectx.h"

#define BILLING_MAX_BODY (64 * 1024)

typedef struct billing_answer {
	int http;          /* 200, 400, 401, 413, 503 */
	int exit_code;     /* the same, as a sysexits code */
	char message[256];
	int recorded;      /* 1 when PaymentSucceeded was recorded now */
	int flagged;       /* 1 when the payment was kept, flagged, unpaid */
	int order_traced;  /* 1 when its event continues the order's trace: */
	trace_ctx order_trace; /* that of its OrderPlaced */
} billing_answer;

typedef struct billing_options {
	const char *secret;
	int tolerance_s;
	size_t max_body;
	/* The request gave its trace (a traceparent header): the payment's
	 * event continues it, not its order's. */
	int traced;
} billing_options;

/* On return *o is the billing object to send (or NULL): the caller
 * answers first, then sends its outbox. */
int billing_receive(bakery_ctx *ctx, const char *body, size_t len,
    const char *signature, const billing_options *opt, billing_answer *a,
    bakery_object **o);

/* The payments kept in one billing object's file (db, opened by the
 * caller, read-only or not): *out, an array of {order, payment_intent,
 * flag, reason, amount_cents, currency} in the order received; flag and
 * reason are null for the payment that counted. 0, or db_fail's code
 * naming address. */
int billing_payments(sqlite3 *db, const char *address, jv *out);

/* The webhook secret: BAKERY_STRIPE_WEBHOOK_SECRET, else HOME/webhook-secret
 * (made on first use, 0600). Caller frees. */
int billing_webhook_secret(bakery_ctx *ctx, char **secret);

/* Stripe's webhook secret (whsec_…) for the receiver: the first line of
 * path, or of BAKERY_STRIPE_WEBHOOK_SECRET_FILE, else
 * BAKERY_STRIPE_WEBHOOK_SECRET; EX_CONFIG when none holds one. Caller
 * frees. */
int billing_endpoint_secret(const char *path, char **secret);

/* billing/ORDER's state in ctx's sandbox; jv_null() when there is none. */
int billing_read(bakery_ctx *ctx, const char *order, jv *state);
/* The same in sandbox (NULL: ctx's). */
int billing_read_in(bakery_ctx *ctx, const char *sandbox, const char *order,
    jv *state);

/* The payment in state that pays the order (the first without a flag),
 * or jv_invalid(). Consumes state. */
jv billing_counted_payment(jv state);

/* 1 when payment_intent is the one of counted (billing_counted_payment's
 * answer, consumed): the payment Billing recorded as paying the order.
 * The one rule by which the order's subscriber takes a PaymentSucceeded
 * and bakery-status tells a payment event that Billing never recorded
 * (one made by hand and sent to the queue). */
int billing_counts(jv counted, const char *payment_intent);

#endif
