import Foundation
@testable import AuthWeb
import JSONValue
import Testing

/// Pre-rendered fragments and lazily parsed templates (`Templates`, `PhonePage.countryOptions`).
@Suite("Template caching")
struct TemplateCacheTests {
    /// The section the phone page used before its options were pre-rendered.
    static let section = "{{#countries}}<option value=\"{{code}}\"{{#selected}} selected{{/selected}}>{{label}}</option>\n{{/countries}}"

    @Test("the cached country options are exactly what the Mustache section renders, in every language", arguments: ["en", "fr", "de", "pt", "id"])
    func countryOptionsMatchMustache(lang: String) throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let section = try MustacheLinker.link(MustacheParser.parse(Self.section)) { _ in nil }
        let list = PhonePage.countries(lang: lang, tables: tables)
        // Every region of regions/calling-codes.txt, once.
        #expect(list.count == 245 && Set(list.map(\.code)).count == 245)
        for selected in ["US", "FR", "CI", list.last!.code, "ZZ", ""] {
            let rows = TemplateValue.list(list.map { ["code": .string($0.code), "label": .string($0.label), "selected": .bool($0.code == selected)] })
            let options = PhonePage.countryOptions(lang: lang, selected: selected, tables: tables)
            let ours = MustacheRenderer.render([.variable(MustachePath("o"), escaped: false)], stack: [["o": options]])
            #expect(ours == MustacheRenderer.render(section, stack: [["countries": rows]]))
        }
    }

    @Test("a language tag matches the supported language it names, in any case, with _ or -, or none")
    func localeMatch() throws {
        let locales = try Templates(directory: try #require(Templates.bundledDirectory)).locales
        #expect(Set(locales.supported) == ["de", "en", "fr", "id", "pt"])
        let expected: [(String, String?)] = [
            ("en", "en"), ("fr", "fr"), ("de", "de"), ("pt", "pt"), ("id", "id"), ("xx", nil), ("", nil), ("EN", "en"), (" fr", "fr"),
            ("pt_BR", "pt"), ("pt-br", "pt"), ("es", nil), ("enx", nil), ("e", nil), ("zz-FR", nil), ("fr-", "fr"),
        ]
        for (tag, language) in expected {
            #expect(locales.match(tag) == language, "tag \(tag)")
        }
    }

    @Test("labels are escaped as Mustache escapes them")
    func escaping() {
        #expect(PhonePage.htmlEscape(#"a<b>&"c'd ’é"#) == "a&lt;b&gt;&amp;&quot;c&#39;d ’é")
    }

    @Test("a page renders with its layout without parsing every template first, and as before")
    func lazyRender() throws {
        let dir = try #require(Templates.bundledDirectory)
        let lazy = try Templates(directory: dir)
        let eager = try Templates(directory: dir)
        try eager.validateAll()
        let values: [String: TemplateValue] = ["phoneHref": "/p", "emailHref": "/e"]
        let page = lazy.render("pages/signin", lang: "fr", values: values)
        #expect(page.contains("</html>"))
        #expect(page == eager.render("pages/signin", lang: "fr", values: values))
        #expect(lazy.contains("sms/phone_code.en"))
        #expect(!lazy.contains("sms/phone_code.xx"))
    }

    @Test("a page reads the namespaces of t it names, and every one when it names t itself")
    func localeNamespaces() throws {
        let phone = try MustacheParser.parse("{{t.phone.title}} {{#t.common}}{{footer}}{{/t.common}} {{lang}} {{#rows}}{{.}} {{.name}}{{/rows}}")
        #expect(Templates.localeNamespaces(phone) == ["phone", "common"])
        #expect(Templates.localeNamespaces(try MustacheParser.parse("{{#t}}{{phone.title}}{{/t}}")) == nil)
        #expect(Templates.localeNamespaces(try MustacheParser.parse("{{{t}}}")) == nil)
        #expect(Templates.localeNamespaces(try MustacheParser.parse("plain")) == [])
        // What the specialised page says is what the whole table would have said.
        let t = try Templates(directory: try #require(Templates.bundledDirectory))
        for lang in ["en", "fr"] {
            let lean = t.locales.table(for: lang, namespaces: ["phone", "signin", "common", "error"])
            guard case let .object(all) = t.locales.table(for: lang), case let .object(some) = lean else { Issue.record("not objects"); return }
            #expect(Set(some.keys) == ["phone", "signin", "common", "error"])
            for (k, v) in some { #expect(all[k] == v, "\(lang) \(k)") }
        }
        #expect(t.locales.strings(for: "de")["error.generic"] != t.locales.strings(for: "en")["error.generic"])
        #expect(t.locales.strings(for: "xx")["error.generic"] == t.locales.strings(for: "en")["error.generic"])
        #expect(t.locales.strings(for: "en")["nowhere.at.all"] == nil)
    }

    @Test("a locale file holds one namespace, named like the file")
    func oneNamespacePerFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-locales-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/en", withIntermediateDirectories: true)
        try #"{"a": {"k": "v"}, "b": {"k": "w"}}"#.write(toFile: dir + "/en/a.json", atomically: false, encoding: .utf8)
        let l = try Locales(directory: dir)
        #expect { try l.loadAll() } throws: { "\($0)".contains("a.json") && "\($0)".contains("one object") }
    }

    @Test("validateAll names a template that does not parse")
    func validateAllFails() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-templates-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/templates/pages", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/locales/en", withIntermediateDirectories: true)
        try #"{"x": {}}"#.write(toFile: dir + "/locales/en/x.json", atomically: false, encoding: .utf8)
        try "{{#open}} never closed".write(toFile: dir + "/templates/pages/broken.mustache", atomically: false, encoding: .utf8)
        let t = try Templates(directory: dir)
        #expect(t.render("pages/broken", lang: "en") == "")
        #expect { try t.validateAll() } throws: { "\($0)".contains("pages/broken.mustache") }
    }
}
