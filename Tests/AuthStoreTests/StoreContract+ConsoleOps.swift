import AuthEngine
import AuthStore
import Foundation
import Testing
import Locking

/// The contract of the console's operations reads and changes (`ConsoleStore`: the audit log's
/// pages, ids by time and counts, counter windows, the outbox's pages, retry and discard) on
/// every backend, with the races that matter: a retry against a worker's lease, a discard
/// against a send in progress, and the Activity roll-up of two views at once.
@Suite("Store contract: console operations (SQLite and PostgreSQL)")
struct StoreContractConsoleOps {
    struct StillClock: Clock { let at: Millis; func now() -> Millis { at } }

    /// 12 rows: projects p and q, users u1 and u2, actors, events, one every 1 000 ms from 1 000.
    func auditRows(_ s: any ContractStore) throws {
        let events: [AuditEventName] = [.phoneSignIn, .emailLinkSignIn, .mfaSignIn, .outboxRetry]
        for i in 0..<12 {
            try s.audit(AuditEvent(projectID: i % 3 == 2 ? "q" : "p", event: events[i % 4], localID: i % 2 == 0 ? "u1" : "u2",
                                   remoteAddress: "203.0.113.\(i)", detail: "row \(i)", actor: i % 4 == 3 ? "operator:op" : nil,
                                   outcome: i == 5 ? "refused" : "ok"), at: Millis(1_000 * (i + 1)))
        }
    }

    @Test("audit pages: newest first, every filter alone and together, between ids, limited", arguments: Backend.available)
    func auditPages(backend: Backend) throws {
        try with(backend) { _, s in
            try auditRows(s)
            let all = try s.auditPage(AuditFilter())
            #expect(all.count == 12 && all.map(\.at) == (1...12).reversed().map { Millis($0 * 1_000) })
            #expect(all.first?.event.detail == "row 11" && all.first?.event.remoteAddress == "203.0.113.11")
            var f = AuditFilter()
            f.project = "p"
            #expect(try s.auditPage(f).map(\.event.detail) == ["row 10", "row 9", "row 7", "row 6", "row 4", "row 3", "row 1", "row 0"])
            f.localID = "u2"
            #expect(try s.auditPage(f).map(\.event.detail) == ["row 9", "row 7", "row 3", "row 1"])
            f = AuditFilter()
            f.actor = "operator:op"
            #expect(try s.auditPage(f).map(\.event.detail) == ["row 11", "row 7", "row 3"])
            f = AuditFilter()
            f.event = AuditEventName.mfaSignIn.rawValue
            #expect(try s.auditPage(f).map(\.event.detail) == ["row 10", "row 6", "row 2"])
            // Between ids: [fromID, beforeID), the older cursor.
            f = AuditFilter()
            f.fromID = all[8].id           // row 3
            f.beforeID = all[2].id         // row 9
            #expect(try s.auditPage(f).map(\.event.detail) == ["row 8", "row 7", "row 6", "row 5", "row 4", "row 3"])
            f.limit = 2
            let page1 = try s.auditPage(f)
            #expect(page1.map(\.event.detail) == ["row 8", "row 7"])
            f.beforeID = page1.last?.id
            #expect(try s.auditPage(f).map(\.event.detail) == ["row 6", "row 5"])
            #expect(try s.auditPage(f).first { $0.event.detail == "row 5" }?.event.outcome == "refused")
            f = AuditFilter()
            f.localID = "nobody"
            #expect(try s.auditPage(f).isEmpty)
        }
    }

    @Test("audit ids by time: the first at or after, one past the last after the end, 1 when empty; counts per bucket",
          arguments: Backend.available)
    func auditIDsAndCounts(backend: Backend) throws {
        try with(backend) { _, s in
            #expect(try s.auditID(atOrAfter: 0) == 1)
            try auditRows(s)
            let ids = try s.auditPage(AuditFilter()).reversed().map(\.id)   // oldest first: at 1 000 … 12 000
            #expect(try s.auditID(atOrAfter: 0) == ids[0])
            #expect(try s.auditID(atOrAfter: 1_000) == ids[0])
            #expect(try s.auditID(atOrAfter: 1_001) == ids[1])
            #expect(try s.auditID(atOrAfter: 7_000) == ids[6])
            #expect(try s.auditID(atOrAfter: 12_000) == ids[11])
            #expect(try s.auditID(atOrAfter: 12_001) == ids[11] + 1)
            // Buckets of 4 000 ms over rows 0…8 of p: [0, 4 000): rows 0, 1; [4 000, 8 000): 3, 4, 6; [8 000, …): 7.
            let counts = try s.auditCounts(project: "p", fromID: ids[0], toID: ids[8], bucketMillis: 4_000)
            func n(_ bucket: Millis, _ event: AuditEventName, _ outcome: String = "ok") -> Int {
                counts.first { $0.bucketStart == bucket && $0.event == event.rawValue && $0.outcome == outcome }?.count ?? 0
            }
            #expect(n(0, .phoneSignIn) == 1 && n(0, .emailLinkSignIn) == 1)
            #expect(n(4_000, .outboxRetry) == 1 && n(4_000, .phoneSignIn) == 1 && n(4_000, .mfaSignIn) == 1)
            #expect(n(8_000, .outboxRetry) == 1)
            #expect(counts.reduce(0) { $0 + $1.count } == 6)
            // Another project's rows, and an empty range.
            #expect(try s.auditCounts(project: "q", fromID: ids[0], toID: ids[11] + 1, bucketMillis: 60_000).reduce(0) { $0 + $1.count } == 4)
            #expect(try s.auditCounts(project: "q", fromID: ids[5] + 1, toID: ids[5] + 1, bucketMillis: 60_000).isEmpty)
            #expect(try s.auditCounts(project: "q", fromID: ids[0], toID: ids[11] + 1, bucketMillis: 60_000)
                        .first { $0.event == AuditEventName.emailLinkSignIn.rawValue }?.outcome == "refused")
        }
    }

    @Test("counter windows: by prefix (byte order, no neighbour), within [from, to), in bucket and window order", arguments: Backend.available)
    func windows(backend: Backend) throws {
        try with(backend) { _, s in
            for (bucket, start, n) in [("activity:p:sent:sms", 3_600, 2), ("activity:p:sent:sms", 0, 1), ("activity:p:sent:email", 0, 5),
                                       ("activity:p:sent", 0, 9), ("activity:p:sen", 0, 9), ("activity:q:sent:sms", 0, 7),
                                       ("activity:p:sent:\u{e9}", 0, 3), ("activity:p:sent:sms", 7_200, 4)] {
                _ = try s.incrementCounter(bucket: bucket, windowStart: Millis(start), amount: n, expiresAt: 99_999)
            }
            let got = try s.counterWindows(prefix: "activity:p:sent:", from: 0, to: 7_200)
            #expect(got == [CounterWindow(bucket: "activity:p:sent:email", windowStart: 0, count: 5),
                            CounterWindow(bucket: "activity:p:sent:sms", windowStart: 0, count: 1),
                            CounterWindow(bucket: "activity:p:sent:sms", windowStart: 3_600, count: 2),
                            CounterWindow(bucket: "activity:p:sent:\u{e9}", windowStart: 0, count: 3)])
            #expect(try s.counterWindows(prefix: "activity:p:sent:sms", from: 3_600, to: 3_601).map(\.count) == [2])
            #expect(try s.counterWindows(prefix: "activity:p:sent:", from: 9_000, to: 10_000).isEmpty)
            // A prefix is text, not a pattern.
            #expect(try s.counterWindows(prefix: "activity:_:sent:", from: 0, to: 99_999).isEmpty)
            #expect(try s.counterWindows(prefix: "activity:%", from: 0, to: 99_999).isEmpty)
        }
    }

    /// Pending (one due, one failed waiting), sending, sent and dead messages of p, one of q.
    func outboxRows(_ s: any ContractStore) throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        for name in ["pending", "failed", "leased", "sent", "dead", "other"] {
            ids[name] = try s.enqueue(OutboxMessage(projectID: name == "other" ? "q" : "p", channel: name == "sent" ? .email : .sms,
                                                     recipient: "+3361234567\(ids.count)", body: "code \(name)", nextAttemptAt: 0, createdAt: 0))
        }
        for name in ["failed", "leased", "sent", "dead"] {
            let lease = try #require(try s.lease(id: ids[name]!, now: 10, until: 1_000))
            switch name {
            case "failed": #expect(try s.markFailed(lease, error: "provider said no", nextAttemptAt: 50_000, at: 10))
            case "sent": #expect(try s.markSent(lease, at: 10, keepBody: false))
            case "dead": #expect(try s.markFailed(lease, error: "bad number", nextAttemptAt: nil, at: 10))
            default: break
            }
        }
        return ids
    }

    @Test("outbox pages: by status, the failed only, newest first, before an id, limited, of one project", arguments: Backend.available)
    func outboxPages(backend: Backend) throws {
        try with(backend) { _, s in
            let ids = try outboxRows(s)
            #expect(try s.outboxPage(project: "p", statuses: [.pending], failedOnly: false, beforeID: nil, limit: 50).map(\.id)
                        == [ids["failed"]!, ids["pending"]!])
            let failed = try s.outboxPage(project: "p", statuses: [.pending], failedOnly: true, beforeID: nil, limit: 50)
            #expect(failed.map(\.id) == [ids["failed"]!] && failed[0].lastError == "provider said no" && failed[0].attempts == 1)
            let dead = try s.outboxPage(project: "p", statuses: [.dead], failedOnly: false, beforeID: nil, limit: 50)
            #expect(dead.map(\.id) == [ids["dead"]!] && dead[0].body.isEmpty && dead[0].lastError == "bad number")
            #expect(try s.outboxPage(project: "p", statuses: [.pending, .dead, .sending], failedOnly: false, beforeID: nil, limit: 50).map(\.id)
                        == [ids["dead"]!, ids["leased"]!, ids["failed"]!, ids["pending"]!])
            #expect(try s.outboxPage(project: "p", statuses: [.pending, .dead, .sending], failedOnly: false, beforeID: ids["leased"]!, limit: 1)
                        .map(\.id) == [ids["failed"]!])
            #expect(try s.outboxPage(project: "p", statuses: [], failedOnly: false, beforeID: nil, limit: 50).isEmpty)
            #expect(try s.outboxPage(project: "q", statuses: [.pending], failedOnly: false, beforeID: nil, limit: 50).map(\.id) == [ids["other"]!])
        }
    }

    @Test("retry: a pending message made due now with its attempts reset; nothing else, nor another project's", arguments: Backend.available)
    func retry(backend: Backend) throws {
        try with(backend) { _, s in
            let ids = try outboxRows(s)
            #expect(try s.dueMessageIDs(now: 20, limit: 10, channels: [.sms]) == [ids["pending"]!, ids["other"]!])
            #expect(try s.retryMessage(id: ids["failed"]!, project: "p", now: 20))
            let m = try #require(try s.outboxPage(project: "p", statuses: [.pending], failedOnly: true, beforeID: nil, limit: 50).first)
            #expect(m.id == ids["failed"]! && m.attempts == 0 && m.nextAttemptAt == 20 && m.body == "code failed")
            #expect(try s.dueMessageIDs(now: 20, limit: 10, channels: [.sms]).contains(ids["failed"]!))
            for name in ["leased", "sent", "dead"] { #expect(try !s.retryMessage(id: ids[name]!, project: "p", now: 20)) }
            #expect(try !s.retryMessage(id: ids["other"]!, project: "p", now: 20))
            #expect(try !s.retryMessage(id: 999_999, project: "p", now: 20))
        }
    }

    @Test("discard: a pending message made dead and scrubbed, a dead one deleted; never one being sent or sent", arguments: Backend.available)
    func discard(backend: Backend) throws {
        try with(backend) { _, s in
            let ids = try outboxRows(s)
            #expect(try s.discardMessage(id: ids["failed"]!, project: "p", reason: "discarded by operator:op", at: 30))
            let m = try #require(try s.outboxPage(project: "p", statuses: [.dead], failedOnly: false, beforeID: nil, limit: 50)
                .first { $0.id == ids["failed"]! })
            #expect(m.body.isEmpty && m.lastError == "discarded by operator:op" && m.status == .dead)
            #expect(try !s.dueMessageIDs(now: 100_000, limit: 10, channels: [.sms]).contains(ids["failed"]!))
            #expect(try s.discardMessage(id: ids["dead"]!, project: "p", reason: "x", at: 30))
            #expect(try s.outboxPage(project: "p", statuses: [.dead], failedOnly: false, beforeID: nil, limit: 50).map(\.id) == [ids["failed"]!])
            #expect(try !s.discardMessage(id: ids["leased"]!, project: "p", reason: "x", at: 30))
            #expect(try !s.discardMessage(id: ids["sent"]!, project: "p", reason: "x", at: 30))
            #expect(try !s.discardMessage(id: ids["other"]!, project: "p", reason: "x", at: 30))
            let leased = try #require(try s.outboxPage(project: "p", statuses: [.sending], failedOnly: false, beforeID: nil, limit: 5).first)
            #expect(leased.id == ids["leased"]! && leased.body == "code leased")
        }
    }

    /// Runs two racers on their own connections: the first role `a`, the second `b`.
    func duel(_ db: TestDatabase, _ a: @escaping @Sendable (any ContractStore) throws -> Bool,
              _ b: @escaping @Sendable (any ContractStore) throws -> Bool) throws -> (a: Bool, b: Bool) {
        let roles = Locked(0)
        let results = try db.race(threads: 2) { store -> (Int, Bool) in
            let role = roles.withLock { r -> Int in r += 1; return r }
            return (role, try role == 1 ? a(store) : b(store))
        }
        return (results.first { $0.0 == 1 }!.1, results.first { $0.0 == 2 }!.1)
    }

    @Test("race: a retry against a worker's lease: the lease gets a due message whatever happens, its attempts reset only by a retry before it",
          arguments: Backend.available)
    func retryAgainstLease(backend: Backend) throws {
        try with(backend) { db, s in
            for round in 0..<12 {
                // Due (a lease always gets it) after 2 failed attempts, or waiting (a lease gets it only after a retry).
                let waiting = round % 2 == 1
                let id = try s.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "b", nextAttemptAt: 0, createdAt: 0))
                for attempt in 0..<2 {
                    let l = try #require(try s.lease(id: id, now: 10, until: 20))
                    #expect(try s.markFailed(l, error: "no", nextAttemptAt: waiting && attempt == 1 ? 1_000_000 : 0, at: 10))
                }
                // A due message: PostgreSQL's SKIP LOCKED may pass over the row while the retry holds it
                // (as it would for another instance taking it); the worker's next pass takes it.
                let (retried, leased) = try duel(db, { try $0.retryMessage(id: id, project: "p", now: 100) },
                                                 { store in
                                                     for _ in 0..<(waiting ? 1 : 200) {
                                                         if try store.lease(id: id, now: 100, until: 10_000) != nil { return true }
                                                         usleep(5_000)
                                                     }
                                                     return false
                                                 })
                let m = try #require(try s.outboxPage(project: "p", statuses: [.pending, .sending], failedOnly: false, beforeID: id + 1, limit: 1).first)
                #expect(m.id == id)
                if waiting {
                    // A retry always finds it pending; the lease wins it only after the retry.
                    #expect(retried && m.attempts == 0 && m.nextAttemptAt == 100)
                    #expect(m.status == (leased ? .sending : .pending))
                } else {
                    #expect(leased && m.status == .sending)
                    // A retry after the lease finds it being sent and changes nothing.
                    #expect(m.attempts == (retried ? 0 : 2))
                }
            }
        }
    }

    @Test("race: a discard while the message is being sent never discards it; against a lease exactly one wins",
          arguments: Backend.available)
    func discardWhileSending(backend: Backend) throws {
        try with(backend) { db, s in
            for _ in 0..<8 {
                // Leased, then the worker records the send while an operator discards it.
                let id = try s.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "code", nextAttemptAt: 0, createdAt: 0))
                let lease = try #require(try s.lease(id: id, now: 10, until: 10_000))
                let (discarded, sent) = try duel(db, { try $0.discardMessage(id: id, project: "p", reason: "op", at: 20) },
                                                 { try $0.markSent(lease, at: 20, keepBody: false) })
                #expect(!discarded && sent)
                #expect(try s.outboxPage(project: "p", statuses: [.dead], failedOnly: false, beforeID: nil, limit: 50).allSatisfy { $0.id != id })
                // Due: the discard and a worker's lease; exactly one has it.
                let next = try s.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "code", nextAttemptAt: 0, createdAt: 0))
                let (gone, taken) = try duel(db, { try $0.discardMessage(id: next, project: "p", reason: "op", at: 20) },
                                             { try $0.lease(id: next, now: 20, until: 10_000) != nil })
                #expect(gone != taken)
                let m = try #require(try s.outboxPage(project: "p", statuses: [.dead, .sending], failedOnly: false, beforeID: next + 1, limit: 1).first)
                #expect(m.id == next && m.status == (gone ? .dead : .sending) && m.body == (gone ? "" : "code"))
            }
        }
    }

    @Test("race: views rolling the same hours up at once count each hour once", arguments: Backend.available)
    func activityRollUp(backend: Backend) throws {
        try with(backend) { db, s in
            let day: Millis = 86_400_000, hour: Millis = 3_600_000
            let now = 20_000 * day + 12 * hour + 1_800_000
            var expected = 0
            for h in stride(from: now - 29 * day - 12 * hour, to: now, by: Int(3 * hour)) {
                try s.audit(AuditEvent(projectID: "p", event: .phoneSignIn, localID: "u"), at: h)
                expected += 1
            }
            let totals = try db.race(threads: 4) { store in
                try Activity(store: store, clock: StillClock(at: now)).report(project: "p", range: .month).signIns[0].values.reduce(0, +)
            }
            #expect(totals == [expected, expected, expected, expected])
            let markers = try s.counterWindows(prefix: "activity:p:rolled", from: 0, to: .max)
            #expect(markers.count > 24 * 29 && markers.allSatisfy { $0.count == 1 })
            let rolled = try s.counterWindows(prefix: "activity:p:signin:phone:ok", from: 0, to: .max)
            #expect(rolled.allSatisfy { $0.count == 1 } && rolled.count == expected)
        }
    }
}
