/*
 * secret.h — reading a secret (a key, a webhook secret) from a file.
 *
 * The secret is the file's first line, without trailing blanks. Messages
 * name the file by what it is (say "the Stripe key file
 * (--stripe-key-file)") and never by the path it was given: a path
 * typed where a secret file is expected may be the secret itself. A file
 * that group or others may read or write is used, with a warning
 * (secret_file_mode) on standard error. The read buffer is wiped.
 */
#ifndef BAKERY_SECRET_H
#define BAKERY_SECRET_H

/* 0 and *secret (caller frees and wipes), or EX_CONFIG: the file cannot
 * be read, is not a regular file (a FIFO there is refused at once, not
 * waited on: file_open_regular), or its first line is empty. */
int secret_read_file(const char *path, const char *what, char **secret);

#endif
