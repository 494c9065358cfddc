/*
 * batch.h — many order commands from one process (bakery-order --batch).
 *
 * A script that places and pays many orders would start a process for
 * each, open its files and commit the queue once a command. A batch reads
 * one command a line, as JSON, from a file descriptor and answers one
 * JSON line for each:
 *
 *   {"cmd":"place","customer":ID,"day":"YYYY-MM-DD","items":["ITEM=QTY",...],
 *    "delivery":ADDRESS,"key":KEY}            delivery and key optional
 *   {"cmd":"pay","order":ID,"card":NUMBER}    or "payment_method"; neither:
 *                                             the default test card
 *   {"cmd":"show","order":ID}
 *
 * The lines read together — the first one, and the ones already there to
 * be read without waiting, up to BATCH_GROUP — are a group. Each command
 * commits in its own object, as the command line's does (its own
 * transaction: a refused command changes nothing); then the outboxes of
 * the group go to the queue in one send (outbox_send_together: one commit
 * of the embedded queue); only then are the group's answers handed out.
 * So an answer is given only for a command that is committed and whose
 * events were sent, or are in its outbox when the queue refused (the
 * answer's "sent" is false; the alarm is armed, the relay sends them).
 *
 * Every line is answered, in order, with its number (the first is 1):
 *   {"line":N,"exit":0,"sent":true|false,"result":R}  R as the command prints it
 *   {"line":N,"exit":CODE,"error":MESSAGE}             a line refused
 * A declined card is exit 1 with its "result" and "error". A line longer
 * than BATCH_LINE_MAX bytes is refused without being kept in memory.
 */
#ifndef BAKERY_BATCH_H
#define BAKERY_BATCH_H

#include <jv.h>

#include "../store/store.h"

#define BATCH_LINE_MAX (64 * 1024) /* bytes of a line, its newline aside */
#define BATCH_GROUP 64             /* lines at most in one queue send */

typedef struct batch_options {
	const char *stripe_key_file; /* for every pay; NULL: BAKERY_STRIPE_KEY */
	/* Called with the answers of a group, a jv array of lines, once the
	 * group is committed and sent; consumes them. Nonzero: the answers
	 * could not be written, the batch stops (74). */
	int (*answer)(void *arg, jv lines);
	void *arg;
} batch_options;

/* Runs the commands read from fd until its end. Returns 0, or 74 when fd
 * could not be read or the answers could not be written (the error
 * recorded, naming the lines): the batch's own failure. *status is 0 when
 * every line succeeded, else the exit code of the first that did not (1
 * for a declined card), whose error is in its answer, not recorded. */
int batch_run(bakery_ctx *ctx, int fd, const batch_options *opt,
    int *status);

#endif
