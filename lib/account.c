/*
 * account.c — the console's accounts and its sign-in (account.h).
 */
#define _GNU_SOURCE
#include "account.h"
#include "store.h"
#include "util.h"

#include <crypt.h>
#include <stdlib.h>
#include <string.h>

static const char *const console_migrations[] = {
	"CREATE TABLE accounts(name TEXT PRIMARY KEY, hash TEXT NOT NULL,"
	"  sandbox TEXT NOT NULL, operator INTEGER NOT NULL,"
	"  created_at INTEGER NOT NULL, changed_at INTEGER NOT NULL)"
	"  WITHOUT ROWID;"
	"CREATE TABLE sessions(token_hash TEXT PRIMARY KEY,"
	"  account TEXT NOT NULL, csrf TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL, used_at INTEGER NOT NULL)"
	"  WITHOUT ROWID;"
	"CREATE INDEX sessions_account ON sessions(account);"
	"CREATE TABLE signin_failures(name TEXT NOT NULL, at INTEGER NOT NULL);"
	"CREATE INDEX signin_failures_name ON signin_failures(name, at);",
};
static const schema_def console_schema = {
	"console", console_migrations, 1, 1, NULL
};

int
account_db_open(bakery_ctx *ctx, int create, sqlite3 **db)
{
	char *path = bakery_xasprintf("%s/console.db", ctx->home);
	/* Opened to write even by a page that only looks: a page read
	 * notes its session's use, and ends an expired one. */
	int look_only = ctx->look_only;
	ctx->look_only = 0;
	int rc = db_open(ctx, path, &console_schema,
	    create ? DB_OPEN_CREATE : DB_OPEN_EXISTING, db);
	ctx->look_only = look_only;
	free(path);
	return rc;
}

/* The hash of password with a fresh salt of the system's default method,
 * or with setting's salt and method (caller frees); NULL when libcrypt
 * refuses. */
static char *
hash_password(const char *password, const char *setting)
{
	char *salt = NULL;
	if (!setting && !(setting = salt = crypt_gensalt_ra(NULL, 0, NULL, 0)))
		return NULL;
	struct crypt_data *data = calloc(1, sizeof *data);
	char *out = NULL;
	if (data) {
		const char *h = crypt_r(password, setting, data);
		/* libcrypt's failure token starts with '*'. */
		if (h && h[0] != '*')
			out = bakery_xstrdup(h);
		explicit_bzero(data, sizeof *data);
		free(data);
	}
	free(salt);
	return out;
}

/* A new password's hash (caller wipes and frees): EX_DATAERR for a
 * password of the wrong length. */
static int
new_hash(const char *password, char **hash)
{
	size_t len = strlen(password);
	*hash = NULL;
	if (len < ACCOUNT_PASSWORD_MIN || len > ACCOUNT_PASSWORD_MAX)
		return bakery_fail(EX_DATAERR, "bad password: want "
		    DIGITS_OF(ACCOUNT_PASSWORD_MIN) " to "
		    DIGITS_OF(ACCOUNT_PASSWORD_MAX) " bytes");
	if (!(*hash = hash_password(password, NULL)))
		return bakery_fail(EX_SOFTWARE, "libcrypt made no hash");
	return 0;
}

static void
free_hash(char *hash)
{
	if (hash)
		explicit_bzero(hash, strlen(hash));
	free(hash);
}

/* 1 when the account exists, 0 when not, else -1 (the failure recorded). */
static int
account_exists(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM accounts WHERE name = ?1",
	    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return rc == SQLITE_ROW;
	db_fail(db, rc, "cannot read the accounts");
	return -1;
}

int
account_add(bakery_ctx *ctx, const char *name, const char *password,
    const char *sandbox, int operator)
{
	if (!bakery_name_valid(name))
		return bakery_fail(EX_USAGE, "bad account name: want "
		    "[a-z0-9][a-z0-9_.-]{0,63} without '..'");
	if (!bakery_name_valid(sandbox))
		return bakery_fail(EX_USAGE, "bad sandbox name: '%s'", sandbox);
	char *hash;
	int rc = new_hash(password, &hash);
	if (rc)
		return rc;
	sqlite3 *db;
	if (!(rc = account_db_open(ctx, 1, &db))) {
		int exists = account_exists(db, name);
		if (exists < 0)
			rc = EX_SOFTWARE;
		else if (exists)
			rc = bakery_fail(EX_CANTCREAT, "account '%s' exists "
			    "already", name);
		else {
			static const char *const sql[] = {
				"INSERT INTO accounts(name, hash, sandbox, "
				"operator, created_at, changed_at) "
				"VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
			};
			rc = db_run(db, "cannot add the account", 1, sql,
			    "tttii", name, hash, sandbox, (int64_t)!!operator,
			    bakery_now_ms());
		}
	}
	sqlite3_close(db);
	free_hash(hash);
	return rc;
}

/* Runs sql (bound to name, then ?2 and ?3) on an account that must
 * exist, with its sessions ended in the same transaction. */
static int
change_account(bakery_ctx *ctx, const char *name, const char *sql,
    const char *hash)
{
	if (!bakery_name_valid(name))
		return bakery_fail(EX_USAGE, "bad account name: want "
		    "[a-z0-9][a-z0-9_.-]{0,63} without '..'");
	sqlite3 *db;
	int rc = account_db_open(ctx, 0, &db);
	if (rc == EX_NOINPUT)
		rc = bakery_fail(EX_NOINPUT, "no account '%s'", name);
	if (!rc) {
		int exists = account_exists(db, name);
		if (exists <= 0)
			rc = exists < 0 ? EX_SOFTWARE
			    : bakery_fail(EX_NOINPUT, "no account '%s'", name);
	}
	if (!rc) {
		const char *const both[] = {
			sql, "DELETE FROM sessions WHERE account = ?1",
		};
		rc = db_run(db, "cannot change the account", 2, both, "tti",
		    name, hash ? hash : "", bakery_now_ms());
	}
	sqlite3_close(db);
	return rc;
}

int
account_passwd(bakery_ctx *ctx, const char *name, const char *password)
{
	char *hash;
	int rc = new_hash(password, &hash);
	if (!rc)
		rc = change_account(ctx, name, "UPDATE accounts SET hash = ?2, "
		    "changed_at = ?3 WHERE name = ?1", hash);
	free_hash(hash);
	return rc;
}

int
account_delete(bakery_ctx *ctx, const char *name)
{
	return change_account(ctx, name, "DELETE FROM accounts WHERE "
	    "name = ?1", NULL);
}

int
account_list(bakery_ctx *ctx, jv *out)
{
	*out = jv_array();
	sqlite3 *db;
	int rc = account_db_open(ctx, 0, &db);
	if (rc == EX_NOINPUT) {
		sqlite3_close(db);
		return 0; /* no file: no account */
	}
	sqlite3_stmt *st = NULL;
	int src = rc ? SQLITE_OK : sqlite3_prepare_v2(db, "SELECT name, "
	    "sandbox, operator, created_at, changed_at, (SELECT count(*) "
	    "FROM sessions WHERE account = name) FROM accounts ORDER BY name",
	    -1, &st, NULL);
	while (!rc && src != SQLITE_DONE && (src == SQLITE_OK ||
	    src == SQLITE_ROW) && (src = sqlite3_step(st)) == SQLITE_ROW) {
		jv a = jv_object();
		a = jv_object_set(a, jv_string("name"),
		    jv_string((const char *)sqlite3_column_text(st, 0)));
		a = jv_object_set(a, jv_string("sandbox"),
		    jv_string((const char *)sqlite3_column_text(st, 1)));
		a = jv_object_set(a, jv_string("operator"),
		    jv_bool(sqlite3_column_int(st, 2)));
		a = jv_object_set(a, jv_string("created_at"),
		    db_column_time(st, 3));
		a = jv_object_set(a, jv_string("changed_at"),
		    db_column_time(st, 4));
		a = jv_object_set(a, jv_string("sessions"),
		    jv_number(sqlite3_column_int(st, 5)));
		*out = jv_array_append(*out, a);
	}
	if (!rc && src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot list the accounts");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* Constant time over the length of a: whether a and b are equal. */
static int
same_text(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;
	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)(i < lb ? b[i] : 0);
	return diff == 0;
}

/* A setting for the hash an unknown name is checked against, so that it
 * costs what a known one costs. */
static const char *
decoy_setting(void)
{
	static char *setting;
	if (!setting)
		setting = crypt_gensalt_ra(NULL, 0, NULL, 0);
	return setting;
}

/* Failed sign-ins of name within the window (pruning older ones). */
static int
recent_failures(sqlite3 *db, const char *name, int64_t now, int *count)
{
	static const char *const prune[] = {
		"DELETE FROM signin_failures WHERE at < ?1",
	};
	int rc = db_run(db, "cannot prune failed sign-ins", 1, prune, "i",
	    now - SIGNIN_WINDOW_S * INT64_C(1000));
	sqlite3_stmt *st = NULL;
	int src = rc ? SQLITE_OK : sqlite3_prepare_v2(db, "SELECT count(*) "
	    "FROM signin_failures WHERE name = ?1", -1, &st, NULL);
	if (!rc && src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		if ((src = sqlite3_step(st)) == SQLITE_ROW)
			*count = sqlite3_column_int(st, 0);
	}
	if (!rc && src != SQLITE_ROW)
		rc = db_fail(db, src, "cannot count failed sign-ins");
	sqlite3_finalize(st);
	return rc;
}

int
account_signin(bakery_ctx *ctx, const char *name, const char *password,
    account *a)
{
	*a = (account){ 0 };
	sqlite3 *db;
	int rc = account_db_open(ctx, 0, &db);
	if (rc) {
		sqlite3_close(db);
		if (rc != EX_NOINPUT)
			return rc;
		free(hash_password(password, decoy_setting())); /* its cost */
		bakery_log(LOG_WARN, "signin_failed", "account", "(unknown)",
		    (char *)NULL);
		return bakery_fail(EX_NOPERM, "wrong name or password");
	}
	int64_t now = bakery_now_ms();
	char *hash = NULL;
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(db, "SELECT hash, sandbox, operator "
	    "FROM accounts WHERE name = ?1", -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		if ((src = sqlite3_step(st)) == SQLITE_ROW) {
			hash = bakery_xstrdup((const char *)
			    sqlite3_column_text(st, 0));
			snprintf(a->name, sizeof a->name, "%s", name);
			snprintf(a->sandbox, sizeof a->sandbox, "%s",
			    (const char *)sqlite3_column_text(st, 1));
			a->operator = sqlite3_column_int(st, 2);
			src = SQLITE_DONE;
		}
	}
	if (src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot read the accounts");
	sqlite3_finalize(st);
	/* Failures are counted by account; those of names with no account
	 * together, under "", so that nothing a person typed is kept but
	 * an account's name (a password typed as a name is not). */
	const char *key = hash ? name : "";
	int failures = 0;
	if (!rc)
		rc = recent_failures(db, key, now, &failures);
	const char *logged = hash ? name : "(unknown)";
	if (!rc && failures >= SIGNIN_FAILURES) {
		bakery_log(LOG_WARN, "signin_throttled", "account", logged,
		    (char *)NULL);
		rc = bakery_fail(EX_TEMPFAIL, "too many failed sign-ins: try "
		    "again in a minute");
	} else if (!rc) {
		char *got = hash_password(password, hash ? hash
		    : decoy_setting());
		int match = hash && got && same_text(got, hash);
		free_hash(got);
		if (!match) {
			static const char *const sql[] = {
				"INSERT INTO signin_failures(name, at) "
				"VALUES (?1, ?2)",
			};
			bakery_log(LOG_WARN, "signin_failed", "account", logged,
			    (char *)NULL);
			rc = db_run(db, "cannot count a failed sign-in", 1, sql,
			    "ti", key, now);
			if (!rc)
				rc = bakery_fail(EX_NOPERM, "wrong name or "
				    "password");
		}
	}
	if (rc)
		*a = (account){ 0 };
	free(hash);
	sqlite3_close(db);
	return rc;
}
