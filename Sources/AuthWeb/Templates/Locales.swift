public import AuthEngine
import JSONValue
import Locking

/// Localized strings: one nested JSON file per feature in `Resources/locales/<lang>/`. A
/// language is read the first time it is asked for (a CGI request reads English and its own
/// language, not all of them); `loadAll()` reads every one (start-up validation).
public struct Locales: Sendable {
    private let store: Store
    /// The languages with a folder, sorted.
    public var supported: [String] { store.languages.sorted() }

    /// Lists `<directory>/<lang>/` folders; there must be an `en/` one.
    public init(directory: String, log: Log = Log()) throws {
        guard let names = ResourceFiles.list(directory) else { throw TemplateError("cannot read \(directory)") }
        let langs = Set(names.filter { ResourceFiles.isDirectory(directory + "/" + $0) })
        guard langs.contains("en") else { throw TemplateError("no en/ locale folder in \(directory)") }
        store = Store(directory: directory, languages: langs, log: log)
    }

    /// No languages at all (a locale folder that failed to load).
    init() { store = Store(directory: "", languages: [], log: Log()) }

    /// Reads every language; throws on the first file that does not load.
    public func loadAll() throws {
        for lang in store.languages.sorted() { _ = try store.merged(lang) }
    }

    /// Language → flattened `a.b.c` → text, as read (no English filling).
    var flat: [String: [String: String]] {
        var out: [String: [String: String]] = [:]
        for lang in store.languages { out[lang] = (try? store.read(lang))?.flat ?? [:] }
        return out
    }

    /// Per language, read once: its own table and strings, and both with English filling gaps.
    private final class Store: Sendable {
        let directory: String
        let languages: Set<String>
        private let own = Locked<[String: (table: TemplateValue, flat: [String: String])]>([:])
        private let filled = Locked<[String: (table: TemplateValue, flat: [String: String])]>([:])

        let log: Log
        init(directory: String, languages: Set<String>, log: Log) { self.directory = directory; self.languages = languages; self.log = log }

        /// `lang`'s files merged (caller need not hold the lock).
        func read(_ lang: String) throws -> (table: TemplateValue, flat: [String: String]) {
            if let hit = own.withLock({ $0[lang] }) { return hit }
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
            let entry = (table, f)
            own.withLock { $0[lang] = entry }
            return entry
        }

        /// `lang` with English filling any gap; nil for a language without a folder.
        func merged(_ lang: String) throws -> (table: TemplateValue, flat: [String: String])? {
            guard languages.contains(lang) else { return nil }
            if let hit = filled.withLock({ $0[lang] }) { return hit }
            let en = try read("en")
            // English needs no filling from itself.
            let entry = lang == "en" ? en : try { () throws -> (table: TemplateValue, flat: [String: String]) in
                let mine = try read(lang)
                return (Locales.merge(en.table, mine.table), en.flat.merging(mine.flat) { $1 })
            }()
            filled.withLock { $0[lang] = entry }
            return entry
        }

        /// `merged`, logging a language that does not load (its strings are then English).
        func mergedOrLogged(_ lang: String) -> (table: TemplateValue, flat: [String: String])? {
            do { return try merged(lang) } catch {
                log.error("\(error)")
                let fallback = (try? merged("en")) ?? nil
                if let fallback { filled.withLock { $0[lang] = fallback } }
                return fallback
            }
        }
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
        (store.mergedOrLogged(lang) ?? store.mergedOrLogged("en"))?.flat ?? [:]
    }

    /// The nested table for `lang`, English filling any gap.
    func table(for lang: String) -> TemplateValue {
        (store.mergedOrLogged(lang) ?? store.mergedOrLogged("en"))?.table ?? .object([:])
    }

    /// Whether `lang` has a folder of its own.
    func has(_ lang: String) -> Bool { store.languages.contains(lang) }

    /// `over` laid on `base`: objects merge key by key, anything else replaces.
    static func merge(_ base: TemplateValue, _ over: TemplateValue) -> TemplateValue {
        guard case var .object(out) = base, case let .object(o) = over else { return over }
        for (k, v) in o { out[k] = out[k].map { merge($0, v) } ?? v }
        return .object(out)
    }

    /// Best supported language for a tag like `pt-BR` or `fr_CA`.
    public func match(_ tag: String) -> String? {
        // A bare lower-case language (`hl=fr`, most `X-Firebase-Locale`s) is its own answer when
        // supported: the reading below leaves it as it is.
        if !tag.isEmpty, tag.utf8.allSatisfy({ $0 &- 0x61 < 26 }), store.languages.contains(tag) { return tag }
        var t = String(decoding: tag.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
        t = Locales.trimmed(t[...]).lowercased()
        if store.languages.contains(t) { return t }
        let primary = String(t.split(separator: "-").first ?? "")
        return store.languages.contains(primary) ? primary : nil
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
