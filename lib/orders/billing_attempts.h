/*
 * billing_attempts.h — the attempts at paying an order through Stripe's
 * API (payments.h), kept in the order's Billing object, billing/ORDER
 * (state.attempts), beside the payments its webhook recorded (billing.h).
 *
 * Owns: the attempts and their Idempotency-Keys: the order id for the
 * first, ORDER-N for the N-th.
 *
 * Promises: an attempt is written "pending" before its request leaves,
 * and ends "declined" or "succeeded" once Stripe has answered. Only a
 * declined attempt lets a new one begin: after a crash or an unreachable
 * Stripe the attempt stays pending, and the next pay sends it again —
 * same key, same payment method — before anything else. So a key is
 * never used with other parameters, and never replaced while its outcome
 * is unknown.
 */
#ifndef BAKERY_BILLING_ATTEMPTS_H
#define BAKERY_BILLING_ATTEMPTS_H

#include <jv.h>

#include "../core/object.h"

/* The attempt to send next for order: the pending one if any, else a new
 * one for payment_method after the last declined one, written pending
 * before this returns. A succeeded attempt is returned as it is (nothing
 * to send). *attempt is {"attempt","idempotency_key","payment_method",
 * "status",...}; caller frees. */
int billing_attempt_next(bakery_ctx *ctx, const char *order,
    const char *payment_method, jv *attempt);

/* Ends attempt n: status "declined" with field decline_code, or
 * "succeeded" with field payment_intent. */
int billing_attempt_end(bakery_ctx *ctx, const char *order, int n,
    const char *status, const char *field, const char *value);

#endif
