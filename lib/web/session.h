/*
 * session.h — the console's sessions, in HOME/console.db (account.h).
 *
 * A session is made at each sign-in, never reused (no fixation): a token
 * of SESSION_TOKEN_BYTES random bytes (getrandom), given to the browser
 * once as hex in its cookie and kept only as its SHA-256, so that a copy
 * of the file opens no session; and a CSRF token of the same size, kept
 * as it is, which every form of the session carries.
 *
 * A session ends when it has not been used for SESSION_IDLE_S, when it
 * is SESSION_MAX_S old whatever its use, at sign-out, and when its
 * account's password changes or the account is deleted. Its last use is
 * written at most once a minute (a page read moves nothing else).
 */
#ifndef BAKERY_SESSION_H
#define BAKERY_SESSION_H

#include "account.h"
#include "../store/store.h"

#define SESSION_TOKEN_BYTES 32
#define SESSION_TOKEN_HEX (2 * SESSION_TOKEN_BYTES)
#define SESSION_IDLE_S (12 * 3600)
#define SESSION_MAX_S (7 * 86400)

typedef struct session {
	account who;
	char csrf[SESSION_TOKEN_HEX + 1];
} session;

/* A new session of a signed-in account: token (SESSION_TOKEN_HEX + 1
 * bytes) is the cookie's value. Expired sessions of every account are
 * removed on the way. */
int session_new(bakery_ctx *ctx, const account *who, char *token,
    session *s);
/* The live session of token: 0 and *s; EX_NOPERM for a token of the
 * wrong shape, unknown or ended (an expired one is removed). */
int session_find(bakery_ctx *ctx, const char *token, session *s);
/* Ends the session of token; nothing when it has none. */
int session_end(bakery_ctx *ctx, const char *token);

#endif
