/*
 * backup.h — a consistent copy of a whole home, taken while it runs
 * (bakery-backup(1)). The copy is a home: restoring is pointing
 * BAKERY_HOME at it, or moving it into place.
 *
 * Consistency. An event's way crosses files: an object's outbox, the
 * queue, a subscriber's seen table, the sandbox's dead letters. Copied
 * file by file while they change, a copy could hold an event in none of
 * them (the relay sent it after the queue was copied and removed the
 * outbox row before the object was), so the copy is taken with the home
 * held still where it matters:
 *
 *   0. a first pass, unheld: every SQLite file but the queue copied with
 *      VACUUM INTO from a read-only connection (db_open_reader), each
 *      with a stamp of its file's, -wal's and journal's inode, size and
 *      modification time; the other files as bytes;
 *   1. every sandbox's lock (home_lock_sandbox), exclusively, in name
 *      order, as the wipe takes one: no object of the home is open, so
 *      no outbox, seen table, alarm entry or clock floor changes;
 *   2. the queue's write lock (BEGIN IMMEDIATE on a connection of its
 *      own), taken after the sandboxes' locks, the order in which a relay
 *      takes them (it holds its object while it sends): no send, ack,
 *      dead-lettering or redrive lands, while readers go on;
 *   3. the second pass, held: the queue copied, then every SQLite file
 *      copied again unless its stamp is the first pass's and was already
 *      2 s old then (a write inside the same tick of the file system's
 *      clock would not move it); the other files copied again; what the
 *      home no longer has removed from the copy. -wal, -shm and journals
 *      are not copied (VACUUM INTO folds them in), nor a wipe's aside
 *      folder;
 *   4. the locks released; the copy synced, then renamed into place.
 *
 * So the home is held for the files that changed since the first pass,
 * not for all of them. A sandbox made while the home is held was not
 * held: the copy is refused (EX_TEMPFAIL), to be taken again.
 *
 * What the copy holds is then a state the home was in: an event is in an
 * outbox, in the queue, or applied, and what a subscriber applied after
 * the copy's queue was taken is delivered again on the copy and absorbed
 * by its seen table (at least once, never lost, applied once). Writers
 * wait while the home is held: a command waits up to its busy timeout
 * (BAKERY_BUSY_TIMEOUT_MS, 30 s), then exits 75 and loses nothing.
 *
 * The copy is written into DIR's folder under a name of its own
 * (.NAME.partial-XXXXXX) and renamed DIR only when whole and synced, so
 * a killed backup never leaves a DIR that looks complete. DIR must not
 * exist, or be an empty folder; it must be outside the home. Files are
 * 0600 and folders 0700, the running user's.
 *
 * The embedded queue only: a home whose queue is on NATS is EX_CONFIG
 * (the stream is NATS's to back up).
 */
#ifndef BAKERY_BACKUP_H
#define BAKERY_BACKUP_H

#include <jv.h>

#include "../store/store.h"

/* Copies ctx's home into dir. On 0, *report is {"backup","home",
 * "files","databases","bytes","copied_held","held_ms"}: copied_held
 * counts the SQLite files copied again while held, the queue aside. EX_CANTCREAT when dir exists
 * and is not an empty folder; EX_USAGE when it is inside the home;
 * EX_CONFIG for no home or a queue on NATS; EX_TEMPFAIL when a lock is
 * held past the busy timeout; I/O errors as db_errno_code. */
int backup_run(bakery_ctx *ctx, const char *dir, jv *report);

#endif
