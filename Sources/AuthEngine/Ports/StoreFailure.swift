/// A store failure that says what a client should do about it. The web layer answers one that
/// `isOutOfSpace` or `isUnavailable` with 503 and `Retry-After` (the same request may succeed
/// once space is freed or the database is back), every other failure with 500 INTERNAL.
public protocol StoreFailure: Error {
    /// The store could not write because its disk (or file-size limit) is full.
    var isOutOfSpace: Bool { get }
    /// The database cannot be reached (a server store that is down, restarting or unreachable).
    var isUnavailable: Bool { get }
}

extension StoreFailure {
    /// Whether the request may succeed later unchanged (503, not 500).
    public var isTemporary: Bool { isOutOfSpace || isUnavailable }
}
