import AuthEngine

/// A column's type as declared once for both databases.
enum ColumnType: Equatable {
    /// 64-bit integer (times in milliseconds, counts, flags 0/1).
    case integer
    case text
    case blob
    /// The row's id, given by the database (`INTEGER PRIMARY KEY` on SQLite, an identity column on PostgreSQL).
    case identity
}

/// A column's default, written into both databases' DDL.
enum ColumnDefault: Equatable {
    case integer(Int64)
    case text(String)
    case emptyBlob
}

/// One column: its name (the case name of its table's `Columns`), type, nullability and default.
struct ColumnSpec: Equatable {
    let type: ColumnType
    var nullable = false
    var defaultValue: ColumnDefault?

    static let integer = ColumnSpec(type: .integer)
    static let optionalInteger = ColumnSpec(type: .integer, nullable: true)
    static func integer(default value: Int64) -> ColumnSpec { ColumnSpec(type: .integer, defaultValue: .integer(value)) }
    static let text = ColumnSpec(type: .text)
    static let optionalText = ColumnSpec(type: .text, nullable: true)
    static func text(default value: String) -> ColumnSpec { ColumnSpec(type: .text, defaultValue: .text(value)) }
    static let blob = ColumnSpec(type: .blob)
    static let optionalBlob = ColumnSpec(type: .blob, nullable: true)
    static let blobDefaultEmpty = ColumnSpec(type: .blob, defaultValue: .emptyBlob)
    static let identity = ColumnSpec(type: .identity)
}

/// A table's columns, one case each, in the order every statement lists them: a case's raw value
/// is its position in `Table.columnList`, so a record is read by naming its columns
/// (`Reading`) at the cost of reading by position. The case names are the SQL names.
///
/// `CodingKey` only for the name: the compiler writes `stringValue` as the case names, where
/// `String(describing:)` would reflect over the type (its first use in a process cost ~1.5 M
/// instructions, a tenth of a CGI request).
protocol Columns: RawRepresentable, CaseIterable, CodingKey, Sendable where RawValue == Int, AllCases == [Self] {
    static var table: Table { get }
    var spec: ColumnSpec { get }
}

extension Columns {
    /// The column's SQL name: the case name.
    var name: String { stringValue }
    /// The column's position in every statement's select list.
    var position: Int32 { Int32(truncatingIfNeeded: rawValue) }
}

/// The columns of a table that holds one record per row: each column's declaration and the
/// record's value for it, side by side.
protocol RecordColumns: Columns {
    associatedtype Record
    var column: (ColumnSpec, (Record) -> any SQLBindable) { get }
    /// The record of a row selected by `Table.select` (every column, in order).
    static func read(_ row: SQLRow) throws -> Record
}

extension RecordColumns {
    var spec: ColumnSpec { column.0 }

    /// The values of the table's insert for `record`, in the declaration's order.
    static func values(_ record: Record) -> [any SQLBindable] {
        allCases.compactMap { $0.column.0.type == .identity ? nil : $0.column.1(record) }
    }
}

/// An index of a table (unique or not, partial with a condition written in SQL both databases read).
struct IndexSpec: Equatable {
    let name: String
    let columns: [String]
    var unique = false
    var condition: String?
}

/// One table, declared once: both databases' DDL, `store copy`'s table list and the record
/// readers come from it.
struct Table: Sendable {
    struct Column: Equatable, Sendable {
        let name: String
        let type: ColumnType
        let nullable: Bool
        let defaultValue: ColumnDefault?
    }

    let name: String
    let columns: [Column]
    let primaryKey: [String]
    let indexes: [IndexSpec]
    /// SQLite: ids are never reused once their row is deleted (`AUTOINCREMENT`).
    let neverReuseIDs: Bool
    /// Every column, in declaration order: the select list of every statement reading the table.
    let columnList: String
    /// The columns an insert names (all but the identity), and its placeholders.
    let insertColumns: [String]
    let insertList: String
    let insertPlaceholders: String
    /// `INSERT INTO t (every column but the id) VALUES (?, …)`.
    let insert: String
    /// `SELECT every column FROM t`.
    let select: String
    /// `SELECT every column FROM t WHERE` its primary key is the values bound.
    let selectByKey: String

    init<C: Columns>(_ name: String, _ columns: C.Type, primaryKey: [C], indexes: [IndexSpec] = [], neverReuseIDs: Bool = false) {
        self.name = name
        self.columns = C.allCases.enumerated().map { i, c in
            precondition(Int(c.rawValue) == i, "\(name).\(c.name): a column's raw value is its position")
            return Column(name: c.name, type: c.spec.type, nullable: c.spec.nullable, defaultValue: c.spec.defaultValue)
        }
        self.primaryKey = primaryKey.map(\.name)
        self.indexes = indexes
        self.neverReuseIDs = neverReuseIDs
        columnList = self.columns.map(\.name).joined(separator: ", ")
        insertColumns = self.columns.filter { $0.type != .identity }.map(\.name)
        insertList = insertColumns.joined(separator: ", ")
        insertPlaceholders = Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")
        insert = "INSERT INTO \(name) (\(insertList)) VALUES (\(insertPlaceholders))"
        select = "SELECT \(columnList) FROM \(name)"
        selectByKey = select + " WHERE " + self.primaryKey.map { "\($0) = ?" }.joined(separator: " AND ")
    }
}

/// A value found in a column that this build does not know how to read: the store refuses it
/// (an error naming the column) rather than read it as something else.
struct UnreadableColumn: Error, CustomStringConvertible {
    let table: String
    let column: String
    let value: String
    var description: String { "store: \(table).\(column) holds \(value), which this build cannot read" }
}

/// A row of `C`'s table, read by column.
struct Reading<C: Columns> {
    let row: SQLRow
    init(_ row: SQLRow, _: C.Type) { self.row = row }

    func int(_ c: C) -> Int64 { row.int(c.position) }
    func intOrNil(_ c: C) -> Int64? { row.intOrNil(c.position) }
    func bool(_ c: C) -> Bool { row.int(c.position) != 0 }
    func count(_ c: C) -> Int { Int(clamping: row.int(c.position)) }
    func text(_ c: C) -> String { row.text(c.position) }
    func textOrNil(_ c: C) -> String? { row.textOrNil(c.position) }
    func blob(_ c: C) -> [UInt8] { row.blob(c.position) }
    func blobOrNil(_ c: C) -> [UInt8]? { row.blobOrNil(c.position) }

    /// A column holding one of `E`'s raw values; any other value is refused, naming the column.
    func value<E: RawRepresentable>(_ c: C, as _: E.Type = E.self) throws -> E where E.RawValue == String {
        let raw = row.text(c.position)
        guard let v = E(rawValue: raw) else { throw unreadable(c, "\"\(raw.prefix(40))\"") }
        return v
    }

    func unreadable(_ c: C, _ value: String) -> UnreadableColumn {
        UnreadableColumn(table: C.table.name, column: c.name, value: value)
    }
}
