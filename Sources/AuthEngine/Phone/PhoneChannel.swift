/// A way a phone code reaches a person: a text, a WhatsApp message from the provider's approved
/// authentication template, or a call that says the digits. Firebase's wire has no channel: the
/// API sends texts (and the automatic fallback may take the next channel); the hosted pages offer
/// the others.
public enum PhoneChannel: String, Sendable, CaseIterable, Equatable {
    case sms, whatsapp, voice

    public var outbox: OutboxMessage.Channel {
        switch self {
        case .sms: .sms
        case .whatsapp: .whatsapp
        case .voice: .voice
        }
    }

    public init?(_ channel: OutboxMessage.Channel) {
        switch channel {
        case .sms: self = .sms
        case .whatsapp: self = .whatsapp
        case .voice: self = .voice
        case .email, .push: return nil
        }
    }

    /// Units of every send budget one code by this channel takes (per number, per client, the
    /// pumping guard's): a call costs a provider several texts and ties up the person's phone, so
    /// three of them exhaust a number's hourly budget of five units sooner than five texts.
    public var weight: Int {
        switch self {
        case .sms, .whatsapp: 1
        case .voice: 3
        }
    }
}

/// The words of a code's message for a channel and language, from the deployment's templates
/// (the web layer implements it; the automatic fallback, which runs without a request, uses the
/// same). SMS: the text before the origin-bound line the engine appends. Voice: what is said,
/// the digits spaced out. WhatsApp carries the code alone (the template says the rest).
public protocol CodeMessages: Sendable {
    func words(code: String, channel: PhoneChannel, language: String, project: ProjectSettings) -> String
}

extension PhoneChannel {
    /// Digits said one by one: "1, 2, 3, 4, 5, 6" (a voice says each and pauses at commas); XML
    /// text as it is, as a voice row's body must be.
    public static func spokenDigits(_ code: String) -> String {
        code.map(String.init).joined(separator: ", ")
    }
}
