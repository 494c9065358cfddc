/*
 * wal.c — the journal mode, and the files in WAL: made whole, their WAL
 * kept, checkpointed by policy; a file never born removed.
 */
#define _GNU_SOURCE
#include "wal.h"
#include "ctx.h"
#include "database.h"
#include "util.h"
#include "walvfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int
wal_reset_fixed(int version)
{
	/* Fixed in 3.51.3, and backported to 3.44.6 and 3.50.7. */
	return version >= 3051003 ||
	    (version >= 3044006 && version < 3045000) ||
	    (version >= 3050007 && version < 3051000);
}

const char *
wal_journal_mode(void)
{
	/* A library with the WAL-reset race gets a rollback journal, which
	 * has no WAL to reset. */
	return wal_reset_fixed(sqlite3_libversion_number()) ? "wal"
								  : "truncate";
}

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
static int
make_fail(const char *what, const char *path, int err)
{
	return bakery_fail(db_errno_code(err), "cannot %s '%s': %s", what,
	    path, strerror(err));
}

static int
build_image(const schema_def *schema, unsigned char **image,
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
		(*image)[18] = (*image)[19] = 2; /* WAL */
	return code;
}

/* A schema's image, built once in a process: a consumer makes a file of
 * the same few kinds for order after order, and running the CREATE
 * statements again cost more than the rest of its work. Schemas live as
 * long as the process (kind_schema), and so do their images. */
static int
wal_image(const schema_def *schema, const unsigned char **image,
    sqlite3_int64 *size)
{
	static struct {
		const schema_def *schema;
		unsigned char *image;
		sqlite3_int64 size;
	} built[32];
	size_t i = 0;
	for (; i < sizeof built / sizeof *built && built[i].schema; i++)
		if (built[i].schema == schema) {
			*image = built[i].image;
			*size = built[i].size;
			return 0;
		}
	unsigned char *made;
	int rc = build_image(schema, &made, size);
	if (rc)
		return rc;
	if (i == sizeof built / sizeof *built) {
		/* More schemas than places: the first one's goes (nobody
		 * holds an image past wal_make_file). */
		sqlite3_free(built[0].image);
		i = 0;
	}
	built[i].schema = schema;
	built[i].image = made;
	built[i].size = *size;
	*image = made;
	return 0;
}

int
wal_make_file(const char *path, const schema_def *schema, int *made)
{
	const unsigned char *image;
	sqlite3_int64 size;
	int rc = wal_image(schema, &image, &size);
	if (rc)
		return rc;
	char *dir = bakery_xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char *tmp = bakery_xasprintf("%s/.new-XXXXXX", slash ? dir : ".");
	char *wal = bakery_xasprintf("%s-wal", path);
	char *shm = bakery_xasprintf("%s-shm", path);
	int fd = mkstemp(tmp); /* 0600 */
	if (fd < 0) {
		rc = make_fail("create", tmp, errno);
	} else {
		const unsigned char *p = image;
		for (sqlite3_int64 left = size; !rc && left > 0;) {
			ssize_t n = write(fd, p, (size_t)left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				rc = make_fail("write", tmp, n < 0 ? errno : ENOSPC);
			else
				p += n, left -= n;
		}
		if (!rc && fsync(fd) != 0)
			rc = make_fail("sync", tmp, errno);
		close(fd);
	}
	int dfd = rc ? -1 : open(slash ? dir : ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (!rc && dfd < 0)
		rc = make_fail("open", dir, errno);
	while (!rc && flock(dfd, LOCK_EX) != 0)
		if (errno != EINTR)
			rc = make_fail("lock", dir, errno);
	if (!rc && access(path, F_OK) != 0) {
		unlink(wal);
		unlink(shm);
		int wfd = open(wal, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (wfd < 0)
			rc = make_fail("create", wal, errno);
		else
			close(wfd);
		if (!rc && rename(tmp, path) != 0)
			rc = make_fail("create", path, errno);
		if (!rc && fsync(dfd) != 0)
			rc = make_fail("sync", dir, errno);
		if (!rc)
			walvfs_made(path);
		if (rc)
			unlink(wal);
		*made = !rc;
	}
	if (fd >= 0)
		unlink(tmp); /* another maker won, or this one failed */
	if (dfd >= 0)
		close(dfd); /* and its flock */
	free(dir);
	free(tmp);
	free(wal);
	free(shm);
	return rc;
}

/*
 * WAL in short processes (docs/design.md, "WAL"). A file in WAL keeps its
 * -wal and -shm for good (SQLITE_FCNTL_PERSIST_WAL on every connection
 * that may write), so a reader that comes later finds them and creates
 * nothing (db_open_readonly), and a writer finds its WAL and syncs no
 * folder for it (walvfs.c). No connection checkpoints as it closes
 * (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): a process that wrote one
 * transaction would otherwise pay a checkpoint for it (the WAL and the
 * file synced). Instead a commit that leaves WAL_PAGES frames or more
 * in the WAL checkpoints it, whoever commits (a command, a consumer, a
 * relay; wal_full), with TRUNCATE: the WAL goes back to 0 bytes (PASSIVE
 * for a connection that wrote as much itself: see wal_full). A PASSIVE
 * checkpoint would not do in short processes: the next process to open
 * the file, alone, rebuilds the WAL's index from the file and counts every
 * frame as not copied yet (recovery sets nBackfill to 0), so the WAL
 * would never start over and would grow for ever, each process
 * checkpointing it all again. TRUNCATE waits for readers to leave the WAL
 * (at most WAL_CKPT_WAIT_MS); if one stays, it copies what it can as a
 * PASSIVE one would, and the next commit tries again. So a WAL stays
 * about WAL_PAGES pages (plus one transaction) long, and a process
 * that opens a file alone reads that much at most to rebuild its index.
 * Harmless in a rollback journal.
 */
#define WAL_PAGES 128
#define WAL_CKPT_WAIT_MS 20

static int
ckpt_wait(void *unused, int tries)
{
	(void)unused;
	if (tries >= WAL_CKPT_WAIT_MS)
		return 0;
	sqlite3_sleep(1);
	return 1;
}

static int
wal_full(void *timeout_ms, sqlite3 *db, const char *name, int frames)
{
	if (frames < WAL_PAGES)
		return SQLITE_OK;
	/* A connection that wrote that much itself is a long-lived writer
	 * (a consumer, a relay that follows, B1): a PASSIVE checkpoint
	 * lets its next commit start the WAL over in place, where TRUNCATE
	 * would make every commit after it grow the file again (a sync
	 * that must also write the file's size: B1 ran 4 to 8 times
	 * slower). Past twice the bound, TRUNCATE all the same. */
	int written = 0, high = 0;
	sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &written, &high, 0);
	int mode = written >= WAL_PAGES && frames < 2 * WAL_PAGES
	    ? SQLITE_CHECKPOINT_PASSIVE : SQLITE_CHECKPOINT_TRUNCATE;
	sqlite3_busy_handler(db, ckpt_wait, NULL);
	sqlite3_wal_checkpoint_v2(db, name, mode, NULL, NULL);
	sqlite3_busy_handler(db, db_busy_wait, timeout_ms);
	return SQLITE_OK; /* the commit stands whatever the checkpoint did */
}

void
wal_keep(bakery_ctx *ctx, sqlite3 *db)
{
	int on = 1;
	sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	sqlite3_wal_hook(db, wal_full, (void *)(intptr_t)ctx->busy_timeout_ms);
}

/* A file in WAL that nothing was ever committed to since this process
 * made it whole (make_wal_file): its -wal holds no frame (empty, or its
 * 32-byte header alone, written by a first commit that failed at the
 * header's sync) and the file is as it was made (a TRUNCATE checkpoint
 * empties a WAL too, but writes the file first). */
static int
unborn_wal(const char *path)
{
	char *wal = bakery_xasprintf("%s-wal", path);
	struct stat sb;
	int empty = stat(wal, &sb) == 0 && sb.st_size <= 32;
	free(wal);
	return empty && walvfs_as_made(path);
}

void
wal_drop_unborn(sqlite3 *db, const char *path)
{
	db_rollback(db);
	/* Under SQLite's exclusive lock on the file, taken through its own
	 * file (a transaction would need the disk that just failed): a
	 * process that gave the file its schema meanwhile made it longer
	 * than 0 bytes, and it stays; one that opened it and writes later
	 * finds it unlinked (SQLITE_READONLY_DBMOVED) and fails rather than
	 * writing into a removed file. */
	sqlite3_file *f = NULL;
	if (!db || sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER,
	    &f) != SQLITE_OK || !f || !f->pMethods)
		return;
	sqlite3_int64 size = -1;
	if (f->pMethods->xLock(f, SQLITE_LOCK_SHARED) == SQLITE_OK) {
		if (f->pMethods->xLock(f, SQLITE_LOCK_RESERVED) == SQLITE_OK &&
		    f->pMethods->xLock(f, SQLITE_LOCK_EXCLUSIVE) == SQLITE_OK &&
		    f->pMethods->xFileSize(f, &size) == SQLITE_OK &&
		    (size == 0 || unborn_wal(path))) {
			const char *suffix[] = { "", "-journal", "-wal", "-shm" };
			for (size_t i = 0; i < sizeof suffix / sizeof *suffix;
			     i++) {
				char *p = bakery_xasprintf("%s%s", path, suffix[i]);
				unlink(p);
				free(p);
			}
		}
		f->pMethods->xUnlock(f, SQLITE_LOCK_NONE);
	}
}
