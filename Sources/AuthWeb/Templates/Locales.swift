public import AuthEngine
import JSONValue
import Locking

/// Localized strings: one JSON file per namespace in `Resources/locales/<lang>/`, named after
/// the one key at its top (`phone.json` holds `{"phone": {…}}`). A namespace is read the first
/// time it is asked for in a language: a CGI request reads what its page or message names (the
/// phone page: `phone`, `signin`, `common`, `error`), not the whole language (parsing and
/// flattening every file was ~40 % of a CGI phone page); `loadAll()` reads every one (start-up
/// validation).
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

    /// Reads every namespace of every language; throws on the first file that does not load.
    public func loadAll() throws {
        for lang in store.languages.sorted() {
            for ns in store.namespaces(lang) { _ = try store.filled(lang, ns) }
        }
    }

    /// Language → flattened `a.b.c` → text, as read (no English filling).
    var flat: [String: [String: String]] {
        var out: [String: [String: String]] = [:]
        for lang in store.languages {
            var f: [String: String] = [:]
            for ns in store.namespaces(lang) { f.merge((try? store.read(lang, ns))?.flat ?? [:]) { $1 } }
            out[lang] = f
        }
        return out
    }

    /// One namespace of one language: its nested table and its flattened strings.
    typealias Part = (table: TemplateValue, flat: [String: String])

    /// Per language and namespace, read once: as written, and with English filling gaps.
    private final class Store: Sendable {
        let directory: String
        let languages: Set<String>
        private let own = Locked<[String: Part]>([:])
        private let merged = Locked<[String: Part]>([:])
        private let listed = Locked<[String: [String]]>([:])

        let log: Log
        init(directory: String, languages: Set<String>, log: Log) { self.directory = directory; self.languages = languages; self.log = log }

        /// The namespaces `lang` has a file for, sorted.
        func namespaces(_ lang: String) -> [String] {
            if let hit = listed.withLock({ $0[lang] }) { return hit }
            let names = (ResourceFiles.list(directory + "/" + lang) ?? []).filter { $0.hasSuffix(".json") }
                .map { String($0.dropLast(5)) }.sorted()
            listed.withLock { $0[lang] = names }
            return names
        }

        /// `lang`'s file for `ns`, which must hold `ns` alone; empty (and not kept) when `lang`
        /// has no such file, so a name that is no namespace never grows the cache.
        func read(_ lang: String, _ ns: String) throws -> Part {
            guard namespaces(lang).contains(ns) else { return (.object([:]), [:]) }
            let key = lang + "/" + ns
            if let hit = own.withLock({ $0[key] }) { return hit }
            let path = directory + "/" + key + ".json"
            guard let data = ResourceFiles.read(path) else { throw TemplateError("cannot read \(path)") }
            let json: JSON
            do { json = try JSONParser(maxBytes: 1 << 20, maxDepth: 8).parse(data) } catch { throw TemplateError("\(path): \(error)") }
            guard case let .object(pairs) = json, pairs.count == 1, pairs[0].0 == ns else {
                throw TemplateError("\(path): must hold one object, named \"\(ns)\" like the file")
            }
            var f: [String: String] = [:]
            let entry = (Locales.nested(json, prefix: "", into: &f), f)
            own.withLock { $0[key] = entry }
            return entry
        }

        /// `ns` in `lang` with English filling any gap; nil for a language without a folder.
        func filled(_ lang: String, _ ns: String) throws -> Part? {
            guard languages.contains(lang) else { return nil }
            // No file of that name in either: empty, and nothing kept.
            guard namespaces("en").contains(ns) || namespaces(lang).contains(ns) else { return (.object([:]), [:]) }
            let key = lang + "/" + ns
            if let hit = merged.withLock({ $0[key] }) { return hit }
            let en = try read("en", ns)
            // English needs no filling from itself.
            let entry = lang == "en" ? en : try { () throws -> Part in
                let mine = try read(lang, ns)
                return (Locales.merge(en.table, mine.table), en.flat.merging(mine.flat) { $1 })
            }()
            merged.withLock { $0[key] = entry }
            return entry
        }

        /// `filled`, logging a language that does not load (its strings are then English).
        func filledOrLogged(_ lang: String, _ ns: String) -> Part? {
            do { return try filled(lang, ns) } catch {
                log.error("\(error)")
                let fallback = (try? filled("en", ns)) ?? nil
                if let fallback { merged.withLock { $0[lang + "/" + ns] = fallback } }
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

    /// Strings for `lang`, English filling any gap, read by namespace as they are looked up.
    public func strings(for lang: String) -> LocaleStrings {
        LocaleStrings(locales: self, lang: store.languages.contains(lang) ? lang : "en")
    }

    /// `ns` in `lang` (English filling any gap, or English alone if `lang` does not load).
    func part(_ lang: String, _ ns: String) -> Part? {
        store.filledOrLogged(lang, ns) ?? store.filledOrLogged("en", ns)
    }

    /// The nested table for `lang` (`{namespace: {…}}`), English filling any gap: of the
    /// namespaces named, or of every one.
    func table(for lang: String, namespaces: Set<String>? = nil) -> TemplateValue {
        let names = namespaces.map { $0.sorted() } ?? store.namespaces("en")
        var out: [String: TemplateValue] = [:]
        for ns in names {
            if case let .object(d)? = part(lang, ns)?.table { for (k, v) in d { out[k] = v } }
        }
        return .object(out)
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

/// A language's strings by flattened key (`"email.page.sent_body"`), each namespace read when a
/// key of it is first looked up.
public struct LocaleStrings: Sendable {
    let locales: Locales
    let lang: String

    public subscript(_ key: String) -> String? {
        let ns = key.split(separator: ".", maxSplits: 1).first.map(String.init) ?? key
        return locales.part(lang, ns)?.flat[key]
    }
}
