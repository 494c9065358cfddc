/*
 * routing.h — which subscribers must hear of which event: the routes file.
 *
 * A routes file (bakery-routes(5)) has one route a line:
 *
 *   EVENT-TYPE  SUBSCRIBER  [name=NAME] [secret=FILE]
 *
 * where SUBSCRIBER is builtin:KIND (one of the seven built-in kinds),
 * exec:/ABSOLUTE/PROGRAM, https://URL or http://LOOPBACK-URL. Blank lines
 * and lines whose first non-blank character is '#' are ignored. An
 * external subscriber (exec, http, https) needs name=NAME, its stable key:
 * what it answered is recorded in the seen table of the object
 * external/NAME, so renaming its program or URL under the same name never
 * calls it again for an event it applied. http(s) needs secret=FILE, the
 * file of its Standard Webhooks secret (whsec_...).
 *
 * The file is found in this order: --routes-file (routing_load's file),
 * BAKERY_ROUTES, HOME/routes when it exists, share/routes beside the
 * program (an uninstalled build), SHAREDIR/routes. Any fault in it is
 * EX_CONFIG naming the file and the line.
 *
 * A built-in's key comes from a field of the event's data (DAY from
 * data.day, CUSTOMER from data.customer, ORDER from data.order) or is
 * fixed (kitchen/board, crm/customers); the kinds and the events each can
 * apply are their descriptors' (kind.h). `bakery-consume --routes`
 * prints the table in effect.
 *
 * The table in effect is the context's (ctx.h, ctx->routes): loaded into
 * it, freed with it (ctx_free).
 */
#ifndef BAKERY_ROUTING_H
#define BAKERY_ROUTING_H

#include <stddef.h>

#include <jv.h>

#include "../base/util.h"
#include "../store/store.h"

#define ROUTING_MAX_SUBSCRIBERS 16
/* The longest line of a routes file, and the most routes in one. */
#define ROUTING_MAX_LINE 4096
#define ROUTING_MAX_ROUTES 256

typedef enum route_how { ROUTE_BUILTIN, ROUTE_EXEC, ROUTE_HTTP } route_how;

typedef struct route {
	char type[32];         /* event type */
	route_how how;
	char kind[BAKERY_NAME_SIZE];         /* the built-in's kind, or "external" */
	const char *key_field; /* a built-in's data field holding the key */
	char key[BAKERY_NAME_SIZE];          /* the fixed key, or the external's name */
	char *target;          /* exec: the program; http: the URL */
	char *secret_file;     /* http: the secret's file */
	int line;              /* in the file */
} route;

typedef struct routes {
	route *r;
	size_t n;
	char *file;
} routes;

/* Parses len bytes of a routes file named file (for messages). 0 and
 * *out (routing_free), or EX_CONFIG: "FILE:LINE: why". Pure. */
int routing_parse(const char *text, size_t len, const char *file,
    routes *out);
void routing_free(routes *t);

/* Reads and parses the routes file (file, or the search above when NULL;
 * ctx->home NULL: home_default()) and makes it ctx's table in
 * effect, in place of any before. EX_CONFIG when it cannot be read or is
 * malformed, and ctx's table is as it was. */
int routing_load(bakery_ctx *ctx, const char *file);

/* routing_load(ctx, NULL) unless ctx holds a table already. */
int routing_ensure(bakery_ctx *ctx);

/* ctx's table, loaded by the search on first use when routing_load was
 * not called; NULL (and bakery_error) when it fails. */
const routes *routing_current(bakery_ctx *ctx);

/* The external subscriber named name in ctx's table, or NULL. */
const route *routing_external(bakery_ctx *ctx, const char *name);

/* The subscriber addresses of env, in file order ("kitchen/board",
 * "external/mailer"). EX_DATAERR when a key field is missing or is not a
 * valid name; EX_CONFIG when the routes file is bad. */
int routing_subscribers(bakery_ctx *ctx, jv env, char addresses[][BAKERY_ADDRESS_SIZE],
    size_t *n);

/* ctx's table as a jv array of {"type","from","to","subscriber","line"}. */
jv routing_describe(bakery_ctx *ctx);

#endif
