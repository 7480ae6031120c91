public import AuthEngine
import Locking

/// Mustache templates for pages, SMS and email (`Resources/templates/**/*.mustache`) plus locales,
/// rendered by the project's own Mustache engine (`Templates/Mustache*.swift`).
///
/// A template is parsed the first time it is rendered (with the partials and parents it names),
/// linked into one flat node list, and per supported language specialised: every `{{t.…}}` and
/// `{{lang}}` tag becomes text, so a request fills in only its own values. `t` and `lang` are
/// therefore reserved: they always mean the locale's strings and the language.
public final class Templates: @unchecked Sendable {
    public let directory: String
    /// The phone page's region tables from this folder's `regions/` files.
    let regions: RegionTables
    private let localesLock = Lock()
    private var loadedLocales: Locales?
    /// Template name (`pages/phone`) → its file (`<directory>/templates/pages/phone.mustache`),
    /// listed on first use (a request that renders nothing never lists them).
    private var files: [String: String] {
        filesLock.withLock {
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
    private let filesLock = Lock()
    private var listed: [String: String]?
    private let lock = Lock()
    /// Parsed, linked, and per `name`/`lang` specialised templates (with a size to reserve).
    private var parsed: [String: [MustacheNode]] = [:]
    private var linked: [String: [MustacheNode]] = [:]
    private var languages: [String: Language] = [:]

    /// One supported language: the fixed values (`t`, `lang`) and its specialised templates.
    private struct Language {
        let fixed: TemplateValue
        var templates: [String: (nodes: [MustacheNode], size: Int)] = [:]
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
            return localesLock.withLock {
                if loadedLocales == nil { loadedLocales = Locales() }
                return loadedLocales!
            }
        }
    }

    private func loadLocales() throws -> Locales {
        try localesLock.withLock {
            if let l = loadedLocales { return l }
            let l = try Locales(directory: directory + "/locales", log: log)
            loadedLocales = l
            return l
        }
    }

    /// Loads the locales and parses and links every template; throws on the first problem
    /// (start-up validation).
    public func validateAll() throws {
        try loadLocales().loadAll()
        try lock.withLock {
            for name in files.keys.sorted() { _ = try link(name) }
        }
    }

    /// Whether a template of this name exists (without parsing it).
    public func contains(_ name: String) -> Bool { files[name] != nil }

    /// The parsed template `name` (caller holds `lock`).
    private func parse(_ name: String) throws -> [MustacheNode]? {
        if let p = parsed[name] { return p }
        guard let path = files[name] else { return nil }
        guard let text = ResourceFiles.text(path) else { throw TemplateError("template \(name).mustache: cannot read \(path)") }
        let nodes: [MustacheNode]
        do { nodes = try MustacheParser.parse(text) } catch { throw TemplateError("template \(name).mustache: \(error)") }
        parsed[name] = nodes
        return nodes
    }

    /// `name` with its partials and parents inlined (caller holds `lock`).
    private func link(_ name: String) throws -> [MustacheNode]? {
        if let l = linked[name] { return l }
        guard let nodes = try parse(name) else { return nil }
        let l: [MustacheNode]
        do { l = try MustacheLinker.link(nodes) { try self.parse($0) } } catch let e as TemplateError { throw e } catch {
            throw TemplateError("template \(name).mustache: \(error)")
        }
        linked[name] = l
        return l
    }

    /// The nodes to render `name` in `lang` and the fixed values: specialised (and kept) for a
    /// language with its own locale folder, else linked only.
    private func nodes(_ name: String, lang: String, locales: Locales) throws -> (nodes: [MustacheNode], size: Int, fixed: TemplateValue)? {
        try lock.withLock {
            if let language = languages[lang], let hit = language.templates[name] { return (hit.nodes, hit.size, language.fixed) }
            guard let l = try link(name) else { return nil }
            // As fields, so that a name a rendering does not set is not hashed on its way past.
            let table = locales.table(for: lang)
            let fixed = TemplateValue.fields([TemplateField("t", table), TemplateField("lang", .string(lang))])
            guard locales.has(lang) else { return (l, MustacheLinker.textSize(l), fixed) }
            let s = MustacheLinker.specialize(l, fixed: ["t": table, "lang": .string(lang)])
            let size = MustacheLinker.textSize(s) + 256
            languages[lang, default: Language(fixed: fixed)].templates[name] = (s, size)
            return (s, size, fixed)
        }
    }

    /// Reserves room for the largest rendering seen so far next time (no regrowth while rendering).
    private func remember(size: Int, of name: String, lang: String) {
        lock.withLock {
            guard let entry = languages[lang]?.templates[name], entry.size < size else { return }
            languages[lang]?.templates[name] = (entry.nodes, size)
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
