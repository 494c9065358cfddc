/*
 * doctor.c — check a home as an operator would: one walk of the home
 * gathers what the file checks need, then each check reports once.
 */
#define _GNU_SOURCE
#include "doctor.h"
#include "../net/gateway.h"
#include "../core/outbox.h"
#include "../queue/queue.h"
#include "../flow/routing.h"
#include "status.h"
#include "../core/envelope.h"
#include "../store/store.h"
#include "../net/stripe_api.h"
#include "../base/util.h"
#include "../store/walcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timex.h>
#include <unistd.h>

/* The file checks' findings: how many, and the first one in words. */
struct finding {
	long n;
	char first[512];
};

enum { F_OWNER, F_MODES, F_TYPES, F_MAKING, F_SECRETS, F_WRITABLE,
	F_SQLITE, F_COUNT };

/* A file left half made this long ago was left by a maker that died: the
 * one making it writes it at least once a transaction. */
#define DOCTOR_STALE_S 60

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

/* nftw takes no argument: the walk's state while it runs. */
static struct doctor *walking;

const char *
doctor_status_name(enum doctor_status s)
{
	return s == DOCTOR_OK ? "ok" : s == DOCTOR_WARN ? "warn" : "FAIL";
}

static void
say(struct doctor *d, enum doctor_status s, const char *check,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
say(struct doctor *d, enum doctor_status s, const char *check,
    const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	if (s == DOCTOR_FAIL)
		d->failed++;
	d->report(d->arg, s, check, detail);
}

static void
found(struct doctor *d, int which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
found(struct doctor *d, int which, const char *fmt, ...)
{
	struct finding *f = &d->f[which];
	if (f->n++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(f->first, sizeof f->first, fmt, ap);
		va_end(ap);
	}
}

/* One FAIL line naming the first finding, or the ok line. */
static void
verdict(struct doctor *d, int which, const char *check, const char *ok)
{
	struct finding *f = &d->f[which];
	if (!f->n)
		say(d, DOCTOR_OK, check, "%s", ok);
	else if (f->n == 1)
		say(d, DOCTOR_FAIL, check, "%s", f->first);
	else
		say(d, DOCTOR_FAIL, check, "%s (and %ld more)", f->first,
		    f->n - 1);
}

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
static int
user_may(const struct who *w, const struct stat *st, unsigned want)
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
		found(d, F_TYPES, "'%s' is a symlink to no regular file", rel);
	else if (st.st_mode & 022)
		found(d, F_MODES, "'%s' links to a file writable by %s", rel,
		    (st.st_mode & 020) ? "its group" : "others");
	else if (!user_may(&d->user, &st, 4))
		found(d, F_WRITABLE, "%s cannot read what '%s' links to",
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
		found(d, F_MAKING, "'%s' is a folder where bakery makes a file: "
		    "no object of that name can be made", rel);
	else if (S_ISREG(st->st_mode) && st->st_nlink != 1)
		found(d, F_MAKING, "'%s' has %lu links: a file bakery makes has "
		    "one (a link to a file elsewhere?)", rel,
		    (unsigned long)st->st_nlink);
	else if (S_ISREG(st->st_mode) && (st->st_mode & 07777) != 0600)
		found(d, F_MAKING, "'%s' is %04o: a file bakery makes is 0600",
		    rel, (unsigned)(st->st_mode & 07777));
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
		found(d, F_TYPES, "'%s' is %s", rel, type_name(st->st_mode));
		return;
	}
	if (st->st_uid != d->home.st_uid) {
		user_name(st->st_uid, who, sizeof who);
		found(d, F_OWNER, "'%s' is owned by %s, the home by %s", rel,
		    who, d->owner);
	}
	/* Orders, customers' names and addresses: nobody else's to read,
	 * nor, for a folder, to list or pass through. */
	mode_t others_read = S_ISDIR(st->st_mode) ? 005 : 004;
	if (st->st_mode & 022)
		found(d, F_MODES, "'%s' is %04o: writable by %s", rel,
		    (unsigned)(st->st_mode & 07777),
		    (st->st_mode & 020) ? "its group" : "others");
	else if ((st->st_mode & others_read) &&
	    !(top && strcmp(base, "webhook-secret") == 0)) /* secrets' */
		found(d, F_MODES, "'%s' is %04o: readable by others", rel,
		    (unsigned)(st->st_mode & 07777));
	if (top && strcmp(base, "webhook-secret") == 0 && (st->st_mode & 007))
		found(d, F_SECRETS, "'%s' is %04o: readable by others", rel,
		    (unsigned)(st->st_mode & 07777));
	unsigned want = S_ISDIR(st->st_mode) ? 7 : 6;
	if (!user_may(&d->user, st, want)) {
		user_name(st->st_uid, who, sizeof who);
		found(d, F_WRITABLE, "%s cannot %s '%s' (%s's, %04o)",
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
		if (stat(dir, &st) == 0 && !user_may(&d->user, &st, 1))
			found(d, F_WRITABLE, "%s cannot reach the home: '%s' is "
			    "%04o", d->user.name, dir,
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
	if (home_bakerys(home, &pending)) {
		report(arg, DOCTOR_FAIL, "home", bakery_error());
		*failed = 1;
	}
	return 0;
}

static int
check_home(struct doctor *d)
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
	if (!user_may(&d->user, &d->home, want))
		found(d, F_WRITABLE, "%s cannot write in the home (%s's, %04o)",
		    d->user.name, d->owner, (unsigned)(d->home.st_mode & 07777));
	if (d->home.st_mode & 022)
		found(d, F_MODES, "the home is %04o: writable by %s",
		    (unsigned)(d->home.st_mode & 07777),
		    (d->home.st_mode & 020) ? "its group" : "others");
	else if (d->home.st_mode & 005)
		found(d, F_MODES, "the home is %04o: readable by others",
		    (unsigned)(d->home.st_mode & 07777));
	say(d, DOCTOR_OK, "home", "'%s', %s's, %04o, %ld entries", home,
	    d->owner, (unsigned)(d->home.st_mode & 07777), d->entries);
	return 0;
}

/* A secret outside the home: readable, and not by others. */
static void
check_secret_file(struct doctor *d, const char *what, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		found(d, F_SECRETS, "%s '%s': %s", what, path, strerror(errno));
	else if (st.st_mode & 007)
		found(d, F_SECRETS, "%s '%s' is %04o: readable by others", what,
		    path, (unsigned)(st.st_mode & 07777));
	else if (!user_may(&d->user, &st, 4))
		found(d, F_SECRETS, "%s cannot read %s '%s'", d->user.name,
		    what, path);
}

static void
check_routes(struct doctor *d)
{
	if (routing_load(d->ctx, d->o->routes_file)) {
		say(d, DOCTOR_FAIL, "routes", "%s", bakery_error());
		return;
	}
	const routes *t = routing_current(d->ctx);
	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].secret_file)
			check_secret_file(d, "the secret file of route",
			    t->r[i].secret_file);
	say(d, DOCTOR_OK, "routes", "'%s': %zu routes", t->file, t->n);
}

static void
check_gateway(struct doctor *d)
{
	gateway_kind g;
	if (gateway_read(d->ctx->home, &g)) {
		say(d, DOCTOR_FAIL, "gateway", "%s", bakery_error());
		return;
	}
	if (g == GATEWAY_NONE) {
		say(d, DOCTOR_FAIL, "gateway", "none chosen: pay refuses every "
		    "order (bakery-order gateway test|stripe)");
		return;
	}
	if (g == GATEWAY_TEST) {
		say(d, DOCTOR_OK, "gateway", "test: the built-in test gateway, "
		    "no money moves");
		return;
	}
	say(d, DOCTOR_OK, "gateway", "stripe");
	stripe_api api;
	const char *file = d->o->stripe_key_file;
	if (stripe_api_open(&api, file)) {
		say(d, DOCTOR_FAIL, "stripe-key", "%s", bakery_error());
		return;
	}
	int have = api.key != NULL;
	stripe_api_free(&api);
	if (!have)
		say(d, DOCTOR_FAIL, "stripe-key", "no key: --stripe-key-file "
		    "FILE or BAKERY_STRIPE_KEY");
	else if (file)
		check_secret_file(d, "the Stripe key file", file);
	if (have)
		say(d, DOCTOR_OK, "stripe-key", "%s", file ? "from the key file"
							   : "from BAKERY_STRIPE_KEY");
}

/* 0 when path passes PRAGMA quick_check; else the reason in bakery_error. */
static int
quick_check(bakery_ctx *ctx, const char *path)
{
	sqlite3 *db;
	int rc = db_open_reader(ctx, path, &db);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL);
	if (src == SQLITE_OK) {
		src = sqlite3_step(st);
		if (src == SQLITE_ROW && strcmp((const char *)
			sqlite3_column_text(st, 0), "ok") != 0)
			rc = bakery_fail(EX_DATAERR, "'%s': %s", path,
			    (const char *)sqlite3_column_text(st, 0));
		else if (src == SQLITE_ROW)
			src = SQLITE_OK;
		sqlite3_finalize(st);
	}
	if (!rc && src != SQLITE_OK) {
		char *what = bakery_xasprintf("'%s'", path);
		rc = db_fail(db, src, what);
		free(what);
	}
	sqlite3_close(db);
	return rc;
}

static void
check_queue(struct doctor *d)
{
	char *file = queue_file(d->ctx);
	if (file && !d->ctx->queue_url && access(file, F_OK) != 0) {
		long events, objects;
		outbox_relayed_in_home(d->ctx, &events, &objects);
		if (events)
			say(d, DOCTOR_FAIL, "queue", "no queue at '%s', yet %ld "
			    "events of %ld objects are marked relayed: the queue "
			    "that took them is gone, with what it had not "
			    "delivered, which no relay sends again (restore it "
			    "from a backup)", file, events, objects);
		else
			say(d, DOCTOR_OK, "queue", "embedded, not made yet: empty");
		free(file);
		return;
	}
	bakery_queue *q;
	jv stats = jv_invalid();
	int rc = file ? quick_check(d->ctx, file) : 0;
	if (!rc)
		rc = queue_get_existing(d->ctx, &q);
	if (!rc)
		rc = queue_stats(q, &stats);
	if (rc)
		say(d, DOCTOR_FAIL, "queue", "%s", bakery_error());
	else if (file)
		say(d, DOCTOR_OK, "queue", "embedded, '%s' passes quick_check",
		    file);
	else
		say(d, DOCTOR_OK, "queue", "NATS at '%s' answers",
		    d->ctx->queue_url);
	jv_free(stats);
	free(file);
}

static int
sqlite_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	struct doctor *d = walking;
	if (flag != FTW_F || !S_ISREG(st->st_mode) ||
	    !bakery_ends_with(path, ".db"))
		return 0;
	char why[PATH_MAX + 256];
	if (quick_check(d->ctx, path))
		found(d, F_SQLITE, "%s", bakery_error());
	else if (wal_check(path, why, sizeof why))
		found(d, F_SQLITE, "%s", why);
	return 0;
}

static void
check_sqlite(struct doctor *d)
{
	walking = d;
	nftw(d->ctx->home, sqlite_one, 16, FTW_PHYS);
	walking = NULL;
	char ok[96];
	snprintf(ok, sizeof ok, "%ld files pass quick_check", d->databases);
	verdict(d, F_SQLITE, "sqlite", ok);
}

/* Every armed alarm findable (alarm.h), as bakery-status reads it. */
static void
check_alarms(struct doctor *d)
{
	jv s;
	if (status_collect(d->ctx, NULL, INT64_MAX / 1000, &s)) {
		say(d, DOCTOR_FAIL, "alarms", "cannot read: %s", bakery_error());
		return;
	}
	long armed = 0, unfound = 0;
	char first[256] = "";
	jv sandboxes = jv_object_get(s, jv_string("sandboxes"));
	jv_array_foreach(sandboxes, i, sb) {
		armed += (long)jv_number_value(jv_object_get(jv_copy(sb),
		    jv_string("alarms_armed")));
		unfound += (long)jv_number_value(jv_object_get(jv_copy(sb),
		    jv_string("alarms_unfound")));
		jv busy = jv_object_get(jv_copy(sb), jv_string("busy"));
		jv_array_foreach(busy, j, b) {
			jv indexed = jv_object_get(jv_copy(b),
			    jv_string("alarm_indexed"));
			if (!*first && jv_get_kind(indexed) == JV_KIND_FALSE)
				snprintf(first, sizeof first, "sandbox %s: %s",
				    envelope_str(sb, "sandbox"),
				    envelope_str(b, "address"));
			jv_free(indexed);
			jv_free(b);
		}
		jv_free(busy);
		jv_free(sb);
	}
	jv_free(sandboxes);
	if (unfound)
		say(d, DOCTOR_FAIL, "alarms", "%ld armed alarm%s with no entry "
		    "in the alarm index: no alarm run fires %s (%s; "
		    "bakery-relay ADDRESS sends its outbox)", unfound,
		    unfound > 1 ? "s" : "", unfound > 1 ? "them" : "it", first);
	else
		say(d, DOCTOR_OK, "alarms", "%ld armed, each in the alarm index",
		    armed);
}

static void
check_clock(struct doctor *d)
{
	int64_t now = bakery_now_ms(), latest = 0;
	char at[32], ts[32];
	bakery_format_time(now, ts, sizeof ts);
	for (size_t i = 0; i < d->n_locks; i++) {
		char *path = home_sandbox_lock_path(d->ctx, d->locks[i]);
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		free(path);
		int64_t floor = home_lock_floor(fd);
		if (fd >= 0)
			close(fd);
		if (floor > latest)
			latest = floor;
		if (floor > now) {
			bakery_format_time(floor, at, sizeof at);
			say(d, DOCTOR_FAIL, "clock-floor", "sandbox %s's floor "
			    "%s is ahead of the clock (%s): the clock went back "
			    "after a wipe, and its events are stamped at the "
			    "floor until the clock passes it", d->locks[i], at, ts);
			return;
		}
	}
	bakery_format_time(latest, at, sizeof at);
	if (latest)
		say(d, DOCTOR_OK, "clock-floor", "the latest floor, %s, is "
		    "behind the clock (%s)", at, ts);
	else
		say(d, DOCTOR_OK, "clock-floor", "no floor yet (the clock: %s)",
		    ts);
	struct timex tx = { 0 };
	int state = adjtimex(&tx);
	if (state == -1)
		say(d, DOCTOR_WARN, "clock-sync", "cannot ask the kernel: %s",
		    strerror(errno));
	else if (state == TIME_ERROR)
		say(d, DOCTOR_WARN, "clock-sync", "the kernel says the clock is "
		    "not synchronised (no NTP client has set it)");
	else
		say(d, DOCTOR_OK, "clock-sync", "synchronised, estimated error "
		    "%ld us", (long)tx.esterror);
}

static void
check_disk(struct doctor *d)
{
	struct statvfs fs;
	if (statvfs(d->ctx->home, &fs) != 0) {
		say(d, DOCTOR_FAIL, "disk", "cannot read the file system: %s",
		    strerror(errno));
		return;
	}
	uint64_t free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
	uint64_t mb = free_bytes >> 20, want = d->o->min_free >> 20;
	if (free_bytes < d->o->min_free)
		say(d, DOCTOR_FAIL, "disk", "%llu MiB free, below --min-free "
		    "%llu MiB", (unsigned long long)mb, (unsigned long long)want);
	else if (fs.f_files && fs.f_favail < 1000)
		say(d, DOCTOR_FAIL, "disk", "%llu inodes free: each object is "
		    "a file", (unsigned long long)fs.f_favail);
	else
		say(d, DOCTOR_OK, "disk", "%llu MiB free (--min-free %llu MiB)",
		    (unsigned long long)mb, (unsigned long long)want);
}

int
doctor_run(bakery_ctx *ctx, const doctor_options *o,
    doctor_report_fn report, void *arg, int *failed)
{
	struct doctor d = { .ctx = ctx, .o = o, .report = report, .arg = arg };
	*failed = 0;
	int rc = check_home(&d);
	if (rc || d.failed) {
		*failed = d.failed;
		return rc;
	}
	verdict(&d, F_OWNER, "owner", "every entry is the home's owner's");
	verdict(&d, F_MODES, "modes", "none writable by group or others, "
	    "none readable by others");
	verdict(&d, F_TYPES, "types", "files and folders only");
	if (d.f[F_MAKING].n || !d.stale.n)
		verdict(&d, F_MAKING, "making", "no file half made");
	else
		say(&d, DOCTOR_WARN, "making", "%s%s", d.stale.first,
		    d.stale.n > 1 ? " (and more)" : "");
	check_gateway(&d);
	check_routes(&d);
	verdict(&d, F_SECRETS, "secrets", "none readable by others");
	char ok[160];
	snprintf(ok, sizeof ok, "%s can write the home and every entry",
	    d.user.name);
	verdict(&d, F_WRITABLE, "writable", ok);
	check_queue(&d);
	check_sqlite(&d);
	check_alarms(&d);
	check_clock(&d);
	check_disk(&d);
	for (size_t i = 0; i < d.n_locks; i++)
		free(d.locks[i]);
	free(d.locks);
	*failed = d.failed;
	return 0;
}
