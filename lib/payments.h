/*
 * payments.h — paying an order.
 *
 * While no Stripe key is configured, a built-in test gateway stands in for
 * Stripe with its test cards:
 *   4242424242424242  succeeds
 *   4000000000000002  declined (card_declined)
 *   4000000000009995  declined (insufficient_funds)
 * A success is answered the way Stripe answers: a payment intent, then a
 * signed payment_intent.succeeded event that Billing receives through the
 * same signature check as the real webhook (billing.h).
 *
 * A declined card changes nothing in the order and exits 1. The payment
 * intent's id is derived from the idempotency key (the order id), so paying
 * again replays the same intent and Billing records it once.
 */
#ifndef BAKERY_PAYMENTS_H
#define BAKERY_PAYMENTS_H

#include <jv.h>

#include "object.h"

#define PAYMENTS_TEST_CARD "4242424242424242"

/* 0 paid (or already paid), 1 declined, else a sysexits code.
 * *result describes the outcome; *billing is the object to send after
 * the caller has answered (may be NULL). */
int payment_pay(bakery_ctx *ctx, const char *order_id, const char *card,
    jv *result, bakery_object **billing);

#endif
