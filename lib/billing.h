/*
 * billing.h — Billing, the receiver of Stripe's webhook.
 *
 * billing_receive() takes the raw body and the Stripe-Signature header,
 * verifies the signature (stripe.h) and, for payment_intent.succeeded,
 * records PaymentSucceeded in billing/ORDER — once per Stripe event id and
 * once per payment intent, since Stripe may send two events for one change.
 * Other event types are acknowledged and ignored.
 *
 * The answer is HTTP-shaped so the CGI program and the test gateway share
 * it: 200 recorded or ignored, 400 malformed, 401 bad signature, 413 too
 * large, 503 unavailable.
 */
#ifndef BAKERY_BILLING_H
#define BAKERY_BILLING_H

#include <stddef.h>

#include "object.h"

#define BILLING_MAX_BODY (64 * 1024)

typedef struct billing_answer {
	int http;          /* 200, 400, 401, 413, 503 */
	int exit_code;     /* the same, as a sysexits code */
	char message[256];
	int recorded;      /* 1 when PaymentSucceeded was recorded now */
} billing_answer;

typedef struct billing_options {
	const char *secret;
	int tolerance_s;
	size_t max_body;
} billing_options;

/* On return *o is the billing object to send (or NULL): the caller
 * answers first, then sends its outbox. */
int billing_receive(bakery_ctx *ctx, const char *body, size_t len,
    const char *signature, const billing_options *opt, billing_answer *a,
    bakery_object **o);

/* The webhook secret: BAKERY_STRIPE_WEBHOOK_SECRET, else HOME/webhook-secret
 * (made on first use, 0600). Caller frees. */
int billing_webhook_secret(bakery_ctx *ctx, char **secret);

#endif
