/*
 * order.h — the order object's commands: place, show, list, events.
 *
 * An order lives at order/ID. Placing one writes, in one transaction, its
 * state, its OrderPlaced event (in the outbox until it is relayed), its
 * command key and its alarm (object.h). With --key, the order id is
 * derived from the key, so placing again with the same key finds the same
 * order and changes nothing; the same key with other details is an error.
 *
 * Paying is payments.h; the order becomes paid when its PaymentSucceeded
 * arrives through the queue (the order's subscriber, order.c), and only
 * when Billing recorded that payment as the one paying the order
 * (billing_counts): one made by hand is refused (422).
 */
#ifndef BAKERY_ORDER_H
#define BAKERY_ORDER_H

#include <jv.h>

#include "../core/object.h"
#include "../base/tracectx.h"

/* What an order may hold. place refuses past these, and every subscriber
 * checks the same limits again in the event's data (event_data.h), so
 * that an order placed is never one its subscribers refuse once paid. The
 * price is the menu's (MENU_MAX_PRICE), the quantity of an item in all its
 * lines MENU_MAX_QTY. */
#define ORDER_MAX_LINES 1000   /* item lines */
#define ORDER_MAX_DELIVERY 200 /* bytes of the delivery address */
#define ORDER_MAX_KEY 128      /* bytes of an idempotency key */

typedef struct order_request {
	const char *customer;
	const char *day;      /* YYYY-MM-DD */
	const char *delivery; /* NULL: collected at the shop */
	const char *key;      /* NULL: a fresh order every time */
	char *const *items;   /* "ITEM=QTY" */
	int n_items;
} order_request;

/* Whether key may be a place's key: 1 to ORDER_MAX_KEY bytes of text a
 * person gave (bakery_text_valid) without a space. order_place refuses
 * any other (64); a form checks a key it was sent by the same rule. */
int order_key_valid(const char *key);

/* On success *order is the order's state and *o the open object, whose
 * outbox the caller sends once it has answered. */
int order_place(bakery_ctx *ctx, const order_request *req, jv *order,
    bakery_object **o);
int order_get(bakery_ctx *ctx, const char *id, jv *order);
/* The trace of the order's OrderPlaced (the sandbox's, NULL: ctx's): what
 * a pay, or a payment Stripe reports, continues when it is given no trace
 * of its own, so that an order's events are one trace. 0 and *t, else the
 * error recorded (EX_NOINPUT when the order, or its event's traceparent,
 * is not there). */
int order_trace(bakery_ctx *ctx, const char *sandbox, const char *id,
    trace_ctx *t);
/* order_get in another sandbox (NULL: ctx's). */
int order_get_in(bakery_ctx *ctx, const char *sandbox, const char *id,
    jv *order);
/* 1 when payment's amount_cents and currency are order's total_cents and
 * currency: the only payment that pays the order. */
int order_terms_match(jv order, jv payment);
/* The sandbox's orders, oldest first; and in *unread the files it could
 * not read (object_list_unread's {"address","file","error","code"}): an
 * order's file that is not SQLite's, one whose migration a read-only
 * home refuses, a folder that cannot be opened. Each is left out of
 * *orders, the others read all the same; 0 even then: the caller says
 * each and fails after. */
int order_list(bakery_ctx *ctx, jv *orders, jv *unread);
int order_events(bakery_ctx *ctx, const char *id, jv *events);

#endif
