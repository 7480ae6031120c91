public import AuthEngine
import Locking

/// Mustache templates for pages, SMS and email (`Resources/templates/**/*.mustache`) plus locales,
/// rendered by the project's own Mustache engine (`Templates/Mustache*.swift`).
///
/// A template is parsed the first time it is rendered (with the partials and parents it names),
/// linked into one flat node list, and per supported language specialised: every `{{t.…}}` and
/// `{{lang}}` tag becomes text, so a request fills in only its own values. `t` and `lang` are
/// therefore reserved: they always mean the locale's strings and the language.
public final class Templates: Sendable {
    public let directory: String
    /// The phone page's region tables from this folder's `regions/` files.
    let regions: RegionTables
    private let loadedLocales = Locked<Locales?>(nil)
    /// Template name (`pages/phone`) → its file (`<directory>/templates/pages/phone.mustache`),
    /// listed on first use (a request that renders nothing never lists them).
    private var files: [String: String] {
        listed.withLock { listed in
            if let listed { return listed }
            let base = directory + "/templates"
            var files: [String: String] = [:]
            for file in ResourceFiles.walk(base, suffix: ".mustache") {
                files[String(file.dropLast(".mustache".count))] = base + "/" + file
            }
            listed = files
            return files
        }
    }
    private let listed = Locked<[String: String]?>(nil)
    /// Parsed, linked, and per `name`/`lang` specialised templates (with a size to reserve).
    private struct Cache {
        var parsed: [String: [MustacheNode]] = [:]
        var linked: [String: [MustacheNode]] = [:]
        var languages: [String: Language] = [:]
    }
    private let cache = Locked(Cache())

    /// One supported language: its specialised templates, each with its fixed values (`t` with
    /// the namespaces it names, `lang`).
    private struct Language {
        var templates: [String: (nodes: [MustacheNode], size: Int, fixed: TemplateValue)] = [:]
    }

    /// The namespaces of `t` that `nodes` name (`{{t.phone.title}}` → `phone`), or nil when a
    /// tag names `t` itself (`{{#t}}`: inside it any name could be one). Other names never reach
    /// `t`'s namespaces: a name is looked up from its first part, and only `t` holds them.
    static func localeNamespaces(_ nodes: [MustacheNode]) -> Set<String>? {
        var found: Set<String> = []
        func visit(_ path: MustachePath) -> Bool {
            guard path.names.first == "t" else { return true }
            guard path.names.count > 1 else { return false }
            found.insert(path.names[1])
            return true
        }
        func walk(_ nodes: [MustacheNode]) -> Bool {
            for node in nodes {
                switch node {
                case .text, .partial: continue
                case let .variable(path, _): if !visit(path) { return false }
                case let .section(path, _, body): if !visit(path) || !walk(body) { return false }
                case let .parent(_, _, blocks): for body in blocks.values where !walk(body) { return false }
                case let .block(_, _, body), let .blockDefinition(_, body), let .scope(_, body): if !walk(body) { return false }
                }
            }
            return true
        }
        return walk(nodes) ? found : nil
    }

    /// Checks that `<directory>/templates` exists; templates are listed and parsed, and
    /// `<directory>/locales` loaded, on use.
    /// Where a template or locale that fails to load is reported.
    let log: Log

    public init(directory: String, log: Log = Log()) throws {
        self.directory = directory
        self.log = log
        regions = RegionTables(directory: directory)
        let base = directory + "/templates"
        guard ResourceFiles.isDirectory(base) else { throw TemplateError("no templates in \(base)") }
    }

    /// The localized strings, loaded on first use (an API request that renders nothing never
    /// needs them); a folder that does not load is logged and leaves every string empty.
    public var locales: Locales {
        do { return try loadLocales() } catch {
            log.error("\(error)")
            return loadedLocales.withLock { loaded in
                if let loaded { return loaded }
                let empty = Locales()
                loaded = empty
                return empty
            }
        }
    }

    private func loadLocales() throws -> Locales {
        try loadedLocales.withLock { loaded in
            if let loaded { return loaded }
            let l = try Locales(directory: directory + "/locales", log: log)
            loaded = l
            return l
        }
    }

    /// Loads the locales and parses and links every template; throws on the first problem
    /// (start-up validation).
    public func validateAll() throws {
        try loadLocales().loadAll()
        let names = files.keys.sorted()
        try cache.withLock { c in
            for name in names { _ = try link(name, &c) }
        }
    }

    /// Whether a template of this name exists (without parsing it).
    public func contains(_ name: String) -> Bool { files[name] != nil }

    /// The parsed template `name`, kept in `c`.
    private func parse(_ name: String, _ c: inout Cache) throws -> [MustacheNode]? {
        if let p = c.parsed[name] { return p }
        guard let path = files[name] else { return nil }
        guard let text = ResourceFiles.text(path) else { throw TemplateError("template \(name).mustache: cannot read \(path)") }
        let nodes: [MustacheNode]
        do { nodes = try MustacheParser.parse(text) } catch { throw TemplateError("template \(name).mustache: \(error)") }
        c.parsed[name] = nodes
        return nodes
    }

    /// `name` with its partials and parents inlined, kept in `c`.
    private func link(_ name: String, _ c: inout Cache) throws -> [MustacheNode]? {
        if let l = c.linked[name] { return l }
        guard let nodes = try parse(name, &c) else { return nil }
        let l: [MustacheNode]
        do { l = try MustacheLinker.link(nodes) { try self.parse($0, &c) } } catch let e as TemplateError { throw e } catch {
            throw TemplateError("template \(name).mustache: \(error)")
        }
        c.linked[name] = l
        return l
    }

    /// The nodes to render `name` in `lang` and the fixed values: specialised (and kept) for a
    /// language with its own locale folder, else linked only.
    private func nodes(_ name: String, lang: String, locales: Locales) throws -> (nodes: [MustacheNode], size: Int, fixed: TemplateValue)? {
        try cache.withLock { c in
            if let language = c.languages[lang], let hit = language.templates[name] { return (hit.nodes, hit.size, hit.fixed) }
            guard let l = try link(name, &c) else { return nil }
            // Only the namespaces of `t` the template names are read (every one if it names `t` itself).
            let table = locales.table(for: lang, namespaces: Templates.localeNamespaces(l))
            // As fields, so that a name a rendering does not set is not hashed on its way past.
            let fixed = TemplateValue.fields([TemplateField("t", table), TemplateField("lang", .string(lang))])
            guard locales.has(lang) else { return (l, MustacheLinker.textSize(l), fixed) }
            let s = MustacheLinker.specialize(l, fixed: ["t": table, "lang": .string(lang)])
            let size = MustacheLinker.textSize(s) + 256
            c.languages[lang, default: Language()].templates[name] = (s, size, fixed)
            return (s, size, fixed)
        }
    }

    /// Reserves room for the largest rendering seen so far next time (no regrowth while rendering).
    private func remember(size: Int, of name: String, lang: String) {
        cache.withLock { c in
            guard let entry = c.languages[lang]?.templates[name], entry.size < size else { return }
            c.languages[lang]?.templates[name] = (entry.nodes, size, entry.fixed)
        }
    }

    /// The templates shipped inside the build: the copy of `Resources/` compiled into the binary
    /// (`ResourceFiles.embedded`), else the source tree's `Resources/` next to this file.
    public static var bundledDirectory: String? {
        if ResourceFiles.isDirectory(ResourceFiles.embedded + "/templates") { return ResourceFiles.embedded }
        let source = #filePath
        guard let slash = source.lastIndex(of: "/") else { return nil }
        let candidate = String(source[..<slash]) + "/Resources"
        return ResourceFiles.isDirectory(candidate + "/templates") ? candidate : nil
    }

    /// Renders `name` with the locale's strings as `t`, plus `lang` and `values` (which may not
    /// use the names `t` and `lang`), as UTF-8 bytes.
    public func renderBytes(_ name: String, lang: String, values: [String: TemplateValue] = [:]) -> [UInt8] {
        render(name, lang: lang, reserved: values["t"] != nil || values["lang"] != nil) { reserved in
            guard reserved else { return .object(values) }
            var own = values
            own["t"] = nil; own["lang"] = nil
            return .object(own)
        }
    }

    /// `renderBytes` with the values as a list of fields (looked up without hashing; the
    /// pages on the hot path use this). `t` and `lang` are reserved as there.
    public func renderBytes(_ name: String, lang: String, fields: [TemplateField]) -> [UInt8] {
        let isReserved = { (f: TemplateField) in f.name == "t" || f.name == "lang" }
        return render(name, lang: lang, reserved: fields.contains(where: isReserved)) { reserved in
            reserved ? .fields(fields.filter { !isReserved($0) }) : .fields(fields)
        }
    }

    /// Renders `name` in `lang` over the fixed values and the caller's (`own`, told whether the
    /// caller used a reserved name, which is logged and dropped); an empty answer when the
    /// template is missing or does not load (logged).
    private func render(_ name: String, lang: String, reserved: Bool, own: (Bool) -> TemplateValue) -> [UInt8] {
        let found: (nodes: [MustacheNode], size: Int, fixed: TemplateValue)?
        do { found = try nodes(name, lang: lang, locales: locales) } catch {
            log.error("\(error)")
            return []
        }
        guard let (nodes, size, fixed) = found else {
            log.error("missing template \(name)")
            return []
        }
        if reserved { log.error("template \(name): the values t and lang are reserved") }
        let out = MustacheRenderer.render(nodes, stack: [fixed, own(reserved)], capacity: size)
        if out.count > size { remember(size: out.count, of: name, lang: lang) }
        return out
    }

    /// `renderBytes` as a string.
    public func render(_ name: String, lang: String, values: [String: TemplateValue] = [:]) -> String {
        String(decoding: renderBytes(name, lang: lang, values: values), as: UTF8.self)
    }

    func render(_ name: String, ctx: Context, values: [String: TemplateValue] = [:]) -> String {
        render(name, lang: ctx.locale, values: values)
    }

    func renderBytes(_ name: String, ctx: Context, values: [String: TemplateValue] = [:]) -> [UInt8] {
        renderBytes(name, lang: ctx.locale, values: values)
    }
}
