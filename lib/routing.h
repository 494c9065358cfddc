/*
 * routing.h — which objects must hear of which event: the routing table.
 *
 *   OrderPlaced       from order    to schedule/DAY, kitchen/board
 *   PaymentSucceeded  from billing  to order/ORDER
 *   OrderPaid         from order    to schedule/DAY, kitchen/board,
 *                                      crm/customers, customer/CUSTOMER,
 *                                      inbox/CUSTOMER, dispatch/DAY
 *
 * A subscriber's key comes from a field of the event's data (DAY from
 * data.day, CUSTOMER from data.customer, ORDER from data.order) or is fixed.
 * Compiled in; `bakery-consume --routes` prints it.
 */
#ifndef BAKERY_ROUTING_H
#define BAKERY_ROUTING_H

#include <stddef.h>

#include <jv.h>

#define ROUTING_MAX_SUBSCRIBERS 8

typedef struct route {
	const char *type;      /* event type */
	const char *from;      /* kind that records it */
	const char *kind;      /* subscriber kind */
	const char *key_field; /* data field holding the key, or NULL */
	const char *key;       /* the fixed key when key_field is NULL */
} route;

extern const route routing_table[];

/* The subscriber addresses of env, in table order. EX_DATAERR when a key
 * field is missing or is not a valid name. */
int routing_subscribers(jv env, char addresses[][130], size_t *n);

/* The table as a jv array of {"type","from","to"}. */
jv routing_describe(void);

#endif
