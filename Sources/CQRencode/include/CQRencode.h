/*
 * CQRencode: libqrencode (libqrencode.so.4) loaded on first use with dlopen. Only the account
 * page's authenticator-app enrolment draws a QR code, so a process that never shows it (every
 * CGI request, every verify) neither maps nor relocates the library; and a host without
 * libqrencode4 still serves that page, with the secret and the URI as text only.
 * No type of qrencode.h crosses this header: the page needs the modules, nothing else.
 */
#ifndef GATEHOUSE_CQRENCODE_H
#define GATEHOUSE_CQRENCODE_H
#include <stddef.h>

/* The widest symbol (version 40) is 177 modules a side. */
#define GH_QR_MAX_WIDTH 177

/* Loads libqrencode once (thread-safe). Returns 1 when usable; else 0 with the reason in
 * gh_qr_load_error(). gh_qr_encode loads it itself. */
int gh_qr_load(void);
const char *gh_qr_load_error(void);

/* Encodes the `length` bytes of `text` (no NUL among them) at error correction level M, the
 * smallest version that holds them, 8-bit mode where the text is not alphanumeric. Writes one
 * byte per module, row by row (1 dark, 0 light; no quiet zone), into `modules`, which holds
 * `capacity` bytes. Returns the symbol's width; 0 when the library cannot be loaded or the
 * text cannot be encoded (too long, or holds a NUL); -1 when `capacity` is too small. */
int gh_qr_encode(const char *text, size_t length, unsigned char *modules, size_t capacity);
#endif
