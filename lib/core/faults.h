/*
 * faults.h — switches an operator or a test turns on to make a part of a
 * sandbox refuse work, stored in the sandbox's own file (SANDBOX/sandbox.db).
 *
 *   refuses:KIND     the subscriber of that kind answers 503 to every event
 *                    it has not applied yet ("Kitchen answered 503")
 *   queue-refuses    the embedded queue refuses every send of the sandbox
 *
 * This layer knows the shape of a name, not the kinds: a program that
 * sets one checks that KIND is a subscriber.
 *
 * A fault is read at the moment it matters, so a change by another
 * process takes effect at once. The wipe clears them.
 */
#ifndef BAKERY_FAULTS_H
#define BAKERY_FAULTS_H

#include <jv.h>

#include "../store/store.h"

#define FAULT_REFUSES "refuses:"
#define FAULT_QUEUE_REFUSES "queue-refuses"

/* Whether name is queue-refuses or refuses: and a name; *kind (if not
 * NULL) receives the name after refuses:, or NULL. */
int fault_name_known(const char *name, const char **kind);

/* 1 when set, 0 when not (a missing sandbox file means none is set). */
int fault_is_set(bakery_ctx *ctx, const char *sandbox, const char *name);
int fault_set(bakery_ctx *ctx, const char *sandbox, const char *name);
int fault_clear(bakery_ctx *ctx, const char *sandbox, const char *name);
/* A jv array of {"name","set_at"}. */
int fault_list(bakery_ctx *ctx, const char *sandbox, jv *out);
/* fault_list's array, of a sandbox file the caller opened (status reads
 * it read-only); *out is always an array. */
int fault_read(sqlite3 *db, jv *out);

#endif
