import AuthEngine

/// The one check every text passes before either store binds it: no NUL and no control
/// character other than tab, line feed and carriage return (which message bodies and PEM keys
/// hold). libpq passes text parameters as C strings, so PostgreSQL would cut `victim\0attacker`
/// at the NUL and find `victim`'s row; SQLite binds by length and would not, so refusing it here
/// keeps the two stores alike and no request can reach a row by a name it did not send.
enum StoreText {
    static func check(_ text: String) throws {
        for byte in text.utf8 where byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
            throw AuthError(.invalidArgument, "Text may not contain control characters.")
        }
    }
}
