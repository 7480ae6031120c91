import AuthCrypto
import AuthEngine
import AuthStore
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse seed`: inserts synthetic accounts for growth benchmarks (BENCHMARKS.md). Each
/// account has a 28-character id like a real one, a unique phone number in the +1 201… range
/// (never a configured test number), and every other one an email at `seed.invalid`.
/// Rows go in with one multi-row prepared INSERT, in transactions of `--batch` rows.
struct Seed: Command {
    static let spec = Seed.spec("seed", "Insert synthetic accounts into the store (for benchmarks; not for production data).",
                                options: CommonOptions.options + [
                                    OptionSpec(name: "count", help: "Number of accounts to add (1…10000000)."),
                                    OptionSpec(name: "project", help: "Project id (default: the first project)."),
                                    OptionSpec(name: "batch", help: "Rows per transaction. Default: 10000."),
                                    OptionSpec(name: "audit", help: "Also add this many audit rows (sign-ins of the project's accounts over the last 30 days; 0…100000000)."),
                                ])
    let common: CommonOptions
    let count: Int
    let project: String?
    let batch: Int
    let audit: Int

    init(_ p: ParsedArguments) throws {
        common = CommonOptions(p)
        count = try p.requiredInt("count")
        project = p.string("project")
        batch = try p.int("batch") ?? 10_000
        audit = try p.int("audit") ?? 0
        try validate()
    }

    /// Rows per INSERT statement; 8 columns × 100 rows stays far below SQLite's variable limit.
    static let rowsPerStatement = 100
    static let columns = "project_id, local_id, email, email_verified, phone_number, created_at, last_login_at, providers"

    func validate() throws {
        guard (1...10_000_000).contains(count) else { throw UsageError("--count must be 1…10000000") }
        guard (Seed.rowsPerStatement...1_000_000).contains(batch) else { throw UsageError("--batch must be 100…1000000") }
        guard (0...100_000_000).contains(audit) else { throw UsageError("--audit must be 0…100000000") }
    }

    func run() throws {
        let config = try common.load()
        let pid = try config.projectID(project)
        try Runtime.makeDirectories(config.dataDir)
        guard case let .sqlite(path) = config.store else { throw UsageError("seed fills the SQLite store only (the benchmark's growth runs)") }
        let store = try SQLStore(path: path)
        guard let db = store.sqlite else { throw UsageError("seed fills the SQLite store only") }
        // A larger page cache for this connection only: ids are random, so inserts touch the whole index.
        try db.execute("PRAGMA cache_size = -262144")

        let start = Seed.seconds()
        // Continue numbering after what an earlier seed left, so phones and emails stay unique.
        let first = try db.first("SELECT COUNT(*) FROM accounts WHERE project_id = ? AND phone_number LIKE '+1201%'", [pid]) { Int($0.int(0)) } ?? 0
        let placeholders = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: Seed.rowsPerStatement).joined(separator: ", ")
        let insert = "INSERT INTO accounts (\(Seed.columns)) VALUES \(placeholders)"
        let one = "INSERT INTO accounts (\(Seed.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

        var ids = IDGenerator(seed: SystemRandom().bytes(16))
        let now = SystemClock().now()
        var done = 0
        var lastReport = start
        while done < count {
            let n = min(batch, count - done)
            var rows: [[any SQLBindable]] = []
            rows.reserveCapacity(n)
            for i in 0..<n {
                rows.append(Seed.row(project: pid, index: first + done + i, localID: ids.next(position: done + i, of: count), now: now))
            }
            try db.transaction {
                var k = 0
                while k + Seed.rowsPerStatement <= rows.count {
                    try db.run(insert, rows[k..<(k + Seed.rowsPerStatement)].flatMap { $0 })
                    k += Seed.rowsPerStatement
                }
                while k < rows.count {
                    try db.run(one, rows[k])
                    k += 1
                }
            }
            done += n
            if Seed.seconds() - lastReport >= 5 {
                lastReport = Seed.seconds()
                StandardError.write("seed: \(done)/\(count) accounts\n")
            }
        }
        if audit > 0 { try seedAudit(db, project: pid, now: now) }
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let total = try store.countAccounts(project: pid)
        let secs = Seed.seconds() - start
        print("seeded \(count) accounts\(audit > 0 ? " and \(audit) audit rows" : "") into \(pid) in \(Seed.fixed(secs, digits: 1)) s "
              + "(\(Seed.fixed(Double(count) / max(secs, 0.001), digits: 0)) accounts/s); \(total) accounts in the project")
    }

    /// Audit rows as sign-ins would write them, in time order over the last 30 days (ids grow
    /// with time, as written by the flows), each of a random account of the project: the
    /// console's user trail, filters and activity charts read them (BENCHMARKS.md "Console").
    func seedAudit(_ db: SQLiteConnection, project: String, now: Millis) throws {
        let ids = try db.rows("SELECT local_id FROM accounts WHERE project_id = ?", [project]) { $0.text(0) }
        guard !ids.isEmpty else { return }
        let span: Millis = 30 * 86_400_000
        let from = now - span
        // One event mix, fixed: most sign-ins by phone, a few refusals and admin changes.
        let mix: [(String, String, Int)] = [("phone.sign_in", "ok", 60), ("email_link.sign_in", "ok", 12), ("passkey.sign_in", "ok", 8),
                                            ("mfa.sign_in", "ok", 6), ("phone.sign_up", "ok", 6), ("refresh_token.reuse", "refused", 3),
                                            ("session.sign_out", "ok", 3), ("admin.update", "ok", 2)]
        var events: [(String, String)] = []
        for (e, o, n) in mix { events += Array(repeating: (e, o), count: n) }
        var rng = IDGenerator(seed: SystemRandom().bytes(16))
        let columns = "at, project_id, event, local_id, remote_address, actor, outcome"
        let placeholders = Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: Seed.rowsPerStatement).joined(separator: ", ")
        var done = 0
        while done < audit {
            let n = min(batch - batch % Seed.rowsPerStatement, audit - done)
            try db.transaction {
                var k = 0
                while k < n {
                    let rows = min(Seed.rowsPerStatement, n - k)
                    var values: [any SQLBindable] = []
                    values.reserveCapacity(rows * 7)
                    for r in 0..<rows {
                        let i = done + k + r
                        let w = rng.nextWord()
                        let (event, outcome) = events[Int(w % UInt64(events.count))]
                        let actor: String? = event == "admin.update" ? "admin" : nil
                        values += [from + Millis(Double(i) * Double(span) / Double(audit)), project, event,
                                   ids[Int((w >> 8) % UInt64(ids.count))], "198.51.100.\(w >> 40 & 0xFF)", actor, outcome]
                    }
                    let sql = rows == Seed.rowsPerStatement ? "INSERT INTO audit_log (\(columns)) VALUES \(placeholders)"
                        : "INSERT INTO audit_log (\(columns)) VALUES " + Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
                    try db.run(sql, values)
                    k += rows
                }
            }
            done += n
        }
    }

    /// Seconds on the monotonic clock.
    static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// `x` rounded to `digits` decimals (0 or more), as printf's `%.Nf` writes it.
    static func fixed(_ x: Double, digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let n = Int64((abs(x) * scale).rounded())
        let whole = String(n / Int64(scale)), frac = String(n % Int64(scale))
        let sign = x < 0 && n != 0 ? "-" : ""
        guard digits > 0 else { return sign + whole }
        return sign + whole + "." + String(repeating: "0", count: digits - frac.count) + frac
    }

    static func row(project: String, index: Int, localID: String, now: Millis) -> [any SQLBindable] {
        let phone = "+1" + String(2_010_000_000 + index)
        let email: String? = index % 2 == 0 ? "seed\(index)@seed.invalid" : nil
        var providers = #"[{"providerId":"phone","rawId":"\#(phone)","phoneNumber":"\#(phone)"}"#
        if let email { providers += #",{"providerId":"password","rawId":"\#(email)","email":"\#(email)"}"# }
        providers += "]"
        let created = now - Int64(index % 86_400) * 1000
        return [project, localID, email, email != nil, phone, created, created, providers]
    }
}

/// SplitMix64 over a random start: fast, uniformly spread 28-character account ids (not secrets),
/// produced in ascending order so a seed appends to the primary key instead of rewriting pages
/// all over it (the first 5 characters place id `i` of `n` in the i-th n-th of the id space).
struct IDGenerator {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    var state: UInt64

    init(seed: [UInt8]) {
        state = seed.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func nextWord() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The same characters in byte order, for the ordered prefix.
    static let sorted = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    static let prefixSpace: UInt64 = 916_132_832  // 62^5

    mutating func next(position: Int, of total: Int) -> String {
        var out = [UInt8]()
        out.reserveCapacity(28)
        let width = Double(IDGenerator.prefixSpace) / Double(total)
        let jitter = Double(nextWord() >> 11) / Double(1 << 53)
        var v = min(UInt64((Double(position) + jitter) * width), IDGenerator.prefixSpace - 1)
        var prefix = [UInt8](repeating: 0, count: 5)
        for k in (0..<5).reversed() {
            prefix[k] = IDGenerator.sorted[Int(v % 62)]
            v /= 62
        }
        out += prefix
        while out.count < 28 {
            var w = nextWord()
            for _ in 0..<10 where out.count < 28 {
                out.append(IDGenerator.alphabet[Int(w % 62)])
                w /= 62
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
