#ifndef GATEHOUSE_CSQLITE_SHIM_H
#define GATEHOUSE_CSQLITE_SHIM_H
#include <sqlite3.h>
/* SQLITE_TRANSIENT is a macro over a function-pointer cast Swift cannot import. */
static inline sqlite3_destructor_type gh_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/* A non-NULL pointer for empty text: a NULL one would bind SQL NULL instead of ''. */
static inline const char *gh_sqlite_empty_text(void) { return ""; }
static inline int gh_sqlite_config_log_off(void) { return SQLITE_OK; }
#endif
