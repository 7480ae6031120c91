public import AuthEngine

/// The words of code messages without a request (`CodeMessages`): the automatic fallback's, and
/// the voice and WhatsApp codes the hosted pages ask for. SMS from `sms/phone_code.<lang>`, voice
/// from `voice/phone_code.<lang>` (the digits spaced out so the voice says each), English when
/// the language has none.
public struct TemplateCodeMessages: CodeMessages {
    let templates: Templates

    public init(templates: Templates) { self.templates = templates }

    public func words(code: String, channel: PhoneChannel, language: String, project: ProjectSettings) -> String {
        switch channel {
        case .sms, .whatsapp:
            return SMSText.composer(templates: templates, lang: language, project: project)(code)
        case .voice:
            let localized = "voice/phone_code.\(language)"
            let name = templates.contains(localized) ? localized : "voice/phone_code.en"
            var text = templates.render(name, lang: language, values: ["digits": .string(PhoneChannel.spokenDigits(code)),
                                                                     "domain": .string(project.smsOriginDomain)])
            while text.last?.isNewline == true { text.removeLast() }
            // A voice row's body is XML text: the provider puts it inside its markup as it is.
            return MustacheRenderer.escaped(text)
        }
    }
}
