// C shim over libphonenumber; see include/CPhoneNumber.h for the contract.
//
// Every entry point is noexcept: C++ exceptions (std::bad_alloc, anything the
// library or protobuf might throw) are caught here and turned into an error
// result, because unwinding into Swift/C frames is undefined behaviour.

#include "CPhoneNumber.h"

#include <cctype>
#include <cstring>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

namespace {

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

const PhoneNumberUtil &util() {
    // Thread-safe singleton owned by the library.
    return *PhoneNumberUtil::GetInstance();
}

// Copies `s` plus a NUL into `out` if it fits. Returns false (leaving `out`
// as "" when cap >= 1) if it does not.
bool copy_out(const std::string &s, char *out, size_t cap) {
    if (out == nullptr || cap == 0) return false;
    if (s.size() >= cap) {
        out[0] = '\0';
        return false;
    }
    std::memcpy(out, s.data(), s.size());
    out[s.size()] = '\0';
    return true;
}

void clear_out(char *out, size_t cap) {
    if (out != nullptr && cap > 0) out[0] = '\0';
}

// Uppercases an ISO region code; NULL or "" becomes "ZZ" (unknown region).
// Region codes are at most 3 characters, so anything longer is kept short and
// simply fails the library's lookup.
std::string normalized_region(const char *region) {
    if (region == nullptr || region[0] == '\0') return "ZZ";
    std::string r;
    for (size_t i = 0; region[i] != '\0' && i < 8; ++i) {
        r.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(region[i]))));
    }
    return r;
}

int result_for_parse_error(PhoneNumberUtil::ErrorType error) {
    switch (error) {
    case PhoneNumberUtil::NO_PARSING_ERROR:
        return GH_PHONE_OK;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR:
        return GH_PHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD:
    case PhoneNumberUtil::TOO_SHORT_NSN:
        return GH_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG_NSN:
        return GH_PHONE_TOO_LONG;
    case PhoneNumberUtil::NOT_A_NUMBER:
    default:
        return GH_PHONE_INVALID_FORMAT;
    }
}

int parse_impl(const char *input, const char *default_region,
               char *e164_out, size_t e164_cap,
               char *region_out, size_t region_cap,
               int *country_code_out) {
    const PhoneNumberUtil &phone_util = util();

    PhoneNumber number;
    const PhoneNumberUtil::ErrorType error =
        phone_util.Parse(std::string(input), normalized_region(default_region), &number);
    if (error != PhoneNumberUtil::NO_PARSING_ERROR) return result_for_parse_error(error);

    switch (phone_util.IsPossibleNumberWithReason(number)) {
    case PhoneNumberUtil::IS_POSSIBLE:
        break;
    case PhoneNumberUtil::TOO_SHORT:
        return GH_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG:
        return GH_PHONE_TOO_LONG;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE:
        return GH_PHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY:  // missing area code: not dialable from abroad
    case PhoneNumberUtil::INVALID_LENGTH:
    default:
        return GH_PHONE_INVALID_FORMAT;
    }

    if (!phone_util.IsValidNumber(number)) return GH_PHONE_INVALID_FORMAT;

    std::string e164;
    phone_util.Format(number, PhoneNumberUtil::E164, &e164);
    if (!copy_out(e164, e164_out, e164_cap)) return GH_PHONE_BUFFER_TOO_SMALL;

    if (region_out != nullptr) {
        std::string region;
        phone_util.GetRegionCodeForNumber(number, &region);
        if (!copy_out(region, region_out, region_cap)) {
            clear_out(e164_out, e164_cap);
            return GH_PHONE_BUFFER_TOO_SMALL;
        }
    }
    if (country_code_out != nullptr) *country_code_out = number.country_code();
    return GH_PHONE_OK;
}

}  // namespace

extern "C" {

int gh_phone_parse(const char *input, const char *default_region,
                   char *e164_out, size_t e164_cap,
                   char *region_out, size_t region_cap,
                   int *country_code_out) {
    clear_out(e164_out, e164_cap);
    clear_out(region_out, region_cap);
    if (country_code_out != nullptr) *country_code_out = 0;
    if (input == nullptr) return GH_PHONE_INTERNAL_ERROR;
    if (e164_out == nullptr || e164_cap == 0) return GH_PHONE_BUFFER_TOO_SMALL;
    try {
        const int rc = parse_impl(input, default_region, e164_out, e164_cap,
                                  region_out, region_cap, country_code_out);
        if (rc != GH_PHONE_OK) {
            clear_out(e164_out, e164_cap);
            clear_out(region_out, region_cap);
            if (country_code_out != nullptr) *country_code_out = 0;
        }
        return rc;
    } catch (...) {
        clear_out(e164_out, e164_cap);
        clear_out(region_out, region_cap);
        if (country_code_out != nullptr) *country_code_out = 0;
        return GH_PHONE_INTERNAL_ERROR;
    }
}

int gh_phone_country_code_for_region(const char *region) {
    if (region == nullptr || region[0] == '\0') return 0;
    try {
        // Returns 0 for unknown regions (including "ZZ" and "001").
        return util().GetCountryCodeForRegion(normalized_region(region));
    } catch (...) {
        return 0;
    }
}

int gh_phone_supported_regions(char *out, size_t cap) {
    clear_out(out, cap);
    if (out == nullptr || cap == 0) return -1;
    try {
        std::set<std::string> regions;  // std::set iterates in sorted order
        util().GetSupportedRegions(&regions);
        std::string joined;
        for (const std::string &region : regions) {
            if (!joined.empty()) joined.push_back(',');
            joined += region;
        }
        if (!copy_out(joined, out, cap)) return -1;
        return static_cast<int>(regions.size());
    } catch (...) {
        clear_out(out, cap);
        return -1;
    }
}

int gh_phone_example_number(const char *region, char *out, size_t cap) {
    clear_out(out, cap);
    if (out == nullptr || cap == 0) return -1;
    if (region == nullptr || region[0] == '\0') return 0;
    try {
        const PhoneNumberUtil &phone_util = util();
        PhoneNumber number;
        if (!phone_util.GetExampleNumberForType(normalized_region(region),
                                                PhoneNumberUtil::MOBILE, &number)) {
            return 0;
        }
        std::string e164;
        phone_util.Format(number, PhoneNumberUtil::E164, &e164);
        if (e164.empty()) return 0;
        if (!copy_out(e164, out, cap)) return -1;
        return static_cast<int>(e164.size());
    } catch (...) {
        clear_out(out, cap);
        return 0;
    }
}

}  // extern "C"
