/// Turns a parsed template into one flat node list: partials and parents inlined, blocks
/// replaced by their overrides (the outermost override wins, as in the Mustache inheritance
/// spec). Then, per language, `specialize` renders every tag that names only the fixed values
/// (`t.…` strings, `lang`) into text, so a request renders only its own values.
enum MustacheLinker {
    /// The deepest nesting of partials and parents accepted (a template that includes itself
    /// stops here).
    static let maxDepth = 16

    /// `nodes` with every partial, parent and block resolved through `template(name)`; a missing
    /// partial renders nothing.
    static func link(_ nodes: [MustacheNode], template: (String) throws -> [MustacheNode]?) throws -> [MustacheNode] {
        try link(nodes, inherited: [:], indent: [], depth: 0, template: template)
    }

    private static func link(_ nodes: [MustacheNode], inherited: [String: [MustacheNode]], indent: [UInt8], depth: Int,
                             template: (String) throws -> [MustacheNode]?) throws -> [MustacheNode] {
        guard depth <= maxDepth else { throw MustacheSyntaxError(message: "partials nested more than \(maxDepth) deep", offset: 0) }
        var out: [MustacheNode] = []
        /// An inlined template: spliced when no indentation applies, else one indented scope.
        func inline(_ body: [MustacheNode], inherited: [String: [MustacheNode]], indent inner: [UInt8]) throws {
            let linked = try link(body, inherited: inherited, indent: inner, depth: depth + 1, template: template)
            if inner.isEmpty && indent.isEmpty { out += linked } else { out.append(.scope(indent: inner, body: linked)) }
        }
        for node in nodes {
            switch node {
            case .text, .variable:
                out.append(node)
            case let .section(path, inverted, body):
                out.append(.section(path, inverted: inverted,
                                    body: try link(body, inherited: inherited, indent: indent, depth: depth, template: template)))
            case let .partial(name, own):
                guard let body = try template(name) else { continue }
                // A standalone partial's indentation starts its first line; an empty one has none.
                let first: [MustacheNode] = own.map { !$0.isEmpty && !body.isEmpty ? [.text($0)] : [] } ?? []
                try inline(first + body, inherited: inherited, indent: indent + (own ?? []))
            case let .parent(name, own, blocks):
                guard let body = try template(name) else { continue }
                try inline(body, inherited: inherited.merging(blocks) { outer, _ in outer }, indent: indent + own)
            case let .block(name, own, body):
                try inline(inherited[name] ?? body, inherited: inherited, indent: indent + own)
            case .blockDefinition:
                continue
            case let .scope(inner, body):
                out.append(.scope(indent: inner, body: try link(body, inherited: inherited, indent: inner, depth: depth, template: template)))
            }
        }
        return out
    }

    /// `nodes` with each variable whose first name is a key of `fixed` (and not `.`-anchored)
    /// rendered into text, and adjacent text merged where no indentation applies. Valid as long as
    /// no context pushed above `fixed` has one of its keys (`Templates` keeps `t` and `lang` to
    /// itself).
    static func specialize(_ nodes: [MustacheNode], fixed: [String: TemplateValue]) -> [MustacheNode] {
        specialize(nodes, fixed: fixed, indented: false)
    }

    private static func specialize(_ nodes: [MustacheNode], fixed: [String: TemplateValue], indented: Bool) -> [MustacheNode] {
        var out: [MustacheNode] = []
        func appendText(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            if !indented, case let .text(previous)? = out.last {
                out[out.count - 1] = .text(previous + bytes)
            } else {
                out.append(.text(bytes))
            }
        }
        for node in nodes {
            switch node {
            case let .text(bytes):
                appendText(bytes)
            case let .variable(path, _) where !path.innermostOnly && path.names.first.map({ fixed[$0] != nil }) == true:
                // Rendered against the fixed values alone: the same bytes the request would produce.
                appendText(MustacheRenderer.render([node], stack: [.object(fixed)]))
            case let .section(path, inverted, body):
                out.append(.section(path, inverted: inverted, body: specialize(body, fixed: fixed, indented: indented)))
            case let .scope(inner, body):
                out.append(.scope(indent: inner, body: specialize(body, fixed: fixed, indented: true)))
            default:
                out.append(node)
            }
        }
        return out
    }

    /// The bytes of text in `nodes` (a first guess at the size of a rendering).
    static func textSize(_ nodes: [MustacheNode]) -> Int {
        nodes.reduce(0) { size, node in
            switch node {
            case let .text(b): return size + b.count
            case let .section(_, _, body), let .scope(_, body): return size + textSize(body)
            default: return size
            }
        }
    }
}
