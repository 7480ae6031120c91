import AuthEngine
import Locking

/// The phone page's tables derived from a resource folder's `regions/` files and the project's
/// settings: calling codes, main regions, the regions a project offers, rendered country lists.
/// Owned by the `Templates` of one app (so made and gone with it); each is built on first use
/// and kept, behind its own mutex.
final class RegionTables: Sendable {
    let directory: String
    let codes = Locked<[(code: String, callingCode: Int)]?>(nil)
    let main = Locked<[Int: String]?>(nil)
    let known = Locked<Set<String>?>(nil)
    let offered = Locked<[PhonePage.OfferedEntry]>([])
    let options = Locked<[String: PhonePage.CountryOptions]>([:])

    init(directory: String) { self.directory = directory }

    /// How many settings entries and renderings are kept (for the tests).
    var offeredCount: Int { offered.withLock { $0.count } }
    var optionsCount: Int { options.withLock { $0.count } }
}
