/*
 * doctor.h — a home checked as an operator would before trusting it
 * (bakery-doctor(1)). Reads, never writes, as root or not: every SQLite
 * file is opened read-only (db_open_reader) in a context that writes
 * nothing (ctx->write_nothing: no -wal or -shm made, none given an
 * owner), nothing is created, no lock is taken.
 *
 * Owns: the list of checks, their order and what each one means by ok,
 * warn and FAIL:
 *
 *   home        HOME exists and is a folder bakery made (home.h; nothing
 *               else runs without it)
 *   owner       every file and folder in it is the home's owner's
 *   modes       none (the home included) is writable by group or others,
 *               nor readable by others (orders, customers' names and
 *               addresses; a folder: listed or passed through)
 *   types       only files and folders: no symlink, FIFO, socket or device
 *               where bakery keeps files
 *   making      no file being made (.new.NAME, .new-XXXXXX) is what bakery
 *               never makes: a folder, a file of more than one link, or
 *               of a mode other than 0600; a warning for one a maker that
 *               died left (older than a minute)
 *   gateway     a gateway is chosen (HOME/.gateway, gateway.h)
 *   stripe-key  for stripe: a key configured, well formed (stripe_api.h)
 *   routes      the routes in effect parse (routing.h)
 *   secrets     the home's webhook-secret, the routes' secret= files and
 *               the Stripe key file are not readable by others (and the
 *               user below can read the ones outside the home)
 *   writable    the user the units run as (--user, default the home's
 *               owner) can reach the home and read and write every file
 *               and folder in it, judged from owner, group and mode, so
 *               root sees what that user will meet (a file root made in
 *               the bakery user's home)
 *   queue       embedded: the queue file opens and passes quick_check, or
 *               is not made yet and no object holds an event marked
 *               relayed (else the queue that took them is gone);
 *               NATS: the servers answer
 *   sqlite      every *.db file in the home passes PRAGMA quick_check, and
 *               its WAL holds no commit a reader would drop (walcheck.h)
 *   clock-floor no sandbox's clock floor (wipe.h) is ahead of now
 *   clock-sync  a warning when the kernel says the clock is not
 *               synchronised (adjtimex)
 *   disk        free space (--min-free) and inodes of the home's file
 *               system
 *
 * When the home fails, nothing else is checked.
 * A check that fails is a FAIL line; a warning does not fail the run.
 */
#ifndef BAKERY_DOCTOR_H
#define BAKERY_DOCTOR_H

#include <stdint.h>

#include "../store/store.h"

typedef struct doctor_options {
	const char *user;            /* NULL: the home's owner */
	const char *routes_file;     /* NULL: the search of routing.h */
	const char *stripe_key_file; /* NULL: BAKERY_STRIPE_KEY */
	uint64_t min_free;           /* bytes free below which disk fails */
	int max_lag_s;               /* a standby further behind fails */
} doctor_options;

enum doctor_status { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

/* "ok", "warn" or "FAIL". */
const char *doctor_status_name(enum doctor_status s);

typedef void (*doctor_report_fn)(void *arg, enum doctor_status status,
    const char *check, const char *detail);

/* The home check alone, before a context is made (ctx_init refuses a
 * home that is not a folder, or not bakery's): a FAIL line and *failed = 1
 * when home is missing, not a folder, or a folder that is not bakery's
 * (home.h), else nothing reported. EX_UNAVAILABLE when it cannot be
 * looked at. */
int doctor_home(const char *home, doctor_report_fn report, void *arg,
    int *failed);
/* Runs every check, reporting each once, in the order above; *failed
 * counts the FAIL lines. 0 when the checks ran; EX_CONFIG for a --user
 * that does not exist, EX_UNAVAILABLE when the home cannot be read by
 * this process at all (then no verdict would be honest). */
int doctor_run(bakery_ctx *ctx, const doctor_options *o,
    doctor_report_fn report, void *arg, int *failed);

#endif
