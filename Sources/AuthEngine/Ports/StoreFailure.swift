/// A store failure that says what a client should do about it. The web layer answers one that
/// `isOutOfSpace` with 503 and `Retry-After` (the same request may succeed once space is freed),
/// every other failure with 500 INTERNAL.
public protocol StoreFailure: Error {
    /// The store could not write because its disk (or file-size limit) is full.
    var isOutOfSpace: Bool { get }
}
