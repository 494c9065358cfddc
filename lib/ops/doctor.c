/*
 * doctor.c — check a home as an operator would: the checks in their
 * order, each reporting once. One walk of the home gathers what the file
 * checks need (doctor_files.c); here, the verdicts on its findings and the
 * checks of what the home is set up with and holds: gateway, routes,
 * secrets, queue, sqlite, alarms, clock, disk.
 */
#define _GNU_SOURCE
#include "doctor-internal.h"
#include "../net/gateway.h"
#include "../core/outbox.h"
#include "../queue/queue.h"
#include "../flow/routing.h"
#include "../replica/replica_status.h"
#include "status.h"
#include "../core/envelope.h"
#include "../store/store.h"
#include "../net/stripe_api.h"
#include "../base/util.h"
#include "../store/walcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timex.h>
#include <unistd.h>

/* nftw takes no argument: the walk's state while it runs. */
static struct doctor *walking;

const char *
doctor_status_name(enum doctor_status s)
{
	return s == DOCTOR_OK ? "ok" : s == DOCTOR_WARN ? "warn" : "FAIL";
}

void
doctor_say(struct doctor *d, enum doctor_status s, const char *check,
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

void
doctor_found(struct doctor *d, int which, const char *fmt, ...)
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
		doctor_say(d, DOCTOR_OK, check, "%s", ok);
	else if (f->n == 1)
		doctor_say(d, DOCTOR_FAIL, check, "%s", f->first);
	else
		doctor_say(d, DOCTOR_FAIL, check, "%s (and %ld more)", f->first,
		    f->n - 1);
}


/* A secret outside the home: readable, and not by others. */
static void
check_secret_file(struct doctor *d, const char *what, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		doctor_found(d, F_SECRETS, "%s '%s': %s", what, path,
		    strerror(errno));
	else if (st.st_mode & 007)
		doctor_found(d, F_SECRETS, "%s '%s' is %04o: readable by "
		    "others", what, path, (unsigned)(st.st_mode & 07777));
	else if (!doctor_user_may(&d->user, &st, 4))
		doctor_found(d, F_SECRETS, "%s cannot read %s '%s'",
		    d->user.name, what, path);
}

static void
check_routes(struct doctor *d)
{
	if (routing_load(d->ctx, d->o->routes_file)) {
		doctor_say(d, DOCTOR_FAIL, "routes", "%s", bakery_error());
		return;
	}
	const routes *t = routing_current(d->ctx);
	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].secret_file)
			check_secret_file(d, "the secret file of route",
			    t->r[i].secret_file);
	doctor_say(d, DOCTOR_OK, "routes", "'%s': %zu routes", t->file, t->n);
}

static void
check_gateway(struct doctor *d)
{
	gateway_kind g;
	if (gateway_read(d->ctx->home, &g)) {
		doctor_say(d, DOCTOR_FAIL, "gateway", "%s", bakery_error());
		return;
	}
	if (g == GATEWAY_NONE) {
		doctor_say(d, DOCTOR_FAIL, "gateway", "none chosen: pay "
		    "refuses every order (bakery-order gateway test|stripe)");
		return;
	}
	if (g == GATEWAY_TEST) {
		doctor_say(d, DOCTOR_OK, "gateway", "test: the built-in test "
		    "gateway, no money moves");
		return;
	}
	doctor_say(d, DOCTOR_OK, "gateway", "stripe");
	stripe_api api;
	const char *file = d->o->stripe_key_file;
	if (stripe_api_open(&api, file)) {
		doctor_say(d, DOCTOR_FAIL, "stripe-key", "%s", bakery_error());
		return;
	}
	int have = api.key != NULL;
	stripe_api_free(&api);
	if (!have)
		doctor_say(d, DOCTOR_FAIL, "stripe-key", "no key: "
		    "--stripe-key-file FILE or BAKERY_STRIPE_KEY");
	else if (file)
		check_secret_file(d, "the Stripe key file", file);
	if (have)
		doctor_say(d, DOCTOR_OK, "stripe-key", "%s",
		    file ? "from the key file" : "from BAKERY_STRIPE_KEY");
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
			doctor_say(d, DOCTOR_FAIL, "queue", "no queue at '%s', "
			    "yet %ld events of %ld objects are marked relayed: "
			    "the queue that took them is gone, with what it "
			    "had not delivered, which no relay sends again "
			    "(restore it from a backup)", file, events,
			    objects);
		else
			doctor_say(d, DOCTOR_OK, "queue", "embedded, not made "
			    "yet: empty");
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
		doctor_say(d, DOCTOR_FAIL, "queue", "%s", bakery_error());
	else if (file)
		doctor_say(d, DOCTOR_OK, "queue", "embedded, '%s' passes "
		    "quick_check", file);
	else
		doctor_say(d, DOCTOR_OK, "queue", "NATS at '%s' answers",
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
		doctor_found(d, F_SQLITE, "%s", bakery_error());
	else if (wal_check(path, why, sizeof why))
		doctor_found(d, F_SQLITE, "%s", why);
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
		doctor_say(d, DOCTOR_FAIL, "alarms", "cannot read: %s",
		    bakery_error());
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
		doctor_say(d, DOCTOR_FAIL, "alarms", "%ld armed alarm%s with "
		    "no entry in the alarm index: no alarm run fires %s (%s; "
		    "bakery-relay ADDRESS sends its outbox)", unfound,
		    unfound > 1 ? "s" : "", unfound > 1 ? "them" : "it", first);
	else
		doctor_say(d, DOCTOR_OK, "alarms", "%ld armed, each in the "
		    "alarm index", armed);
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
			doctor_say(d, DOCTOR_FAIL, "clock-floor", "sandbox "
			    "%s's floor %s is ahead of the clock (%s): the "
			    "clock went back after a wipe, and its events are "
			    "stamped at the floor until the clock passes it",
			    d->locks[i], at, ts);
			return;
		}
	}
	bakery_format_time(latest, at, sizeof at);
	if (latest)
		doctor_say(d, DOCTOR_OK, "clock-floor", "the latest floor, %s, "
		    "is behind the clock (%s)", at, ts);
	else
		doctor_say(d, DOCTOR_OK, "clock-floor", "no floor yet (the "
		    "clock: %s)", ts);
	struct timex tx = { 0 };
	int state = adjtimex(&tx);
	if (state == -1)
		doctor_say(d, DOCTOR_WARN, "clock-sync", "cannot ask the "
		    "kernel: %s", strerror(errno));
	else if (state == TIME_ERROR)
		doctor_say(d, DOCTOR_WARN, "clock-sync", "the kernel says the "
		    "clock is not synchronised (no NTP client has set it)");
	else
		doctor_say(d, DOCTOR_OK, "clock-sync", "synchronised, "
		    "estimated error %ld us", (long)tx.esterror);
}

static void
check_disk(struct doctor *d)
{
	struct statvfs fs;
	if (statvfs(d->ctx->home, &fs) != 0) {
		doctor_say(d, DOCTOR_FAIL, "disk", "cannot read the file "
		    "system: %s", strerror(errno));
		return;
	}
	uint64_t free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
	uint64_t mb = free_bytes >> 20, want = d->o->min_free >> 20;
	if (free_bytes < d->o->min_free)
		doctor_say(d, DOCTOR_FAIL, "disk", "%llu MiB free, below "
		    "--min-free %llu MiB", (unsigned long long)mb,
		    (unsigned long long)want);
	else if (fs.f_files && fs.f_favail < 1000)
		doctor_say(d, DOCTOR_FAIL, "disk", "%llu inodes free: each "
		    "object is a file", (unsigned long long)fs.f_favail);
	else
		doctor_say(d, DOCTOR_OK, "disk", "%llu MiB free (--min-free "
		    "%llu MiB)", (unsigned long long)mb,
		    (unsigned long long)want);
}

/* A replicated home (replica_status.h): the lease held where it should
 * be, and no standby further behind than --max-lag. */
static void
check_replica(struct doctor *d)
{
	jv attention = jv_array();
	jv r = replica_status(d->ctx, d->o->max_lag_s, &attention);
	int n = jv_array_length(jv_copy(attention));
	if (jv_get_kind(r) == JV_KIND_NULL && n == 0) {
		jv_free(r);
		jv_free(attention);
		return; /* not replicated: no line */
	}
	if (n > 0) {
		jv first = jv_array_get(jv_copy(attention), 0);
		doctor_say(d, DOCTOR_FAIL, "replica", "%s%s",
		    jv_string_value(first), n > 1 ? " (and more)" : "");
		jv_free(first);
	} else {
		jv role = jv_object_get(jv_copy(r), jv_string("role"));
		jv standbys = jv_object_get(jv_copy(r), jv_string("standbys"));
		doctor_say(d, DOCTOR_OK, "replica", "%s, the lease held by its "
		    "primary, %d standby(s) within %lld s",
		    jv_string_value(role), jv_array_length(jv_copy(standbys)),
		    (long long)d->o->max_lag_s);
		jv_free(role);
		jv_free(standbys);
	}
	jv_free(r);
	jv_free(attention);
}

int
doctor_run(bakery_ctx *ctx, const doctor_options *o,
    doctor_report_fn report, void *arg, int *failed)
{
	struct doctor d = { .ctx = ctx, .o = o, .report = report, .arg = arg };
	*failed = 0;
	int rc = doctor_check_home(&d);
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
		doctor_say(&d, DOCTOR_WARN, "making", "%s%s", d.stale.first,
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
	check_replica(&d);
	for (size_t i = 0; i < d.n_locks; i++)
		free(d.locks[i]);
	free(d.locks);
	*failed = d.failed;
	return 0;
}
