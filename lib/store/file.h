/*
 * file.h — a small file put in place whole: written under a fresh name of
 * its own in the same folder (mkostemp: O_EXCL, so never through a link
 * someone left at a name bakery would use), synced, then linked or renamed
 * to its name, and the folder synced so that the name survives a power cut.
 * A reader sees no file or the whole file, never half of one, and a crash
 * leaves at most a stray PATH.XXXXXX beside it.
 *
 * And the other way: a file bakery reads (a secret, the menu, the routes,
 * an object's file) opened only when it is a regular file, so that a FIFO
 * or a device left at its name never hangs the reader.
 */
#ifndef BAKERY_FILE_H
#define BAKERY_FILE_H

#include <sys/stat.h>
#include <sys/types.h>

/* Puts text at path with the given mode. replace: rename over whatever is
 * there. Otherwise path is only ever created (link(2)): when it exists
 * already, *existed is set and the file there is left as it is (existed
 * NULL: that is an error too). 0 or an exit code, with bakery_fail's
 * message. */
int file_put(const char *path, const char *text, mode_t mode, int replace,
    int *existed);
/* fsync(2) of a folder, for a name made, renamed or removed in it; best
 * effort, as a folder that cannot be opened has nothing to sync. */
void file_sync_dir(const char *path);

/* What file_open_regular returns for a FIFO, a device, a folder or (with
 * O_NOFOLLOW) a symlink: refused, never read. */
#define FILE_NOT_REGULAR (-2)

/* Opens path for reading, O_NONBLOCK so that the open of a FIFO returns at
 * once, and keeps it only when fstat says it is a regular file; flags adds
 * to O_RDONLY | O_CLOEXEC (O_NOFOLLOW: a symlink is refused too). Returns
 * the descriptor, back in blocking mode, with *st filled (st may be NULL);
 * FILE_NOT_REGULAR; or -1 with errno. */
int file_open_regular(const char *path, int flags, struct stat *st);

/* Who else holds a flock on fd's file, from /proc/locks: "NAME (pid N)"
 * for each holder that is not this process, joined by ", " (malloc'd);
 * NULL when none is found or /proc cannot be read. For a message that
 * names what a lock waited on. */
char *file_lock_holders(int fd);

#endif
