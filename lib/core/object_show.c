/*
 * object_show.c — an object read back for those who look: its events, its
 * state with its kind's rows put back in, its seen ids, outbox and alarm
 * (object_show), and the objects of a sandbox (object_list). The writing
 * half is object.c's.
 */
#define _GNU_SOURCE
#include "object.h"
#include "../base/json.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
object_events(bakery_object *o, jv *out)
{
	*out = jv_array();
	sqlite3_stmt *st;
	int rc = object_prepare(o, "SELECT envelope FROM events ORDER BY seq", &st);
	if (rc)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW)
		*out = jv_array_append(*out,
		    jv_parse((const char *)sqlite3_column_text(st, 0)));
	object_finish(o, st);
	return 0;
}

static jv
column_jv(sqlite3_stmt *st, int col, char type)
{
	/* The type first: reading a number as text converts it. */
	if (type == 'v' && sqlite3_column_type(st, col) == SQLITE_INTEGER)
		return jv_number((double)sqlite3_column_int64(st, col));
	if (type == 'v' && sqlite3_column_type(st, col) == SQLITE_FLOAT)
		return jv_number(sqlite3_column_double(st, col));
	if (type == 't')
		return db_column_time(st, col);
	const char *text = (const char *)sqlite3_column_text(st, col);
	jv v = type == 'j' ? jv_parse(text) : jv_string(text);
	if (!jv_is_valid(v)) { /* not JSON: a string kept as it came */
		jv_free(v);
		v = jv_string(text);
	}
	return v;
}

/* Sets (*state).FIELD to the rows of r; *state becomes an object. */
static int
add_state_rows(bakery_object *o, const kind_rows *r, jv *state)
{
	sqlite3_stmt *st;
	int rc = object_prepare(o, r->sql, &st);
	if (rc)
		return rc;
	int keyed = r->types[0] == 'k';
	jv all = keyed ? jv_object() : jv_array();
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->types[0] == 'o') { /* the row is the record it holds */
			all = jv_array_append(all, column_jv(st, 0, 'j'));
			continue;
		}
		jv row = jv_object();
		for (int i = keyed; r->types[i]; i++)
			if (sqlite3_column_type(st, i) != SQLITE_NULL)
				row = jv_object_set(row,
				    jv_string(sqlite3_column_name(st, i)),
				    column_jv(st, i, r->types[i]));
		if (keyed)
			all = jv_object_set(all, jv_string((const char *)
			    sqlite3_column_text(st, 0)), row);
		else
			all = jv_array_append(all, row);
	}
	object_finish(o, st);
	if (src != SQLITE_DONE) {
		jv_free(all);
		return db_fail(o->db, src, "cannot read state");
	}
	if (jv_get_kind(*state) != JV_KIND_OBJECT) {
		jv_free(*state);
		*state = jv_object();
	}
	*state = jv_object_set(*state, jv_string(r->field), all);
	return 0;
}

/* Sets (*state).LIST to the records of o's list (kind.h, .arrays), in
 * the order they came. */
static int
add_list(bakery_object *o, const char *list, jv *state)
{
	char *sql = bakery_xasprintf("SELECT json FROM \"%s\" ORDER BY seq",
	    list);
	kind_rows r = { list, "o", sql };
	int rc = add_state_rows(o, &r, state);
	free(sql);
	return rc;
}

int
object_show(bakery_object *o, jv *out)
{
	int rc = object_load(o);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	jv state = jv_copy(o->state);
	const kind_rows *rows = o->desc->rows;
	for (size_t i = 0; i < sizeof o->desc->rows / sizeof *rows &&
	     rows[i].field; i++)
		if ((rc = add_state_rows(o, &rows[i], &state))) {
			jv_free(state);
			return rc;
		}
	for (size_t i = 0; o->desc->arrays && o->desc->arrays[i]; i++)
		if ((rc = add_list(o, o->desc->arrays[i], &state))) {
			jv_free(state);
			return rc;
		}
	jv seen = jv_array();
	if (!(rc = object_prepare(o, "SELECT event_id FROM seen ORDER BY applied_at,"
			      " event_id", &st))) {
		while (sqlite3_step(st) == SQLITE_ROW)
			seen = jv_array_append(seen, jv_string(
			    (const char *)sqlite3_column_text(st, 0)));
		object_finish(o, st);
	}
	jv outbox = jv_array();
	if (!rc && !(rc = object_prepare(o,
			 "SELECT event_id, attempts, created_at, last_error,"
			 " json_extract(envelope, '$.type') FROM outbox"
			 " ORDER BY seq", &st))) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			jv r = jv_object();
			r = jv_object_set(r, jv_string("id"), jv_string(
			    (const char *)sqlite3_column_text(st, 0)));
			r = jv_object_set(r, jv_string("type"), jv_string(
			    (const char *)sqlite3_column_text(st, 4)));
			r = jv_object_set(r, jv_string("attempts"),
			    jv_number(sqlite3_column_int(st, 1)));
			r = jv_object_set(r, jv_string("created_at"),
			    db_column_time(st, 2));
			const char *e = (const char *)sqlite3_column_text(st, 3);
			r = jv_object_set(r, jv_string("last_error"),
			    e ? jv_string(e) : jv_null());
			outbox = jv_array_append(outbox, r);
		}
		object_finish(o, st);
	}
	jv alarm = jv_null();
	if (!rc && !(rc = object_prepare(o,
			 "SELECT fire_at, rearms_today, rearm_day FROM alarm"
			 " WHERE id = 1", &st))) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			jv_free(alarm);
			alarm = jv_object();
			alarm = jv_object_set(alarm, jv_string("fire_at"),
			    db_column_time(st, 0));
			const char *day = (const char *)sqlite3_column_text(st, 2);
			long rearms = object_rearms_today(day,
			    sqlite3_column_int(st, 1), bakery_now_ms());
			alarm = jv_object_set(alarm, jv_string("rearms_today"),
			    jv_number(rearms));
		}
		object_finish(o, st);
	}
	jv o_ = jv_object();
	o_ = jv_object_set(o_, jv_string("address"), jv_string(o->address));
	o_ = jv_object_set(o_, jv_string("sandbox"), jv_string(o->sandbox));
	o_ = jv_object_set(o_, jv_string("state"), state);
	o_ = jv_object_set(o_, jv_string("seen"), seen);
	o_ = jv_object_set(o_, jv_string("outbox"), outbox);
	o_ = jv_object_set(o_, jv_string("alarm"), alarm);
	if (rc) {
		jv_free(o_);
		return rc;
	}
	*out = o_;
	return 0;
}

int
object_list_rows(bakery_object *o, const char *list, const char *after,
    long long limit, jv *out)
{
	*out = jv_array();
	size_t i = 0;
	while (o->desc->arrays && o->desc->arrays[i] &&
	    strcmp(o->desc->arrays[i], list) != 0)
		i++;
	if (!o->desc->arrays || !o->desc->arrays[i]) {
		char lists[256] = "";
		for (size_t j = 0; o->desc->arrays && o->desc->arrays[j]; j++)
			snprintf(lists + strlen(lists), sizeof lists -
			    strlen(lists), "%s%s", j ? ", " : "",
			    o->desc->arrays[j]);
		return bakery_fail(EX_USAGE, "no list '%s' in %s: %s%s", list,
		    o->address, *lists ? "its lists: " : "its kind keeps no "
		    "list", lists);
	}
	/* The records after the one of order after, by the order they
	 * came; none found is EX_NOINPUT, not the whole list again. */
	char *sql = bakery_xasprintf("SELECT json FROM \"%s\" WHERE seq >"
	    " coalesce((SELECT seq FROM \"%s\" WHERE order_id = ?1),"
	    " CASE WHEN ?1 IS NULL THEN 0 END) ORDER BY seq LIMIT ?2",
	    list, list);
	sqlite3_stmt *st;
	int rc = object_prepare(o, sql, &st);
	free(sql);
	if (rc)
		return rc;
	if (after)
		sqlite3_bind_text(st, 1, after, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, limit);
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW)
		*out = jv_array_append(*out, column_jv(st, 0, 'j'));
	object_finish(o, st);
	if (src != SQLITE_DONE)
		return db_fail(o->db, src, "cannot read a list");
	int found = 1;
	if (after && jv_array_length(jv_copy(*out)) == 0 &&
	    (rc = object_list_has(o, list, after, &found)))
		return rc;
	return found ? 0 : bakery_fail(EX_NOINPUT, "no record of order '%s' "
	    "in the list %s of %s", after, list, o->address);
}

int
object_list_has(bakery_object *o, const char *list, const char *order,
    int *has)
{
	char *sql = bakery_xasprintf("SELECT 1 FROM \"%s\" WHERE order_id = ?1",
	    list);
	const char *kept = db_intern(sql);
	free(sql);
	sqlite3_stmt *st;
	int rc = object_prepare(o, kept, &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, order, -1, SQLITE_TRANSIENT);
	int src = sqlite3_step(st);
	*has = src == SQLITE_ROW;
	object_finish(o, st);
	return src == SQLITE_ROW || src == SQLITE_DONE ? 0
	    : db_fail(o->db, src, "cannot read a list");
}

/* A folder of the sandbox that cannot be read, into *unread (NULL: the
 * caller, object_list's, does not want it): the folder, what failed, and
 * the exit code that says it (a permission 77, an I/O error 74, else 66,
 * an input that cannot be read). */
static void
unreadable_folder(jv *unread, const char *dir, int err)
{
	if (!unread)
		return;
	int code = err == EACCES || err == EPERM ? EX_NOPERM
	    : err == EIO ? EX_IOERR : EX_NOINPUT;
	char *error = bakery_xasprintf("cannot read the folder '%s': %s", dir,
	    strerror(err));
	*unread = object_unread_add(*unread, NULL, dir, error, code);
	free(error);
}

jv
object_unread_add(jv unread, const char *address, const char *file,
    const char *error, int code)
{
	jv one = jv_object();
	one = jv_object_set(one, jv_string("address"),
	    address ? jv_string(address) : jv_null());
	one = jv_object_set(one, jv_string("file"), jv_string(file));
	one = jv_object_set(one, jv_string("error"), jv_string(error));
	one = jv_object_set(one, jv_string("code"), jv_number(code));
	return jv_array_append(unread, one);
}

int
object_list(bakery_ctx *ctx, const char *sandbox, jv *out)
{
	return object_list_unread(ctx, sandbox, NULL, out, NULL);
}

int
object_list_unread(bakery_ctx *ctx, const char *sandbox, const char *only,
    jv *out, jv *unread)
{
	*out = jv_array();
	if (unread)
		*unread = jv_array();
	char *dir = home_sandbox_dir(ctx, sandbox);
	DIR *d = opendir(dir);
	if (!d) {
		/* A sandbox nobody used has no objects; one whose folder
		 * cannot be read is no empty one. */
		if (errno != ENOENT)
			unreadable_folder(unread, dir, errno);
		free(dir);
		return 0;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *kind;
	while ((kind = readdir(d))) {
		if (!kind_find(kind->d_name) ||
		    (only && strcmp(kind->d_name, only) != 0))
			continue;
		char *sub = bakery_xasprintf("%s/%s", dir, kind->d_name);
		DIR *k = opendir(sub);
		if (!k && errno != ENOENT) /* ENOENT: wiped meanwhile */
			unreadable_folder(unread, sub, errno);
		struct dirent *f;
		while (k && (f = readdir(k))) {
			size_t len = strlen(f->d_name);
			if (len < 4 || strcmp(f->d_name + len - 3, ".db") != 0)
				continue;
			/* An empty file is no object (a creation under way,
			 * or one a crash of an older bakery left): said, and
			 * not listed. */
			struct stat sb;
			char *file = bakery_xasprintf("%s/%s", sub, f->d_name);
			int empty = stat(file, &sb) == 0 && sb.st_size == 0;
			if (empty)
				bakery_log(LOG_WARN, "not_an_object", "file", file,
				    "reason", "empty file", (char *)NULL);
			free(file);
			if (empty)
				continue;
			names = bakery_xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = bakery_xasprintf("%s/%.*s", kind->d_name,
			    (int)(len - 3), f->d_name);
		}
		if (k)
			closedir(k);
		free(sub);
	}
	closedir(d);
	free(dir);
	if (n) /* qsort must not be given NULL, even for nothing */
		qsort(names, n, sizeof *names, bakery_compare_strings);
	for (size_t i = 0; i < n; i++) {
		*out = jv_array_append(*out, jv_string(names[i]));
		free(names[i]);
	}
	free(names);
	return 0;
}
