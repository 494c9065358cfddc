/*
 * billing.c — Billing's record of an order's payments (billing/ORDER):
 * which payment counts and which is flagged (lib/orders/billing.c), and
 * the attempts at paying through Stripe's API
 * (lib/orders/billing_attempts.c). It hears no event; it records
 * PaymentSucceeded.
 */
#include "../core/kind.h"

const object_kind billing_kind = {
	.name = "billing",
	.records = { "PaymentSucceeded" },
};
