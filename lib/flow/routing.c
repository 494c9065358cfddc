/*
 * routing.c — the routes file: parsed, checked, in effect (the context's).
 */
#define _GNU_SOURCE
#include "routing.h"
#include "../store/file.h"
#include "../core/envelope.h"
#include "../core/kind.h"
#include "../store/store.h"
#include "../net/url.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest routes file read: ROUTING_MAX_ROUTES lines of the longest. */
#define ROUTING_MAX_FILE (1 << 20)

/* Whether kind k hears events of type. */
static int
hears(const object_kind *k, const char *type)
{
	for (size_t i = 0; i < sizeof k->hears / sizeof *k->hears &&
	     k->hears[i]; i++)
		if (strcmp(k->hears[i], type) == 0)
			return 1;
	return 0;
}

static int
bad_line(const char *file, int line, const char *fmt, ...)
{
	char why[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return bakery_fail(EX_CONFIG, "%s:%d: %s", file, line, why);
}

/* Whether s is printable ASCII without blanks (a URL, a path). */
static int
plain(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			return 0;
	return 1;
}

/* A builtin:KIND subscriber into r. */
static int
parse_builtin(const char *sub, const char *name, const char *secret,
    const char *file, int line, route *r)
{
	const object_kind *b = kind_find(sub + 8);
	if (!b || !b->apply)
		return bad_line(file, line, "unknown built-in subscriber");
	if (!hears(b, r->type))
		return bad_line(file, line, "builtin:%s cannot apply %s",
		    b->name, r->type);
	if (name || secret)
		return bad_line(file, line, "a built-in takes no options");
	r->how = ROUTE_BUILTIN;
	snprintf(r->kind, sizeof r->kind, "%s", b->name);
	r->key_field = b->key_field;
	if (b->key)
		snprintf(r->key, sizeof r->key, "%s", b->key);
	return 0;
}

/* An http(s) subscriber's URL and secret=. */
static int
check_http(const char *sub, const char *secret, const char *file, int line)
{
	if (strlen(sub) > 2048 || !plain(sub))
		return bad_line(file, line, "want a URL of at most "
		    "2048 printable ASCII characters");
	/* http only to this machine: its signed body would travel in
	 * clear (url.h). */
	const char *why;
	int rc = url_check_http(sub, &why);
	if (rc == EX_CONFIG)
		return bad_line(file, line, "%s", why);
	if (rc)
		return rc;
	if (!secret || secret[0] != '/')
		return bad_line(file, line, "an http(s) subscriber "
		    "wants secret=/ABSOLUTE/FILE");
	if (strlen(secret) >= PATH_MAX || !plain(secret))
		return bad_line(file, line, "secret= wants a path "
		    "of printable ASCII");
	return 0;
}

/* An exec: or http(s) subscriber into r. */
static int
parse_external(const char *sub, const char *name, const char *secret,
    const char *file, int line, route *r)
{
	if (strncmp(sub, "exec:", 5) == 0) {
		r->how = ROUTE_EXEC;
		if (sub[5] != '/')
			return bad_line(file, line, "exec: wants an "
			    "absolute path");
		if (strlen(sub + 5) >= PATH_MAX || !plain(sub))
			return bad_line(file, line, "exec: wants a path of "
			    "printable ASCII");
		if (secret)
			return bad_line(file, line, "exec: takes no "
			    "secret=");
	} else if (strncasecmp(sub, "https:", 6) == 0 ||
	    strncasecmp(sub, "http:", 5) == 0) {
		r->how = ROUTE_HTTP;
		int rc = check_http(sub, secret, file, line);
		if (rc)
			return rc;
	} else {
		return bad_line(file, line, "unknown subscriber kind: want "
		    "builtin:, exec:, https: or http:");
	}
	if (!name || !bakery_name_valid(name))
		return bad_line(file, line, "an external subscriber wants "
		    "name=NAME ([a-z0-9][a-z0-9_.-]{0,63})");
	snprintf(r->kind, sizeof r->kind, "external");
	snprintf(r->key, sizeof r->key, "%s", name);
	r->target = bakery_xstrdup(r->how == ROUTE_EXEC ? sub + 5 : sub);
	r->secret_file = secret ? bakery_xstrdup(secret) : NULL;
	return 0;
}

/* r against the line's earlier routes t: no subscriber twice for a type,
 * one meaning for a name=, at most ROUTING_MAX_SUBSCRIBERS a type. */
static int
check_against(const routes *t, const route *r, const char *file, int line)
{
	size_t same_type = 0;
	for (size_t i = 0; i < t->n; i++) {
		const route *o = &t->r[i];
		int same_sub = strcmp(o->kind, r->kind) == 0 &&
		    strcmp(o->key, r->key) == 0;
		if (strcmp(o->type, r->type) == 0) {
			same_type++;
			if (same_sub)
				return bad_line(file, line, "%s is routed to %s "
				    "on line %d already", r->type,
				    r->how == ROUTE_BUILTIN ? r->kind : r->key,
				    o->line);
		}
		if (same_sub && r->how != ROUTE_BUILTIN &&
		    (o->how != r->how || strcmp(o->target, r->target) != 0 ||
			(o->secret_file && strcmp(o->secret_file,
			    r->secret_file) != 0)))
			return bad_line(file, line, "name=%s names another "
			    "subscriber on line %d", r->key, o->line);
	}
	if (same_type >= ROUTING_MAX_SUBSCRIBERS)
		return bad_line(file, line, "more than %d subscribers of %s",
		    ROUTING_MAX_SUBSCRIBERS, r->type);
	return 0;
}

/* Parses one route's fields into r; the line's other routes are in t. */
static int
parse_route(char **f, int nf, const char *file, int line, const routes *t,
    route *r)
{
	memset(r, 0, sizeof *r);
	r->line = line;
	if (nf < 2)
		return bad_line(file, line, "want EVENT-TYPE SUBSCRIBER");
	if (!envelope_type_known(f[0]))
		return bad_line(file, line, "unknown event type");
	snprintf(r->type, sizeof r->type, "%s", f[0]);
	const char *sub = f[1];
	const char *name = NULL, *secret = NULL;
	for (int i = 2; i < nf; i++) {
		if (strncmp(f[i], "name=", 5) == 0 && !name)
			name = f[i] + 5;
		else if (strncmp(f[i], "secret=", 7) == 0 && !secret)
			secret = f[i] + 7;
		else
			return bad_line(file, line, "unknown or repeated option "
			    "(want name=NAME, secret=FILE)");
	}
	int rc = strncmp(sub, "builtin:", 8) == 0
	    ? parse_builtin(sub, name, secret, file, line, r)
	    : parse_external(sub, name, secret, file, line, r);
	return rc ? rc : check_against(t, r, file, line);
}

static void
route_free(route *r)
{
	free(r->target);
	free(r->secret_file);
	r->target = r->secret_file = NULL;
}

void
routing_free(routes *t)
{
	for (size_t i = 0; i < t->n; i++)
		route_free(&t->r[i]);
	free(t->r);
	free(t->file);
	memset(t, 0, sizeof *t);
}

int
routing_parse(const char *text, size_t len, const char *file, routes *out)
{
	memset(out, 0, sizeof *out);
	out->file = bakery_xstrdup(file);
	const char *p = text, *end = text + len;
	char buf[ROUTING_MAX_LINE + 1];
	int line = 0, rc = 0;
	while (p < end && !rc) {
		line++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n > ROUTING_MAX_LINE) {
			rc = bad_line(file, line, "a line longer than %d bytes",
			    ROUTING_MAX_LINE);
			break;
		}
		if (memchr(p, '\0', n)) {
			rc = bad_line(file, line, "a NUL byte");
			break;
		}
		if (!bakery_utf8_valid(p, n)) {
			rc = bad_line(file, line, "not UTF-8");
			break;
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		p = nl ? nl + 1 : end;
		if (n && buf[n - 1] == '\r')
			buf[--n] = '\0';
		char *f[8];
		int nf = 0;
		char *s = buf;
		for (;;) {
			s += strspn(s, " \t");
			if (!*s || (nf == 0 && *s == '#'))
				break;
			if (nf == 8) {
				nf = 9;
				break;
			}
			f[nf++] = s;
			s += strcspn(s, " \t");
			if (*s)
				*s++ = '\0';
		}
		if (nf == 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)buf[i] < ' ' && buf[i] != '\t' &&
			    buf[i] != '\0') {
				nf = -1;
				break;
			}
		if (nf < 0 || nf > 8) {
			rc = bad_line(file, line, nf < 0 ? "a control character"
						     : "too many fields");
			break;
		}
		if (out->n == ROUTING_MAX_ROUTES) {
			rc = bad_line(file, line, "more than %d routes",
			    ROUTING_MAX_ROUTES);
			break;
		}
		route r;
		if ((rc = parse_route(f, nf, file, line, out, &r))) {
			route_free(&r);
			break;
		}
		out->r = bakery_xrealloc(out->r, (out->n + 1) * sizeof *out->r);
		out->r[out->n++] = r;
	}
	if (!rc && out->n == 0)
		rc = bakery_fail(EX_CONFIG, "%s: no routes", file);
	if (rc)
		routing_free(out);
	return rc;
}

/* The first of the search that exists (see routing.h). */
static char *
find_routes(const char *home, const char *file)
{
	if (file && *file)
		return bakery_xstrdup(file);
	const char *env = getenv("BAKERY_ROUTES");
	if (env && *env)
		return bakery_xstrdup(env);
	char *dflt = home ? NULL : home_default();
	char *p = bakery_xasprintf("%s/routes", home ? home : dflt);
	free(dflt);
	if (access(p, F_OK) == 0)
		return p;
	free(p);
	return home_share_path("routes");
}

/* A table of the context's, and what holds it (ctx->routes_free). */
static void
routes_drop(routes *t)
{
	routing_free(t);
	free(t);
}

int
routing_load(bakery_ctx *ctx, const char *file)
{
	char *path = find_routes(ctx->home, file);
	struct stat st;
	int rc = 0;
	int fd = file_open_regular(path, 0, &st);
	if (fd == FILE_NOT_REGULAR) {
		rc = bakery_fail(EX_CONFIG, "routes file '%s': not a file", path);
	} else if (fd < 0) {
		rc = bakery_fail(EX_CONFIG, "cannot read routes file '%s': %s",
		    path, strerror(errno));
	} else if (st.st_size > ROUTING_MAX_FILE) {
		rc = bakery_fail(EX_CONFIG, "routes file '%s': larger than %d "
		    "bytes", path, ROUTING_MAX_FILE);
	}
	if (rc) {
		if (fd >= 0)
			close(fd);
		free(path);
		return rc;
	}
	char *text = bakery_xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	ssize_t r;
	while (got < (size_t)st.st_size &&
	    ((r = read(fd, text + got, (size_t)st.st_size - got)) > 0 ||
		(r < 0 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	close(fd);
	routes t;
	rc = routing_parse(text, got, path, &t);
	free(text);
	free(path);
	if (rc)
		return rc;
	if (ctx->routes && ctx->routes_free)
		ctx->routes_free(ctx->routes);
	ctx->routes = bakery_xmalloc(sizeof *ctx->routes);
	*ctx->routes = t;
	ctx->routes_free = routes_drop;
	return 0;
}

int
routing_ensure(bakery_ctx *ctx)
{
	return ctx->routes ? 0 : routing_load(ctx, NULL);
}

const routes *
routing_current(bakery_ctx *ctx)
{
	if (routing_ensure(ctx))
		return NULL;
	return ctx->routes;
}

const route *
routing_external(bakery_ctx *ctx, const char *name)
{
	const routes *t = routing_current(ctx);
	for (size_t i = 0; t && i < t->n; i++)
		if (t->r[i].how != ROUTE_BUILTIN &&
		    strcmp(t->r[i].key, name) == 0)
			return &t->r[i];
	return NULL;
}

int
routing_subscribers(bakery_ctx *ctx, jv env, char addresses[][BAKERY_ADDRESS_SIZE],
    size_t *n)
{
	*n = 0;
	const char *type = envelope_str(env, "type");
	if (!type)
		return bakery_fail(EX_DATAERR, "envelope has no type");
	const routes *t = routing_current(ctx);
	if (!t)
		return EX_CONFIG;
	for (size_t i = 0; i < t->n; i++) {
		const route *r = &t->r[i];
		if (strcmp(r->type, type) != 0)
			continue;
		const char *key = r->key;
		if (r->key_field) {
			key = envelope_data_str(env, r->key_field);
			if (!key || !bakery_name_valid(key))
				return bakery_fail(EX_DATAERR,
				    "%s has no valid data.%s for %s", type,
				    r->key_field, r->kind);
		}
		if (*n == ROUTING_MAX_SUBSCRIBERS)
			break;
		snprintf(addresses[(*n)++], BAKERY_ADDRESS_SIZE, "%s/%s", r->kind, key);
	}
	return 0;
}

jv
routing_describe(bakery_ctx *ctx)
{
	jv out = jv_array();
	const routes *t = routing_current(ctx);
	for (size_t i = 0; t && i < t->n; i++) {
		const route *r = &t->r[i];
		jv row = jv_object();
		row = jv_object_set(row, jv_string("type"), jv_string(r->type));
		const object_kind *from = kind_recording(r->type);
		row = jv_object_set(row, jv_string("from"),
		    from ? jv_string(from->name) : jv_null());
		if (r->key_field)
			row = jv_object_set(row, jv_string("to"), jv_string_fmt(
			    "%s/{data.%s}", r->kind, r->key_field));
		else
			row = jv_object_set(row, jv_string("to"),
			    jv_string_fmt("%s/%s", r->kind, r->key));
		row = jv_object_set(row, jv_string("subscriber"),
		    r->how == ROUTE_BUILTIN ? jv_string_fmt("builtin:%s", r->kind)
		    : r->how == ROUTE_EXEC ? jv_string_fmt("exec:%s", r->target)
					   : jv_string(r->target));
		row = jv_object_set(row, jv_string("line"), jv_number(r->line));
		out = jv_array_append(out, row);
	}
	return out;
}
