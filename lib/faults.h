/*
 * faults.h — switches an operator or a test turns on to make a part of a
 * sandbox refuse work, stored in the sandbox's own file (SANDBOX/sandbox.db).
 *
 *   kitchen-refuses  the kitchen answers 503 "Kitchen answered 503"
 *   queue-refuses    the embedded queue refuses every send of the sandbox
 *
 * A fault is read at the moment it matters, so a change by another
 * process takes effect at once. The wipe clears them.
 */
#ifndef BAKERY_FAULTS_H
#define BAKERY_FAULTS_H

#include <jv.h>

#include "ctx.h"

extern const char *const fault_names[];
int fault_name_known(const char *name);

/* 1 when set, 0 when not (a missing sandbox file means none is set). */
int fault_is_set(bakery_ctx *ctx, const char *sandbox, const char *name);
int fault_set(bakery_ctx *ctx, const char *sandbox, const char *name);
int fault_clear(bakery_ctx *ctx, const char *sandbox, const char *name);
/* A jv array of {"name","set_at"}. */
int fault_list(bakery_ctx *ctx, const char *sandbox, jv *out);

#endif
