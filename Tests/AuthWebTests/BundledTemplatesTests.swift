@testable import AuthWeb
import Testing

/// Every template shipped in `Resources/templates`, rendered through `Templates` in every bundled
/// locale: a change to the Mustache engine must leave all of them loadable and rendering.
@Suite("Bundled templates")
struct BundledTemplatesTests {
    static let languages = ["en", "fr", "de", "pt", "id"]

    /// Template names (`pages/phone`) as `Templates` names them.
    static func names() throws -> [String] {
        let dir = try #require(Templates.bundledDirectory)
        return ResourceFiles.walk(dir + "/templates", suffix: ".mustache").map { String($0.dropLast(".mustache".count)) }
    }

    /// Whether `name` is a whole page (it extends the layout) rather than a fragment.
    static func isPage(_ name: String) throws -> Bool {
        let dir = try #require(Templates.bundledDirectory)
        return ResourceFiles.text(dir + "/templates/" + name + ".mustache")?.hasPrefix("{{<layout}}") == true
    }

    /// The first part of every name a template (with its partials and parents) looks up, except
    /// the reserved `t` and `lang`: what a page could pass.
    static func tagNames(_ name: String) throws -> Set<String> {
        let dir = try #require(Templates.bundledDirectory)
        func source(_ n: String) throws -> [MustacheNode]? {
            guard let text = ResourceFiles.text(dir + "/templates/" + n + ".mustache") else { return nil }
            return try MustacheParser.parse(text)
        }
        let linked = try MustacheLinker.link(try #require(try source(name)), template: source)
        var found = Set<String>()
        func walk(_ nodes: [MustacheNode]) {
            for node in nodes {
                switch node {
                case let .variable(path, _): if let first = path.names.first { found.insert(first) }
                case let .section(path, _, body):
                    if let first = path.names.first { found.insert(first) }
                    walk(body)
                case let .scope(_, body): walk(body)
                default: break
                }
            }
        }
        walk(linked)
        return found.subtracting(["t", "lang"])
    }

    /// Every name set (sections take the string as their context) or none at all: both branches
    /// of every section and inverted section are rendered between the two.
    static func renderings(_ templates: Templates, _ name: String, lang: String) throws -> [String] {
        var all: [String: TemplateValue] = [:]
        for n in try tagNames(name) { all[n] = .string("<v-\(n)>") }
        return [templates.render(name, lang: lang), templates.render(name, lang: lang, values: all)]
    }

    @Test("the bundle has the templates the pages, SMS and email use")
    func listed() throws {
        let names = try Self.names()
        for expected in ["layout", "error", "pages/phone", "pages/signin", "email/message_html", "email/message_text", "sms/phone_code.en"] {
            #expect(names.contains(expected), "\(expected)")
        }
    }

    @Test("every template parses and links (start-up validation)")
    func validates() throws {
        try Templates(directory: try #require(Templates.bundledDirectory)).validateAll()
    }

    @Test("every template renders in every locale, with every value set and with none, leaving no tag behind", arguments: languages)
    func rendersEverywhere(lang: String) throws {
        let templates = try Templates(directory: try #require(Templates.bundledDirectory))
        for name in try Self.names() {
            for text in try Self.renderings(templates, name, lang: lang) {
                #expect(!text.isEmpty, "\(name) in \(lang) rendered nothing")
                #expect(!text.contains("{{") && !text.contains("}}"), "\(name) in \(lang) left a tag")
                if try Self.isPage(name) {
                    #expect(text.hasPrefix("<!doctype html>\n<html lang=\"\(lang)\">"), "\(name) in \(lang)")
                    #expect(text.hasSuffix("</html>\n"), "\(name) in \(lang)")
                }
            }
        }
    }

    @Test("a value is escaped wherever a page prints it", arguments: languages)
    func valuesEscaped(lang: String) throws {
        let templates = try Templates(directory: try #require(Templates.bundledDirectory))
        for name in try Self.names() where try Self.isPage(name) {
            let text = try Self.renderings(templates, name, lang: lang)[1]
            // Each value is `<v-name>`: escaped it reads `&lt;v-name&gt;`, raw it would be markup.
            for n in try Self.tagNames(name) where n != "countryOptions" {
                #expect(!text.contains("<v-\(n)>"), "\(name) in \(lang) prints \(n) unescaped")
            }
        }
    }
}
