/*
 * answer.h — what a subscriber answers for an event, named.
 *
 * Every subscriber, built in (subscriber.h) or outside bakery
 * (external.h), answers like an HTTP handler, and the consumer acts on the
 * answer: any 2xx is acked, 205 acked as dropped, the rest given back to
 * be retried or dead-lettered (422 at once when final). The values are
 * the HTTP statuses they are named after: they are what bakery-consume
 * prints and what a subscriber's URL answers.
 */
#ifndef BAKERY_ANSWER_H
#define BAKERY_ANSWER_H

enum answer {
	/* Applied, or applied before (its id is in the object's seen
	 * table). */
	ANSWER_APPLIED = 200,
	/* The event predates its sandbox's last wipe and is dropped. */
	ANSWER_WIPED = 205,
	/* Not applicable yet (the kitchen has no card for a paid order). */
	ANSWER_NOT_YET = 409,
	/* Malformed for this subscriber; refused for good when final. */
	ANSWER_MALFORMED = 422,
	/* A subscriber outside bakery failed (a crash, an odd exit, a
	 * redirect). */
	ANSWER_FAILED = 500,
	/* Refused or unavailable (a fault, a locked or full disk): try
	 * again. */
	ANSWER_UNAVAILABLE = 503,
	/* A subscriber outside bakery ran past its timeout. */
	ANSWER_TIMED_OUT = 504,
};

/* Whether status is a 2xx: the event is done with at that subscriber. */
static inline int
answer_applied(int status)
{
	return status >= 200 && status < 300;
}

#endif
