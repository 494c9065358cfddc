/*
 * lazy_crypto.h — libcrypto's HMAC, loaded on first use (lazy.h).
 */
#ifndef BAKERY_LAZY_CRYPTO_H
#define BAKERY_LAZY_CRYPTO_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "lazy.h"

#ifndef LAZY_CRYPTO_SONAME
#define LAZY_CRYPTO_SONAME "libcrypto.so.3"
#endif

#define LAZY_CRYPTO_FUNCTIONS(X) X(CRYPTO_memcmp) X(EVP_sha256) X(HMAC) \
	X(SHA256)
LAZY_CRYPTO_FUNCTIONS(LAZY_EXTERN)
int lazy_crypto(void);

#define CRYPTO_memcmp (*lazy_CRYPTO_memcmp)
#define EVP_sha256 (*lazy_EVP_sha256)
#define HMAC (*lazy_HMAC)
#define SHA256 (*lazy_SHA256)

#endif
