import AuthEngine
import AuthStore
import Testing

/// The contract of the console's Users list (`ConsoleStore.accountPage`) and of the operators
/// (`OperatorStore`) on every backend: the orders and their cursors (ties broken by the uid, in
/// byte order), accounts that never signed in left out of the sign-in order, prefix searches that
/// take `%`, `_` and non-ASCII text as themselves, one project at a time.
@Suite("Store contract: console users and operators (SQLite and PostgreSQL)")
struct StoreContractConsole {
    @discardableResult
    func account(_ s: any ContractStore, _ uid: String, created: Millis, lastSignIn: Millis? = nil, email: String? = nil,
                 phone: String? = nil, project: String = "p") throws -> Account {
        var a = Account(projectID: project, localID: uid, createdAt: created)
        a.lastLoginAt = lastSignIn
        a.email = email
        a.phoneNumber = phone
        try s.insertAccount(a)
        return a
    }

    /// Every page of `listing`, each `size` long, following the cursors as the console does.
    func pages(_ s: any ContractStore, _ listing: AccountListing, size: Int, project: String = "p") throws -> [[String]] {
        var q = listing
        q.limit = size
        var out: [[String]] = []
        while out.count < 100 {
            let page = try s.accountPage(project: project, q)
            if page.isEmpty { break }
            out.append(page.map(\.localID))
            let last = page[page.count - 1]
            switch q.searchField {
            case .email?: q.afterKey = last.email
            case .phone?: q.afterKey = last.phoneNumber
            case .uid?: q.afterKey = last.localID
            case nil:
                q.afterTime = q.order == .created ? last.createdAt : last.lastLoginAt
                q.afterLocalID = last.localID
            }
            if page.count < size { break }
        }
        return out
    }

    @Test("by creation: newest first, ties by uid in byte order (descending), cursors visit each account once", arguments: Backend.available)
    func byCreation(backend: Backend) throws {
        try with(backend) { _, s in
            // Three at 2 000 (a tie the cursor must cross), "B" < "a" < "b" in byte order.
            try account(s, "old", created: 1_000)
            try account(s, "a", created: 2_000)
            try account(s, "B", created: 2_000)
            try account(s, "b", created: 2_000)
            try account(s, "new", created: 3_000)
            try account(s, "other-project", created: 2_500, project: "q")
            var listing = AccountListing()
            listing.order = .created
            let all = ["new", "b", "a", "B", "old"]
            #expect(try s.accountPage(project: "p", listing).map(\.localID) == all)
            for size in 1...5 {
                let got = try pages(s, listing, size: size)
                #expect(got.flatMap { $0 } == all, "pages of \(size): \(got)")
                #expect(got.allSatisfy { $0.count <= size })
            }
            // A cursor inside the tie: the rest of the tie, then older ones.
            listing.afterTime = 2_000
            listing.afterLocalID = "b"
            #expect(try s.accountPage(project: "p", listing).map(\.localID) == ["a", "B", "old"])
            // A cursor on a row since deleted still continues where it was.
            listing.afterLocalID = "aa"
            #expect(try s.accountPage(project: "p", listing).map(\.localID) == ["a", "B", "old"])
            #expect(try s.accountPage(project: "q", AccountListing()).map(\.localID) == ["other-project"])
            #expect(try s.accountPage(project: "none", AccountListing()).isEmpty)
        }
    }

    @Test("by last sign-in: latest first, ties by uid, accounts that never signed in left out", arguments: Backend.available)
    func byLastSignIn(backend: Backend) throws {
        try with(backend) { _, s in
            try account(s, "never", created: 9_000)
            try account(s, "early", created: 1_000, lastSignIn: 5_000)
            try account(s, "x", created: 1_000, lastSignIn: 7_000)
            try account(s, "y", created: 2_000, lastSignIn: 7_000)
            try account(s, "late", created: 1_000, lastSignIn: 8_000)
            var listing = AccountListing()
            listing.order = .lastSignIn
            let all = ["late", "y", "x", "early"]
            #expect(try s.accountPage(project: "p", listing).map(\.localID) == all)
            for size in 1...4 { #expect(try pages(s, listing, size: size).flatMap { $0 } == all) }
            listing.order = .created
            #expect(try s.accountPage(project: "p", listing).map(\.localID).first == "never")
        }
    }

    @Test("prefix search: email, phone and uid in byte order; %, _ and non-ASCII are themselves; cursors", arguments: Backend.available)
    func prefixSearch(backend: Backend) throws {
        try with(backend) { _, s in
            try account(s, "u1", created: 1, email: "ab%c@example.com", phone: "+441632960001")
            try account(s, "u2", created: 2, email: "ab_c@example.com", phone: "+441632960002")
            try account(s, "u3", created: 3, email: "abxc@example.com", phone: "+33612345678")
            try account(s, "u4", created: 4, email: "abc@example.com")
            try account(s, "u5", created: 5, email: "émile@example.com")
            try account(s, "u6", created: 6, email: "émilie@example.com")
            try account(s, "u7", created: 7, email: "emile@example.com")
            try account(s, "U8", created: 8, email: "zoe@example.com")
            try account(s, "ü9", created: 9)
            try account(s, "u10", created: 10, email: "ab%c@other.example", project: "q")
            func find(_ field: AccountListing.Field, _ prefix: String, project: String = "p") throws -> [String] {
                var l = AccountListing()
                l.search = (field, prefix)
                return try s.accountPage(project: project, l).map(\.localID)
            }
            // A LIKE would take % and _ as wildcards: a range takes them as text.
            #expect(try find(.email, "ab%") == ["u1"])
            #expect(try find(.email, "ab_") == ["u2"])
            // Byte order: "%" (25) < "_" (5F) < "c" < "x"; "e" < "z" < "é" (C3 A9).
            #expect(try find(.email, "ab") == ["u1", "u2", "u4", "u3"])
            #expect(try find(.email, "é") == ["u5", "u6"])
            #expect(try find(.email, "émili") == ["u6"])
            #expect(try find(.email, "e") == ["u7"])
            #expect(try find(.email, "") == ["u1", "u2", "u4", "u3", "u7", "U8", "u5", "u6"])
            #expect(try find(.email, "ab%c@example.com") == ["u1"])
            #expect(try find(.email, "ab%c@example.comx").isEmpty)
            #expect(try find(.email, "ab%", project: "q") == ["u10"])
            #expect(try find(.phone, "+44") == ["u1", "u2"])
            #expect(try find(.phone, "+4416329600") == ["u1", "u2"])
            #expect(try find(.phone, "+336") == ["u3"])
            #expect(try find(.phone, "+1").isEmpty)
            // Uids: "U8" < "u…" < "ü9" in byte order; the prefix is case-sensitive.
            #expect(try find(.uid, "u") == ["u1", "u2", "u3", "u4", "u5", "u6", "u7"])
            #expect(try find(.uid, "U") == ["U8"])
            #expect(try find(.uid, "ü") == ["ü9"])
            #expect(try find(.uid, "%").isEmpty)
            #expect(try find(.uid, "_").isEmpty)
            // A search pages by its key.
            var l = AccountListing()
            l.search = (.email, "")
            for size in 1...4 {
                #expect(try pages(s, l, size: size).flatMap { $0 } == ["u1", "u2", "u4", "u3", "u7", "U8", "u5", "u6"], "pages of \(size)")
            }
            l.search = (.uid, "u")
            #expect(try pages(s, l, size: 3) == [["u1", "u2", "u3"], ["u4", "u5", "u6"], ["u7"]])
        }
    }

    @Test("operators: added once, listed in the order added, checked per project, removed; gone with their account", arguments: Backend.available)
    func operators(backend: Backend) throws {
        try with(backend) { _, s in
            #expect(try !s.isOperator(project: "p", localID: "a"))
            #expect(try s.operators(project: nil).isEmpty)
            #expect(try s.addOperator(OperatorRecord(projectID: "p", localID: "b", addedAt: 2_000, addedBy: "cli")))
            #expect(try s.addOperator(OperatorRecord(projectID: "p", localID: "a", addedAt: 3_000, addedBy: "operator:b")))
            #expect(try s.addOperator(OperatorRecord(projectID: "q", localID: "a", addedAt: 1_000, addedBy: "cli")))
            // Again: false, and the first record stays.
            #expect(try !s.addOperator(OperatorRecord(projectID: "p", localID: "b", addedAt: 9_000, addedBy: "someone")))
            #expect(try s.operators(project: "p") == [OperatorRecord(projectID: "p", localID: "b", addedAt: 2_000, addedBy: "cli"),
                                                      OperatorRecord(projectID: "p", localID: "a", addedAt: 3_000, addedBy: "operator:b")])
            #expect(try s.operators(project: nil).map { $0.projectID + "/" + $0.localID } == ["q/a", "p/b", "p/a"])
            #expect(try s.isOperator(project: "p", localID: "a") && s.isOperator(project: "q", localID: "a"))
            #expect(try !s.isOperator(project: "r", localID: "a"))
            #expect(try !s.isOperator(project: "p", localID: "A"))
            #expect(try s.removeOperator(project: "p", localID: "a"))
            #expect(try !s.removeOperator(project: "p", localID: "a"))
            #expect(try !s.isOperator(project: "p", localID: "a") && s.isOperator(project: "q", localID: "a"))
            // Deleting an account deletes its operator row: a new account of the same uid is no operator.
            try account(s, "b", created: 1)
            #expect(try s.deleteAccount(project: "p", localID: "b"))
            try s.deleteTokensAndSessions(project: "p", localID: "b")
            #expect(try !s.isOperator(project: "p", localID: "b"))
            #expect(try s.operators(project: "p").isEmpty)
        }
    }
}
