/*
 * number.c — bakery_parse_number, the one integer parser: digits only,
 * within the bounds asked, anything else refused with *out untouched.
 */
#include "tap.h"

#include <limits.h>

#include "../../lib/base/util.h"

/* Whether s parses within [min, max] to want. */
static int
parses(const char *s, long long min, long long max, long long want)
{
	long long got = -7;
	return bakery_parse_number(s, min, max, &got) == 0 && got == want;
}

/* Whether s is refused within [min, max], leaving *out as it was. */
static int
refused(const char *s, long long min, long long max)
{
	long long got = -7;
	return bakery_parse_number(s, min, max, &got) == -1 && got == -7;
}

int
main(void)
{
	ok(parses("42", 0, 100, 42), "digits parse");
	ok(parses("007", 0, 100, 7), "leading zeros are digits");
	ok(refused("", 0, 100), "an empty string is refused");
	ok(refused(NULL, 0, 100), "no string is refused");
	ok(refused("+5", 0, 100), "a plus sign is refused");
	ok(refused("-5", -10, 100), "a minus sign is refused");
	ok(refused("-0", 0, 100), "minus zero is refused");
	ok(refused(" 5", 0, 100), "a leading space is refused");
	ok(refused("\t5", 0, 100), "a leading tab is refused");
	ok(refused("5 ", 0, 100), "a trailing space is refused");
	ok(refused("5x", 0, 100), "trailing junk is refused");
	ok(refused("5\n", 0, 100), "a trailing newline is refused");
	ok(refused("0x10", 0, 100), "hexadecimal is refused");
	ok(refused("1e3", 0, 10000), "an exponent is refused");
	ok(parses("9223372036854775807", 0, LLONG_MAX, LLONG_MAX),
	    "the largest long long parses");
	ok(refused("9223372036854775808", 0, LLONG_MAX),
	    "one past the largest long long is refused");
	ok(refused("99999999999999999999", 0, LLONG_MAX),
	    "twenty nines overflow and are refused");
	ok(parses("1", 1, 99, 1), "the lower bound is in");
	ok(parses("99", 1, 99, 99), "the upper bound is in");
	ok(refused("0", 1, 99), "one below the lower bound is refused");
	ok(refused("100", 1, 99), "one above the upper bound is refused");
	ok(parses("0", 0, 0, 0), "a range of one number takes it");
	return done_testing();
}
