/*
 * account.h — the console's accounts and its sign-in, in HOME/console.db.
 *
 * An account is a name (a bakery name: [a-z0-9][a-z0-9_.-]{0,63}), the
 * sandbox it works in, whether it is an operator (who may look at and act
 * in every sandbox), and its password's hash. The hash is libcrypt's, in
 * the system's default method (crypt_gensalt with no prefix: yescrypt on
 * Debian 12), salted afresh for every password; the password itself is
 * never stored, logged or put in a message, and the buffers that held it
 * are wiped by the caller (explicit_bzero).
 *
 * Changing an account's password or deleting it ends its sessions in the
 * same transaction (session.h).
 *
 * Sign-in is slowed: after SIGNIN_FAILURES failed sign-ins for one name
 * within SIGNIN_WINDOW_S seconds, that name is refused (EX_TEMPFAIL, the
 * console's 429) without its password being looked at, until the window
 * has passed. A try is counted as a failure before its password is
 * hashed, in the transaction that counts the others, and uncounted when
 * it succeeds: tries sent together cannot all slip under the limit.
 * Every name is counted alone, whether it has an account or not, so that
 * the throttle tells nobody which names exist; what the file keeps is
 * the name's HMAC-SHA256 under a random key of the file's own, never the
 * name itself (a password typed into the name field is not kept). An
 * unknown name costs the time a wrong password costs (the hash of a
 * made-up salt is computed). Each failure is logged (signin_failed,
 * signin_throttled) with the account's name when such an account
 * exists, else "(unknown)": a password typed into the name field never
 * reaches the log.
 */
#ifndef BAKERY_ACCOUNT_H
#define BAKERY_ACCOUNT_H

#include <jv.h>
#include <sqlite3.h>

#include "../base/util.h"
#include "../store/store.h"

#define ACCOUNT_PASSWORD_MIN 8
#define ACCOUNT_PASSWORD_MAX 1024
#define SIGNIN_FAILURES 5
#define SIGNIN_WINDOW_S 60

typedef struct account {
	char name[BAKERY_NAME_SIZE];
	char sandbox[BAKERY_NAME_SIZE];
	int operator;
} account;

/* HOME/console.db's schema. */
extern const schema_def console_schema;

/* HOME/console.db: accounts, sessions and failed sign-ins. create=0: a
 * home without one is EX_NOINPUT (no account yet). */
int account_db_open(bakery_ctx *ctx, int create, sqlite3 **db);

/* EX_USAGE for a bad name or sandbox; EX_DATAERR for a password shorter
 * than ACCOUNT_PASSWORD_MIN or longer than ACCOUNT_PASSWORD_MAX bytes;
 * EX_CANTCREAT when the name is taken. */
int account_add(bakery_ctx *ctx, const char *name, const char *password,
    const char *sandbox, int operator);
/* EX_NOINPUT when there is no such account. Ends its sessions. */
int account_passwd(bakery_ctx *ctx, const char *name, const char *password);
/* EX_NOINPUT when there is no such account. Ends its sessions. */
int account_delete(bakery_ctx *ctx, const char *name);
/* [{"name","sandbox","operator","created_at","changed_at","sessions"}],
 * by name; no hash. */
int account_list(bakery_ctx *ctx, jv *out);

/* 0 and *a when name and password match; EX_NOPERM when they do not;
 * EX_TEMPFAIL with *slowed set when the name is slowed (above). Any
 * other failure, EX_TEMPFAIL too (console.db locked past the busy
 * timeout), leaves *slowed 0: nothing was counted, nothing throttled. */
int account_signin(bakery_ctx *ctx, const char *name, const char *password,
    account *a, int *slowed);

#endif
