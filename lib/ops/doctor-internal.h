/*
 * doctor-internal.h — what the two files of the doctor share and nobody
 * else needs: the run's state and its findings. doctor.c runs the checks
 * in their order and reports each (doctor.h), and holds those of what the
 * home is set up with and holds: gateway, routes, secrets outside the
 * home, queue, sqlite, alarms, clock, disk. doctor_files.c checks the
 * home and every file in it: one walk gathers what the owner, modes,
 * types, making and writable checks find, and the secrets check of the
 * home's own webhook-secret.
 */
#ifndef BAKERY_DOCTOR_INTERNAL_H
#define BAKERY_DOCTOR_INTERNAL_H

#include <limits.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "doctor.h"

/* The file checks' findings: how many, and the first one in words. */
struct finding {
	long n;
	char first[512];
};

enum { F_OWNER, F_MODES, F_TYPES, F_MAKING, F_SECRETS, F_WRITABLE,
	F_SQLITE, F_COUNT };

/* The user the units run as: who must be able to write the home. */
struct who {
	char name[64];
	uid_t uid;
	gid_t groups[256];
	int n_groups;
};

struct doctor {
	bakery_ctx *ctx;
	const doctor_options *o;
	doctor_report_fn report;
	void *arg;
	int failed;
	struct stat home;
	char owner[64];
	struct who user;
	struct finding f[F_COUNT];
	struct finding stale; /* half-made files a killed maker left */
	long entries, databases;
	char **locks; /* sandbox names with a HOME/.NAME.lock */
	size_t n_locks;
	int walk_errno;
	char walk_path[PATH_MAX];
};

/* One line of the report; a FAIL counts in d->failed. */
void doctor_say(struct doctor *d, enum doctor_status s, const char *check,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* One finding of a file check (F_...): counted, the first kept in words
 * for its verdict. */
void doctor_found(struct doctor *d, int which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether user w has every bit of want (4 read, 2 write, 1 search) on a
 * file of st's owner, group and mode, as the kernel would judge it. */
int doctor_user_may(const struct who *w, const struct stat *st,
    unsigned want);
/* The home check, then the walk of every file in it, gathering the file
 * checks' findings in d (its user from d->o->user, or the home's owner).
 * The home's FAIL line counts in d->failed and stops the run; EX_CONFIG
 * for a user that does not exist, EX_UNAVAILABLE when the home cannot be
 * read. */
int doctor_check_home(struct doctor *d);

#endif
