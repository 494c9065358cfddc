/*
 * doctor_files.c — the home and every file in it, checked: one walk
 * gathers what the owner, modes, types, making, writable and secrets
 * checks find of them (doctor-internal.h).
 */
#define _GNU_SOURCE
#include "doctor-internal.h"
#include "../store/store.h"
#include "../base/util.h"

#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file left half made this long ago was left by a maker that died: the
 * one making it writes it at least once a transaction. */
#define DOCTOR_STALE_S 60

/* nftw takes no argument: the walk's state while it runs. */
static struct doctor *walking;

static void
user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "uid %u", (unsigned)uid);
}

static int
find_user(struct who *w, const char *name, uid_t owner)
{
	struct passwd *pw = name ? getpwnam(name) : getpwuid(owner);
	if (!pw && name)
		return bakery_fail(EX_CONFIG, "no such user: '%s'", name);
	if (!pw) {
		/* An owner with no name: its uid alone, no groups. */
		w->uid = owner;
		w->n_groups = 0;
		snprintf(w->name, sizeof w->name, "uid %u", (unsigned)owner);
		return 0;
	}
	w->uid = pw->pw_uid;
	snprintf(w->name, sizeof w->name, "%s", pw->pw_name);
	w->n_groups = (int)(sizeof w->groups / sizeof w->groups[0]);
	if (getgrouplist(pw->pw_name, pw->pw_gid, w->groups, &w->n_groups) < 0)
		w->n_groups = (int)(sizeof w->groups / sizeof w->groups[0]);
	return 0;
}

/* Whether user w has every bit of want (4 read, 2 write, 1 search) on a
 * file of st's owner, group and mode, as the kernel would judge it. */
int
doctor_user_may(const struct who *w, const struct stat *st, unsigned want)
{
	if (w->uid == 0)
		return 1;
	unsigned bits;
	if (st->st_uid == w->uid) {
		bits = (st->st_mode >> 6) & 7;
	} else {
		int in_group = 0;
		for (int i = 0; i < w->n_groups && !in_group; i++)
			in_group = w->groups[i] == st->st_gid;
		bits = in_group ? (st->st_mode >> 3) & 7 : st->st_mode & 7;
	}
	return (bits & want) == want;
}

static const char *
type_name(mode_t m)
{
	return S_ISLNK(m) ? "a symlink" : S_ISFIFO(m) ? "a FIFO"
	    : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device"
	    : S_ISBLK(m) ? "a block device" : "not a file";
}

/* A top-level .NAME.lock: the sandbox's lock and clock floor. */
static void
note_lock(struct doctor *d, const char *base)
{
	char *name = home_lock_file_sandbox(base);
	if (!name)
		return;
	d->locks = bakery_xrealloc(d->locks, (d->n_locks + 1) * sizeof *d->locks);
	d->locks[d->n_locks++] = name;
}

/* The home's routes as a link to a regular file: the package's layout
 * (its tmpfiles.d entry links /var/lib/bakery/routes to the conffile
 * /etc/bakery/routes, root's), judged by what it links to: a regular
 * file that no group or other may write and that the user may read. */
static void
check_routes_link(struct doctor *d, const char *rel)
{
	char *path = bakery_xasprintf("%s/%s", d->ctx->home, rel);
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		doctor_found(d, F_TYPES, "'%s' is a symlink to no regular file",
		    rel);
	else if (st.st_mode & 022)
		doctor_found(d, F_MODES, "'%s' links to a file writable by %s",
		    rel, (st.st_mode & 020) ? "its group" : "others");
	else if (!doctor_user_may(&d->user, &st, 4))
		doctor_found(d, F_WRITABLE, "%s cannot read what '%s' links to",
		    d->user.name, rel);
	free(path);
}

/* A file being made (wal.c: .new.NAME, .new-XXXXXX): what only bakery
 * makes there, one link, 0600, a regular file; or left by a maker that
 * died. Its owner is the owner check's. */
static void
check_making(struct doctor *d, const char *rel, const char *base,
    const struct stat *st)
{
	if (strncmp(base, ".new.", 5) != 0 && strncmp(base, ".new-", 5) != 0)
		return;
	if (S_ISDIR(st->st_mode))
		doctor_found(d, F_MAKING, "'%s' is a folder where bakery makes "
		    "a file: no object of that name can be made", rel);
	else if (S_ISREG(st->st_mode) && st->st_nlink != 1)
		doctor_found(d, F_MAKING, "'%s' has %lu links: a file bakery "
		    "makes has one (a link to a file elsewhere?)", rel,
		    (unsigned long)st->st_nlink);
	else if (S_ISREG(st->st_mode) && (st->st_mode & 07777) != 0600)
		doctor_found(d, F_MAKING, "'%s' is %04o: a file bakery makes "
		    "is 0600", rel, (unsigned)(st->st_mode & 07777));
	else if (S_ISREG(st->st_mode) &&
	    st->st_mtime < bakery_now_ms() / 1000 - DOCTOR_STALE_S) {
		struct finding *f = &d->stale;
		if (f->n++ == 0)
			snprintf(f->first, sizeof f->first, "'%s' was left half "
			    "made by a maker that died: the next maker of it "
			    "writes it again", rel);
	}
}

static void
check_entry(struct doctor *d, const char *rel, const char *base,
    const struct stat *st, int top)
{
	char who[64];
	d->entries++;
	if (top && S_ISLNK(st->st_mode) && strcmp(base, "routes") == 0) {
		check_routes_link(d, rel);
		return;
	}
	check_making(d, rel, base, st);
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
		doctor_found(d, F_TYPES, "'%s' is %s", rel,
		    type_name(st->st_mode));
		return;
	}
	if (st->st_uid != d->home.st_uid) {
		user_name(st->st_uid, who, sizeof who);
		doctor_found(d, F_OWNER, "'%s' is owned by %s, the home by %s",
		    rel, who, d->owner);
	}
	/* Orders, customers' names and addresses: nobody else's to read,
	 * nor, for a folder, to list or pass through. */
	mode_t others_read = S_ISDIR(st->st_mode) ? 005 : 004;
	if (st->st_mode & 022)
		doctor_found(d, F_MODES, "'%s' is %04o: writable by %s", rel,
		    (unsigned)(st->st_mode & 07777),
		    (st->st_mode & 020) ? "its group" : "others");
	else if ((st->st_mode & others_read) &&
	    !(top && strcmp(base, "webhook-secret") == 0)) /* secrets' */
		doctor_found(d, F_MODES, "'%s' is %04o: readable by others",
		    rel, (unsigned)(st->st_mode & 07777));
	if (top && strcmp(base, "webhook-secret") == 0 && (st->st_mode & 007))
		doctor_found(d, F_SECRETS, "'%s' is %04o: readable by others",
		    rel, (unsigned)(st->st_mode & 07777));
	unsigned want = S_ISDIR(st->st_mode) ? 7 : 6;
	if (!doctor_user_may(&d->user, st, want)) {
		user_name(st->st_uid, who, sizeof who);
		doctor_found(d, F_WRITABLE, "%s cannot %s '%s' (%s's, %04o)",
		    d->user.name, S_ISDIR(st->st_mode) ? "write in"
						       : "read and write",
		    rel, who, (unsigned)(st->st_mode & 07777));
	}
	if (S_ISREG(st->st_mode) && bakery_ends_with(base, ".db"))
		d->databases++;
	if (top && S_ISREG(st->st_mode))
		note_lock(d, base);
}

static int
walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct doctor *d = walking;
	if (flag == FTW_DNR || flag == FTW_NS) {
		d->walk_errno = errno ? errno : EACCES;
		snprintf(d->walk_path, sizeof d->walk_path, "%s", path);
		return 1;
	}
	if (ftw->level == 0)
		return 0;
	const char *rel = path + strlen(d->ctx->home) + 1;
	check_entry(d, rel, path + ftw->base, st, ftw->level == 1);
	return 0;
}

/* The home's ancestors: the user must be able to pass through each. */
static void
check_ancestors(struct doctor *d)
{
	char real[PATH_MAX];
	if (!realpath(d->ctx->home, real))
		return;
	for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
		*slash = '\0';
		const char *dir = *real ? real : "/";
		struct stat st;
		if (stat(dir, &st) == 0 && !doctor_user_may(&d->user, &st, 1))
			doctor_found(d, F_WRITABLE, "%s cannot reach the home: "
			    "'%s' is %04o", d->user.name, dir,
			    (unsigned)(st.st_mode & 07777));
	}
}

int
doctor_home(const char *home, doctor_report_fn report, void *arg,
    int *failed)
{
	struct stat st;
	const char *why = NULL;
	*failed = 0;
	if (stat(home, &st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return bakery_fail(EX_UNAVAILABLE, "cannot read the home "
			    "'%s': %s", home, strerror(errno));
		why = "does not exist";
	} else if (!S_ISDIR(st.st_mode)) {
		why = "is not a folder";
	}
	if (why) {
		char detail[PATH_MAX + 32];
		snprintf(detail, sizeof detail, "'%s' %s", home, why);
		report(arg, DOCTOR_FAIL, "home", detail);
		*failed = 1;
		return 0;
	}
	enum home_pending pending;
	char written_by[HOME_VERSION_SIZE];
	if (home_bakerys(home, &pending, written_by)) {
		report(arg, DOCTOR_FAIL, "home", bakery_error());
		*failed = 1;
	}
	return 0;
}

int
doctor_check_home(struct doctor *d)
{
	const char *home = d->ctx->home;
	int failed;
	int rc = doctor_home(home, d->report, d->arg, &failed);
	if (rc || failed) {
		d->failed += failed;
		return rc;
	}
	if (stat(home, &d->home) != 0)
		return bakery_fail(EX_UNAVAILABLE, "cannot read the home '%s': "
		    "%s", home, strerror(errno));
	user_name(d->home.st_uid, d->owner, sizeof d->owner);
	rc = find_user(&d->user, d->o->user, d->home.st_uid);
	if (rc)
		return rc;
	walking = d;
	errno = 0;
	if (nftw(home, walk_one, 16, FTW_PHYS) != 0 && !d->walk_errno)
		d->walk_errno = errno ? errno : EIO;
	walking = NULL;
	if (d->walk_errno)
		return bakery_fail(EX_UNAVAILABLE, "cannot read '%s': %s (run "
		    "as root or as the home's owner)", d->walk_path,
		    strerror(d->walk_errno));
	check_ancestors(d);
	unsigned want = 7;
	if (!doctor_user_may(&d->user, &d->home, want))
		doctor_found(d, F_WRITABLE, "%s cannot write in the home "
		    "(%s's, %04o)", d->user.name, d->owner,
		    (unsigned)(d->home.st_mode & 07777));
	if (d->home.st_mode & 022)
		doctor_found(d, F_MODES, "the home is %04o: writable by %s",
		    (unsigned)(d->home.st_mode & 07777),
		    (d->home.st_mode & 020) ? "its group" : "others");
	else if (d->home.st_mode & 005)
		doctor_found(d, F_MODES, "the home is %04o: readable by others",
		    (unsigned)(d->home.st_mode & 07777));
	/* The bakery its mark records: a newer one's home is read here, and
	 * the programs of this one write nothing in it. */
	const char *by = d->ctx->home_written_by;
	int newer = d->ctx->home_pending == HOME_NEWER;
	doctor_say(d, newer ? DOCTOR_WARN : DOCTOR_OK, "home", "'%s', %s's, "
	    "%04o, %ld entries, %s%s%s", home, d->owner,
	    (unsigned)(d->home.st_mode & 07777), d->entries,
	    *by ? "written by bakery " : "no bakery recorded yet", by,
	    newer ? ", newer than this one (" BAKERY_VERSION "), which "
	    "writes nothing in it" : "");
	return 0;
}
