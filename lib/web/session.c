/*
 * session.c — the console's sessions (session.h).
 */
#define _GNU_SOURCE
#include "session.h"
#include "../lazy/lazy_crypto.h"
#include "../store/store.h"
#include "../base/util.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

/* SESSION_TOKEN_BYTES from the kernel's generator, as hex. */
static int
random_token(char *out)
{
	unsigned char raw[SESSION_TOKEN_BYTES];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return bakery_fail(EX_OSERR, "getrandom: %s",
			    strerror(errno));
		got += (size_t)r;
	}
	bakery_hex(raw, sizeof raw, out);
	explicit_bzero(raw, sizeof raw);
	return 0;
}

/* What the file keeps of a token: its SHA-256, as hex. */
static int
token_hash(const char *token, char *out)
{
	int rc = lazy_crypto();
	if (rc)
		return rc;
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)token, strlen(token), md);
	bakery_hex(md, sizeof md, out);
	return 0;
}

static int
token_shaped(const char *token)
{
	return strlen(token) == SESSION_TOKEN_HEX &&
	    strspn(token, "0123456789abcdef") == SESSION_TOKEN_HEX;
}

int
session_new(bakery_ctx *ctx, const account *who, char *token, session *s)
{
	*s = (session){ .who = *who };
	char hash[2 * SHA256_DIGEST_LENGTH + 1];
	int rc = random_token(token);
	if (!rc)
		rc = random_token(s->csrf);
	if (!rc)
		rc = token_hash(token, hash);
	if (rc)
		return rc;
	int64_t now = bakery_now_ms();
	sqlite3 *db;
	if (!(rc = account_db_open(ctx, 0, &db))) {
		static const char *const sql[] = {
			"DELETE FROM sessions WHERE used_at < ?4 OR "
			"created_at < ?5",
			"INSERT INTO sessions(token_hash, account, csrf, "
			"created_at, used_at) VALUES (?1, ?2, ?3, ?6, ?6)",
		};
		rc = db_run(db, "cannot keep the session", 2, sql, "tttiii",
		    hash, who->name, s->csrf,
		    now - SESSION_IDLE_S * INT64_C(1000),
		    now - SESSION_MAX_S * INT64_C(1000), now);
	}
	sqlite3_close(db);
	return rc;
}

int
session_find(bakery_ctx *ctx, const char *token, session *s)
{
	*s = (session){ 0 };
	char hash[2 * SHA256_DIGEST_LENGTH + 1];
	if (!token_shaped(token))
		return bakery_fail(EX_NOPERM, "no session");
	int rc = token_hash(token, hash);
	if (rc)
		return rc;
	sqlite3 *db;
	if ((rc = account_db_open(ctx, 0, &db))) {
		sqlite3_close(db);
		return rc == EX_NOINPUT ? bakery_fail(EX_NOPERM, "no session")
		    : rc;
	}
	sqlite3_stmt *st;
	int64_t now = bakery_now_ms(), created = 0, used = 0;
	int found = 0;
	int src = sqlite3_prepare_v2(db, "SELECT s.csrf, s.created_at, "
	    "s.used_at, a.name, a.sandbox, a.operator FROM sessions s JOIN "
	    "accounts a ON a.name = s.account WHERE s.token_hash = ?1", -1,
	    &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
		if ((src = sqlite3_step(st)) == SQLITE_ROW) {
			found = 1;
			snprintf(s->csrf, sizeof s->csrf, "%s",
			    (const char *)sqlite3_column_text(st, 0));
			created = sqlite3_column_int64(st, 1);
			used = sqlite3_column_int64(st, 2);
			snprintf(s->who.name, sizeof s->who.name, "%s",
			    (const char *)sqlite3_column_text(st, 3));
			snprintf(s->who.sandbox, sizeof s->who.sandbox, "%s",
			    (const char *)sqlite3_column_text(st, 4));
			s->who.operator = sqlite3_column_int(st, 5);
			src = SQLITE_DONE;
		}
	}
	if (src != SQLITE_DONE)
		rc = db_fail(db, src, "cannot read the sessions");
	sqlite3_finalize(st);
	int over = found && (now - used > SESSION_IDLE_S * INT64_C(1000) ||
	    now - created > SESSION_MAX_S * INT64_C(1000) || used > now + 60000);
	if (!rc && found && (over || now - used >= 60000)) {
		static const char *const end[] = {
			"DELETE FROM sessions WHERE token_hash = ?1",
		};
		static const char *const touch[] = {
			"UPDATE sessions SET used_at = ?2 WHERE token_hash = ?1",
		};
		rc = db_run(db, "cannot keep the session", 1, over ? end : touch,
		    "ti", hash, now);
	}
	sqlite3_close(db);
	if (!rc && (!found || over))
		rc = bakery_fail(EX_NOPERM, "no session");
	/* What goes into a Location and a path must be a name, whoever
	 * wrote the file. */
	if (!rc && (!bakery_name_valid(s->who.name) ||
	    !bakery_name_valid(s->who.sandbox)))
		rc = bakery_fail(EX_CONFIG, "account '%s' has a bad name or "
		    "sandbox in console.db", s->who.name);
	if (rc)
		*s = (session){ 0 };
	return rc;
}

int
session_end(bakery_ctx *ctx, const char *token)
{
	char hash[2 * SHA256_DIGEST_LENGTH + 1];
	if (!token_shaped(token))
		return 0;
	int rc = token_hash(token, hash);
	sqlite3 *db = NULL;
	if (!rc && !(rc = account_db_open(ctx, 0, &db))) {
		static const char *const sql[] = {
			"DELETE FROM sessions WHERE token_hash = ?1",
		};
		rc = db_run(db, "cannot end the session", 1, sql, "t", hash);
		sqlite3_close(db);
	} else if (rc == EX_NOINPUT) {
		sqlite3_close(db);
		rc = 0;
	}
	return rc;
}
