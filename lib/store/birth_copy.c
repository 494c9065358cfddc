/*
 * birth_copy.c — the bytes of a file's birth: the schema's image, a file
 * made whole under a temporary name, an object's private copy and the
 * making's lock, the names given and their syncs (birth.h, steps 2 to 5).
 */
#define _GNU_SOURCE
#include "birth-internal.h"
#include "capture.h"
#include "file.h"
#include "ctx.h"
#include "memvfs.h"
#include "sql.h"
#include "testvfs.h"
#include "walvfs.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>


/*
 * A new file in WAL is made whole before it has its name: its image (the
 * schema, built in memory, with the WAL mode's two bytes set in its
 * header, as journal_mode=WAL sets them) is written to a temporary file
 * beside it and synced; then, under an flock on the folder that every
 * maker takes, an empty -wal is created and the file renamed into place,
 * and the folder is synced once for both names. So a new file costs two
 * syncs where switching an empty one to WAL cost four (a rollback-journal
 * transaction for its first page) and its -wal's creation one more, and
 * no file is ever seen without its schema. A -wal or -shm beside a file
 * that does not exist is a leftover (of a file removed without them) and
 * is removed first: SQLite would replay such a WAL into the new file.
 * The flock keeps that from meeting another maker's fresh -wal.
 */
int
birth_fail(const char *what, const char *path, int err)
{
	return bakery_fail(db_errno_code(err), "cannot %s '%s': %s", what,
	    path, strerror(err));
}

static int
build_image(const schema_def *schema, int replicated, unsigned char **image,
    sqlite3_int64 *size)
{
	sqlite3 *db;
	int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	char *bump = bakery_xasprintf("PRAGMA user_version = %d",
	    schema->count);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK && schema->create)
		rc = sqlite3_exec(db, schema->create, NULL, NULL, NULL);
	for (int i = 0; rc == SQLITE_OK && !schema->create &&
	     i < schema->count; i++)
		rc = sqlite3_exec(db, schema->migrations[i], NULL, NULL, NULL);
	if (rc == SQLITE_OK && replicated)
		rc = sqlite3_exec(db, capture_tables_sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, bump, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	free(bump);
	*image = rc == SQLITE_OK ? sqlite3_serialize(db, "main", size, 0)
				 : NULL;
	int code = *image && *size >= 100 ? 0
	    : db_fail(db, rc == SQLITE_OK ? SQLITE_NOMEM : rc,
	    "cannot build a new file's schema");
	sqlite3_close(db);
	if (!code)
		memcpy(*image + HEADER_VERSIONS, VERSIONS_WAL, 2);
	return code;
}

/* A schema's image, built once in a process: a consumer makes a file of
 * the same few kinds for order after order, and running the CREATE
 * statements again cost more than the rest of its work. Schemas live as
 * long as the process (kind_schema), and so do their images. */
static int
image_of(const schema_def *schema, int replicated,
    const unsigned char **image, sqlite3_int64 *size)
{
	static struct {
		const schema_def *schema;
		int replicated; /* with the capture's tables (capture.h) */
		unsigned char *image;
		sqlite3_int64 size;
	} built[32];
	size_t i = 0;
	for (; i < sizeof built / sizeof *built && built[i].schema; i++)
		if (built[i].schema == schema &&
		    built[i].replicated == replicated) {
			*image = built[i].image;
			*size = built[i].size;
			return 0;
		}
	unsigned char *made;
	int rc = build_image(schema, replicated, &made, size);
	if (rc)
		return rc;
	if (i == sizeof built / sizeof *built) {
		/* More schemas than places: the first one's goes (nobody
		 * holds an image past make_whole). */
		sqlite3_free(built[0].image);
		i = 0;
	}
	built[i].schema = schema;
	built[i].replicated = replicated;
	built[i].image = made;
	built[i].size = *size;
	*image = made;
	return 0;
}

/* Makes fd (of path) size bytes of image: 0 or a failure. */
static int
write_image(int fd, const char *path, const unsigned char *image,
    sqlite3_int64 size)
{
	if (testvfs_wrote())
		return birth_fail("write", path, ENOSPC);
	if (ftruncate(fd, size) != 0)
		return birth_fail("write", path, errno);
	for (sqlite3_int64 off = 0; off < size;) {
		ssize_t n = pwrite(fd, image + off, (size_t)(size - off), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return birth_fail("write", path, n < 0 ? errno : ENOSPC);
		off += n;
	}
	return 0;
}

int
birth_make_whole(const char *path, const schema_def *schema, int *made)
{
	const unsigned char *image;
	sqlite3_int64 size;
	int rc = image_of(schema, 0, &image, &size);
	if (rc)
		return rc;
	const char *slash = strrchr(path, '/');
	char *tmp = bakery_xasprintf("%.*s/.new-XXXXXX",
	    slash ? (int)(slash - path) : 1, slash ? path : ".");
	int fd = mkstemp(tmp); /* 0600 */
	if (fd < 0)
		rc = birth_fail("create", tmp, errno);
	if (!rc)
		rc = write_image(fd, tmp, image, size);
	if (!rc)
		rc = birth_sync_counted(fd, tmp, 0);
	if (fd >= 0)
		close(fd);
	int named = 0;
	if (!rc)
		rc = birth_name_new_file(tmp, path, &named);
	*made = named;
	if (fd >= 0 && !named)
		unlink(tmp); /* another maker won, or this one failed */
	free(tmp);
	return rc == 1 ? 0 : rc;
}

/*
 * A new file and its first transaction. An object's file (order/ID at a
 * place, billing/ID at a pay, a customer's files at their first event) is
 * born with the change that makes it: its image is copied to a private
 * file beside it, .new.NAME, as a file in a rollback journal (the header's
 * two mode bytes 1), and the first transaction runs there with no journal
 * on disk (journal_mode=MEMORY: a rollback or a savepoint still works) and
 * no sync (synchronous=OFF: nobody else can read it, and a copy half
 * written is no object). At its commit the copy gets WAL's two bytes and
 * one sync, then, under the folder's flock every maker takes, an empty
 * -wal and the copy's rename into place, and one sync of the folder for
 * both names. A command so pays 2 syncs for the file it makes and the
 * change in it, where the file made whole first (make_whole) and then
 * changed paid 3: the image's, the folder's, and the commit's in the
 * -wal. A file that never had a change committed is never seen.
 *
 * .new.NAME is also the lock of the making: every maker opens it and takes
 * its flock, then checks that the file it locked still has that name (one
 * that settled renamed it into place; one that gave up removed it), and
 * then whether path exists (made meanwhile: the maker leaves its lock file
 * removed and opens path as any opener). A maker killed midway leaves a
 * .new.NAME that the next maker truncates and writes again; the daily
 * wipe takes it with its folder. Only a .new.NAME bakery made is written
 * again: a regular file of one link, of this user, 0600 (it is made so,
 * whatever the umask). Anything else at that name (a hard link to a file
 * outside the home, a file left 0666 whose mode the object and its -wal
 * and -shm would take, another user's, a FIFO, a symlink) has its name
 * removed, never the file it links to, and a new one is made; a folder
 * there is EX_CONFIG, the operator's to remove.
 */
static void
new_free(birth_copy *nf)
{
	if (nf->fd >= 0)
		close(nf->fd);
	free(nf->error);
	free(nf->tmp);
	free(nf->path);
	free(nf);
}

/* Whether st is a .new.NAME bakery made: a regular file of one link,
 * this process's user's, 0600. Anything else (a hard link to a file
 * outside the home, a file left 0666, another user's, a FIFO) would be
 * written through, or lend its mode to the object, its -wal and -shm. */
static const char *
new_foreign(const struct stat *st)
{
	return !S_ISREG(st->st_mode) ? "not a regular file"
	    : st->st_nlink != 1 ? "a file of more than one link"
	    : st->st_uid != geteuid() ? "another user's file"
	    : (st->st_mode & 07777) != 0600 ? "a file not of mode 0600" : NULL;
}

/* Opens .new.NAME, made 0600 when missing (whatever the umask). A folder
 * there is EX_CONFIG: removing it is the operator's. */
static int
new_open(birth_copy *nf)
{
	nf->fd = open(nf->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (nf->fd >= 0 && fchmod(nf->fd, 0600) != 0)
		return birth_fail("create", nf->tmp, errno);
	if (nf->fd < 0 && errno == EEXIST)
		nf->fd = open(nf->tmp, O_RDWR | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	if (nf->fd >= 0)
		return 0;
	if (errno == EISDIR)
		return bakery_fail(EX_CONFIG, "cannot make '%s': '%s' is a "
		    "folder, not bakery's: remove it", nf->path, nf->tmp);
	/* A symlink (ELOOP) is another's: taken away as a foreign file is. */
	return errno == ELOOP ? 2
	    : birth_fail("create", nf->tmp, nf->err = errno);
}

/* 1 when nf's .new.NAME is no longer the file its descriptor holds (it
 * was renamed into place, or removed): its descriptor is closed. */
static int
moved(birth_copy *nf)
{
	struct stat a, b;
	if (fstat(nf->fd, &a) == 0 && stat(nf->tmp, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 0;
	close(nf->fd);
	nf->fd = -1;
	return 1;
}

/* The flock of .new.NAME, that file still of that name: 0, 1 when it went
 * (opened once more), LOCK_HELD when another holds it and ctx is NULL
 * (no wait), or a failure. */
#define LOCK_HELD 2
static int
new_lock(bakery_ctx *ctx, birth_copy *nf)
{
	int rc = new_open(nf);
	struct stat st;
	const char *why = rc == 2 ? "a symlink" : rc ? NULL
	    : fstat(nf->fd, &st) != 0 ? "a file that cannot be looked at"
	    : new_foreign(&st);
	if (why) {
		/* Not made by bakery: its name is taken away, never the file
		 * it may be a link to, and a file of bakery's own made in its
		 * place. */
		if (nf->fd >= 0)
			close(nf->fd);
		nf->fd = -1;
		if (unlink(nf->tmp) != 0 && errno != ENOENT)
			return bakery_fail(EX_CONFIG, "cannot make '%s': '%s' is "
			    "%s, not bakery's, and cannot be removed: %s",
			    nf->path, nf->tmp, why, strerror(errno));
		bakery_log(LOG_WARN, "foreign_file_removed", "file", nf->tmp,
		    "why", why, (char *)NULL);
		return 1;
	}
	if (rc)
		return rc;
	for (int tries = 1; flock(nf->fd, LOCK_EX | LOCK_NB) != 0; tries++) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return birth_fail("lock", nf->tmp, errno);
		if (!ctx)
			return LOCK_HELD;
		/* No wait while this process holds makings' locks of its own
		 * group: the other maker may be waiting for one of them (two
		 * groups making the same files in opposite orders). Settled,
		 * they are given up; each birth keeps its own outcome. */
		if (tries == 1)
			(void)birth_group_settle(ctx);
		/* Named meanwhile: its maker, settled, may hold the flock on
		 * the named file until it ends. Open the name again. */
		if (moved(nf))
			return 1;
		if (!db_busy_wait((void *)(intptr_t)ctx->busy_timeout_ms,
		    tries)) {
			char *who = file_lock_holders(nf->fd);
			rc = bakery_fail(EX_TEMPFAIL, "'%s' is being made by %s",
			    nf->path, who ? who : "another process");
			free(who);
			return rc;
		}
	}
	if (moved(nf))
		return 1;
	nf->locked = 1;
	return 0;
}

/*
 * A kind's connection. A consumer makes a customer's files, and a batch of
 * places an order's, object after object of the same few kinds: opening a
 * connection on each new copy had SQLite read and parse its schema and
 * prepare its statements anew, the most of what a new object cost. So the
 * first transaction runs on one connection a schema keeps for the process,
 * on a buffer (memvfs.h) given the schema's image again before each copy:
 * its schema parsed once, its statements prepared once. The bytes its
 * commit leaves are then written to .new.NAME, whose steps 4 and 5 are as
 * before. A second copy of a schema begun while the first is still open
 * (none of bakery's programs does it now) gets a connection on its own
 * file, as every copy did before.
 */
#define KINDS 16
static struct birth_kin {
	const schema_def *schema;
	int replicated; /* its image has the capture's tables */
	sqlite3 *db;
	memvfs_buf *buf;
	db_stmts stmts;
	int busy;
} kinds[KINDS];

/* Puts image in k's buffer, as a file in a rollback journal. */
static void
put_image(struct birth_kin *k, const unsigned char *image,
    sqlite3_int64 size)
{
	memvfs_set(k->buf, image, size);
	memvfs_patch(k->buf, HEADER_VERSIONS, VERSIONS_ROLLBACK, 2);
}

/* schema's connection, free for a copy, its buffer given the image, and
 * opened when first asked; NULL when it is taken, or all are. */
static struct birth_kin *
kin_of(const schema_def *schema, int replicated,
    const unsigned char *image, sqlite3_int64 size)
{
	struct birth_kin *k = NULL;
	for (size_t i = 0; i < KINDS && !k; i++)
		if ((kinds[i].schema == schema &&
		    kinds[i].replicated == replicated) || !kinds[i].schema)
			k = &kinds[i];
	if (!k || k->busy)
		return NULL;
	if (k->db) {
		put_image(k, image, size);
		return k;
	}
	int rc = memvfs_open(image, size, &k->db, &k->buf);
	if (rc == SQLITE_OK)
		put_image(k, image, size);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(k->db, "PRAGMA journal_mode=MEMORY;"
		    "PRAGMA synchronous=OFF; PRAGMA foreign_keys=ON;"
		    "PRAGMA trusted_schema=OFF", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(k->db);
		memvfs_free(k->buf);
		k->db = NULL;
		k->buf = NULL;
		return NULL; /* a copy of its own says why, if it fails too */
	}
	k->schema = schema;
	k->replicated = replicated;
	return k;
}

/* The copy of the image, in a rollback journal, and its connection: the
 * kind's when it is free, else one on .new.NAME itself. */
static int
new_copy(birth_copy *nf, const schema_def *schema, int replicated,
    sqlite3 **db, db_stmts *stmts)
{
	const unsigned char *image;
	sqlite3_int64 size;
	int rc = image_of(schema, replicated, &image, &size);
	if (rc)
		return rc;
	struct birth_kin *k = kin_of(schema, replicated, image, size);
	if (k) {
		*db = k->db;
		rc = sqlite3_exec(*db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (rc == SQLITE_OK) {
			k->busy = 1;
			nf->kin = k;
			*stmts = k->stmts;
			memset(&k->stmts, 0, sizeof k->stmts);
			return 0;
		}
		*db = NULL;
		return db_fail(k->db, rc, "cannot begin a new file's "
		    "first transaction");
	}
	if ((rc = write_image(nf->fd, nf->tmp, image, size)))
		return rc;
	if (pwrite(nf->fd, VERSIONS_ROLLBACK, 2, HEADER_VERSIONS) != 2)
		return birth_fail("write", nf->tmp, errno);
	rc = sqlite3_open_v2(nf->tmp, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(*db, "PRAGMA locking_mode=EXCLUSIVE;"
		    "PRAGMA journal_mode=MEMORY;"
		    "PRAGMA synchronous=OFF; PRAGMA foreign_keys=ON;"
		    "PRAGMA trusted_schema=OFF; BEGIN IMMEDIATE", NULL, NULL,
		    NULL);
	if (rc != SQLITE_OK) {
		char *what = bakery_xasprintf("cannot make '%s'", nf->path);
		rc = db_fail(*db, rc, what);
		free(what);
	}
	return rc;
}

/* Gives the kind's connection back, its transaction ended, or closes the
 * copy's own. */
static void
give_up(birth_copy *c, sqlite3 **db, db_stmts *stmts)
{
	struct birth_kin *k = c->kin;
	if (k && *db == k->db) {
		db_rollback(k->db);
		k->stmts = *stmts;
		k->busy = 0;
		c->kin = NULL;
	} else {
		db_stmts_free(stmts);
		sqlite3_close(*db);
	}
	memset(stmts, 0, sizeof *stmts);
	*db = NULL;
}

int
birth_copy_committed(birth_copy *c, sqlite3 **db, db_stmts *stmts)
{
	int rc = 0;
	if (c->kin && *db == c->kin->db) {
		sqlite3_int64 size;
		const unsigned char *bytes = memvfs_bytes(c->kin->buf, &size);
		rc = write_image(c->fd, c->tmp, bytes, size);
	}
	give_up(c, db, stmts);
	return rc;
}

void
birth_copy_abandon(birth_copy *c, sqlite3 **db, db_stmts *stmts)
{
	give_up(c, db, stmts);
}

/* The making of path, its lock not taken yet. */
static birth_copy *
new_of(const char *path)
{
	birth_copy *nf = bakery_xmalloc(sizeof *nf);
	memset(nf, 0, sizeof *nf);
	nf->fd = -1;
	nf->refs = 1;
	nf->path = bakery_xstrdup(path);
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t bl = strlen(base);
	if (bl > 3 && strcmp(base + bl - 3, ".db") == 0)
		bl -= 3;
	nf->tmp = bakery_xasprintf("%.*s.new.%.*s", (int)(base - path), path,
	    (int)bl, base);
	return nf;
}

int
birth_hold(const char *path, birth_copy **out)
{
	*out = NULL;
	birth_copy *nf = new_of(path);
	int rc, tries = 0;
	while ((rc = new_lock(NULL, nf)) == 1 && ++tries < 100)
		;
	if (rc == 1)
		rc = bakery_fail(EX_TEMPFAIL, "'%s' is being made by another "
		    "process", path);
	if (rc == LOCK_HELD) {
		new_free(nf);
		return BIRTH_HOLD_MAKING;
	}
	if (rc) {
		/* No folder: no maker is past its lock in it. */
		int absent = nf->err == ENOENT;
		birth_release(nf);
		return absent ? 0 : rc;
	}
	if (access(path, F_OK) == 0) {
		birth_release(nf); /* its lock file goes: nothing is made */
		return BIRTH_HOLD_MADE;
	}
	*out = nf;
	return 0;
}

int
birth_copy_begin(bakery_ctx *ctx, const char *path, const schema_def *schema,
    birth_copy **out, sqlite3 **db, db_stmts *stmts)
{
	*out = NULL;
	*db = NULL;
	birth_copy *nf = new_of(path);
	walvfs_register();
	int rc, tries = 0;
	/* Gone again: another maker's that settled or gave up, or a foreign
	 * file taken away; one planted again and again is given up on. */
	while ((rc = new_lock(ctx, nf)) == 1 && ++tries < 100)
		;
	if (rc == 1)
		rc = bakery_fail(EX_TEMPFAIL, "'%s' is being made by another "
		    "process", path);
	if (!rc && access(path, F_OK) == 0) {
		unlink(nf->tmp); /* made meanwhile: opened as any file */
		new_free(nf);
		return 0;
	}
	nf->schema = schema;
	if (!rc)
		rc = new_copy(nf, schema, ctx->replica != NULL, db, stmts);
	/* Its first commit recorded as any (capture.h), sent once the file
	 * has its name. */
	if (!rc)
		rc = capture_attach(ctx, *db, path, 1);
	if (rc) {
		give_up(nf, db, stmts);
		birth_release(nf);
		return rc;
	}
	*out = nf;
	return 0;
}

int
birth_copy_outcome(const birth_copy *c)
{
	return !c->done ? 0
	    : c->rc ? bakery_fail(c->rc, "%s", c->error) : 0;
}

int
birth_copy_done(const birth_copy *c)
{
	return c->done;
}

const char *
birth_copy_path(const birth_copy *c)
{
	return c->path;
}

birth_copy *
birth_copy_hold(birth_copy *c)
{
	c->refs++;
	return c;
}

void
birth_release(birth_copy *nf)
{
	if (!nf || --nf->refs > 0)
		return;
	/* Removed under its flock: a waiter that locked it next finds it
	 * gone and opens the name again. One that never got the flock
	 * (another maker's, past the busy timeout) leaves it alone. */
	if (!nf->settled && nf->locked)
		unlink(nf->tmp);
	new_free(nf);
}
