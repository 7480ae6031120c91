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
    /// `tables` and `flat` of each language with English filling the gaps, merged once.
    private let mergedTables: [String: [String: any Sendable]]
    private let mergedFlat: [String: [String: String]]
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
        let en = tables["en"] ?? [:], enFlat = flat["en"] ?? [:]
        mergedTables = tables.mapValues { Locales.merge(en, $0) }
        mergedFlat = flat.mapValues { enFlat.merging($0) { $1 } }
    }

    /// No languages at all (a locale folder that failed to load).
    init() {
        tables = [:]; flat = [:]; mergedTables = [:]; mergedFlat = [:]
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
        mergedFlat[lang] ?? mergedFlat["en"] ?? [:]
    }

    /// The nested table for `lang`, English filling any gap.
    func table(for lang: String) -> [String: any Sendable] {
        mergedTables[lang] ?? mergedTables["en"] ?? [:]
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
/// A template is parsed the first time it is rendered (with the partials and parents it names)
/// and kept; `validateAll()` parses every one at once, for start-up checks.
public final class Templates: @unchecked Sendable {
    public let directory: String
    private let localesLock = NSLockLike()
    private var loadedLocales: Locales?
    /// Template name (`pages/phone`) → its file (`<directory>/templates/pages/phone.mustache`).
    private let files: [String: String]
    private let lock = NSLockLike()
    /// Parsed templates, and per rendered name a library of it and everything it references.
    private var parsed: [String: (template: MustacheTemplate, references: [String])] = [:]
    private var libraries: [String: MustacheLibrary] = [:]

    /// Lists `<directory>/templates`; templates are parsed and `<directory>/locales` loaded on use.
    public init(directory: String) throws {
        self.directory = directory
        let base = directory + "/templates"
        guard let walker = FileManager.default.enumerator(atPath: base) else { throw TemplateError("no templates in \(base)") }
        var files: [String: String] = [:]
        for case let file as String in walker where file.hasSuffix(".mustache") {
            files[String(file.dropLast(".mustache".count))] = base + "/" + file
        }
        self.files = files
    }

    /// The localized strings, loaded on first use (an API request that renders nothing never
    /// needs them); a folder that does not load is logged and leaves every string empty.
    public var locales: Locales {
        do { return try loadLocales() } catch {
            Log.error("\(error)")
            return localesLock.withLock {
                if loadedLocales == nil { loadedLocales = Locales() }
                return loadedLocales!
            }
        }
    }

    private func loadLocales() throws -> Locales {
        try localesLock.withLock {
            if let l = loadedLocales { return l }
            let l = try Locales(directory: directory + "/locales")
            loadedLocales = l
            return l
        }
    }

    /// Loads the locales and parses every template; throws on the first problem (start-up validation).
    public func validateAll() throws {
        _ = try loadLocales()
        try lock.withLock {
            for name in files.keys.sorted() { _ = try parse(name) }
        }
    }

    /// Whether a template of this name exists (without parsing it).
    public func contains(_ name: String) -> Bool { files[name] != nil }

    /// The parsed template `name` (caller holds `lock`).
    private func parse(_ name: String) throws -> MustacheTemplate? {
        if let p = parsed[name] { return p.template }
        guard let path = files[name] else { return nil }
        let text: String, t: MustacheTemplate
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
            t = try MustacheTemplate(string: text)
        } catch {
            throw TemplateError("template \(name).mustache: \(error)")
        }
        parsed[name] = (t, Templates.references(in: text))
        return t
    }

    /// A library holding `name` and, transitively, every partial or parent it names.
    private func library(for name: String) throws -> MustacheLibrary? {
        try lock.withLock {
            if let lib = libraries[name] { return lib }
            guard files[name] != nil else { return nil }
            var lib = MustacheLibrary()
            var pending = [name], seen: Set<String> = [name]
            while let next = pending.popLast() {
                guard let t = try parse(next) else { continue }
                lib.register(t, named: next)
                for ref in parsed[next]?.references ?? [] where files[ref] != nil && seen.insert(ref).inserted { pending.append(ref) }
            }
            libraries[name] = lib
            return lib
        }
    }

    /// Names in `{{> name}}` (partial) and `{{< name}}` (parent) tags.
    static func references(in text: String) -> [String] {
        var names: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "{{") {
            rest = rest[open.upperBound...]
            let tag = rest.drop(while: { $0 == " " })
            guard let sigil = tag.first, sigil == ">" || sigil == "<", let close = tag.range(of: "}}") else { continue }
            let name = tag[tag.index(after: tag.startIndex)..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { names.append(name) }
            rest = tag[close.upperBound...]
        }
        return names
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
        let lib: MustacheLibrary?
        do { lib = try library(for: name) } catch {
            Log.error("\(error)")
            return ""
        }
        guard let out = lib?.render(object, withTemplate: name) else {
            Log.error("missing template \(name)")
            return ""
        }
        return out
    }

    func render(_ name: String, ctx: Context, values: [String: Any] = [:]) -> String {
        render(name, lang: ctx.locale, values: values)
    }
}
