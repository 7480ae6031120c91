import AuthCrypto
import AuthEngine
import AuthStore
import Foundation
import Testing
import Locking

/// The contract of the short codes beside email links (`EmailLinkStore`) on every backend: a
/// code is written and read back with its link; the candidates of an address are its own, newest
/// first, within the window; a try is taken only while the code is open and has tries left; the
/// code is used with its link (either ends both); and of concurrent uses and tries the store lets
/// through exactly one use and never more tries than the budget.
@Suite("Store contract: email codes (SQLite and PostgreSQL)")
struct StoreContractEmailCodes {
    static func link(_ n: Int, email: String = "ada@example.com", project: String = "p", at: Millis = 1_000, code: Bool = true,
                     expiresAt: Millis = 1_801_000, codeExpiresAt: Millis = 601_000) -> EmailLinkRecord {
        EmailLinkRecord(codeHash: Digest.sha256("link \(n)"), projectID: project, requestType: .emailSignIn, email: email, lang: "fr",
                        browserBinding: Digest.sha256("cookie"), createdAt: at, expiresAt: expiresAt,
                        shortCode: code ? EmailShortCode(hash: Digest.sha256("code \(n)"), binding: Digest.sha256("binding \(n)"),
                                                         expiresAt: codeExpiresAt) : nil)
    }

    @Test("a code is stored with its link and read back; a link alone has none", arguments: Backend.available)
    func roundTrip(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertEmailLink(Self.link(1))
            try s.insertEmailLink(Self.link(2, code: false))
            #expect(try s.emailLink(hash: Digest.sha256("link 1")) == Self.link(1))
            #expect(try s.emailLink(hash: Digest.sha256("link 2"))?.shortCode == nil)
        }
    }

    @Test("an address's links with codes: its own project and address, since the window's start, newest first, at most the limit",
          arguments: Backend.available)
    func candidates(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertEmailLink(Self.link(1, at: 1_000))
            try s.insertEmailLink(Self.link(2, at: 3_000))
            try s.insertEmailLink(Self.link(3, at: 2_000))
            try s.insertEmailLink(Self.link(4, at: 4_000, code: false))
            try s.insertEmailLink(Self.link(5, email: "bo@example.com", at: 2_500))
            try s.insertEmailLink(Self.link(6, project: "q", at: 2_500))
            let found = try s.emailLinksWithCodes(project: "p", email: "ada@example.com", since: 1_500, limit: 10)
            #expect(found.map(\.codeHash) == [Digest.sha256("link 2"), Digest.sha256("link 3")])
            #expect(try s.emailLinksWithCodes(project: "p", email: "ada@example.com", since: 0, limit: 1).map(\.codeHash) == [Digest.sha256("link 2")])
            // Used links are listed too (the flow tells "used" from "another browser's").
            #expect(try s.consumeEmailLink(hash: Digest.sha256("link 2"), at: 5_000))
            #expect(try s.emailLinksWithCodes(project: "p", email: "ada@example.com", since: 1_500, limit: 10).first?.consumedAt == 5_000)
        }
    }

    @Test("tries: taken while open and under the budget, never after the code or its link was used", arguments: Backend.available)
    func tries(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertEmailLink(Self.link(1))
            for _ in 0..<5 { #expect(try s.takeEmailCodeAttempt(hash: Digest.sha256("link 1"), maxAttempts: 5)) }
            #expect(try !s.takeEmailCodeAttempt(hash: Digest.sha256("link 1"), maxAttempts: 5))
            #expect(try s.emailLink(hash: Digest.sha256("link 1"))?.shortCode?.attempts == 5)
            try s.insertEmailLink(Self.link(2))
            #expect(try s.consumeEmailLink(hash: Digest.sha256("link 2"), at: 2_000))
            #expect(try !s.takeEmailCodeAttempt(hash: Digest.sha256("link 2"), maxAttempts: 5))
            try s.insertEmailLink(Self.link(3, code: false))
            #expect(try !s.takeEmailCodeAttempt(hash: Digest.sha256("link 3"), maxAttempts: 5))
        }
    }

    @Test("a use by code uses the link: once, never past the code's or the link's expiry, never a link without a code",
          arguments: Backend.available)
    func use(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertEmailLink(Self.link(1))
            #expect(try s.consumeEmailCode(hash: Digest.sha256("link 1"), at: 2_000))
            #expect(try !s.consumeEmailCode(hash: Digest.sha256("link 1"), at: 2_001))
            #expect(try !s.consumeEmailLink(hash: Digest.sha256("link 1"), at: 2_002), "the link went with its code")
            try s.insertEmailLink(Self.link(2))
            #expect(try !s.consumeEmailCode(hash: Digest.sha256("link 2"), at: 601_000), "the code's ten minutes are over")
            #expect(try s.consumeEmailLink(hash: Digest.sha256("link 2"), at: 601_000), "the link outlives its code")
            try s.insertEmailLink(Self.link(3, expiresAt: 300_000, codeExpiresAt: 300_000))
            #expect(try !s.consumeEmailCode(hash: Digest.sha256("link 3"), at: 300_000))
            try s.insertEmailLink(Self.link(4, code: false))
            #expect(try !s.consumeEmailCode(hash: Digest.sha256("link 4"), at: 2_000))
        }
    }

    @Test("race: 8 connections use one code, one wins; 8 connections take tries of a code with 5 left, 5 get one",
          arguments: Backend.available)
    func race(backend: Backend) throws {
        try with(backend) { db, s in
            for trial in 0..<5 {
                try s.insertEmailLink(Self.link(100 + trial))
                let hash = Digest.sha256("link \(100 + trial)")
                let wins = try db.race(threads: 8) { store in try store.consumeEmailCode(hash: hash, at: 2_000) }
                #expect(wins.filter { $0 }.count == 1, "trial \(trial): \(wins)")
                #expect(try s.emailLink(hash: hash)?.consumedAt == 2_000)

                try s.insertEmailLink(Self.link(200 + trial))
                let tried = Digest.sha256("link \(200 + trial)")
                let taken = try db.race(threads: 8) { store in try store.takeEmailCodeAttempt(hash: tried, maxAttempts: 5) }
                #expect(taken.filter { $0 }.count == 5, "trial \(trial): \(taken)")
                #expect(try s.emailLink(hash: tried)?.shortCode?.attempts == 5)
            }
            // A use racing the link's own use: one of the two, never both.
            for trial in 0..<5 {
                try s.insertEmailLink(Self.link(300 + trial))
                let hash = Digest.sha256("link \(300 + trial)")
                let wins = try db.race(threads: 8) { store in
                    Int.random(in: 0..<2) == 0 ? try store.consumeEmailCode(hash: hash, at: 2_000) : try store.consumeEmailLink(hash: hash, at: 2_000)
                }
                #expect(wins.filter { $0 }.count == 1, "trial \(trial): \(wins)")
            }
        }
    }
}
