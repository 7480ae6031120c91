import AuthStore
import Foundation
import Testing

/// The process-wide write path of one database file: every connection's writes go through one
/// writer under one lock, and the checkpoint schedule keeps the WAL bounded under steady writes.
@Suite("SQLite write path")
struct WriteGateTests {
    func tempPath() -> String {
        NSTemporaryDirectory() + "gatehouse-gate-\(UInt64.random(in: 0...UInt64.max)).db"
    }

    func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test("four threads writing through their own connections lose nothing, and the WAL stays bounded")
    func concurrentWritesStayBounded() throws {
        let path = tempPath()
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let setup = try SQLiteConnection(path: path)
        try setup.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, body BLOB NOT NULL)")

        let threads = 4, perThread = 3000
        let failures = Mutex(0)
        let maxWAL = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: threads) { owner in
            do {
                let db = try SQLiteConnection(path: path)
                // A reader that stays open between writes, as worker connections do.
                _ = try db.first("SELECT COUNT(*) FROM t") { $0.int(0) }
                let body = [UInt8](repeating: UInt8(owner), count: 3000)
                for _ in 0..<perThread {
                    try db.transaction { _ = try db.run("INSERT INTO t (owner, body) VALUES (?, ?)", [Int64(owner), body]) }
                    let size = fileSize(path + "-wal")
                    maxWAL.withLock { $0 = max($0, size) }
                }
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let rows = try setup.first("SELECT COUNT(*) FROM t") { $0.int(0) }
        #expect(rows == Int64(threads * perThread))
        for owner in 0..<threads {
            #expect(try setup.first("SELECT COUNT(*) FROM t WHERE owner = ?", [Int64(owner)]) { $0.int(0) } == Int64(perThread))
        }
        // 12,000 transactions of ~1 page each go through the WAL: 86-113 MB without the catch-up
        // step. With a checkpoint due every 4,000 frames (~16 MB), run by the checkpoint thread
        // while the writers go on, it peaked at 24-25 MB here, and at 43 MB with both cores
        // busy with other work (the checkpoint thread then runs late).
        #expect(maxWAL.withLock { $0 } < 64 * 1024 * 1024, "WAL grew to \(maxWAL.withLock { $0 }) bytes")
    }

    @Test("the file's last connection stops its checkpoint thread and removes the WAL; the file opens again")
    func lastConnectionEndsCheckpoints() throws {
        let path = tempPath()
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let body = [UInt8](repeating: 7, count: 3000)
        func writeRows(_ n: Int) throws {
            let db = try SQLiteConnection(path: path)
            try db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            // More than 4,000 frames: at least one checkpoint runs on the thread.
            for _ in 0..<n { try db.transaction { _ = try db.run("INSERT INTO t (body) VALUES (?)", [body]) } }
        }
        try writeRows(5000)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the WAL outlived the last connection")
        try writeRows(5000)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let check = try SQLiteConnection(path: path)
        #expect(try check.first("SELECT COUNT(*) FROM t") { $0.int(0) } == 10000)
        #expect(try check.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
    }
}

/// A value behind a lock (the test's own; the store's types keep theirs private).
final class Mutex<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
