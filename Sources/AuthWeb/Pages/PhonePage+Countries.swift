import AuthEngine
import Foundation

/// The country list of the hosted phone page (`GET /__/auth/phone`, `pages/phone`): every region
/// libphonenumber knows, named in the page language, rendered to `<option>` markup once per
/// language and kept for the life of the process.
extension PhonePage {
    /// One entry of the country list: ISO region and its localized label with the calling code.
    struct Country { let code: String; let label: String }

    /// The rendered `<option>` elements of one language, none selected, with where each region's
    /// ` selected` attribute goes. Immutable once built.
    struct CountryOptions: Sendable {
        let html: String
        /// Region → the index in `html` just after `value="XX"` of its option.
        let selectAt: [String: String.Index]
    }

    private static let cacheLock = NSLockLike()
    nonisolated(unsafe) private static var cache: [String: CountryOptions] = [:]

    /// The `<option>` elements for `lang`, `selected` (a region code) preselected when listed.
    /// The markup is what `{{#countries}}<option value="{{code}}"{{#selected}} selected{{/selected}}>{{label}}</option>\n{{/countries}}`
    /// renders: one option per line, code and label HTML-escaped.
    static func countryOptions(lang: String, selected: String) -> String {
        let options = countryOptions(lang: lang)
        guard let at = options.selectAt[selected] else { return options.html }
        var out = String()
        out.reserveCapacity(options.html.utf8.count + 9)
        out += options.html[..<at]
        out += " selected"
        out += options.html[at...]
        return out
    }

    static func countryOptions(lang: String) -> CountryOptions {
        if let hit = cacheLock.withLock({ cache[lang] }) { return hit }
        var html = ""
        var offsets: [String: Int] = [:]
        for c in countries(lang: lang) {
            html += "<option value=\""
            html += htmlEscape(c.code)
            html += "\""
            if offsets[c.code] == nil { offsets[c.code] = html.utf8.count }
            html += ">"
            html += htmlEscape(c.label)
            html += "</option>\n"
        }
        let selectAt = offsets.mapValues { html.utf8.index(html.utf8.startIndex, offsetBy: $0) }
        let built = CountryOptions(html: html, selectAt: selectAt)
        return cacheLock.withLock {
            if let raced = cache[lang] { return raced }
            cache[lang] = built
            return built
        }
    }

    /// Every region libphonenumber knows, named in `lang` with its calling code, sorted by name.
    static func countries(lang: String) -> [Country] {
        let locale = Locale(identifier: lang)
        return PhoneNumber.supportedRegions.compactMap { code -> (String, Country)? in
            guard let cc = PhoneNumber.countryCode(forRegion: code) else { return nil }
            let name = locale.localizedString(forRegionCode: code) ?? code
            return (name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: locale),
                    Country(code: code, label: "\(name) (+\(cc))"))
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Mustache's `{{…}}` escaping: `<`, `>`, `&`, `"` and `'`.
    static func htmlEscape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}
