/// Renders linked templates (no partials, parents or blocks left; see `MustacheLinker`) from
/// typed values into UTF-8 bytes.
enum MustacheRenderer {
    /// Renders `nodes` with `stack` as the context stack (outermost first).
    static func render(_ nodes: [MustacheNode], stack: [TemplateValue], capacity: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        var stack = stack
        render(nodes, stack: &stack, indent: [], into: &out)
        return out
    }

    /// The value `path` names: `.` is the innermost context; `a.b` finds `a` in the innermost
    /// context that has it, then `b` inside it.
    static func lookup(_ path: MustachePath, in stack: [TemplateValue]) -> TemplateValue? {
        guard let first = path.names.first else { return stack.last }
        var value: TemplateValue
        if path.innermostOnly {
            guard let top = stack.last, let v = top[first] else { return nil }
            value = v
        } else {
            var found: TemplateValue?
            var i = stack.count - 1
            while i >= 0 {
                if let v = stack[i][first] { found = v; break }
                i -= 1
            }
            guard let v = found else { return nil }
            value = v
        }
        for name in path.names.dropFirst() {
            guard let v = value[name] else { return nil }
            value = v
        }
        return value
    }

    static func render(_ nodes: [MustacheNode], stack: inout [TemplateValue], indent: [UInt8], into out: inout [UInt8]) {
        guard !indent.isEmpty else {
            for node in nodes { render(node, stack: &stack, indent: indent, into: &out) }
            return
        }
        // Inside an indented partial a line that starts with output gets the indentation.
        let start = out.count
        for node in nodes {
            let before = out.count
            render(node, stack: &stack, indent: indent, into: &out)
            if out.count > before, before > start, out[before - 1] == 0x0A {
                out.insert(contentsOf: indent, at: before)
            }
        }
    }

    private static func render(_ node: MustacheNode, stack: inout [TemplateValue], indent: [UInt8], into out: inout [UInt8]) {
        switch node {
        case let .text(bytes):
            out.append(contentsOf: bytes)
        case let .variable(path, escaped):
            switch lookup(path, in: stack) {
            case let .string(s)?: if escaped { appendEscaped(s, to: &out) } else { appendRaw(s, to: &out) }
            case let .bool(b)?: out.append(contentsOf: (b ? "true" : "false").utf8)
            case let .html(pieces)?: for p in pieces { p.withUnsafeBufferPointer { out.append(contentsOf: $0) } }
            default: break
            }
        case let .section(path, inverted, body):
            let value = lookup(path, in: stack)
            if inverted {
                switch value {
                case nil, .bool(false)?: render(body, stack: &stack, indent: indent, into: &out)
                case let .list(items)? where items.isEmpty:
                    stack.append(.list(items))
                    render(body, stack: &stack, indent: indent, into: &out)
                    stack.removeLast()
                default: break
                }
                return
            }
            switch value {
            case nil, .bool(false)?: break
            case .bool(true)?: render(body, stack: &stack, indent: indent, into: &out)
            case let .list(items)?:
                for item in items {
                    stack.append(item)
                    render(body, stack: &stack, indent: indent, into: &out)
                    stack.removeLast()
                }
            case let v?:
                stack.append(v)
                render(body, stack: &stack, indent: indent, into: &out)
                stack.removeLast()
            }
        case let .scope(inner, body):
            render(body, stack: &stack, indent: inner, into: &out)
        case .partial, .parent, .block, .blockDefinition:
            assertionFailure("render an unlinked template")
        }
    }

    /// Appends `s` with `&`, `<`, `>`, `"` and `'` written as `&amp;`, `&lt;`, `&gt;`, `&quot;`
    /// and `&#39;` (the escaping of `{{name}}`).
    static func appendEscaped(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { buf in
            var run = 0
            for i in 0..<buf.count {
                let entity: StaticString
                switch buf[i] {
                case 0x26: entity = "&amp;"
                case 0x3C: entity = "&lt;"
                case 0x3E: entity = "&gt;"
                case 0x22: entity = "&quot;"
                case 0x27: entity = "&#39;"
                default: continue
                }
                if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[run..<i])) }
                entity.withUTF8Buffer { out.append(contentsOf: $0) }
                run = i + 1
            }
            if run < buf.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[run...])) }
        }
    }

    /// Appends the UTF-8 of `s` (one copy, not byte by byte).
    @inline(__always)
    static func appendRaw(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { out.append(contentsOf: $0) }
    }

    /// `s` escaped as `{{name}}` escapes it.
    static func escaped(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 16)
        appendEscaped(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
