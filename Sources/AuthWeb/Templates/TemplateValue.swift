/// A value a template renders: text, a flag, a list or an object of named values. Pages build
/// these directly, so rendering never reflects over Swift values or casts `Any`.
///
/// What a tag does with each kind (as the Mustache spec, and the engine Gatehouse used before):
/// `{{name}}` prints a string (HTML-escaped) or `true`/`false`; `{{#name}}` renders its body once
/// for a string or object (pushed as the innermost context, even an empty string), once for
/// `true`, once per element of a list, never for `false`, an empty list or a missing name;
/// `{{^name}}` renders exactly when `{{#name}}` would render nothing.
public enum TemplateValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case list([TemplateValue])
    case object([String: TemplateValue])
    /// Markup rendered beforehand, written as is by `{{name}}` and `{{{name}}}` alike (the pieces
    /// one after the other); in sections it counts as a string.
    case html([ArraySlice<UInt8>])
    /// Named values in a short list, found by comparing names (no hashing): what a page passes
    /// for one rendering. Otherwise as `object`; the first of repeated names wins.
    case fields([TemplateField])

    /// An integer, printed in decimal.
    public static func int<I: BinaryInteger>(_ n: I) -> TemplateValue { .string(String(n)) }

    /// The value named `key` when this is an object.
    @inline(__always)
    subscript(key: String) -> TemplateValue? {
        switch self {
        case let .object(d): return d[key]
        case let .fields(list):
            // By index, so that passing a field does not copy (retain) its name and value.
            let count = key.utf8.count
            var i = 0
            while i < list.count {
                if list[i].name.utf8.count == count && list[i].name == key { return list[i].value }
                i += 1
            }
            return nil
        default: return nil
        }
    }
}

/// One named value of `TemplateValue.fields`.
public struct TemplateField: Sendable, Equatable {
    public let name: String
    public let value: TemplateValue
    public init(_ name: String, _ value: TemplateValue) { self.name = name; self.value = value }
}

extension TemplateValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: TemplateValue...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, TemplateValue)...) {
        var d: [String: TemplateValue] = [:]
        for (k, v) in elements { d[k] = v }
        self = .object(d)
    }
}

extension TemplateValue {
    /// An object of strings.
    public init(_ strings: [String: String]) { self = .object(strings.mapValues { .string($0) }) }
}
