/*
 * payments.h — paying an order: the place that chooses between the
 * built-in test gateway and Stripe's API.
 *
 * Stripe's test cards and the payment methods that stand for them:
 *   4242424242424242  pm_card_visa                            succeeds
 *   4000000000000002  pm_card_chargeDeclined                  card_declined
 *   4000000000009995  pm_card_chargeDeclinedInsufficientFunds insufficient_funds
 *
 * Which of the two pays is the home's recorded choice (gateway.h), never
 * the presence of a key: with no choice recorded pay exits 78; a home
 * that uses Stripe needs a key (78 without one, before anything is
 * written) and never falls back to the test gateway; a test home refuses
 * a key (78), and an order with any attempt at Stripe
 * (billing_attempts.h) is settled through Stripe only.
 *
 * Once Billing holds a payment that pays the order (or the order is
 * paid), pay answers that success whatever the card, and sends nothing.
 *
 * The test gateway stands in for Stripe. A success is answered the way Stripe
 * answers: a payment intent, then a signed payment_intent.succeeded event
 * that Billing receives through the same signature check as the real
 * webhook (billing.h). The intent's id is derived from the order id, so
 * paying again replays the same intent and Billing records it once.
 *
 * Through Stripe, the pay command creates and confirms a payment intent through
 * Stripe's API (stripe_api.h) with metadata order_id and sandbox, keyed by
 * the attempt Billing keeps (billing_attempt_next): the order id, or ORDER-N
 * for the N-th attempt after declines. Stripe's answer is not trusted to
 * pay the order: the order becomes paid when Stripe's signed webhook
 * reaches Billing (bakery-webhook), exactly as with the test gateway.
 *
 * Either way a declined card changes nothing in the order and returns 1.
 */
#ifndef BAKERY_PAYMENTS_H
#define BAKERY_PAYMENTS_H

#include <stddef.h>

#include <jv.h>

#include "../core/object.h"

#define PAYMENTS_TEST_CARD "4242424242424242"

typedef struct payment_request {
	const char *order_id;
	const char *card;            /* a test card; NULL: payment_method */
	const char *payment_method;  /* pm_…; NULL: the card's */
	const char *stripe_key_file; /* NULL: BAKERY_STRIPE_KEY */
} payment_request;

/* The test gateway's cards, for a page that lists them: the i-th card's
 * number, and in *decline_code the code it is declined with (NULL: it
 * pays); NULL past the last. */
const char *payment_test_card(size_t i, const char **decline_code);

/* 0 paid, succeeded (or already paid), 1 declined, else a sysexits code:
 * 69 when Stripe cannot be reached (the order is unchanged), 78 for a bad
 * key or setting, no gateway chosen, or a key that disagrees with it. *result describes the outcome; *billing is the object to
 * send after the caller has answered (may be NULL). */
int payment_pay(bakery_ctx *ctx, const payment_request *req, jv *result,
    bakery_object **billing);

#endif
