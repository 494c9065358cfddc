/*
 * account.c — the console's accounts and its sign-in (account.h).
 */
#define _GNU_SOURCE
#include "account.h"
#include "../lazy/lazy_crypto.h"
#include "../store/store.h"
#include "../base/util.h"

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
	/* 2: failures are counted by a keyed hash of the name typed, known
	 * or not (account.h); the names counted before are dropped. */
	"CREATE TABLE signin_key(key BLOB NOT NULL);"
	"INSERT INTO signin_key VALUES (randomblob(32));"
	"DELETE FROM signin_failures;",
};
const schema_def console_schema = SCHEMA_REPLAYED("console", console_migrations, 1);

int
account_db_open(bakery_ctx *ctx, int create, sqlite3 **db)
{
	char *path = bakery_xasprintf("%s/console.db", ctx->home);
	/* Opened to write even by a page that only looks: a page read
	 * notes its session's use, and ends an expired one. */
	int look_only = ctx->look_only;
	ctx->look_only = 0;
	int rc = create ? birth_open(ctx, path, &console_schema, db)
			: db_open(ctx, path, &console_schema, db);
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

/* What a failed sign-in of name is counted under: the HMAC-SHA256 of the
 * name with the file's own key, as hex. */
static int
failure_key(sqlite3 *db, const char *name, char *out)
{
	int rc = lazy_crypto();
	if (rc)
		return rc;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(db, "SELECT key FROM signin_key", -1, &st,
	    NULL);
	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW &&
	    sqlite3_column_bytes(st, 0) >= 16) {
		unsigned char md[SHA256_DIGEST_LENGTH];
		unsigned int len = sizeof md;
		HMAC(EVP_sha256(), sqlite3_column_blob(st, 0),
		    sqlite3_column_bytes(st, 0), (const unsigned char *)name,
		    strlen(name), md, &len);
		bakery_hex(md, sizeof md, out);
		src = SQLITE_DONE;
	} else if (src == SQLITE_ROW || src == SQLITE_DONE) {
		rc = bakery_fail(EX_CONFIG, "console.db has no sign-in key");
	}
	if (!rc && src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot read the sign-in key");
	sqlite3_finalize(st);
	return rc;
}

/* Steps st with text bound to ?1: sqlite's code. */
static int
step_text(sqlite3_stmt *st, const char *text)
{
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	return sqlite3_step(st);
}

/* In one write transaction: the failures counted under key within the
 * window (older ones pruned); when fewer than SIGNIN_FAILURES, one more
 * is counted at once, before the password is looked at (*slot its
 * rowid, removed by a sign-in that succeeds), so that sign-ins sent
 * together cannot all pass the count; and the account's row, when name
 * has one (*hash, a's fields). EX_TEMPFAIL and *slowed when the name
 * is slowed. */
static int
reserve_try(sqlite3 *db, const char *key, const char *name, int64_t now,
    int64_t *slot, char **hash, account *a, int *slowed)
{
	int rc = db_begin(db);
	if (rc)
		return rc;
	sqlite3_stmt *row = NULL, *prune = NULL, *count = NULL, *add = NULL;
	int src = sqlite3_prepare_v2(db, "SELECT hash, sandbox, operator "
	    "FROM accounts WHERE name = ?1", -1, &row, NULL);
	if (src == SQLITE_OK && (src = step_text(row, name)) == SQLITE_ROW) {
		const char *sandbox = (const char *)sqlite3_column_text(row, 1);
		/* What goes into a Location and a path must be a name,
		 * whoever wrote the file. */
		if (!sandbox || !bakery_name_valid(sandbox))
			rc = bakery_fail(EX_CONFIG, "account '%s' has a bad "
			    "sandbox in console.db", name);
		else {
			*hash = bakery_xstrdup((const char *)
			    sqlite3_column_text(row, 0));
			snprintf(a->name, sizeof a->name, "%s", name);
			snprintf(a->sandbox, sizeof a->sandbox, "%s", sandbox);
			a->operator = sqlite3_column_int(row, 2);
		}
		src = SQLITE_DONE;
	}
	if (!rc && src == SQLITE_DONE && (src = sqlite3_prepare_v2(db,
	    "DELETE FROM signin_failures WHERE at < ?1", -1, &prune,
	    NULL)) == SQLITE_OK) {
		sqlite3_bind_int64(prune, 1, now - SIGNIN_WINDOW_S *
		    INT64_C(1000));
		src = sqlite3_step(prune);
	}
	if (!rc && src == SQLITE_DONE && (src = sqlite3_prepare_v2(db,
	    "SELECT count(*) FROM signin_failures WHERE name = ?1", -1,
	    &count, NULL)) == SQLITE_OK &&
	    (src = step_text(count, key)) == SQLITE_ROW) {
		if (sqlite3_column_int(count, 0) >= SIGNIN_FAILURES) {
			*slowed = 1;
			rc = bakery_fail(EX_TEMPFAIL, "too many failed "
			    "sign-ins: try again in a minute");
		}
		src = SQLITE_DONE;
	}
	if (!rc && src == SQLITE_DONE && (src = sqlite3_prepare_v2(db,
	    "INSERT INTO signin_failures(name, at) VALUES (?1, ?2)", -1,
	    &add, NULL)) == SQLITE_OK) {
		sqlite3_bind_text(add, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(add, 2, now);
		if ((src = sqlite3_step(add)) == SQLITE_DONE)
			*slot = sqlite3_last_insert_rowid(db);
	}
	if (!rc && src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot count failed sign-ins");
	sqlite3_finalize(row);
	sqlite3_finalize(prune);
	sqlite3_finalize(count);
	sqlite3_finalize(add);
	if (!rc)
		rc = db_commit(db);
	else
		db_rollback(db);
	return rc;
}

int
account_signin(bakery_ctx *ctx, const char *name, const char *password,
    account *a, int *slowed)
{
	*a = (account){ 0 };
	*slowed = 0;
	sqlite3 *db;
	int rc = account_db_open(ctx, 0, &db);
	if (rc) {
		sqlite3_close(db);
		if (rc != EX_NOINPUT)
			return rc;
		free_hash(hash_password(password, decoy_setting()));
		bakery_log(LOG_WARN, "signin_failed", "account", "(unknown)",
		    (char *)NULL);
		return bakery_fail(EX_NOPERM, "wrong name or password");
	}
	char key[2 * SHA256_DIGEST_LENGTH + 1];
	char *hash = NULL;
	int64_t slot = 0;
	rc = failure_key(db, name, key);
	if (!rc)
		rc = reserve_try(db, key, name, bakery_now_ms(), &slot, &hash,
		    a, slowed);
	/* Only an account's name is logged: a password typed into the name
	 * field must not reach the log. */
	const char *logged = hash ? name : "(unknown)";
	if (*slowed)
		bakery_log(LOG_WARN, "signin_throttled", "account", logged,
		    (char *)NULL);
	if (!rc) {
		char *got = hash_password(password, hash ? hash
		    : decoy_setting());
		int match = hash && got && same_text(got, hash);
		free_hash(got);
		if (match) {
			static const char *const sql[] = {
				"DELETE FROM signin_failures WHERE rowid = ?1",
			};
			rc = db_run(db, "cannot note the sign-in", 1, sql, "i",
			    slot);
		} else {
			bakery_log(LOG_WARN, "signin_failed", "account", logged,
			    (char *)NULL);
			rc = bakery_fail(EX_NOPERM, "wrong name or password");
		}
	}
	if (rc)
		*a = (account){ 0 };
	free_hash(hash);
	sqlite3_close(db);
	return rc;
}
