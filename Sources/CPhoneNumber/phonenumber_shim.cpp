// C shim over libphonenumber; see include/CPhoneNumber.h for the contract.
//
// Every entry point is noexcept: C++ exceptions (std::bad_alloc, anything the
// library or protobuf might throw) are caught here and turned into an error
// result, because unwinding into Swift/C frames is undefined behaviour.

#include "CPhoneNumber.h"

#include <cctype>
#include <cstdio>
#include <dlfcn.h>
#include <cstring>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

namespace {

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;
using std::string;

// libphonenumber (and its protobuf, ICU and abseil chain) is loaded on the first call, not at
// start: a process that never handles a phone number never maps it. Its entry points are found
// by their (Itanium C++ ABI) names; a member function takes `this` first. A new libphonenumber
// call needs one pointer, one FIND line and one method in Util below.
constexpr const char *kLibrary = "libphonenumber.so.8";  // Debian 12: libphonenumber8

struct Library {
    const PhoneNumberUtil *(*get_instance)();
    PhoneNumberUtil::ErrorType (*parse)(const PhoneNumberUtil *, const string &, const string &, PhoneNumber *);
    PhoneNumberUtil::ValidationResult (*is_possible_with_reason)(const PhoneNumberUtil *, const PhoneNumber &);
    bool (*is_valid)(const PhoneNumberUtil *, const PhoneNumber &);
    void (*format)(const PhoneNumberUtil *, const PhoneNumber &, PhoneNumberUtil::PhoneNumberFormat, string *);
    void (*region_for_number)(const PhoneNumberUtil *, const PhoneNumber &, string *);
    int (*country_code_for_region)(const PhoneNumberUtil *, const string &);
    void (*supported_regions)(const PhoneNumberUtil *, std::set<string> *);
    bool (*example_for_type)(const PhoneNumberUtil *, const string &, PhoneNumberUtil::PhoneNumberType, PhoneNumber *);
    void (*number_init)(PhoneNumber *, void *arena, bool is_message_owned);
    void (*number_destroy)(PhoneNumber *);
    const PhoneNumberUtil *instance;
};

#define FIND(field, name)                                                                       \
    if (!(*reinterpret_cast<void **>(&lib.field) = dlsym(handle, name))) {                     \
        std::fprintf(stderr, "gatehouse: %s has no symbol %s; phone numbers cannot be parsed\n", \
                     kLibrary, name);                                                           \
        return nullptr;                                                                         \
    }

const Library *load() {
    static Library lib;
    void *handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char *why = dlerror();
        std::fprintf(stderr, "gatehouse: cannot load %s (Debian package libphonenumber8); phone numbers cannot be parsed: %s\n",
                     kLibrary, why ? why : "unknown error");
        return nullptr;
    }
    FIND(get_instance, "_ZN4i18n12phonenumbers15PhoneNumberUtil11GetInstanceEv")
    FIND(parse, "_ZNK4i18n12phonenumbers15PhoneNumberUtil5ParseERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES9_PNS0_11PhoneNumberE")
    FIND(is_possible_with_reason, "_ZNK4i18n12phonenumbers15PhoneNumberUtil26IsPossibleNumberWithReasonERKNS0_11PhoneNumberE")
    FIND(is_valid, "_ZNK4i18n12phonenumbers15PhoneNumberUtil13IsValidNumberERKNS0_11PhoneNumberE")
    FIND(format, "_ZNK4i18n12phonenumbers15PhoneNumberUtil6FormatERKNS0_11PhoneNumberENS1_17PhoneNumberFormatEPNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
    FIND(region_for_number, "_ZNK4i18n12phonenumbers15PhoneNumberUtil22GetRegionCodeForNumberERKNS0_11PhoneNumberEPNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
    FIND(country_code_for_region, "_ZNK4i18n12phonenumbers15PhoneNumberUtil23GetCountryCodeForRegionERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
    FIND(supported_regions, "_ZNK4i18n12phonenumbers15PhoneNumberUtil19GetSupportedRegionsEPSt3setINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4lessIS8_ESaIS8_EE")
    FIND(example_for_type, "_ZNK4i18n12phonenumbers15PhoneNumberUtil23GetExampleNumberForTypeERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEENS1_15PhoneNumberTypeEPNS0_11PhoneNumberE")
    FIND(number_init, "_ZN4i18n12phonenumbers11PhoneNumberC1EPN6google8protobuf5ArenaEb")
    FIND(number_destroy, "_ZN4i18n12phonenumbers11PhoneNumberD1Ev")
    lib.instance = lib.get_instance();
    return lib.instance ? &lib : nullptr;
}

#undef FIND

// The loaded library, or nullptr when it cannot be loaded (said once on stderr).
const Library *library() {
    static const Library *lib = load();  // thread-safe initialisation (C++11)
    return lib;
}

// PhoneNumberUtil's calls used here, through the loaded library.
struct Util {
    const Library &lib;
    PhoneNumberUtil::ErrorType Parse(const string &s, const string &region, PhoneNumber *n) const { return lib.parse(lib.instance, s, region, n); }
    PhoneNumberUtil::ValidationResult IsPossibleNumberWithReason(const PhoneNumber &n) const { return lib.is_possible_with_reason(lib.instance, n); }
    bool IsValidNumber(const PhoneNumber &n) const { return lib.is_valid(lib.instance, n); }
    void Format(const PhoneNumber &n, PhoneNumberUtil::PhoneNumberFormat f, string *out) const { lib.format(lib.instance, n, f, out); }
    void GetRegionCodeForNumber(const PhoneNumber &n, string *out) const { lib.region_for_number(lib.instance, n, out); }
    int GetCountryCodeForRegion(const string &region) const { return lib.country_code_for_region(lib.instance, region); }
    void GetSupportedRegions(std::set<string> *out) const { lib.supported_regions(lib.instance, out); }
    bool GetExampleNumberForType(const string &region, PhoneNumberUtil::PhoneNumberType t, PhoneNumber *n) const {
        return lib.example_for_type(lib.instance, region, t, n);
    }
};

// A PhoneNumber message built and destroyed by the loaded library's own constructor/destructor.
class Number {
    const Library &lib_;
    alignas(PhoneNumber) unsigned char storage_[sizeof(PhoneNumber)];

public:
    explicit Number(const Library &lib) : lib_(lib) { lib_.number_init(get(), nullptr, false); }
    ~Number() { lib_.number_destroy(get()); }
    Number(const Number &) = delete;
    Number &operator=(const Number &) = delete;
    PhoneNumber *get() { return reinterpret_cast<PhoneNumber *>(storage_); }
    operator PhoneNumber &() { return *get(); }
    PhoneNumber *operator&() { return get(); }
};

// Thrown (and caught at the C boundary) when the library cannot be loaded.
struct Unavailable {};

Util util() {
    const Library *lib = library();
    if (lib == nullptr) throw Unavailable();
    return Util{*lib};
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
    const Util phone_util = util();

    Number number(phone_util.lib);
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
    if (country_code_out != nullptr) *country_code_out = number.get()->country_code();
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
        const Util phone_util = util();
        Number number(phone_util.lib);
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
