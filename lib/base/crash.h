/*
 * crash.h — crash points: named places in the code where a test may kill,
 * stop or cut the power under a program (docs/reliability.md).
 *
 * Owns: BAKERY_CRASH_AT, BAKERY_STOP_AT and BAKERY_POWERCUT_AT, read at
 * each point passed.
 *
 * Promises: without them, a point does nothing. A kill is SIGKILL, as a
 * crash would be: no exit, no handler, nothing flushed but stdout and
 * stderr.
 */
#ifndef BAKERY_CRASH_H
#define BAKERY_CRASH_H

/* Kills the process with SIGKILL when BAKERY_CRASH_AT names this point
 * ("NAME" or "NAME:N" for the N-th time the point is passed); stops it
 * with SIGSTOP when BAKERY_STOP_AT does, so that a test can act while the
 * process stands there, and SIGCONT it on. BAKERY_POWERCUT_AT cuts the
 * power of the test VFS there (testvfs.h). */
void bakery_crash_point(const char *name);

#endif
