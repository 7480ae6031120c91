/* Loads libqrencode.so.4 on first use (see include/CQRencode.h). */
#include "CQRencode.h"
#include <dlfcn.h>
#include <pthread.h>
#include <qrencode.h>
#include <stdio.h>
#include <string.h>

/* The soname of Debian's libqrencode4 (libqrencode-dev brings it and the header). */
#define GH_QR_SONAME "libqrencode.so.4"

static struct {
    QRcode *(*encode_string)(const char *, int, QRecLevel, QRencodeMode, int);
    void (*free_code)(QRcode *);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char error[512];

#define FIND(field, name)                                                                   \
    if (!(*(void **)&fn.field = dlsym(lib, name))) {                                        \
        snprintf(error, sizeof error, "%s has no symbol %s", GH_QR_SONAME, name);           \
        return;                                                                             \
    }

static void load(void) {
    void *lib = dlopen(GH_QR_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "cannot load %s (Debian package libqrencode4): %s", GH_QR_SONAME, why ? why : "unknown error");
        return;
    }
    FIND(encode_string, "QRcode_encodeString")
    FIND(free_code, "QRcode_free")
    loaded = 1;
}

int gh_qr_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *gh_qr_load_error(void) { return error; }

int gh_qr_encode(const char *text, size_t length, unsigned char *modules, size_t capacity) {
    if (!gh_qr_load()) return 0;
    /* QRcode_encodeString reads up to a NUL: a text holding one would be cut short, silently.
     * The page encodes URIs of a few hundred bytes; past 4096 (more than a version 40 symbol
     * holds at level M in 8-bit mode) the text is refused rather than copied to the heap. */
    if (length == 0 || length > 4096 || memchr(text, 0, length)) return 0;
    char copy[4097];
    memcpy(copy, text, length);
    copy[length] = 0;
    /* Version 0: the smallest that fits. Case-sensitive, so lower-case letters stay 8-bit data
     * and the decoded text is exactly the given one. */
    QRcode *code = fn.encode_string(copy, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
    if (!code) return 0;
    int width = code->width;
    size_t count = (size_t)width * (size_t)width;
    if (width <= 0 || width > GH_QR_MAX_WIDTH) { fn.free_code(code); return 0; }
    if (count > capacity) { fn.free_code(code); return -1; }
    /* Bit 0 of each byte is the module's colour; the other bits say what the module is for. */
    for (size_t i = 0; i < count; i++) modules[i] = code->data[i] & 1;
    fn.free_code(code);
    return width;
}
