/*
 * object.c — one object's file: state, events, outbox, seen, alarm.
 */
#define _GNU_SOURCE
#include "object.h"
#include "alarm.h"
#include "envelope.h"
#include "../base/json.h"
#include "../store/keep.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The object's file that is there, with its kind's schema:
 * SANDBOX/KIND/KEY.db (path). */
static int
open_existing(bakery_object *o, const char *path)
{
	int rc = db_open(o->ctx, path, kind_schema(o->desc), &o->db);
	if (rc == EX_NOINPUT && access(path, F_OK) != 0)
		rc = bakery_fail(EX_NOINPUT, "no such object: '%s'", o->address);
	return rc;
}

/* The object's file, made when create and it is not there (birth.h). A
 * connection a long-running program kept (keep.h) is taken again when
 * the file at the path is still the one it has open: checked under the
 * sandbox's lock, so no wipe moves the folder aside until object_close. */
static int
open_file(bakery_ctx *ctx, bakery_object *o, int create)
{
	char *path = home_object_path(ctx, o->sandbox, o->address);
	int rc = 0;
	birth_group_wants(ctx, path); /* made in this group: named first */
	if (!ctx->kept || !keep_take(ctx->kept, path, &o->db, &o->stmts))
		rc = create ? birth_object_open(ctx, path,
		    kind_schema(o->desc), &o->birth, &o->db, &o->stmts)
			    : open_existing(o, path);
	free(path);
	return rc;
}

int
object_open(bakery_ctx *ctx, const char *sandbox, const char *address,
    int create, bakery_object **out)
{
	*out = NULL;
	bakery_object *o = bakery_xmalloc(sizeof *o);
	memset(o, 0, sizeof *o);
	o->ctx = ctx;
	o->state = jv_null();
	o->lock_fd = -1;
	if (!sandbox)
		sandbox = ctx->sandbox;
	int rc = kind_parse_address(address, o->kind, o->key, &o->desc);
	if (!rc && !bakery_name_valid(sandbox))
		rc = bakery_fail(EX_USAGE, "bad sandbox name: '%s'", sandbox);
	if (!rc) {
		snprintf(o->sandbox, sizeof o->sandbox, "%s", sandbox);
		snprintf(o->address, sizeof o->address, "%s", address);
		rc = home_lock_sandbox(ctx, sandbox, 0, create, &o->lock_fd);
		o->floor_ms = home_lock_floor(o->lock_fd);
	}
	if (!rc)
		rc = open_file(ctx, o, create);
	if (rc) {
		object_close(o);
		return rc;
	}
	*out = o;
	return 0;
}

void
object_close(bakery_object *o)
{
	if (!o)
		return;
	if (o->db && o->ctx->kept && !birth_unborn(&o->birth)) {
		/* Kept for the next open, outside any transaction; the
		 * sandbox's lock is given back below all the same, so an
		 * idle consumer never holds up a wipe. */
		db_rollback(o->db);
		char *path = home_object_path(o->ctx, o->sandbox, o->address);
		if (sqlite3_get_autocommit(o->db)) {
			keep_put(o->ctx->kept, path, o->db, &o->stmts);
			o->db = NULL;
		}
		free(path);
	}
	if (o->db || o->birth.state == BIRTH_PENDING) {
		char *path = home_object_path(o->ctx, o->sandbox, o->address);
		birth_close(&o->birth, &o->db, &o->stmts, path);
		free(path);
	}
	home_unlock_sandbox(o->lock_fd);
	jv_free(o->state);
	free(o);
}

/* SQLite's rc on o as bakery's: "cannot VERB 'ADDRESS': ..." */
static int
failed(bakery_object *o, int rc, const char *verb)
{
	char *what = bakery_xasprintf("cannot %s '%s'", verb, o->address);
	rc = db_fail(o->db, rc, what);
	free(what);
	return rc;
}

int
object_prepare(bakery_object *o, const char *sql, sqlite3_stmt **st)
{
	int rc = object_connect(o);
	if (rc) {
		*st = NULL;
		return rc;
	}
	rc = db_prepare(o->db, &o->stmts, sql, st);
	return rc == SQLITE_OK ? 0 : failed(o, rc, "use");
}

void
object_finish(bakery_object *o, sqlite3_stmt *st)
{
	db_release(&o->stmts, st);
}

static int
step_done(bakery_object *o, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	object_finish(o, st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : failed(o, rc, "write");
}

/* st's state column (jv_null without a row) into *state, or a failure
 * (address's "corrupt state", or db's error). st is left reset. */
static int
state_of(sqlite3 *db, sqlite3_stmt *st, const char *address, jv *state)
{
	*state = jv_null();
	int src = sqlite3_step(st), rc = 0;
	if (src == SQLITE_ROW) {
		*state = jv_parse((const char *)sqlite3_column_text(st, 0));
		if (!jv_is_valid(*state)) {
			jv_free(*state);
			*state = jv_null();
			rc = bakery_fail(EX_SOFTWARE, "corrupt state in '%s'",
			    address);
		}
	} else if (src != SQLITE_DONE) {
		rc = db_fail(db, src, "cannot read state");
	}
	sqlite3_reset(st);
	return rc;
}

static const char state_sql[] = "SELECT json FROM state WHERE id = 1";

int
object_load(bakery_object *o)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o, state_sql, &st);
	if (rc)
		return rc;
	jv_free(o->state);
	rc = state_of(o->db, st, o->address, &o->state);
	object_finish(o, st);
	return rc;
}

int
object_peek(bakery_ctx *ctx, const char *sandbox, const char *address,
    jv *state)
{
	*state = jv_null();
	char kind[BAKERY_NAME_SIZE], key[BAKERY_NAME_SIZE];
	const object_kind *desc;
	int rc = kind_parse_address(address, kind, key, &desc);
	if (!rc && !bakery_name_valid(sandbox))
		rc = bakery_fail(EX_USAGE, "bad sandbox name: '%s'", sandbox);
	if (rc)
		return rc;
	char *path = home_object_path(ctx, sandbox, address);
	sqlite3 *db;
	rc = db_open_readonly(ctx, path, kind_schema(desc), &db);
	free(path);
	if (rc)
		return rc == EX_NOINPUT ? 0 : rc; /* no file, or no schema */
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, state_sql, -1, &st, NULL);
	rc = src == SQLITE_OK ? state_of(db, st, address, state)
			      : db_fail(db, src, "cannot read state");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

int
object_begin(bakery_object *o)
{
	/* A new file's schema transaction is this one already. */
	int begun = birth_begun(&o->birth, o->db);
	int rc = begun ? 0 : object_connect(o);
	if (!rc && !begun)
		rc = db_begin(o->db);
	if (rc)
		return rc;
	o->dirty = 0;
	o->recorded = 0;
	if ((rc = object_load(o)))
		db_rollback(o->db);
	return rc;
}

void
object_rollback(bakery_object *o)
{
	/* The change goes; a new file's schema stays, as it would have had
	 * it been committed on its own. */
	birth_rolled_back(&o->birth, o->db, o->address);
	if (o->db)
		db_rollback(o->db);
	o->dirty = 0;
	o->recorded = 0;
}

/* The transaction is gone when SQLite rolled it back by itself. */
static int
still_begun(bakery_object *o)
{
	if (!sqlite3_get_autocommit(o->db))
		return 0;
	return bakery_fail(EX_TEMPFAIL,
	    "the transaction on '%s' was rolled back", o->address);
}

int
object_savepoint(bakery_object *o, object_saved *sp)
{
	sp->state = jv_copy(o->state);
	sp->dirty = o->dirty;
	sp->recorded = o->recorded;
	int rc = still_begun(o);
	if (!rc)
		rc = db_exec(o->db, "SAVEPOINT apply");
	if (rc) {
		jv_free(sp->state);
		sp->state = jv_invalid();
	}
	return rc;
}

int
object_release(bakery_object *o, object_saved *sp)
{
	jv_free(sp->state);
	sp->state = jv_invalid();
	int rc = still_begun(o);
	return rc ? rc : db_exec(o->db, "RELEASE apply");
}

int
object_rollback_to(bakery_object *o, object_saved *sp)
{
	jv_free(o->state);
	o->state = sp->state;
	o->dirty = sp->dirty;
	o->recorded = sp->recorded;
	sp->state = jv_invalid();
	int rc = still_begun(o);
	return rc ? rc : db_exec(o->db, "ROLLBACK TO apply; RELEASE apply");
}

void
object_set_state(bakery_object *o, jv state)
{
	/* A state set to what it holds changes nothing to write: commit
	 * dumps and stores it only when it changed (an event applied again
	 * to a list that has it, a kind that keeps rows and leaves it {}). */
	if (!jv_equal(jv_copy(o->state), jv_copy(state)))
		o->dirty = 1;
	jv_free(o->state);
	o->state = state;
}

int
object_exec(bakery_object *o, const char *sql, jv args, int *changes)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o, sql, &st);
	if (rc) {
		jv_free(args);
		return rc;
	}
	jv_array_foreach(args, i, v) {
		int at = i + 1;
		double d;
		switch (jv_get_kind(v)) {
		case JV_KIND_STRING:
			sqlite3_bind_text(st, at, jv_string_value(v), -1,
			    SQLITE_TRANSIENT);
			break;
		case JV_KIND_NUMBER:
			d = jv_number_value(v);
			if (d > -9e18 && d < 9e18 &&
			    d == (double)(sqlite3_int64)d)
				sqlite3_bind_int64(st, at, (sqlite3_int64)d);
			else
				sqlite3_bind_double(st, at, d);
			break;
		case JV_KIND_ARRAY:
		case JV_KIND_OBJECT: {
			size_t len;
			char *text = json_dump(jv_copy(v), &len);
			sqlite3_bind_text64(st, at, text, len, free, SQLITE_UTF8);
			break;
		}
		default:
			break; /* null, invalid: NULL */
		}
		jv_free(v);
	}
	jv_free(args);
	rc = step_done(o, st);
	if (changes)
		*changes = rc ? 0 : sqlite3_changes(o->db);
	return rc;
}

int
object_seen(bakery_object *o, const char *event_id)
{
	sqlite3_stmt *st;
	if (object_prepare(o, "SELECT 1 FROM seen WHERE event_id = ?", &st))
		return 0;
	sqlite3_bind_text(st, 1, event_id, -1, SQLITE_STATIC);
	int seen = sqlite3_step(st) == SQLITE_ROW;
	object_finish(o, st);
	return seen;
}

int
object_mark_seen(bakery_object *o, const char *event_id, const char *type)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o,
	    "INSERT INTO seen(event_id, type, applied_at) VALUES (?, ?, ?)",
	    &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, type, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, bakery_now_ms());
	return step_done(o, st);
}

int
object_command_result(bakery_object *o, const char *key, jv *result)
{
	sqlite3_stmt *st;
	*result = jv_null();
	if (object_prepare(o, "SELECT result FROM commands_seen WHERE key = ?", &st))
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int found = sqlite3_step(st) == SQLITE_ROW;
	if (found) {
		jv_free(*result);
		*result = jv_parse((const char *)sqlite3_column_text(st, 0));
	}
	object_finish(o, st);
	return found;
}

int
object_remember_command(bakery_object *o, const char *key, jv result)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o,
	    "INSERT INTO commands_seen(key, result, at) VALUES (?, ?, ?)", &st);
	if (rc) {
		jv_free(result);
		return rc;
	}
	size_t len;
	char *s = json_dump(result, &len);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text64(st, 2, s, len, free, SQLITE_UTF8);
	sqlite3_bind_int64(st, 3, bakery_now_ms());
	return step_done(o, st);
}

int
object_record(bakery_object *o, const char *type, jv data, jv *out)
{
	/* Never before the sandbox's last fence, whatever the wall clock
	 * says: the event would be dropped as one from before the wipe. */
	if (!kind_records(o->desc, type)) {
		jv_free(data);
		return bakery_fail(EX_SOFTWARE, "%s records no %s: its "
		    "descriptor's .records does not name it", o->kind, type);
	}
	int64_t now = bakery_now_ms();
	if (now < o->floor_ms)
		now = o->floor_ms;
	jv env = envelope_new_at(o->sandbox, o->address, type, data,
	    now);
	char *line = envelope_dump(env);
	const char *id = envelope_str(env, "id");
	sqlite3_stmt *st;
	int rc = object_prepare(o,
	    "INSERT INTO events(id, type, envelope, recorded_at)"
	    " VALUES (?1, ?2, ?3, ?4)", &st); /* and so in the outbox */
	if (!rc) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, type, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, line, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, now);
		rc = step_done(o, st);
	}
	free(line);
	if (!rc)
		o->recorded++;
	if (out && !rc)
		*out = env;
	else
		jv_free(env);
	return rc;
}

/* Arms the alarm when the outbox holds rows. A command's arming is never
 * counted against the guard (alarm.c counts the alarm's own re-arms).
 *
 * The rule that keeps alarms findable: an armed alarm always has an index
 * entry firing no later than it. So an alarm that was disarmed gets its
 * entry written here, inside this transaction and before the commit,
 * unless the entry its last arming left fires no later (read under this
 * transaction's write lock, which an alarm run must hold to remove it);
 * one already armed keeps the earlier of its time and the new one, and
 * its entry stands. A file being made has no write lock an alarm run can
 * take: an entry found for it is one an alarm run may be removing as an
 * object's with no file (relay.c, drop_if_unborn), so it always writes
 * its own, a new generation that a run which read the old one leaves. */
static int
arm_if_needed(bakery_object *o)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o,
	    "SELECT EXISTS (SELECT 1 FROM events WHERE relayed_at IS NULL),"
	    " (SELECT fire_at FROM alarm WHERE id = 1)", &st);
	if (rc)
		return rc;
	int rows = 0, armed = 0;
	int64_t fire_at = bakery_now_ms() + (int64_t)o->ctx->alarm_delay_s * 1000;
	if (sqlite3_step(st) == SQLITE_ROW) {
		rows = sqlite3_column_int(st, 0);
		armed = sqlite3_column_type(st, 1) != SQLITE_NULL;
		if (armed && sqlite3_column_int64(st, 1) < fire_at)
			fire_at = sqlite3_column_int64(st, 1);
	}
	object_finish(o, st);
	if (rows == 0)
		return 0;
	if (!armed && (birth_unborn(&o->birth) || !alarm_index_covers(o->ctx, o->sandbox,
			  o->address, fire_at)) &&
	    (rc = alarm_index_add(o->ctx, o->sandbox, o->address, fire_at)))
		return rc;
	if ((rc = object_prepare(o,
		 "INSERT INTO alarm(id, fire_at) VALUES (1, ?1)"
		 " ON CONFLICT (id) DO UPDATE SET fire_at = ?1", &st)))
		return rc;
	sqlite3_bind_int64(st, 1, fire_at);
	return step_done(o, st);
}

int
object_alarm_get(bakery_object *o, object_alarm *a)
{
	memset(a, 0, sizeof *a);
	sqlite3_stmt *st;
	int rc = object_prepare(o, "SELECT fire_at, rearms_today, rearm_day FROM alarm"
			    " WHERE id = 1", &st);
	if (rc)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW) {
		a->fire_at = sqlite3_column_int64(st, 0);
		a->rearms = sqlite3_column_int(st, 1);
		const char *day = (const char *)sqlite3_column_text(st, 2);
		snprintf(a->day, sizeof a->day, "%s", day ? day : "");
	}
	object_finish(o, st);
	return 0;
}

long
object_rearms_today(const char *day, long rearms, int64_t now_ms)
{
	/* A day after today is one a clock step back left: its count
	 * stands until the clock reaches past it (alarm_day_over). */
	return day && !alarm_day_over(day, now_ms) ? rearms : 0;
}

int
object_alarm_set(bakery_object *o, const object_alarm *a)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o,
	    "INSERT INTO alarm(id, fire_at, rearms_today, rearm_day)"
	    " VALUES (1, ?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET"
	    " fire_at = ?1, rearms_today = ?2, rearm_day = ?3", &st);
	if (rc)
		return rc;
	if (a->fire_at)
		sqlite3_bind_int64(st, 1, a->fire_at);
	sqlite3_bind_int(st, 2, a->rearms);
	sqlite3_bind_text(st, 3, a->day, -1, SQLITE_STATIC);
	return step_done(o, st);
}

int
object_arm(bakery_object *o)
{
	int rc = object_connect(o);
	if (rc)
		return rc;
	rc = db_begin(o->db);
	if (!rc)
		rc = arm_if_needed(o);
	if (!rc)
		rc = db_commit(o->db);
	db_rollback(o->db);
	return rc;
}

/* After its first commit gave it its name, the object goes on with the
 * file there, opened when next used: a subscriber's new file is most
 * often used no more. */
int
object_connect(bakery_object *o)
{
	int rc = birth_settled(&o->birth); /* named with its group first */
	if (rc || o->db || o->birth.state != BIRTH_MADE)
		return rc;
	char *path = home_object_path(o->ctx, o->sandbox, o->address);
	rc = open_existing(o, path);
	free(path);
	if (!rc)
		o->birth.state = BIRTH_NONE;
	return rc;
}

int
object_settled(bakery_object *o)
{
	return birth_settled(&o->birth);
}

int
object_commit(bakery_object *o)
{
	int rc = 0;
	if (o->dirty) {
		sqlite3_stmt *st;
		if (!(rc = object_prepare(o,
			  "INSERT INTO state(id, address, json) VALUES (1, ?1, ?2)"
			  " ON CONFLICT (id) DO UPDATE SET json = ?2", &st))) {
			size_t len;
			char *s = json_dump(jv_copy(o->state), &len);
			sqlite3_bind_text(st, 1, o->address, -1, SQLITE_STATIC);
			sqlite3_bind_text64(st, 2, s, len, free, SQLITE_UTF8);
			rc = step_done(o, st);
		}
	}
	if (!rc && o->recorded)
		rc = arm_if_needed(o);
	/* A file that is there: the group's births are durable first. */
	if (!rc && !o->birth.copy)
		rc = birth_group_before_commit(o->ctx);
	if (!rc)
		rc = db_commit(o->db);
	if (!rc)
		rc = birth_committed(&o->birth, &o->db, &o->stmts);
	if (rc)
		object_rollback(o);
	o->dirty = 0;
	return rc;
}
