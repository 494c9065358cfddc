/*
 * file.h — a small file put in place whole: written under a fresh name of
 * its own in the same folder (mkostemp: O_EXCL, so never through a link
 * someone left at a name bakery would use), synced, then linked or renamed
 * to its name, and the folder synced so that the name survives a power cut.
 * A reader sees no file or the whole file, never half of one, and a crash
 * leaves at most a stray PATH.XXXXXX beside it.
 */
#ifndef BAKERY_FILE_H
#define BAKERY_FILE_H

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

#endif
