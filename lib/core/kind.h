/*
 * kind.h — a kind of object, described once.
 *
 * Each kind lives in one file of the domain, lib/objects/KIND.c, which
 * declares a `const object_kind KIND_kind`: its name, where its key comes
 * from, the event types it hears and its apply function, the tables of
 * its own, and the rows bakery-show puts back into its state. lib/objects/kinds.c lists them in object_kinds[], the only
 * list of kinds: routing, the subscribers, the walk of a sandbox's
 * folders and bakery-show read it. This layer reads the descriptors
 * without knowing any kind by name.
 *
 * An object's file has the schema every kind shares (object_schema: the
 * state, events and their outbox, seen, command keys, the alarm) and its
 * kind's own tables, versioned together (OBJECT_SCHEMA_VERSION). Version
 * 3, the one 0.1.0 wrote, is the oldest a release wrote: no migration to
 * it is kept (schema.h). Version 4 moved the kinds' lists out of the
 * state document into tables of their own (.arrays).
 */
#ifndef BAKERY_KIND_H
#define BAKERY_KIND_H

#include <stddef.h>

#include <jv.h>

#include "../base/tracectx.h"
#include "../store/store.h"

/* The object schema's version, every kind's file's. */
#define OBJECT_SCHEMA_VERSION 4

struct bakery_object;

/* Applies env (of the given type) inside the object's transaction, after
 * the seen check; answers as answer.h says and, when not 2xx, fills
 * error. */
typedef int (*kind_apply_fn)(struct bakery_object *o, jv env,
    const char *type, char *error, size_t size);

/* Rows of a kind's own table shown inside the state as state.FIELD. Each
 * row is an object whose fields are the columns, named as the query
 * names them and read as types says, a letter a column: 'v' the SQL value
 * (text, a number), 'j' JSON text, 't' a time in ms, and, first only,
 * 'k' the key of the row in an object (the state field is then an object,
 * not an array), or, alone, 'o': the row is the JSON object its one
 * column holds (a list's record). A NULL leaves its field out. */
typedef struct kind_rows {
	const char *field, *types, *sql;
} kind_rows;

typedef struct object_kind {
	const char *name;
	/* Its key in a built-in route: a field of the event's data, or a
	 * fixed key (one object a sandbox). */
	const char *key_field;
	const char *key;
	/* The event types it can apply; none for a kind that hears
	 * nothing (billing) or is heard through the routes file
	 * (external). */
	const char *hears[4];
	kind_apply_fn apply;
	int create; /* 0: the object must exist to apply (409 if not) */
	/* Its lists: records keyed by their .order, each list a table of
	 * the kind's file named as it is (one row a record, in the order
	 * they came), written through kindkit.h and shown as state.NAME,
	 * an array, even before anything applied. An event touches only
	 * its own rows: no list is kept in the state document, whose size
	 * would grow with the day. */
	const char *const *arrays;
	/* The event types it records of its own, keyed by order (object_
	 * record refuses any other; bakery-trace looks there, and the
	 * routes name it as where the type comes from). */
	const char *records[4];
	/* Its own tables, for a new file (NULL: none). */
	const char *tables;
	/* Shown inside the state; ends with a row whose field is NULL. */
	kind_rows rows[4];
} object_kind;

/* Every kind, ending with NULL: defined by the domain
 * (lib/objects/kinds.c). */
extern const object_kind *const object_kinds[];

/* The schema every object's file has: what bakery-status, bakery-trace
 * and the checker read. */
extern const schema_def object_schema;

/* The kind named name, or NULL. */
const object_kind *kind_find(const char *name);
/* The kind that records events of type, or NULL. */
const object_kind *kind_recording(const char *type);
/* Whether k records events of type. */
int kind_records(const object_kind *k, const char *type);
/* k's apply of env, what it records continuing trace, env's own (as
 * envelope_trace reads it, once for all the event's subscribers); the
 * trace set before is put back. */
int kind_apply(const object_kind *k, struct bakery_object *o, jv env,
    const trace_ctx *trace, const char *type, char *error, size_t size);

/* The schema of a file of kind k: object_schema with k's tables. */
const schema_def *kind_schema(const object_kind *k);

/* Splits "KIND/KEY" into kind and key (each BAKERY_NAME_SIZE bytes): EX_USAGE for an
 * unknown kind or a bad key. *k (if not NULL) receives the kind. */
int kind_parse_address(const char *address, char *kind, char *key,
    const object_kind **k);

#endif
