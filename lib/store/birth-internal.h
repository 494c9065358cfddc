/*
 * birth-internal.h — what birth.c asks of birth_copy.c: the bytes of a
 * file's birth (birth.h says the protocol). Private to lib/store/.
 */
#ifndef BAKERY_BIRTH_INTERNAL_H
#define BAKERY_BIRTH_INTERNAL_H

#include "birth.h"

/* Records "cannot WHAT 'PATH': strerror(err)" with err's exit code. */
int birth_fail(const char *what, const char *path, int err);
/* Makes path whole with schema (steps 2 and 3 of a home's file): *made
 * is set when this call made it, not when another maker won. */
int birth_make_whole(const char *path, const schema_def *schema,
    int *made);
/* Takes the making of path (steps 2 and 3 of an object's file): its
 * folder must exist. *copy is NULL when path exists (made meanwhile:
 * open it as usual). Else *db is a connection on a private copy of
 * schema's image beside path, a transaction begun in it, and nothing is
 * at path until birth_copy_settle. Another maker of path waits (up to
 * ctx's busy timeout, then EX_TEMPFAIL) until this one has settled or
 * ended. */
int birth_copy_begin(bakery_ctx *ctx, const char *path,
    const schema_def *schema, birth_copy **copy, sqlite3 **db);
/* After a commit on *db (steps 4 and 5): closes *db (its statements
 * finalized first) and gives the copy, synced, path's name beside an
 * empty -wal, the folder synced once for both. Then path holds the
 * committed transaction; birth_release after, whatever it returns. */
int birth_copy_settle(birth_copy *copy, sqlite3 **db);

#endif
