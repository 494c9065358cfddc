/*
 * standby.c — a record of the primary's commits checked as hostile, and
 * a sandbox's removal applied (standby.h); standby_batch.c applies the
 * rest, standby_pull.c has the consumer.
 */
#define _GNU_SOURCE
#include "standby-internal.h"
#include "../core/kind.h"
#include "../store/file.h"
#include "../base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest path a record may name: sandboxes/NAME/KIND/KEY.db. */
#define RELPATH_MAX (10 + 3 * (BAKERY_NAME_MAX + 1) + 3)

/* A record refused: said in bakery_error(), and 0 to go on. */
__attribute__((format(printf, 2, 3))) static int
refuse(enum standby_outcome *outcome, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	bakery_fail(EX_DATAERR, "%s", why);
	*outcome = STANDBY_REFUSED;
	return 0;
}

/* rel, checked as hostile, as the file bakery would make for it: 1, or 0
 * when it is none of the files a record may name. */
static int
target_of(bakery_ctx *ctx, const standby_file *files, const char *rel,
    struct target *t)
{
	*t = (struct target){ 0 };
	if (strlen(rel) > RELPATH_MAX)
		return 0;
	for (const standby_file *f = files; f->name; f++)
		if (strcmp(rel, f->name) == 0) {
			t->path = bakery_xasprintf("%s/%s", ctx->home, f->name);
			t->schema = f->schema;
			return 1;
		}
	if (strncmp(rel, "sandboxes/", 10) != 0)
		return 0;
	char copy[RELPATH_MAX + 1], *part[4];
	int n = 0;
	snprintf(copy, sizeof copy, "%s", rel + 10);
	for (char *save = NULL, *p = strtok_r(copy, "/", &save); p;
	    p = strtok_r(NULL, "/", &save)) {
		if (n == 3)
			return 0;
		part[n++] = p;
	}
	/* strtok_r would take "a//b" or a trailing '/' as two parts. */
	if (n < 2 || strstr(rel, "//") || rel[strlen(rel) - 1] == '/' ||
	    !bakery_name_valid(part[0]))
		return 0;
	snprintf(t->sandbox, sizeof t->sandbox, "%s", part[0]);
	if (n == 2) {
		if (strcmp(part[1], "sandbox.db") != 0)
			return 0;
		t->path = home_sandbox_file(ctx, t->sandbox);
		t->schema = &home_sandbox_schema;
		return 1;
	}
	size_t len = strlen(part[2]);
	if (len <= 3 || strcmp(part[2] + len - 3, ".db") != 0)
		return 0;
	part[2][len - 3] = '\0';
	const object_kind *k = kind_find(part[1]);
	if (!k || !bakery_name_valid(part[2]))
		return 0;
	char address[BAKERY_ADDRESS_SIZE];
	snprintf(address, sizeof address, "%s/%s", part[1], part[2]);
	t->path = home_object_path(ctx, t->sandbox, address);
	t->schema = kind_schema(k);
	t->object = 1;
	return 1;
}

/* The changeset read through to its end: the count of its changes, or
 * -1 when it does not parse or names a table no record may change. */
static long
changes_in(const standby_record *r, const char **why)
{
	static char empty[1];
	sqlite3_changeset_iter *it = NULL;
	long n = 0;
	int rc = sqlite3changeset_start(&it, r->size,
	    r->size ? (void *)r->changeset : empty);
	*why = "not a changeset";
	while (rc == SQLITE_OK && (rc = sqlite3changeset_next(it)) ==
	    SQLITE_ROW) {
		const char *table;
		int columns, op, indirect;
		rc = sqlite3changeset_op(it, &table, &columns, &op, &indirect);
		if (rc == SQLITE_OK && (strncmp(table, "sqlite_", 7) == 0 ||
		    strncmp(table, "bakery_replica", 14) == 0)) {
			*why = "a changeset of a table of SQLite's or of "
			    "bakery_replica";
			rc = SQLITE_ERROR;
		}
		n++;
	}
	int fin = sqlite3changeset_finalize(it);
	return rc == SQLITE_DONE && fin == SQLITE_OK ? n : -1;
}

/* The record's subject, bakery.replica.EPOCH.TOK: its EPOCH, and TOK
 * checked to name its file (replica_subject's). 0 when it is not so. */
static int
epoch_of(const standby_record *r, char epoch[REPLICA_ID_SIZE])
{
	size_t pl = strlen(REPLICA_PREFIX);
	const char *s = r->subject;
	if (strncmp(s, REPLICA_PREFIX ".", pl + 1) != 0 ||
	    strlen(s) < pl + REPLICA_ID_SIZE + 1 ||
	    s[pl + REPLICA_ID_SIZE] != '.')
		return 0;
	memcpy(epoch, s + pl + 1, REPLICA_ID_SIZE - 1);
	epoch[REPLICA_ID_SIZE - 1] = '\0';
	char want[RELPATH_MAX + 64];
	return replica_id_valid(epoch) &&
	    replica_subject(epoch, r->file, want, sizeof want) == 0 &&
	    strcmp(want, s) == 0;
}

/* A sandbox wiped on the primary: its folder moved aside, as the wipe
 * moves it, then removed; its files' records start again from 1. */
static int
remove_sandbox(bakery_ctx *ctx, const char *sandbox,
    enum standby_outcome *outcome)
{
	int lock, rc = home_lock_sandbox(ctx, sandbox, 1, 1, &lock);
	if (rc)
		return rc;
	char *live = home_sandbox_dir(ctx, sandbox);
	char *aside = bakery_xasprintf("%s/.wipe-standby-%s", ctx->home,
	    sandbox);
	/* What a removal killed midway left aside goes first. */
	rc = home_remove_tree(aside);
	if (!rc && rename(live, aside) != 0 && errno != ENOENT)
		rc = bakery_fail(db_errno_code(errno), "cannot move '%s' aside: "
		    "%s", live, strerror(errno));
	home_unlock_sandbox(lock);
	if (!rc) {
		file_sync_dir(ctx->sandboxes);
		rc = home_remove_tree(aside);
	}
	free(live);
	free(aside);
	if (!rc)
		*outcome = STANDBY_APPLIED;
	return rc;
}

/* A record of Bakery-Op remove: sandboxes/S, and nothing in its body.
 * Checked, then applied on its own (standby-internal.h). */
int
standby_removal(bakery_ctx *ctx, const standby_record *r,
    enum standby_outcome *outcome)
{
	const char *sandbox = r->file ? r->file + 10 : NULL;
	char epoch[REPLICA_ID_SIZE];
	if (!r->subject || !r->file || !r->host || !replica_id_valid(r->host))
		return refuse(outcome, "a record without Bakery-File, or "
		    "without a Bakery-Host that is a host's id");
	if (strcmp(r->op, "remove") != 0)
		return refuse(outcome, "a record of '%.*s' with an unknown "
		    "Bakery-Op", (int)RELPATH_MAX, r->file);
	if (strncmp(r->file, "sandboxes/", 10) != 0 ||
	    !bakery_name_valid(sandbox))
		return refuse(outcome, "a removal of '%.*s', which is no "
		    "sandbox", (int)RELPATH_MAX, r->file);
	if (!epoch_of(r, epoch) || r->size != 0)
		return refuse(outcome, "a removal of '%s' on another subject "
		    "than its own, or with a body", r->file);
	return remove_sandbox(ctx, sandbox, outcome);
}

/* Step 1 of standby.h: the record checked as hostile. */
int
standby_check(bakery_ctx *ctx, const standby_file *files,
    const standby_record *r, struct checked *c,
    enum standby_outcome *outcome)
{
	*outcome = STANDBY_APPLIED; /* so far: refuse() says otherwise */
	long long version;
	const char *why;
	*c = (struct checked){ 0 };
	if (!r->subject || !r->file || !r->host || !replica_id_valid(r->host))
		return refuse(outcome, "a record without Bakery-File, or "
		    "without a Bakery-Host that is a host's id");
	if (!target_of(ctx, files, r->file, &c->t))
		return refuse(outcome, "a record of '%.*s', which is no file "
		    "a record may name", (int)RELPATH_MAX, r->file);
	int rc = 0;
	if (!epoch_of(r, c->epoch))
		rc = refuse(outcome, "a record of '%s' on another subject than "
		    "its file's", r->file);
	else if (!r->seq || !r->version ||
	    bakery_parse_number(r->seq, 1, LLONG_MAX, &c->seq) ||
	    bakery_parse_number(r->version, 1, INT_MAX, &version))
		rc = refuse(outcome, "a record of '%s' without a Bakery-Seq "
		    "and a Bakery-Version that are numbers from 1", r->file);
	else if ((c->changes = changes_in(r, &why)) < 0)
		rc = refuse(outcome, "a record of '%s': %s", r->file, why);
	else if (version > c->t.schema->count)
		rc = bakery_fail(EX_CONFIG, "'%s': record %lld was written by "
		    "a newer bakery (schema %lld, this one's %d): upgrade this "
		    "host first", c->t.path, c->seq, version,
		    c->t.schema->count);
	if (rc || *outcome == STANDBY_REFUSED) {
		free(c->t.path);
		c->t.path = NULL;
		return rc;
	}
	return 0;
}
