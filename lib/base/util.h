/*
 * util.h — what every bakery program and module shares, in one include:
 * errors and logs (log.h), the clock (clock.h), text checks, names and
 * ids (text.h), W3C trace context (tracectx.h), crash points (crash.h)
 * and allocation (alloc.h). Each of
 * those owns its part; none of them includes this file, so that they
 * include each other one way.
 *
 * Errors. A library function that can fail returns 0 or a sysexits code
 * (EX_USAGE, EX_DATAERR, ...) and leaves a message in bakery_error(); the
 * program prints it as "PROG: error: MESSAGE" and exits with that code
 * (log.h). Nothing below cmd/ exits (exit, _exit, bakery_die,
 * bakery_die_last) but these:
 *   lib/cli/cli.c     the programs' own end: --help and --version, a usage
 *                     error (EX_USAGE), a context that cannot be set up
 *                     (cli_context), cli_exit;
 *   lib/base/log.c    bakery_die and bakery_die_last themselves, and
 *                     bakery_init when fds 0-2 cannot be reopened on
 *                     /dev/null (EX_OSERR);
 *   lib/queue/queue_nats.c, lib/queue/queue_nats_receive.c  the NATS
 *                     driver when memory is exhausted (EX_OSERR);
 *   lib/net/stripe.c  when libcrypto cannot be loaded to sign or hash
 *                     (EX_UNAVAILABLE);
 *   lib/core/kind.c   when more kinds have tables of their own than its
 *                     table holds, a fault of the build (EX_SOFTWARE);
 *   lib/net/external.c  a child that could not exec (_exit).
 * mk/exits (make lint) holds the same list. An abort() is an assertion, a
 * bug or a state where the code cannot go on (bakery_xmalloc and its kin
 * when memory is exhausted, alloc.h; no entropy for an id, text.h), not
 * an exit; nor is a crash point's SIGKILL (crash.h).
 */
#ifndef BAKERY_UTIL_H
#define BAKERY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sysexits.h>

#include <jv.h>

#include "alloc.h"
#include "clock.h"
#include "crash.h"
#include "log.h"
#include "text.h"
#include "tracectx.h"

#define BAKERY_VERSION "0.2.0"

/* A limit's number inside a string literal, from its own macro, so that
 * a message never holds a second copy of the number. */
#define DIGITS_OF(n) DIGITS_OF_(n)
#define DIGITS_OF_(n) #n

#endif
