import AuthEngine
import Foundation
import JSONValue
import Mustache

/// Localized strings: one nested JSON file per language in `Resources/locales/<lang>.json`.
public struct Locales: Sendable {
    /// Language → nested dictionary (for templates).
    let tables: [String: [String: any Sendable]]
    /// Language → flattened `a.b.c` → text (for code).
    let flat: [String: [String: String]]
    public var supported: [String] { tables.keys.sorted() }

    /// Reads `<directory>/<lang>/*.json` (one file per feature) and merges them per language.
    public init(directory: String) throws {
        var tables: [String: [String: any Sendable]] = [:]
        var flat: [String: [String: String]] = [:]
        let fm = FileManager.default
        for lang in try fm.contentsOfDirectory(atPath: directory).sorted() {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: directory + "/" + lang, isDirectory: &isDir), isDir.boolValue else { continue }
            var table: [String: any Sendable] = [:]
            var f: [String: String] = [:]
            for file in try fm.contentsOfDirectory(atPath: directory + "/" + lang).sorted() where file.hasSuffix(".json") {
                let path = directory + "/" + lang + "/" + file
                let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                let json: JSON
                do { json = try JSONParser(maxBytes: 1 << 20, maxDepth: 8).parse(data) } catch { throw TemplateError("\(path): \(error)") }
                table = Locales.merge(table, Locales.nested(json, prefix: "", into: &f) as? [String: any Sendable] ?? [:])
            }
            tables[lang] = table
            flat[lang] = f
        }
        guard tables["en"] != nil else { throw TemplateError("no en/ locale folder in \(directory)") }
        self.tables = tables
        self.flat = flat
    }

    static func nested(_ v: JSON, prefix: String, into flat: inout [String: String]) -> any Sendable {
        switch v {
        case let .object(pairs):
            var d: [String: any Sendable] = [:]
            for (k, v) in pairs { d[k] = nested(v, prefix: prefix.isEmpty ? k : prefix + "." + k, into: &flat) }
            return d
        case let .string(s):
            flat[prefix] = s
            return s
        default:
            return v.serialized()
        }
    }

    /// Strings for `lang`, English filling any gap.
    public func strings(for lang: String) -> [String: String] {
        (flat["en"] ?? [:]).merging(flat[lang] ?? [:]) { $1 }
    }

    func table(for lang: String) -> [String: any Sendable] {
        Locales.merge(tables["en"] ?? [:], tables[lang] ?? [:])
    }

    static func merge(_ base: [String: any Sendable], _ over: [String: any Sendable]) -> [String: any Sendable] {
        var out = base
        for (k, v) in over {
            if let b = out[k] as? [String: any Sendable], let o = v as? [String: any Sendable] { out[k] = merge(b, o) } else { out[k] = v }
        }
        return out
    }

    /// Best supported language for a tag like `pt-BR` or `fr_CA`.
    public func match(_ tag: String) -> String? {
        let t = tag.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "_", with: "-")
        if tables[t] != nil { return t }
        let primary = String(t.split(separator: "-").first ?? "")
        return tables[primary] != nil ? primary : nil
    }

    /// `X-Firebase-Locale` → `hl`/`lang` → `Accept-Language` (by q) → project default → en.
    public func resolve(header: String?, parameter: String?, acceptLanguage: String?, projectDefault: String) -> String {
        if let h = header, let m = match(h) { return m }
        if let p = parameter, let m = match(p) { return m }
        if let al = acceptLanguage {
            let ranked = al.split(separator: ",").compactMap { part -> (String, Double)? in
                let bits = part.split(separator: ";")
                guard let tag = bits.first else { return nil }
                var q = 1.0
                for b in bits.dropFirst() where b.trimmingCharacters(in: .whitespaces).hasPrefix("q=") {
                    q = Double(b.trimmingCharacters(in: .whitespaces).dropFirst(2)) ?? 0
                }
                return (String(tag), q)
            }.filter { $0.1 > 0 }.sorted { $0.1 > $1.1 }
            for (tag, _) in ranked { if let m = match(tag) { return m } }
        }
        return match(projectDefault) ?? "en"
    }
}

/// A template or locale problem found at start-up.
public struct TemplateError: Error, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}

/// Mustache templates for pages, SMS and email (`Resources/templates/**/*.mustache`) plus locales.
public final class Templates: @unchecked Sendable {
    public let library: MustacheLibrary
    public let locales: Locales
    public let directory: String

    /// Loads `<directory>/templates` and `<directory>/locales`; fails on any parse error.
    public init(directory: String) throws {
        self.directory = directory
        var lib = MustacheLibrary()
        let base = directory + "/templates"
        guard let walker = FileManager.default.enumerator(atPath: base) else { throw TemplateError("no templates in \(base)") }
        for case let file as String in walker where file.hasSuffix(".mustache") {
            let text = try String(contentsOfFile: base + "/" + file, encoding: .utf8)
            do { try lib.register(text, named: String(file.dropLast(".mustache".count))) } catch {
                throw TemplateError("template \(file): \(error)")
            }
        }
        library = lib
        locales = try Locales(directory: directory + "/locales")
    }

    /// The folder of templates shipped inside the build (`Resources/`).
    public static var bundledDirectory: String? {
        guard let base = Bundle.module.resourceURL else { return nil }
        for candidate in [base, base.appendingPathComponent("Resources")]
        where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("templates").path) {
            return candidate.path
        }
        return nil
    }

    /// Renders `name` with the locale's strings as `t`, plus `lang` and `values`.
    public func render(_ name: String, lang: String, values: [String: Any] = [:]) -> String {
        var object: [String: Any] = ["t": locales.table(for: lang), "lang": lang]
        for (k, v) in values { object[k] = v }
        guard let out = library.render(object, withTemplate: name) else {
            Log.error("missing template \(name)")
            return ""
        }
        return out
    }

    func render(_ name: String, ctx: Context, values: [String: Any] = [:]) -> String {
        render(name, lang: ctx.locale, values: values)
    }
}
