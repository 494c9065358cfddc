/*
 * relay.c — send an object's outbox; fire due alarms with the re-arm guard.
 */
#include "relay.h"
#include "../core/alarm.h"
#include "../core/object.h"
#include "../store/home.h"
#include "../core/kind.h"
#include "../core/outbox.h"
#include "../base/util.h"
#include "../store/birth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jv
line_for(bakery_object *o, const char *sandbox, const char *address, int sent)
{
	jv line = jv_object();
	line = jv_object_set(line, jv_string("address"), jv_string(address));
	line = jv_object_set(line, jv_string("sandbox"), jv_string(sandbox));
	line = jv_object_set(line, jv_string("sent"), jv_number(sent));
	line = jv_object_set(line, jv_string("left"),
	    jv_number(o ? outbox_count(o) : 0));
	return line;
}

int
relay_object(bakery_ctx *ctx, const char *sandbox, const char *address,
    relay_report_fn report, void *arg)
{
	bakery_object *o;
	int rc = object_open(ctx, sandbox, address, 0, &o);
	if (rc)
		return rc;
	int sent = 0;
	rc = outbox_send(o, &sent);
	report(arg, line_for(o, o->sandbox, address, sent));
	object_close(o);
	return rc;
}

/* Under the object's write lock: a disarmed alarm's entry can go, since no
 * command can arm it meanwhile. Returns 1 when the alarm was armed. */
static int
drop_entry_if_disarmed(bakery_object *o, const alarm_entry *e,
    object_alarm *a)
{
	if (object_begin(o))
		return -1;
	int armed = !object_alarm_get(o, a) && a->fire_at != 0;
	if (!armed)
		alarm_index_remove(o->ctx, e);
	object_rollback(o);
	return armed;
}

/*
 * The entry of an object that has no file: wiped, or never born (its maker
 * killed before its rename, or its first transaction rolled back). It goes
 * only while no maker can be between writing its entry and renaming its
 * file into place: under the making's lock (birth_hold), with the file
 * still not there. A maker holds that lock from before its entry to its
 * rename, so one that wrote this entry is either done (the file is there:
 * left, *left set, fired as any object at the next look) or still at work
 * (the lock held: left too); one that comes after writes an entry of its
 * own, never relying on one it found (object.c, arm_if_needed). An entry
 * no object can own (EX_USAGE: a bad address) goes at once.
 */
static int
drop_if_unborn(bakery_ctx *ctx, const alarm_entry *e, int usage, int *left)
{
	*left = 0;
	if (usage)
		return alarm_index_remove(ctx, e);
	bakery_crash_point("alarm.before_gone");
	char *path = home_object_path(ctx, e->sandbox, e->address);
	birth_copy *held = NULL;
	int rc = birth_hold(path, &held);
	free(path);
	if (rc == BIRTH_HOLD_MADE || rc == BIRTH_HOLD_MAKING) {
		*left = rc;
		return 0;
	}
	if (!rc) {
		bakery_crash_point("alarm.gone_held");
		rc = alarm_index_remove(ctx, e);
	}
	birth_release(held);
	return rc;
}

static int
fire_one(bakery_ctx *ctx, const alarm_entry *e, int64_t now,
    relay_report_fn report, void *arg)
{
	bakery_object *o;
	int rc = object_open(ctx, e->sandbox, e->address, 0, &o);
	if (rc == EX_NOINPUT || rc == EX_USAGE) {
		int left;
		if ((rc = drop_if_unborn(ctx, e, rc == EX_USAGE, &left)))
			return rc;
		/* Made meanwhile: fired as any object, once its file opens. */
		if (left != BIRTH_HOLD_MADE || (rc = object_open(ctx, e->sandbox,
		    e->address, 0, &o)) == EX_NOINPUT) {
			jv line = line_for(NULL, e->sandbox, e->address, 0);
			report(arg, jv_object_set(line, jv_string("alarm"),
			    jv_string(left ? "making" : "gone")));
			return 0;
		}
	}
	if (rc)
		return rc;
	object_alarm a;
	const char *outcome;
	int sent = 0, armed = drop_entry_if_disarmed(o, e, &a);
	if (armed < 0) {
		rc = EX_TEMPFAIL;
		goto out;
	}
	if (!armed) {
		outcome = "disarmed";
	} else if (!alarm_due(ctx, e, a.fire_at, now)) {
		alarm_index_move(ctx, e, a.fire_at);
		outcome = "not-due";
	} else {
		outbox_send(o, &sent); /* a refusal is logged as relay_error */
		bakery_crash_point("alarm.after_send");
		int rows = outbox_count(o);
		if (rows == 0 && (armed = drop_entry_if_disarmed(o, e, &a)) == 0) {
			outcome = "disarmed";
			goto report;
		}
		bakery_crash_point("alarm.before_rearm");
		if ((rc = object_begin(o)))
			goto out;
		object_alarm_get(o, &a);
		if (alarm_day_over(a.day, now)) {
			a.rearms = 0;
			bakery_format_day(now, a.day, sizeof a.day);
		}
		int guard = a.rearms >= REARM_GUARD;
		if (guard)
			a.fire_at = 0;
		else {
			a.rearms++;
			a.fire_at = now + (int64_t)ctx->alarm_delay_s * 1000;
		}
		if (!(rc = object_alarm_set(o, &a)))
			rc = object_commit(o);
		if (rc)
			goto out;
		/* After the commit: a crash before this leaves a stale entry.
		 * The entry goes only under the object's lock and if still
		 * disarmed: a command that armed it meanwhile may rely on it. */
		if (guard) {
			drop_entry_if_disarmed(o, e, &a);
			char n[24];
			snprintf(n, sizeof n, "%d", rows);
			bakery_log(LOG_WARN, "alarm_guard", "object", e->address,
			    "sandbox", e->sandbox, "rows", n, (char *)NULL);
			outcome = "guard";
		} else {
			alarm_index_move(ctx, e, a.fire_at);
			outcome = "rearmed";
		}
	}
report:;
	jv line = line_for(o, e->sandbox, e->address, sent);
	line = jv_object_set(line, jv_string("alarm"), jv_string(outcome));
	line = jv_object_set(line, jv_string("rearms_today"),
	    jv_number(object_rearms_today(a.day, a.rearms, now)));
	report(arg, line);
out:
	object_close(o);
	return rc;
}

/* Reads the alarm of every object of the home, read-only, and writes
 * back the entry of each armed one (alarm_index_boot). An object being
 * created is skipped: its command writes its own entry. */
static int
restore_index(bakery_ctx *ctx)
{
	int rc = 0;
	jv names = home_sandbox_names(ctx);
	jv_array_foreach(names, i, sb) {
		jv all;
		const char *sandbox = jv_string_value(sb);
		int lrc = object_list(ctx, sandbox, &all);
		rc = rc ? rc : lrc;
		jv_array_foreach(all, j, a) {
			char *path = home_object_path(ctx, sandbox,
			    jv_string_value(a));
			sqlite3 *db;
			sqlite3_stmt *st = NULL;
			if (!db_open_readonly(ctx, path, &object_schema, &db) &&
			    sqlite3_prepare_v2(db, "SELECT fire_at FROM alarm"
				" WHERE id = 1 AND fire_at > 0", -1, &st,
				NULL) == SQLITE_OK &&
			    sqlite3_step(st) == SQLITE_ROW) {
				int arc = alarm_index_restore(ctx, sandbox,
				    jv_string_value(a),
				    sqlite3_column_int64(st, 0));
				rc = rc ? rc : arc;
			}
			sqlite3_finalize(st);
			sqlite3_close(db);
			free(path);
			jv_free(a);
		}
		jv_free(all);
		jv_free(sb);
	}
	jv_free(names);
	return rc ? rc : alarm_index_booted(ctx);
}

/* An entry the run could not fire: left where it was, counted, logged
 * and reported; the run goes on past it. */
static void
unfired(const alarm_entry *e, int rc, relay_report_fn report, void *arg,
    relay_tally *tally)
{
	const char *error = bakery_error();
	bakery_log(LOG_WARN, "alarm_error", "object", e->address, "sandbox",
	    e->sandbox, "error", error, (char *)NULL);
	if (!tally->failed++) {
		tally->status = rc;
		tally->first = *e;
		snprintf(tally->error, sizeof tally->error, "%s", error);
	}
	jv line = jv_object();
	line = jv_object_set(line, jv_string("address"), jv_string(e->address));
	line = jv_object_set(line, jv_string("sandbox"), jv_string(e->sandbox));
	line = jv_object_set(line, jv_string("alarm"), jv_string("failed"));
	line = jv_object_set(line, jv_string("status"), jv_number(rc));
	line = jv_object_set(line, jv_string("error"), jv_string(error));
	report(arg, line);
}

int
relay_due(bakery_ctx *ctx, int64_t now, relay_report_fn report, void *arg,
    relay_tally *tally)
{
	alarm_entry batch[100], last;
	size_t n;
	int rc = 0, lost = 0;
	memset(tally, 0, sizeof *tally);
	if ((rc = alarm_index_boot(ctx, &lost)) ||
	    (lost && (rc = restore_index(ctx))))
		return rc;
	/* Each page starts past the last entry of the one before: an entry
	 * that could not be fired stays where it was, for the next run,
	 * and hides none after it. A fired one leaves the due range. */
	const alarm_entry *after = NULL;
	do {
		if ((rc = alarm_index_due(ctx, now, after, 100, batch, &n)))
			return rc;
		for (size_t i = 0; i < n; i++) {
			tally->objects++;
			int one = fire_one(ctx, &batch[i], now, report, arg);
			if (one)
				unfired(&batch[i], one, report, arg, tally);
		}
		if (n) {
			last = batch[n - 1];
			after = &last;
		}
	} while (n == 100);
	return 0;
}
