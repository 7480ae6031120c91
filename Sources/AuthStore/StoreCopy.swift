import AuthEngine

/// Copies every table of one store into another (`gatehouse store copy`): SQLite → PostgreSQL
/// to move a deployment to several machines, or back. Both stores are at this build's schema
/// version (each is migrated when opened). Rows move in batches of `batchSize`, each batch one
/// multi-row INSERT in its own transaction; ids are kept (an outbox row's id, an audit row's) and
/// PostgreSQL's identity counters are moved past them. The copy is verified by counting every
/// table on both sides. The tables and their columns are the schema's declarations.
public struct StoreCopy {
    public let from: SQLStore
    public let to: SQLStore
    public var batchSize = 500

    public init(from: SQLStore, to: SQLStore) { self.from = from; self.to = to }

    /// Rows in every table of the target (to refuse a non-empty one).
    public func targetRows() throws -> Int { try Schema.tables.reduce(0) { try $0 + to.rows(in: $1) } }

    /// Copies every table; `replace` empties the target's tables first. Returns each table's
    /// count, checked equal on both sides (a mismatch throws).
    @discardableResult
    public func run(replace: Bool, progress: (String, Int) -> Void = { _, _ in }) throws -> [(String, Int)] {
        let (source, target) = (from, to)
        for side in [source, target] where try side.probe() != Schema.version {
            throw StoreCopyError("both stores must be at schema version \(Schema.version) (this build's); one is at \(try side.probe())")
        }
        if replace { try target.emptyTables() }
        var counts: [(String, Int)] = []
        for table in Schema.tables {
            var copied = 0
            try source.eachBatch(of: table, size: batchSize) { rows in
                try target.insert(rows, into: table)
                copied += rows.count
            }
            try target.copied(table)
            let (inSource, inTarget) = (try source.rows(in: table), try target.rows(in: table))
            guard inSource == inTarget, inTarget == copied else {
                throw StoreCopyError("\(table.name): \(inSource) rows in the source, \(inTarget) in the target after the copy")
            }
            progress(table.name, inTarget)
            counts.append((table.name, inTarget))
        }
        return counts
    }
}

/// What a copy does on each side, whichever its database.
extension SQLStore {
    func rows(in table: Table) throws -> Int { try db.count("SELECT COUNT(*) FROM \(table.name)") }

    func emptyTables() throws {
        try transaction { for t in Schema.tables { try db.run("DELETE FROM \(t.name)", []) } }
    }

    func eachBatch(of table: Table, size: Int, _ body: ([[SQLValue]]) throws -> Void) throws {
        try db.eachBatch("SELECT \(table.columnList) FROM \(table.name)", size: size, { r in
            table.columns.enumerated().map { i, c in
                let index = Int32(i)
                switch c.type {
                case .integer, .identity: return r.intOrNil(index).map { .int($0) } ?? .null
                case .text: return r.textOrNil(index).map { .text($0) } ?? .null
                case .blob: return r.blobOrNil(index).map { .blob($0) } ?? .null
                }
            }
        }, body)
    }

    func insert(_ rows: [[SQLValue]], into table: Table) throws {
        let sql = "INSERT INTO \(table.name) (\(table.columnList)) VALUES " + Self.rowPlaceholders(rows.count, table.columns.count)
        _ = try transaction { try db.run(sql, rows.flatMap { $0 }) }
    }

    /// After a table's rows: the database's id counter moved past the ids copied.
    func copied(_ table: Table) throws {
        guard let id = table.columns.first(where: { $0.type == .identity }), let sql = db.dialect.moveIdentity(table: table.name, column: id.name)
        else { return }
        _ = try db.rows(sql, []) { _ in 0 }
    }
}

public struct StoreCopyError: Error, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}
