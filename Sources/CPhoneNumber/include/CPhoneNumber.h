/*
 * CPhoneNumber: a small C interface over Google's libphonenumber (C++).
 *
 * Only plain C types cross this boundary, so Swift can import it without C++
 * interop. Every function is thread-safe (libphonenumber's PhoneNumberUtil is
 * a thread-safe singleton), never throws, and never writes more than the given
 * capacity into an output buffer. Output strings are always NUL-terminated when
 * the capacity is at least 1.
 *
 * Region codes are ISO 3166-1 alpha-2 ("FR", "US"); they are matched
 * case-insensitively. "ZZ" (or NULL / "") means "unknown region".
 */
#ifndef GATEHOUSE_CPHONENUMBER_H
#define GATEHOUSE_CPHONENUMBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes returned by gh_phone_parse. */
typedef enum gh_phone_result {
    GH_PHONE_OK = 0,
    /* Not a phone number, or not a valid number for its region. */
    GH_PHONE_INVALID_FORMAT = 1,
    /* Shorter than every valid number of its region. */
    GH_PHONE_TOO_SHORT = 2,
    /* Longer than every valid number of its region. */
    GH_PHONE_TOO_LONG = 3,
    /* The country calling code is unknown, or the input has no leading "+"
     * and no (known) default region was given. */
    GH_PHONE_INVALID_COUNTRY_CODE = 4,
    /* An output buffer was NULL or too small; nothing useful was written. */
    GH_PHONE_BUFFER_TOO_SMALL = 5,
    /* NULL input or an unexpected internal failure. */
    GH_PHONE_INTERNAL_ERROR = 6
} gh_phone_result;

/* Longest E.164 string ("+" and up to 15 digits) plus the terminating NUL. */
#define GH_PHONE_E164_CAPACITY 17
/* Region codes are 2 letters ("FR") or "001" for non-geographic numbers. */
#define GH_PHONE_REGION_CAPACITY 8

/*
 * Parses `input` (international "+33 6 12 34 56 78", or national
 * "06 12 34 56 78" when `default_region` is given), checks it is a possible
 * and valid number, and writes its E.164 form ("+33612345678") to `e164_out`
 * and its region ("FR"; "001" for non-geographic numbers such as +800) to
 * `region_out`. `region_out` may be NULL. If `country_code_out` is not NULL it
 * receives the country calling code (33).
 *
 * Returns a gh_phone_result; outputs are only meaningful on GH_PHONE_OK
 * (they are set to "" / 0 otherwise).
 */
int gh_phone_parse(const char *input, const char *default_region,
                   char *e164_out, size_t e164_cap,
                   char *region_out, size_t region_cap,
                   int *country_code_out);

/* Country calling code for a region ("FR" -> 33, "ID" -> 62); 0 if unknown. */
int gh_phone_country_code_for_region(const char *region);

/*
 * Writes a comma-separated, sorted list of every supported ISO region code
 * ("AC,AD,AE,...") to `out`. Returns the number of regions, or -1 if `out` is
 * NULL or `cap` is too small (then `out` holds "" when cap >= 1).
 */
int gh_phone_supported_regions(char *out, size_t cap);

/*
 * Writes an example mobile number for `region` in E.164 form to `out` (for
 * placeholder text). Returns the length written (> 0), 0 if the region is
 * unknown or has no example mobile number, or -1 if `cap` is too small.
 */
int gh_phone_example_number(const char *region, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* GATEHOUSE_CPHONENUMBER_H */
