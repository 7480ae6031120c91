import AuthStore
@testable import AuthEngine
import Testing
import TestSupport
import Locking
#if canImport(Glibc)
import Glibc
#endif

/// The console's Activity numbers: sign-ins rolled up from the audit log once per closed hour,
/// the current hour counted live, the 24 h and 30 d shapes, two views rolling up at once, and
/// the counters the failure paths write as they happen.
@Suite("Activity: sign-ins rolled up from the audit log, counters of failures and sends")
struct ActivityTests {
    static let hour = ActivityCounters.hour
    static let day = ActivityCounters.day
    /// 2026-01-10 12:30 UTC.
    static let start: Millis = 1_767_225_600_000 + 9 * day + 12 * hour + 30 * 60_000

    func signIn(_ s: SQLStore, _ event: AuditEventName, at: Millis, project: String = "p", outcome: String = "ok") throws {
        try s.audit(AuditEvent(projectID: project, event: event, localID: "u", outcome: outcome), at: at)
    }

    func series(_ r: Activity.Report, _ name: String) -> [Int] { r.signIns.first { $0.name == name }?.values ?? [] }

    @Test("24 h: hourly UTC buckets, the last holding now; closed hours rolled up once, the current hour live")
    func dayShape() throws {
        let s = try makeStore(), clock = FixedClock(Self.start)
        let now = Self.start, thisHour = now / Self.hour * Self.hour
        // Written in time order, as flows write them (an audit id grows with its time).
        try signIn(s, .emailLinkSignIn, at: thisHour - 24 * Self.hour)          // before the first bucket: left out
        try signIn(s, .emailLinkSignIn, at: thisHour - 23 * Self.hour)          // the first bucket
        try signIn(s, .phoneSignIn, at: thisHour - 3 * Self.hour + 5)           // 3 hours ago
        try signIn(s, .phoneSignUp, at: thisHour - 3 * Self.hour + 10)
        try signIn(s, .emailLinkSent, at: thisHour - 2 * Self.hour)             // not a sign-in
        try signIn(s, .phoneSignIn, at: thisHour - 2 * Self.hour, project: "q") // another project
        try signIn(s, .passkeySignIn, at: thisHour - Self.hour, outcome: "refused")
        try signIn(s, .mfaSignIn, at: thisHour + 60_000)                        // the current hour
        let r = try Activity(store: s, clock: clock).report(project: "p", range: .day)
        #expect(r.bucketStarts.count == 24 && r.bucketSize == Self.hour)
        #expect(r.bucketStarts.first == thisHour - 23 * Self.hour && r.bucketStarts.last == thisHour)
        #expect(r.signIns.map(\.name) == Activity.methods)
        #expect(series(r, "phone")[20] == 2 && series(r, "phone").reduce(0, +) == 2)
        #expect(series(r, "email_link")[0] == 1 && series(r, "email_link").reduce(0, +) == 1)
        #expect(series(r, "mfa")[23] == 1)
        #expect(r.refusedSignIns.map(\.name) == ["passkey"] && r.refusedSignIns[0].values[22] == 1)
        #expect(series(r, "passkey").reduce(0, +) == 0)
        // Every closed hour is marked; the current one is not.
        let rolled = try Activity(store: s, clock: clock).rolledHours(project: "p", from: r.bucketStarts[0], to: thisHour + Self.hour)
        #expect(rolled.count == 23 && !rolled.contains(thisHour))
        // The current hour is counted as it goes.
        try signIn(s, .mfaSignIn, at: thisHour + 120_000)
        let again = try Activity(store: s, clock: clock).report(project: "p", range: .day)
        #expect(series(again, "mfa")[23] == 2)
        #expect(again.signIns == r.signIns.map { $0.name == "mfa" ? Activity.Series(name: "mfa", values: series(again, "mfa")) : $0 })
        // A rolled hour is not read again: a row written into it late changes nothing.
        try signIn(s, .phoneSignIn, at: thisHour - 3 * Self.hour + 20)
        #expect(series(try Activity(store: s, clock: clock).report(project: "p", range: .day), "phone")[20] == 2)
    }

    @Test("an hour that ended less than the grace ago is still counted live, then rolled up")
    func grace() throws {
        let s = try makeStore()
        let thisHour = Self.start / Self.hour * Self.hour
        let clock = FixedClock(thisHour + 30_000)   // 30 s into the hour
        try signIn(s, .phoneSignIn, at: thisHour - 10_000)
        let activity = Activity(store: s, clock: clock)
        #expect(series(try activity.report(project: "p", range: .day), "phone")[22] == 1)
        #expect(try !activity.rolledHours(project: "p", from: thisHour - Self.hour, to: thisHour).contains(thisHour - Self.hour))
        clock.advance(millis: Activity.grace)
        #expect(series(try activity.report(project: "p", range: .day), "phone")[22] == 1)
        #expect(try activity.rolledHours(project: "p", from: thisHour - Self.hour, to: thisHour).contains(thisHour - Self.hour))
    }

    @Test("30 d: daily UTC buckets from 29 days ago to today, each the sum of its hours, rolled and live")
    func monthShape() throws {
        let s = try makeStore(), clock = FixedClock(Self.start)
        let today = Self.start / Self.day * Self.day
        try signIn(s, .anonymousSignUp, at: today - 30 * Self.day + 5)          // before the range
        try signIn(s, .customTokenSignIn, at: today - 29 * Self.day)            // first day, first hour
        try signIn(s, .customTokenSignUp, at: today - 29 * Self.day + 23 * Self.hour)
        try signIn(s, .phoneSignIn, at: today - Self.day + 3)
        try signIn(s, .phoneSignIn, at: today + 1)                              // today, rolled
        try signIn(s, .phoneSignIn, at: Self.start - 1)                         // today, the current hour
        let activity = Activity(store: s, clock: clock)
        // A 24 h view first rolls its own hours up; the 30 d view then rolls the older ones.
        _ = try activity.report(project: "p", range: .day)
        let r = try activity.report(project: "p", range: .month)
        #expect(r.bucketStarts.count == 30 && r.bucketSize == Self.day)
        #expect(r.bucketStarts.first == today - 29 * Self.day && r.bucketStarts.last == today)
        #expect(series(r, "custom_token")[0] == 2)
        #expect(series(r, "anonymous").reduce(0, +) == 0)
        #expect(series(r, "phone")[28] == 1 && series(r, "phone")[29] == 2)
        let again = try activity.report(project: "p", range: .month)
        #expect(again == r)
        // The 24 h view reads the same rolled hours.
        #expect(series(try activity.report(project: "p", range: .day), "phone").reduce(0, +) == 2)
    }

    @Test("a roll-up that finds an hour already marked gives up whole: nothing counted twice")
    func lostRace() throws {
        let s = try makeStore(), clock = FixedClock(Self.start)
        let thisHour = Self.start / Self.hour * Self.hour
        let h1 = thisHour - 2 * Self.hour, h2 = thisHour - Self.hour
        try signIn(s, .phoneSignIn, at: h1 + 1)
        try signIn(s, .phoneSignIn, at: h2 + 1)
        let activity = Activity(store: s, clock: clock)
        #expect(try activity.rollUp(project: "p", hours: [h2]))
        // h1 is new, h2 is not: the whole roll-up is undone, h1's marker included.
        #expect(try !activity.rollUp(project: "p", hours: [h1, h2]))
        #expect(try activity.rolledHours(project: "p", from: h1, to: thisHour) == [h2])
        #expect(try s.counter(bucket: ActivityCounters.bucket("p", "signin:phone:ok"), windowStart: h2) == 1)
        #expect(try s.counter(bucket: ActivityCounters.bucket("p", "signin:phone:ok"), windowStart: h1) == 0)
        let r = try activity.report(project: "p", range: .day)
        #expect(series(r, "phone")[21] == 1 && series(r, "phone")[22] == 1)
    }

    @Test("views at once on their own connections: every hour rolled up once, the counts the same for all")
    func concurrentViews() throws {
        let path = "/tmp/gatehouse-activity-\(UInt64.random(in: 0...UInt64.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let setup = try SQLStore(path: path)
        let clock = FixedClock(Self.start)
        let today = Self.start / Self.day * Self.day
        for d in (0..<30).reversed() { for n in 0..<(d % 4) { try signIn(setup, .phoneSignIn, at: today - Millis(d) * Self.day + Millis(n) * 7 * Self.hour) } }
        let expected = (0..<30).reduce(0) { $0 + $1 % 4 }
        let stores = try (0..<4).map { _ in try SQLStore(path: path) }
        let totals = Locked<[Int]>([])
        let threads = stores.map { store in
            let box = StoreBox(store)
            return TestThread {
                let r = Result { try Activity(store: box.store, clock: clock).report(project: "p", range: .month) }
                totals.withLock { $0.append((try? r.get()).map { $0.signIns[0].values.reduce(0, +) } ?? -1) }
            }
        }
        for t in threads { t.join() }
        #expect(totals.withLock { $0 } == [expected, expected, expected, expected])
        // The markers: one per hour, never 2.
        let markers = try setup.counterWindows(prefix: ActivityCounters.bucket("p", "rolled"), from: 0, to: .max)
        #expect(!markers.isEmpty && markers.allSatisfy { $0.count == 1 })
        #expect(try Activity(store: setup, clock: clock).report(project: "p", range: .month).signIns[0].values.reduce(0, +) == expected)
    }

    // MARK: Counted as they happen

    @Test("counters: wrong codes by kind, refusals by rule (once per decision, deployment-wide), sends per channel and region per day")
    func counters() throws {
        let s = try makeStore(), clock = FixedClock(Self.start)
        try ActivityCounters.wrongCode(s, project: "p", .phone, at: Self.start)
        try ActivityCounters.wrongCode(s, project: "p", .totp, at: Self.start - Self.hour)
        try ActivityCounters.sent(s, project: "p", channel: .sms, at: Self.start)
        try ActivityCounters.sent(s, project: "p", channel: .email, at: Self.start)
        try ActivityCounters.sent(s, project: "q", channel: .email, at: Self.start)
        // A rule over its budget on both tiers of a client is one refusal.
        let limits = Limits(store: s, clock: clock)
        let rule = Limits.Rule("test-rule", max: 1, per: 3600)
        let client = ClientAddress("203.0.113.9")
        #expect(try limits.record(rule, client: client, scope: "p"))
        #expect(try !limits.record(rule, client: client, scope: "p"))
        #expect(try !limits.allows(rule, client: client, scope: "p"))
        #expect(throws: AuthError(.tooManyAttempts)) { try limits.hit(rule, key: "k", amount: 2) }
        try ActivityCounters.smsRegion(s, project: "p", region: "fr", at: Self.start)
        try ActivityCounters.smsRegion(s, project: "p", region: "FR", at: Self.start - Self.day)
        try ActivityCounters.smsRegion(s, project: "p", region: "GB", at: Self.start)
        let activity = Activity(store: s, clock: clock)
        let r = try activity.report(project: "p", range: .day)
        #expect(r.wrongCodes.map(\.name) == ["phone", "mfa_phone", "totp"])
        #expect(r.wrongCodes[0].values[23] == 1 && r.wrongCodes[2].values[22] == 1 && r.wrongCodes[1].total == 0)
        #expect(r.refusals == [Activity.Series(name: "test-rule", values: Array(repeating: 0, count: 23) + [3])])
        #expect(r.smsSent[23] == 1 && r.emailsSent[23] == 1)
        let regions = try activity.smsRegions(project: "p")
        #expect(regions.dayStarts.count == 30 && regions.dayStarts.last == Self.start / Self.day * Self.day)
        #expect(regions.regions.map(\.name) == ["FR", "GB"])
        #expect(regions.regions[0].values.suffix(2) == [1, 1] && regions.regions[1].values.last == 1)
        // Kept 31 days from their window, then purged like every counter.
        try s.purgeCounters(before: Self.start / Self.hour * Self.hour + ActivityCounters.kept + 1)
        #expect(try s.counterWindows(prefix: "activity:p:sent:", from: 0, to: .max).isEmpty)
    }

    @Test("through the flows: a wrong phone code, a send refused by a number's budget (committed), the SMS region")
    func throughFlows() throws {
        let f = try PhoneFixture()
        let fr = "+33612345678"
        let sent = try f.send(fr)
        #expect(wireError { try f.signIn(sent.sessionInfo, "000000") } == "INVALID_CODE")
        for _ in 0..<4 { f.clock.advance(seconds: 301); try f.send(fr) }
        f.clock.advance(seconds: 301)
        #expect(wireError { try f.send(fr) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        let r = try Activity(store: f.store, clock: f.clock).report(project: f.project.id, range: .day)
        #expect(r.wrongCodes[0].total == 1)
        #expect(r.refusals.map(\.name) == ["phone-send-number-hour"] && r.refusals[0].total == 1)
        #expect(try Activity(store: f.store, clock: f.clock).smsRegions(project: f.project.id).regions
                    == [Activity.Series(name: "FR", values: Array(repeating: 0, count: 29) + [5])])
        // A right code writes no counter.
        let before = try f.store.counterWindows(prefix: "activity:", from: 0, to: .max)
        f.clock.advance(seconds: 3600)
        let (account, _) = try f.signedInUser(fr)
        #expect(account.phoneNumber == fr)
        let after = try f.store.counterWindows(prefix: "activity:", from: 0, to: .max).filter { !$0.bucket.hasSuffix(":sms_region:FR") }
        #expect(after == before.filter { !$0.bucket.hasSuffix(":sms_region:FR") })
    }
}

struct StoreBox: @unchecked Sendable { let store: SQLStore; init(_ s: SQLStore) { store = s } }
