import AuthCrypto

/// The automatic fallback of phone codes (`phone.fallback_after_seconds`): when a code's message
/// is reported undelivered or failed, dies unsent, or has no delivered receipt in time, the next
/// of the project's channels carries a NEW code for the SAME session (the sessionInfo the client
/// holds stays valid; the old code stops working, and the wrong codes entered so far still count).
///
/// It runs on the delivery worker's thread after each pass (and in `gatehouse outbox deliver`),
/// each fallback in a transaction of its own: the store hands a due fallback to one worker only
/// (`claimFallback`), and the new code is written only while the session is still open, so a
/// sign-in racing it either uses the old code (the fallback then does nothing) or the new one.
/// Budgets: the number's send budget and the pumping guard, weighed by the channel; there is no
/// client (no request), so no client budget is spent and none can be made to refuse the owner.
public struct PhoneFallback {
    public let store: any PhoneFlowStore
    public let clock: any Clock
    public let random: any RandomSource
    public let tokens: TokenService
    public let messages: (any CodeMessages)?
    public let project: (String) -> ProjectSettings?

    public init(store: any PhoneFlowStore, clock: any Clock, random: any RandomSource, tokens: TokenService,
                messages: (any CodeMessages)?, project: @escaping (String) -> ProjectSettings?) {
        self.store = store; self.clock = clock; self.random = random; self.tokens = tokens; self.messages = messages
        self.project = project
    }

    /// What became of one due fallback.
    public enum Outcome: Equatable {
        /// A new code went out by `channel`, in message `messageID`.
        case sent(channel: PhoneChannel, messageID: Int64)
        /// Nothing to do: another worker took it, the session ended, or no channel follows.
        case none
        /// A budget or a pumping hold refused the new code (the refusal is counted; the person can
        /// still ask for one on the page).
        case refused
    }

    /// Every fallback due now (at most `limit`). Returns the outcomes, in order.
    @discardableResult
    public func run(limit: Int = 32) throws -> [Outcome] {
        let due = try store.dueFallbacks(now: clock.now(), limit: limit)
        guard !due.isEmpty else { return [] }
        let keys = try PhoneKeys.load(store: store, random: random, at: clock.now())
        return try due.map { try fallBack($0, keys: keys) }
    }

    /// Raised inside the transaction when the session closed between the claim and the new code:
    /// everything but the claim is rolled back by the retry, which then finds the session closed.
    struct SessionClosed: Error {}

    func fallBack(_ id: Int64, keys: PhoneKeys) throws -> Outcome {
        do {
            return try store.transaction { try takeOver(id, keys: keys) }
        } catch is SessionClosed {
            // The claim was rolled back with the rest: take it again, now finding the session closed.
            return try store.transaction { try takeOver(id, keys: keys) }
        }
    }

    func takeOver(_ id: Int64, keys: PhoneKeys) throws -> Outcome {
        let now = clock.now()
        guard let m = try store.claimFallback(id: id, now: now) else { return .none }
        guard let settings = project(m.projectID), let hash = m.sessionHash, let channel = PhoneChannel(m.channel),
              let next = settings.phone.channel(after: channel),
              let v = try store.phoneVerification(sessionHash: hash), v.messageID == m.id,
              v.consumedAt == nil, v.supersededAt == nil, v.expiresAt > now,
              v.attempts < settings.phone.maxAttemptsPerSession else { return .none }
        var flow = PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: settings)
        flow.messages = messages
        let number = try PhoneSignIn.parse(v.phoneNumber, project: settings)
        let code = random.digits(6)
        let language = m.language ?? settings.defaultLocale
        let newID: Int64
        do {
            let budget = try numberBudget(number, purpose: v.purpose, channel: next, flow: flow)
            newID = try flow.enqueueCode(flow.codeBody(code, channel: next, language: language), code: code, to: number, channel: next,
                                         language: language, sessionInfo: keys.sessionInfo(nonce: v.nonce), sessionHash: hash, at: now)
            try budget?.count()
        } catch let refusal as AuthError {
            tokens.log.warning("phone fallback: message #\(m.id) \(channel.rawValue) → \(next.rawValue) refused: \(refusal)")
            tokens.telemetry.fallback(channel: next.rawValue, outcome: "refused")
            return .refused
        }
        guard try store.replacePhoneCode(sessionHash: hash, codeHash: keys.codeHash(code, nonce: v.nonce), messageID: newID,
                                         channel: next.outbox, now: now, expiresAt: now + flow.codeLifetime) else { throw SessionClosed() }
        tokens.log.info("phone fallback: message #\(m.id) \(channel.rawValue) → \(next.rawValue) #\(newID)")
        tokens.telemetry.fallback(channel: next.rawValue, outcome: "sent")
        return .sent(channel: next, messageID: newID)
    }

    /// The number's send budget, weighed by the channel: checked now, counted once the pumping
    /// guard has let the message through (so a refusal by either counts nothing of the other).
    /// Nil where no budget applies (dev mode, test numbers).
    func numberBudget(_ number: ParsedNumber, purpose: PhoneCodePurpose, channel: PhoneChannel, flow: PhoneSignIn) throws -> Admitted? {
        guard !flow.project.devMode, !number.isTest else { return nil }
        let limits = Limits(store: store, clock: clock)
        let rules = PhoneSignIn.numberBudget(flow.policy, secondFactor: purpose.isSecondFactor).rules
        let key = flow.numberKey(number.e164)
        for rule in rules where try !limits.allows(rule, key: key, amount: channel.weight) { throw AuthError(.tooManyAttempts) }
        return Admitted(limits: limits, rules: rules, key: key, amount: channel.weight)
    }

    struct Admitted {
        let limits: Limits
        let rules: [Limits.Rule]
        let key: String
        let amount: Int
        func count() throws { for rule in rules { _ = try limits.record(rule, key: key, amount: amount) } }
    }
}
