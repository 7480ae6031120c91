import AuthEngine
import Foundation
@testable import AuthWeb
import Mustache
import Testing

/// Temporary: the project's Mustache engine against swift-mustache, byte for byte, before the
/// dependency goes.
@Suite("Mustache equivalence (temporary)")
struct MustacheEquivalenceTests {
    static func any(_ v: TemplateValue) -> Any {
        switch v {
        case let .string(s): return s
        case let .html(p): return String(decoding: p.joined(), as: UTF8.self)
        case let .bool(b): return b
        case let .list(l): return l.map(any)
        case let .object(d): return d.mapValues(any)
        }
    }

    static let nasty = "<b class=\"x\">Tom & Jerry's</b> ✓ é"

    /// One context with every name any template uses; `variant` 0: everything set and true,
    /// 1: flags false and optional values missing, 2: empty strings and empty objects.
    static func context(_ variant: Int) -> [String: TemplateValue] {
        let s: (String) -> TemplateValue = { name in variant == 2 ? .string("") : .string(name + " " + nasty) }
        var v: [String: TemplateValue] = [:]
        for name in ["message", "status", "signInHref", "title", "body", "kind", "csrf", "apiKey", "oobCode", "email", "hint",
                     "resendAfter", "otherAddress", "continueUrl", "number", "otherHref", "csrfVerify", "csrfSend", "sessionInfo",
                     "phoneNumber", "leadBefore", "leadAfter", "resendWait", "restartHref", "phoneHref", "emailHref", "eventId", "ibi",
                     "apn", "clientId", "appId", "provider", "siteKey", "failureURL", "link", "project", "code", "minutes"] {
            v[name] = s(name)
        }
        v["countryOptions"] = .string("<option value=\"FR\" selected>France (+33)</option>\n<option value=\"DE\">Deutschland</option>\n")
        let parts: TemplateValue = variant == 2 ? .object([:]) : TemplateValue(["before": "Sent to ", "email": "a<b>@example.com", "after": " & more"])
        for name in ["known", "address", "sent"] { v[name] = parts }
        v["m"] = variant == 2 ? .object([:]) : TemplateValue(Dictionary(uniqueKeysWithValues: ["heading", "intro", "button", "fallback", "expiry", "ignore", "requested", "footer"].map { ($0, $0 + " " + nasty) }))
        for flag in ["needsAppToken", "signedOut", "external", "failed"] { v[flag] = .bool(variant == 0) }
        if variant != 1 {
            for name in ["error", "info", "devNotice", "expiresText", "resendWaitText", "newLink"] { v[name] = s(name) }
            v["user"] = ["name": s("name"), "uid": "uid1", "method": "Phone", "authTime": "2026", "authTimeISO": "2026-01-01T00:00:00Z",
                         "expires": "2027", "expiresISO": "x", "idleNote": variant == 2 ? "" : s("idle"), "csrf": s("csrf"),
                         "phone": "+33 6", "email": s("e"), "continueUrl": variant == 2 ? "" : "https://x/?a=1&b=2"]
        }
        return v
    }

    static func library(_ dir: String) throws -> (MustacheLibrary, [String]) {
        var lib = MustacheLibrary()
        let base = dir + "/templates"
        var names: [String] = []
        for file in ResourceFiles.walk(base, suffix: ".mustache") {
            let name = String(file.dropLast(".mustache".count))
            try lib.register(MustacheTemplate(string: String(contentsOfFile: base + "/" + file, encoding: .utf8)), named: name)
            names.append(name)
        }
        return (lib, names)
    }

    @Test("every template in every locale renders the same bytes as swift-mustache", arguments: ["en", "fr", "de", "pt", "id", "xx"])
    func templates(lang: String) throws {
        let dir = try #require(Templates.bundledDirectory)
        let ours = try Templates(directory: dir)
        let (lib, names) = try Self.library(dir)
        #expect(names.count >= 20)
        for name in names {
            for variant in 0...2 {
                let values = Self.context(variant)
                var root: [String: Any] = ["t": Self.any(ours.locales.table(for: lang)), "lang": lang]
                for (k, v) in values { root[k] = Self.any(v) }
                let expected = lib.render(root, withTemplate: name)
                // Twice: the first render specialises, the second uses the kept nodes.
                #expect(ours.render(name, lang: lang, values: values) == expected, "\(name) \(lang) \(variant)")
                #expect(ours.render(name, lang: lang, values: values) == expected, "\(name) \(lang) \(variant) again")
            }
        }
    }

    static let partials: [String: String] = [
        "p": "line one {{a}}\n  {{#list}}item {{.}}\n  {{/list}}\nend\n",
        "base": "<h>{{$title}}Default{{/title}}</h>\n  {{$body}}\n  body default\n  {{/body}}\n{{>p}}",
        "mid": "{{<base}}{{$title}}Mid {{a}}{{/title}}{{/base}}",
        "item": "<li>{{.}}</li>\n",
        "ul": "<ul>\n  {{#list}}\n  {{>item}}\n  {{/list}}\n</ul>\n",
    ]

    @Test("whitespace, indentation, sections, comments and inheritance as swift-mustache", arguments: [
        "a {{a}} b {{{raw}}} c {{&raw}} d\n",
        "  {{#flag}}\n  yes\n  {{/flag}}\n  {{^flag}}\n  no\n  {{/flag}}\n",
        "{{#list}}\n- {{.}}\n{{/list}}\n{{^empty}}none{{/empty}}\n",
        "  {{! a comment }}\n{{! inline }}x\n",
        "begin\n  {{>p}}\nafter\n",
        "  {{>p}}",
        "{{<base}}\n{{$title}}Mine {{a}}{{/title}}\n  {{$body}}\n    indented override\n    second\n  {{/body}}\n{{/base}}\n",
        "{{<mid}}{{$title}}Outer wins{{/title}}{{/mid}}",
        "{{<base}}{{/base}}tail",
        "{{obj.x}} {{#obj}}{{x}} {{a}} {{.x}}{{/obj}} {{obj.missing.deep}} {{missing}}\n",
        "crlf\r\n  {{#flag}}\r\n  in\r\n  {{/flag}}\r\nend",
        "{{#s}}string section {{.}}{{/s}}{{^s}}not{{/s}}|{{#e}}empty string section{{/e}}|{{flag}}\n",
        "   {{$b}}\n   block {{a}}\n   {{/b}}\n",
        "<div>\n  {{>ul}}\n</div>\n",
    ])
    func synthetic(text: String) throws {
        var lib = MustacheLibrary()
        for (name, t) in Self.partials { try lib.register(MustacheTemplate(string: t), named: name) }
        try lib.register(MustacheTemplate(string: text), named: "main")
        let values: [String: TemplateValue] = ["a": "A&<", "raw": "<raw>", "flag": true, "list": ["x", "y<"], "empty": [],
                                               "obj": ["x": "X"], "s": "str", "e": ""]
        let expected = lib.render(Self.any(.object(values)), withTemplate: "main")
        var all = Self.partials
        all["main"] = text
        let parsed = try all.mapValues { try MustacheParser.parse($0) }
        let linked = try MustacheLinker.link(parsed["main"]!) { parsed[$0] }
        let got = String(decoding: MustacheRenderer.render(linked, stack: [.object(values)]), as: UTF8.self)
        #expect(got == expected)
        let fixed = MustacheLinker.specialize(linked, fixed: ["a": "A&<"])
        #expect(String(decoding: MustacheRenderer.render(fixed, stack: [.object(values)]), as: UTF8.self) == expected)
    }

    /// The country list as the page built it with Foundation's ICU.
    static func foundationCountries(lang: String) -> [PhonePage.Country] {
        let locale = Locale(identifier: lang)
        return PhoneNumber.supportedRegions.compactMap { code -> (String, PhonePage.Country)? in
            guard let cc = PhoneNumber.countryCode(forRegion: code) else { return nil }
            let name = locale.localizedString(forRegionCode: code) ?? code
            return (name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: locale),
                    PhonePage.Country(code: code, label: "\(name) (+\(cc))"))
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    @Test("the region files give the list Foundation gave", arguments: ["en", "fr", "de", "pt", "id"])
    func countries(lang: String) throws {
        let dir = try #require(Templates.bundledDirectory)
        let ours = PhonePage.countries(lang: lang, directory: dir)
        let theirs = Self.foundationCountries(lang: lang)
        #expect(ours.map(\.code) == theirs.map(\.code))
        #expect(ours.map(\.label) == theirs.map(\.label))
    }
}
