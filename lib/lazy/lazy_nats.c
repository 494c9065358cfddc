/*
 * lazy_nats.c — libnats's table, loaded on first use (lazy_nats.h).
 */
#include "lazy_nats.h"

LAZY_TABLE(lazy_nats, LAZY_NATS_SONAME, LAZY_NATS_FUNCTIONS)
