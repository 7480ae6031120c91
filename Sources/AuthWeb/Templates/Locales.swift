import AuthEngine
import JSONValue

/// Localized strings: one nested JSON file per feature in `Resources/locales/<lang>/`.
public struct Locales: Sendable {
    /// Language → flattened `a.b.c` → text (for code), as read.
    let flat: [String: [String: String]]
    /// Per language, with English filling the gaps: the nested table (templates' `t`) and the
    /// flattened strings. Merged once.
    private let mergedTables: [String: TemplateValue]
    private let mergedFlat: [String: [String: String]]
    public var supported: [String] { flat.keys.sorted() }

    /// Reads `<directory>/<lang>/*.json` (one file per feature) and merges them per language.
    public init(directory: String) throws {
        var tables: [String: TemplateValue] = [:]
        var flat: [String: [String: String]] = [:]
        guard let langs = ResourceFiles.list(directory) else { throw TemplateError("cannot read \(directory)") }
        for lang in langs where ResourceFiles.isDirectory(directory + "/" + lang) {
            var table = TemplateValue.object([:])
            var f: [String: String] = [:]
            for file in ResourceFiles.list(directory + "/" + lang) ?? [] where file.hasSuffix(".json") {
                let path = directory + "/" + lang + "/" + file
                guard let data = ResourceFiles.read(path) else { throw TemplateError("cannot read \(path)") }
                let json: JSON
                do { json = try JSONParser(maxBytes: 1 << 20, maxDepth: 8).parse(data) } catch { throw TemplateError("\(path): \(error)") }
                let nested = Locales.nested(json, prefix: "", into: &f)
                if case .object = nested { table = Locales.merge(table, nested) }
            }
            tables[lang] = table
            flat[lang] = f
        }
        guard let en = tables["en"], let enFlat = flat["en"] else { throw TemplateError("no en/ locale folder in \(directory)") }
        self.flat = flat
        mergedTables = tables.mapValues { Locales.merge(en, $0) }
        mergedFlat = flat.mapValues { enFlat.merging($0) { $1 } }
    }

    /// No languages at all (a locale folder that failed to load).
    init() {
        flat = [:]; mergedTables = [:]; mergedFlat = [:]
    }

    static func nested(_ v: JSON, prefix: String, into flat: inout [String: String]) -> TemplateValue {
        switch v {
        case let .object(pairs):
            var d: [String: TemplateValue] = [:]
            for (k, v) in pairs { d[k] = nested(v, prefix: prefix.isEmpty ? k : prefix + "." + k, into: &flat) }
            return .object(d)
        case let .string(s):
            flat[prefix] = s
            return .string(s)
        default:
            return .string(v.serialized())
        }
    }

    /// Strings for `lang`, English filling any gap.
    public func strings(for lang: String) -> [String: String] {
        mergedFlat[lang] ?? mergedFlat["en"] ?? [:]
    }

    /// The nested table for `lang`, English filling any gap.
    func table(for lang: String) -> TemplateValue {
        mergedTables[lang] ?? mergedTables["en"] ?? .object([:])
    }

    /// Whether `lang` has a folder of its own.
    func has(_ lang: String) -> Bool { mergedTables[lang] != nil }

    /// `over` laid on `base`: objects merge key by key, anything else replaces.
    static func merge(_ base: TemplateValue, _ over: TemplateValue) -> TemplateValue {
        guard case var .object(out) = base, case let .object(o) = over else { return over }
        for (k, v) in o { out[k] = out[k].map { merge($0, v) } ?? v }
        return .object(out)
    }

    /// Best supported language for a tag like `pt-BR` or `fr_CA`.
    public func match(_ tag: String) -> String? {
        var t = String(decoding: tag.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
        t = Locales.trimmed(t[...]).lowercased()
        if mergedTables[t] != nil { return t }
        let primary = String(t.split(separator: "-").first ?? "")
        return mergedTables[primary] != nil ? primary : nil
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
                for b in bits.dropFirst() {
                    let p = Locales.trimmed(b)
                    if p.hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
                }
                return (String(tag), q)
            }.filter { $0.1 > 0 }.sorted { $0.1 > $1.1 }
            for (tag, _) in ranked { if let m = match(tag) { return m } }
        }
        return match(projectDefault) ?? "en"
    }

    /// `s` without leading and trailing spaces and tabs.
    static func trimmed(_ s: Substring) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = s.firstIndex(where: { !blank($0) }), let last = s.lastIndex(where: { !blank($0) }) else { return "" }
        return String(s[first...last])
    }
}

/// A template or locale problem found at start-up.
public struct TemplateError: Error, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}
