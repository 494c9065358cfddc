/*
 * lazy_crypto.c — libcrypto's table, loaded on first use (lazy_crypto.h).
 */
#include "lazy_crypto.h"

LAZY_TABLE(lazy_crypto, LAZY_CRYPTO_SONAME, LAZY_CRYPTO_FUNCTIONS)
