/*
 * refunds.c — flagged payments remembered until refunded (refunds.h).
 */
#include "refunds.h"
#include "billing.h"
#include "../core/envelope.h"
#include "../core/object.h"
#include "../store/store.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const refunds_migrations[] = {
	"CREATE TABLE refunds(payment_intent TEXT PRIMARY KEY,"
	"  sandbox TEXT NOT NULL, order_id TEXT NOT NULL, flag TEXT NOT NULL,"
	"  reason TEXT NOT NULL, amount_cents INTEGER, currency TEXT,"
	"  wiped_at INTEGER, refunded_at INTEGER);",
};
const schema_def refunds_schema = SCHEMA_REPLAYED("refunds", refunds_migrations, 1);

#define COLUMNS "payment_intent, sandbox, order_id, flag, reason," \
	" amount_cents, currency, wiped_at, refunded_at"

static char *
refunds_path(bakery_ctx *ctx)
{
	return bakery_xasprintf("%s/refunds.db", ctx->home);
}

/* A row of COLUMNS as refunds_mark's out. */
static jv
row_jv(sqlite3_stmt *st)
{
	static const char *const names[] = { "payment_intent", "sandbox",
		"order", "flag", "reason", "amount_cents", "currency" };
	jv r = jv_object();
	for (int i = 0; i < 7; i++)
		r = jv_object_set(r, jv_string(names[i]),
		    sqlite3_column_type(st, i) == SQLITE_NULL ? jv_null()
		    : i == 5 ? jv_number((double)sqlite3_column_int64(st, i))
		    : jv_string((const char *)sqlite3_column_text(st, i)));
	r = jv_object_set(r, jv_string("wiped_at"),
	    bakery_time_jv(sqlite3_column_int64(st, 7)));
	return jv_object_set(r, jv_string("refunded_at"),
	    bakery_time_jv(sqlite3_column_int64(st, 8)));
}

/* Binds a flagged payment p of sandbox to ?1..?7. */
static void
bind_payment(sqlite3_stmt *st, const char *sandbox, jv p)
{
	static const char *const fields[] = { "payment_intent", NULL, "order",
		"flag", "reason" };
	for (int i = 0; i < 5; i++)
		sqlite3_bind_text(st, i + 1, i == 1 ? sandbox
		    : envelope_str(p, fields[i]), -1, SQLITE_TRANSIENT);
	if (envelope_number(p, "amount_cents", -1) >= 0)
		sqlite3_bind_int64(st, 6,
		    (int64_t)envelope_number(p, "amount_cents", 0));
	sqlite3_bind_text(st, 7, envelope_str(p, "currency"), -1,
	    SQLITE_TRANSIENT);
}

/* The payments of billing/ORDER of sandbox, opened read-write so that a
 * hot journal left by a killed writer is rolled back, never locked: the
 * wipe calls this holding the sandbox's lock. */
static int
billing_of(bakery_ctx *ctx, const char *sandbox, const char *address,
    jv *payments)
{
	*payments = jv_array();
	char *path = home_object_path(ctx, sandbox, address);
	sqlite3 *db;
	int rc = db_open(ctx, path, kind_schema(kind_find("billing")),
	    &db);
	free(path);
	if (!rc) {
		jv_free(*payments);
		rc = billing_payments(db, address, payments);
	}
	sqlite3_close(db);
	return rc;
}

/* The sandbox's flagged payments, each {payment_intent, ...} as
 * billing_payments gives them. */
static int
flagged_of(bakery_ctx *ctx, const char *sandbox, jv *out)
{
	*out = jv_array();
	jv all;
	int rc = object_list(ctx, sandbox, &all);
	if (rc)
		return rc;
	jv_array_foreach(all, i, a) {
		const char *address = jv_string_value(a);
		jv payments;
		/* A billing file that cannot be read stops the wipe of its
		 * sandbox, with the file named: what it holds may be owed. */
		int read = rc || strncmp(address, "billing/", 8) != 0 ? -1
		    : billing_of(ctx, sandbox, address, &payments);
		if (read > 0 && read != EX_NOINPUT)
			rc = read;
		if (read == 0)
			jv_array_foreach(payments, k, p) {
				if (envelope_str(p, "flag") &&
				    envelope_str(p, "payment_intent"))
					*out = jv_array_append(*out, p);
				else
					jv_free(p);
			}
		if (read >= 0)
			jv_free(payments);
		jv_free(a);
	}
	jv_free(all);
	return rc;
}

int
refunds_keep_sandbox(bakery_ctx *ctx, const char *sandbox, int64_t wiped_at)
{
	jv flagged;
	int rc = flagged_of(ctx, sandbox, &flagged);
	if (rc || jv_array_length(jv_copy(flagged)) == 0) {
		jv_free(flagged);
		return rc; /* no refunds.db made for a sandbox that owes none */
	}
	char *path = refunds_path(ctx);
	sqlite3 *db;
	rc = birth_open(ctx, path, &refunds_schema, &db);
	free(path);
	sqlite3_stmt *st = NULL;
	int src = SQLITE_OK;
	if (!rc && !(rc = db_begin(db)))
		src = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO refunds("
		    COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
		    -1, &st, NULL);
	jv_array_foreach(flagged, k, p) {
		if (!rc && src == SQLITE_OK) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			bind_payment(st, sandbox, p);
			sqlite3_bind_int64(st, 8, wiped_at);
			if ((src = sqlite3_step(st)) == SQLITE_DONE)
				src = SQLITE_OK;
		}
		jv_free(p);
	}
	jv_free(flagged);
	sqlite3_finalize(st);
	if (!rc && src != SQLITE_OK)
		rc = db_fail(db, src, "cannot keep a flagged payment");
	if (!rc)
		rc = db_commit(db);
	else if (db)
		db_rollback(db);
	sqlite3_close(db);
	return rc;
}

/* The row of pi in db, or jv_invalid(). */
static jv
row_of(sqlite3 *db, const char *pi)
{
	sqlite3_stmt *st;
	jv r = jv_invalid();
	if (sqlite3_prepare_v2(db, "SELECT " COLUMNS " FROM refunds WHERE"
		" payment_intent = ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, pi, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			r = row_jv(st);
		sqlite3_finalize(st);
	}
	return r;
}

/* Whether s is a payment intent's id as Stripe and the test gateway make
 * them: letters, digits and '_', 1 to 255. */
static int
intent_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	return n > 0 && n <= 255 && !s[n];
}

/* Finds pi among the live flagged payments of billing/ORDER and records it
 * refunded at now. */
static int
mark_live(bakery_ctx *ctx, sqlite3 *db, const char *order, const char *pi,
    int64_t now)
{
	char address[80];
	snprintf(address, sizeof address, "billing/%s", order);
	jv payments;
	int rc = billing_of(ctx, ctx->sandbox, address, &payments);
	jv found = jv_invalid();
	if (!rc)
		jv_array_foreach(payments, i, p) {
			const char *id = envelope_str(p, "payment_intent");
			if (!jv_is_valid(found) && id && strcmp(id, pi) == 0)
				found = p;
			else
				jv_free(p);
		}
	jv_free(payments);
	if (rc == EX_NOINPUT || (!rc && !jv_is_valid(found)))
		rc = bakery_fail(EX_NOINPUT, "no payment '%s' of order '%s' "
		    "in sandbox '%s'", pi, order, ctx->sandbox);
	else if (!rc && !envelope_str(found, "flag"))
		rc = bakery_fail(EX_DATAERR, "payment '%s' paid order '%s': "
		    "it was counted, not flagged; a refund of it is not "
		    "marked here", pi, order);
	sqlite3_stmt *st;
	int src = rc ? SQLITE_OK : sqlite3_prepare_v2(db,
	    "INSERT INTO refunds(" COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
	    " ?7, NULL, ?8)", -1, &st, NULL);
	if (!rc && src == SQLITE_OK) {
		bind_payment(st, ctx->sandbox, found);
		sqlite3_bind_int64(st, 8, now);
		src = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (!rc && src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot mark a refund");
	jv_free(found);
	return rc;
}

int
refunds_mark(bakery_ctx *ctx, const char *order, const char *pi, jv *out)
{
	*out = jv_invalid();
	if (!bakery_name_valid(order))
		return bakery_fail(EX_USAGE, "bad order id: '%s'", order);
	if (!intent_valid(pi))
		return bakery_fail(EX_USAGE, "bad payment intent: '%s': %s", pi,
		    "want letters, digits and '_'");
	char *path = refunds_path(ctx);
	sqlite3 *db;
	int rc = home_make(ctx);
	if (!rc)
		rc = birth_open(ctx, path, &refunds_schema, &db);
	free(path);
	if (rc)
		return rc;
	if ((rc = db_begin(db))) {
		sqlite3_close(db);
		return rc;
	}
	int64_t now = bakery_now_ms();
	jv row = row_of(db, pi);
	if (jv_is_valid(row) &&
	    (strcmp(envelope_str(row, "order"), order) != 0 ||
		strcmp(envelope_str(row, "sandbox"), ctx->sandbox) != 0))
		rc = bakery_fail(EX_NOINPUT, "no payment '%s' of order '%s' "
		    "in sandbox '%s'", pi, order, ctx->sandbox);
	else if (jv_is_valid(row) && !envelope_str(row, "refunded_at")) {
		sqlite3_stmt *st;
		int src = sqlite3_prepare_v2(db, "UPDATE refunds SET"
		    " refunded_at = ?1 WHERE payment_intent = ?2", -1, &st,
		    NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, now);
			sqlite3_bind_text(st, 2, pi, -1, SQLITE_STATIC);
			src = sqlite3_step(st);
			sqlite3_finalize(st);
		}
		if (src != SQLITE_DONE)
			rc = db_fail(db, src, "cannot mark a refund");
	} else if (!jv_is_valid(row))
		rc = mark_live(ctx, db, order, pi, now);
	jv_free(row);
	if (!rc)
		rc = db_commit(db);
	else
		db_rollback(db);
	if (!rc)
		*out = row_of(db, pi);
	sqlite3_close(db);
	return rc;
}

int
refunds_read(bakery_ctx *ctx, jv *refunded, jv *owed)
{
	*refunded = jv_object();
	*owed = jv_array();
	char *path = refunds_path(ctx);
	sqlite3 *db;
	int rc = access(path, F_OK) != 0 ? EX_NOINPUT
	    : db_open_readonly(ctx, path, &refunds_schema, &db);
	free(path);
	if (rc == EX_NOINPUT)
		return 0;
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, "SELECT " COLUMNS " FROM refunds"
	    " ORDER BY wiped_at, payment_intent", -1, &st, NULL);
	while (src == SQLITE_OK || src == SQLITE_ROW) {
		if ((src = sqlite3_step(st)) != SQLITE_ROW)
			break;
		if (sqlite3_column_type(st, 8) != SQLITE_NULL)
			*refunded = jv_object_set(*refunded, jv_string(
			    (const char *)sqlite3_column_text(st, 0)), jv_true());
		else if (sqlite3_column_type(st, 7) != SQLITE_NULL)
			*owed = jv_array_append(*owed, row_jv(st));
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot read refunds.db");
	sqlite3_close(db);
	return rc;
}
