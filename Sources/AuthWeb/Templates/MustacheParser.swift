/// One element of a parsed template. `partial`, `parent`, `block` and `blockDefinition` exist only
/// between parsing and linking (`MustacheLinker`); `scope` only after linking.
indirect enum MustacheNode: Sendable {
    case text([UInt8])
    case variable(MustachePath, escaped: Bool)
    case section(MustachePath, inverted: Bool, body: [MustacheNode])
    /// `{{> name}}`; `indent` is the whitespace before a standalone partial tag (not otherwise
    /// in the template: the linker writes it before the partial's first line).
    case partial(String, indent: [UInt8]?)
    /// `{{< name}}…{{/name}}` with the blocks it overrides.
    case parent(String, indent: [UInt8], blocks: [String: [MustacheNode]])
    /// `{{$ name}}default{{/name}}` in a template that may be extended.
    case block(String, indent: [UInt8], body: [MustacheNode])
    /// `{{$ name}}…{{/name}}` directly inside a parent tag: an override.
    case blockDefinition(String, body: [MustacheNode])
    /// An inlined partial, parent or block rendered with this (non-empty) indentation.
    case scope(indent: [UInt8], body: [MustacheNode])
}

/// A tag's name: `.`, `name`, `a.b.c` (first part looked up through the context stack, the rest
/// inside it), or `.a.b` (the innermost context only).
struct MustachePath: Sendable, Equatable {
    let names: [String]
    let innermostOnly: Bool

    init(_ name: String) {
        names = name.split(separator: ".").map(String.init)
        innermostOnly = name.first == "."
    }
}

/// A parse failure with the byte offset where it was noticed.
struct MustacheSyntaxError: Error, CustomStringConvertible {
    let message: String
    let offset: Int
    var description: String { "\(message) at byte \(offset)" }
}

/// Parses the Mustache subset Gatehouse's templates use: variables `{{a.b}}` (HTML-escaped),
/// `{{{a}}}` and `{{&a}}` (raw), sections `{{#a}}` and inverted sections `{{^a}}`, comments
/// `{{! }}`, partials `{{> a}}`, parents `{{< a}}` with blocks `{{$ a}}`. Set-delimiter tags,
/// dynamic names, transforms and lambdas are refused. Whitespace follows the Mustache spec's
/// standalone-line rules (a standalone tag's line, indentation and `\n` or `\r\n` included,
/// disappears, also on a template's first and last lines; a standalone partial indents its
/// lines); MustacheSpecTests checks each rule.
struct MustacheParser {
    let bytes: [UInt8]
    var pos = 0

    /// Parses a whole template.
    static func parse(_ text: String) throws -> [MustacheNode] {
        var p = MustacheParser(bytes: Array(text.utf8))
        return try p.parse(State())
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Where the parser is: the open section, whether a line just started, parent-block context.
    private struct State {
        var sectionName: String?
        var newLine = true
        var inPartialDefinition = false
        var partialDefinitionTopLevel = false
        var partialDefinitionIndent: Int?

        func section(_ name: String, newLine: Bool) -> State {
            var s = self
            s.sectionName = name
            s.partialDefinitionTopLevel = false
            if !newLine { s.newLine = false }
            return s
        }

        func parent(_ name: String) -> State {
            var s = self
            s.sectionName = name
            s.newLine = true
            s.inPartialDefinition = true
            s.partialDefinitionTopLevel = true
            return s
        }
    }

    func fail(_ message: String) -> MustacheSyntaxError { MustacheSyntaxError(message: message, offset: pos) }

    private mutating func parse(_ initial: State) throws -> [MustacheNode] {
        var nodes: [MustacheNode] = []
        var state = initial
        var ws: [UInt8] = []
        while pos < bytes.count {
            if state.newLine {
                let white = readBlanks()
                if state.inPartialDefinition && !state.partialDefinitionTopLevel {
                    if let n = state.partialDefinitionIndent { ws = Array(white.dropFirst(n)) } else { state.partialDefinitionIndent = white.count }
                } else {
                    ws = Array(white)
                }
            }
            let text = readText()
            if let n = lineBreak(at: pos) {
                nodes.append(.text(ws + text + bytes[pos..<pos + n]))
                state.newLine = true
                pos += n
                continue
            }
            if !text.isEmpty {
                nodes.append(.text(ws + text))
                ws = []
                state.newLine = false
            }
            guard pos < bytes.count else {
                // Blanks that end the template are text like any other.
                if !ws.isEmpty { nodes.append(.text(ws)) }
                break
            }
            var setNewLine = false
            let sigil = bytes[pos]
            switch sigil {
            case UInt8(ascii: "#"), UInt8(ascii: "^"):
                pos += 1
                let name = try readName()
                if standalone(state.newLine) {
                    setNewLine = true
                } else if !ws.isEmpty {
                    nodes.append(.text(ws)); ws = []
                }
                let body = try parse(state.section(name, newLine: setNewLine))
                nodes.append(.section(MustachePath(name), inverted: sigil == UInt8(ascii: "^"), body: body))
            case UInt8(ascii: "/"):
                pos += 1
                // A parent's name may have a folder (`{{<console/layout}}` … `{{/console/layout}}`).
                let name = try readPartialName()
                guard name == state.sectionName else { throw fail("closing tag {{/\(name)}} does not match {{#\(state.sectionName ?? "")}}") }
                if !standalone(state.newLine), !ws.isEmpty { nodes.append(.text(ws)) }
                return nodes
            case UInt8(ascii: "!"):
                pos += 1
                try skipComment()
                setNewLine = standalone(state.newLine)
            case UInt8(ascii: "{"), UInt8(ascii: "&"):
                if !ws.isEmpty { nodes.append(.text(ws)); ws = [] }
                pos += 1
                let name = try readName()
                if sigil == UInt8(ascii: "{") {
                    guard pos < bytes.count, bytes[pos] == UInt8(ascii: "}") else { throw fail("{{{ without }}}") }
                    pos += 1
                }
                nodes.append(.variable(MustachePath(name), escaped: false))
            case UInt8(ascii: ">"):
                pos += 1
                let name = try readPartialName()
                if standalone(state.newLine) {
                    // The indentation opens the partial's first line (`MustacheLinker`), so that
                    // a partial with nothing in it leaves no line behind.
                    setNewLine = true
                    nodes.append(.partial(name, indent: ws))
                } else {
                    if !ws.isEmpty { nodes.append(.text(ws)) }
                    nodes.append(.partial(name, indent: nil))
                }
                ws = []
            case UInt8(ascii: "<"):
                pos += 1
                let name = try readPartialName()
                if !ws.isEmpty { nodes.append(.text(ws)) }
                if standalone(state.newLine) { setNewLine = true }
                var blocks: [String: [MustacheNode]] = [:]
                for node in try parse(state.parent(name)) {
                    switch node {
                    case let .blockDefinition(block, body): blocks[block] = body
                    case .text: break
                    default: throw fail("only blocks may appear inside {{<\(name)}}")
                    }
                }
                nodes.append(.parent(name, indent: ws, blocks: blocks))
                ws = []
            case UInt8(ascii: "$"):
                pos += 1
                let name = try readName()
                if state.partialDefinitionTopLevel {
                    if standalone(state.newLine) { setNewLine = true }
                    nodes.append(.blockDefinition(name, body: try parse(state.section(name, newLine: setNewLine))))
                } else {
                    if !ws.isEmpty { nodes.append(.text(ws)) }
                    if standalone(state.newLine) { setNewLine = true }
                    let body = try parse(state.section(name, newLine: setNewLine))
                    nodes.append(.block(name, indent: ws, body: body))
                    ws = []
                }
            case UInt8(ascii: "="), UInt8(ascii: "%"):
                throw fail("set-delimiter and configuration tags are not supported")
            default:
                if !ws.isEmpty { nodes.append(.text(ws)); ws = [] }
                nodes.append(.variable(MustachePath(try readName()), escaped: true))
            }
            state.newLine = setNewLine
        }
        if let open = state.sectionName { throw fail("{{#\(open)}} is never closed") }
        return nodes
    }
}
