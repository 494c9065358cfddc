/*
 * billing.c — Billing's record of an order's payments (billing/ORDER):
 * which payment counts and which is flagged, and the attempts at paying
 * through Stripe's API (lib/orders/billing.c). It hears no event; it records
 * PaymentSucceeded.
 */
#include "../core/kind.h"

const object_kind billing_kind = {
	.name = "billing",
	.records = { "PaymentSucceeded" },
};
