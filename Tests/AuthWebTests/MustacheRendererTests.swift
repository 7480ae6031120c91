@testable import AuthWeb
import Testing

/// The project's Mustache engine (`Templates/Mustache*.swift`): parsing, linking, rendering.
@Suite("Mustache renderer")
struct MustacheRendererTests {
    static let partials: [String: String] = [
        "item": "<li>{{name}}</li>\n",
        "list": "<ul>\n  {{#items}}\n  {{>item}}\n  {{/items}}\n</ul>\n",
        "layout": "<title>{{$title}}Default{{/title}}</title>\n{{$body}}no body{{/body}}\n",
        "mid": "{{<layout}}{{$title}}Middle{{/title}}{{/layout}}",
        "console/layout": "<h1>{{$title}}Console{{/title}}</h1>\n",
    ]

    /// Renders `text` with `values` (and the partials above), linked and also specialised for `a`.
    static func render(_ text: String, _ values: [String: TemplateValue], fixed: [String: TemplateValue] = [:]) throws -> String {
        var all = partials
        all["main"] = text
        let parsed = try all.mapValues { try MustacheParser.parse($0) }
        var nodes = try MustacheLinker.link(parsed["main"]!) { parsed[$0] }
        if !fixed.isEmpty { nodes = MustacheLinker.specialize(nodes, fixed: fixed) }
        var stack: [TemplateValue] = []
        if !fixed.isEmpty { stack.append(.object(fixed)) }
        stack.append(.object(values))
        return String(decoding: MustacheRenderer.render(nodes, stack: stack), as: UTF8.self)
    }

    @Test("{{name}} escapes & < > \" ' and nothing else; {{{name}}} and {{&name}} do not")
    func escaping() throws {
        let v: [String: TemplateValue] = ["x": "a & b < c > d \" e ' f ✓ é"]
        #expect(try Self.render("{{x}}", v) == "a &amp; b &lt; c &gt; d &quot; e &#39; f ✓ é")
        #expect(try Self.render("{{{x}}}|{{&x}}", v) == "a & b < c > d \" e ' f ✓ é|a & b < c > d \" e ' f ✓ é")
        #expect(MustacheRenderer.escaped("<>&\"'") == "&lt;&gt;&amp;&quot;&#39;")
        #expect(try Self.render("{{h}}", ["h": .html([Array("<b>".utf8)[...]])]) == "<b>")
    }

    @Test("sections: true, false, strings (even empty), objects, lists, missing")
    func sections() throws {
        let v: [String: TemplateValue] = ["yes": true, "no": false, "s": "str", "e": "", "o": ["k": "v"], "l": ["1", "2"], "none": []]
        #expect(try Self.render("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}{{#missing}}M{{/missing}}", v) == "Y")
        #expect(try Self.render("{{#s}}[{{.}}]{{/s}}{{#e}}(empty){{/e}}", v) == "[str](empty)")
        #expect(try Self.render("{{#o}}{{k}}{{/o}}{{#l}}<{{.}}>{{/l}}{{#none}}x{{/none}}", v) == "v<1><2>")
        #expect(try Self.render("{{yes}} {{no}}", v) == "true false")
    }

    @Test("inverted sections render exactly when the section would not")
    func inverted() throws {
        let v: [String: TemplateValue] = ["yes": true, "no": false, "s": "", "l": ["1"], "none": []]
        #expect(try Self.render("{{^yes}}a{{/yes}}{{^no}}b{{/no}}{{^missing}}c{{/missing}}{{^s}}d{{/s}}{{^l}}e{{/l}}{{^none}}f{{/none}}", v) == "bcf")
    }

    @Test("missing names render nothing; dotted names look up the first part through the stack")
    func lookup() throws {
        let v: [String: TemplateValue] = ["a": ["b": ["c": "deep"]], "top": "T", "o": ["x": "inner"]]
        #expect(try Self.render("[{{nope}}][{{a.nope}}][{{a.b.c.d}}]", v) == "[][][]")
        #expect(try Self.render("{{a.b.c}}", v) == "deep")
        #expect(try Self.render("{{#o}}{{x}} {{top}} {{.x}} [{{.top}}]{{/o}}", v) == "inner T inner []")
        #expect(try Self.render("{{#a}}{{#b}}{{c}}{{/b}}{{/a}}", v) == "deep")
    }

    @Test("standalone tags take their whole line; a standalone partial indents the lines it starts (as swift-mustache did)")
    func whitespace() throws {
        let v: [String: TemplateValue] = ["items": [["name": "a"], ["name": "b<"]], "flag": true]
        #expect(try Self.render("x\n  {{#flag}}\n  in\n  {{/flag}}\ny\n", v) == "x\n  in\ny\n")
        #expect(try Self.render("  {{! comment }}\nz {{! inline }}w\n", v) == "z w\n")
        #expect(try Self.render("<div>\n  {{>list}}\n</div>\n", v) == "<div>\n  <ul>\n    <li>a</li>\n  <li>b&lt;</li>\n  </ul>\n</div>\n")
        #expect(try Self.render("a\r\n{{#flag}}\r\nb\r\n{{/flag}}\r\n", v) == "a\r\nb\r\n")
    }

    @Test("parents and blocks: overrides replace defaults, the outermost override wins, text outside blocks is ignored")
    func inheritance() throws {
        #expect(try Self.render("{{<layout}}\nignored\n{{$body}}Mine{{/body}}\n{{/layout}}\n", [:]) == "<title>Default</title>\nMine\n")
        #expect(try Self.render("{{<mid}}{{/mid}}", [:]) == "<title>Middle</title>\nno body\n")
        #expect(try Self.render("{{<mid}}{{$title}}Outer{{/title}}{{/mid}}", [:]) == "<title>Outer</title>\nno body\n")
        // A parent in a folder closes with its whole name.
        #expect(try Self.render("{{<console/layout}}{{$title}}Users{{/title}}{{/console/layout}}", [:]) == "<h1>Users</h1>\n")
    }

    @Test("specialising for fixed values renders the same bytes")
    func specialise() throws {
        let text = "{{t.x}} {{lang}} {{#flag}}{{t.y}}{{/flag}} {{v}} {{t.missing}}\n"
        let fixed: [String: TemplateValue] = ["t": ["x": "<X>", "y": "Y"], "lang": "fr"]
        var all = fixed
        all["flag"] = true
        all["v"] = "V"
        let plain = try Self.render(text, all)
        #expect(plain == "&lt;X&gt; fr Y V \n")
        #expect(try Self.render(text, ["flag": true, "v": "V"], fixed: fixed) == plain)
        let linked = try MustacheLinker.link(MustacheParser.parse(text)) { _ in nil }
        let nodes = MustacheLinker.specialize(linked, fixed: fixed)
        #expect(nodes.count == 5, "text, section, text, variable, text")
    }

    @Test("malformed templates are refused with the place", arguments: [
        "{{#open}} never closed", "{{#a}}{{/b}}", "{{unfinished", "{{=<% %>=}}", "{{x(y)}}", "{{<p}}{{v}}{{/p}}", "{{! no end",
    ])
    func refused(text: String) {
        #expect(throws: MustacheSyntaxError.self) { try MustacheParser.parse(text) }
    }

    @Test("a partial that includes itself stops at the depth limit")
    func recursion() throws {
        let parsed = try MustacheParser.parse("{{>self}}")
        #expect(throws: MustacheSyntaxError.self) { try MustacheLinker.link(parsed) { _ in parsed } }
    }
}
