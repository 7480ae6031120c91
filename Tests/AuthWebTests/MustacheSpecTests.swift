@testable import AuthWeb
import Testing

// The rules of the Mustache specification's core modules (interpolation, sections, inverted
// sections, partials, comments), each checked with templates and data of our own.
//
// Not covered, on purpose:
// - Set-delimiter tags (`{{=<% %>=}}`): no bundled template needs them and the parser refuses
//   them (MustacheRendererTests.refused), so a stray `{{=` fails at start-up instead of
//   changing how the rest of a page is read.
// - Lambdas: a `TemplateValue` holds data only; pages never hand the renderer code.
// - Recursive partials: templates are linked once into flat node lists, so a partial that
//   includes itself is refused at link time (MustacheRendererTests.recursion) rather than
//   looked up per request.
// - Numbers other than integers, and null: `TemplateValue` has neither. Pages format numbers
//   themselves (`TemplateValue.int`), and a value that is not set plays the part of null.

/// Renders `template` with `data` as the only context and `partials` by name, once as linked and
/// once specialised as `Templates` keeps it per language (for names the template does not use),
/// and expects both to give the same bytes.
func mustache(_ template: String, _ data: TemplateValue = [:], partials: [String: String] = [:],
              sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let parsed = try partials.mapValues { try MustacheParser.parse($0) }
    let linked = try MustacheLinker.link(try MustacheParser.parse(template)) { parsed[$0] }
    let plain = MustacheRenderer.render(linked, stack: [data])
    let fixed: [String: TemplateValue] = ["t": ["unused": "-"], "lang": "xx"]
    let specialised = MustacheRenderer.render(MustacheLinker.specialize(linked, fixed: fixed), stack: [.object(fixed), data])
    #expect(specialised == plain, "the specialised template renders differently", sourceLocation: sourceLocation)
    return String(decoding: plain, as: UTF8.self)
}

@Suite("Mustache spec: interpolation")
struct MustacheInterpolationSpecTests {
    @Test("text without tags, stray braces included, comes out unchanged")
    func plainText() throws {
        #expect(try mustache("Sign in {now} } { or }} later\n") == "Sign in {now} } { or }} later\n")
        #expect(try mustache("") == "")
        #expect(try mustache("\n\n  \t\n") == "\n\n  \t\n")
    }

    @Test("a value is printed in place of its tag")
    func basic() throws {
        #expect(try mustache("Code: {{code}}.\n", ["code": "482913"]) == "Code: 482913.\n")
    }

    @Test("printed values are not read as template text again")
    func noReinterpolation() throws {
        let data: TemplateValue = ["hint": "{{secret}}", "secret": "s3"]
        #expect(try mustache("{{hint}} / {{{hint}}} / {{&hint}} / {{secret}}", data) == "{{secret}} / {{secret}} / {{secret}} / s3")
    }

    @Test("{{name}} escapes HTML; {{{name}}} and {{&name}} print as is")
    func escaping() throws {
        let data: TemplateValue = ["v": "<a href=\"x\">Tom & Jerry's</a>"]
        #expect(try mustache("{{v}}", data) == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
        #expect(try mustache("{{{v}}}", data) == "<a href=\"x\">Tom & Jerry's</a>")
        #expect(try mustache("{{&v}}", data) == "<a href=\"x\">Tom & Jerry's</a>")
    }

    @Test("integers print in decimal in all three forms")
    func integers() throws {
        let data: TemplateValue = ["minutes": .int(10), "delta": .int(-3)]
        #expect(try mustache("{{minutes}}|{{{minutes}}}|{{&minutes}}|{{delta}}", data) == "10|10|10|-3")
    }

    @Test("a name with no value prints nothing, in all three forms")
    func missing() throws {
        #expect(try mustache("[{{absent}}][{{{absent}}}][{{&absent}}]", ["present": "p"]) == "[][][]")
    }

    @Test("a dotted name is shorthand for nested sections, in all three forms")
    func dottedShorthand() throws {
        let data: TemplateValue = ["user": ["name": "Ana & Bo"]]
        #expect(try mustache("{{user.name}}={{#user}}{{name}}{{/user}}", data) == "Ana &amp; Bo=Ana &amp; Bo")
        #expect(try mustache("{{{user.name}}}={{#user}}{{{name}}}{{/user}}", data) == "Ana & Bo=Ana & Bo")
        #expect(try mustache("{{&user.name}}={{#user}}{{&name}}{{/user}}", data) == "Ana & Bo=Ana & Bo")
    }

    @Test("dotted names reach any depth")
    func dottedDepth() throws {
        let data: TemplateValue = ["p": ["q": ["r": ["s": ["t2": ["leaf": "deep"]]]]]]
        #expect(try mustache("{{p.q.r.s.t2.leaf}}", data) == "deep")
    }

    @Test("a missing link in a dotted name prints nothing")
    func brokenChain() throws {
        #expect(try mustache("<{{w.x.y}}>", ["w": [:]]) == "<>")
        #expect(try mustache("<{{w.x.y}}>", ["w": "a string has no members"]) == "<>")
    }

    @Test("after the first part, each part is looked up in the previous value only, not the stack")
    func dottedOnlyInParent() throws {
        let data: TemplateValue = ["w": ["x": [:]], "y": ["z": "wrong"]]
        #expect(try mustache("<{{w.x.y.z}}>", data) == "<>")
    }

    @Test("the first part of a dotted name is looked up like any name, innermost context first")
    func dottedFirstPart() throws {
        let data: TemplateValue = ["outer": ["k": ["v": "inner"]], "k": ["v": "top"]]
        #expect(try mustache("{{#outer}}{{k.v}}{{/outer}}|{{k.v}}", data) == "inner|top")
    }

    @Test("once the first part is found, an outer value of the same name is not consulted")
    func dottedPrecedence() throws {
        let data: TemplateValue = ["box": ["item": [:]], "item": ["label": "wrong"]]
        #expect(try mustache("<{{#box}}{{item.label}}{{/box}}>", data) == "<>")
    }

    @Test("a dotted name never matches a key that contains the dot")
    func dottedNeverOneKey() throws {
        #expect(try mustache("<{{x.y}}>", ["x.y": "flat"]) == "<>")
        #expect(try mustache("<{{x.y}}>", ["x.y": "flat", "x": ["y": "nested"]]) == "<nested>")
    }

    @Test("{{.}} is the current context, escaped or not as the tag says")
    func implicitIterator() throws {
        #expect(try mustache("Hi {{.}}!", "Ana") == "Hi Ana!")
        #expect(try mustache("{{.}}|{{{.}}}|{{&.}}", "<i>&'\"") == "&lt;i&gt;&amp;&#39;&quot;|<i>&'\"|<i>&'\"")
        #expect(try mustache("{{.}} s", .int(30)) == "30 s")
    }

    @Test("whitespace around a tag is kept, and a tag alone on its line is not standalone")
    func whitespace() throws {
        let data: TemplateValue = ["v": "~"]
        #expect(try mustache("[ {{v}} ][ {{{v}}} ][ {{&v}} ]", data) == "[ ~ ][ ~ ][ ~ ]")
        #expect(try mustache("\t{{v}}\n", data) == "\t~\n")
        #expect(try mustache("  {{{v}}}  \n", data) == "  ~  \n")
        #expect(try mustache(" {{&v}}\r\n", data) == " ~\r\n")
        // Even when the value is empty: the line stays, blanks and break included.
        #expect(try mustache("a\n  {{none}}\nb", data) == "a\n  \nb")
    }

    @Test("spaces inside the tag around the name are ignored")
    func padding() throws {
        let data: TemplateValue = ["v": "~"]
        #expect(try mustache("<{{  v  }}><{{{ v }}}><{{& v }}><{{ \t v\t }}>", data) == "<~><~><~><~>")
    }
}

@Suite("Mustache spec: sections")
struct MustacheSectionSpecTests {
    static let flags: TemplateValue = ["on": true, "off": false]

    @Test("true renders the body once; false and a missing name render nothing")
    func truthiness() throws {
        #expect(try mustache("({{#on}}yes{{/on}})({{#off}}no{{/off}})({{#gone}}no{{/gone}})", Self.flags) == "(yes)()()")
    }

    @Test("an object becomes the innermost context of the body")
    func objectContext() throws {
        #expect(try mustache("{{#account}}<{{email}}>{{/account}}", ["account": ["email": "a@example.com"]]) == "<a@example.com>")
    }

    @Test("names the section's context lacks are found further out")
    func outerContexts() throws {
        let data: TemplateValue = ["site": "S", "who": "outer", "inner": ["who": "inner"], "meta": ["v": "1"]]
        #expect(try mustache("{{#inner}}{{site}} {{who}} {{meta.v}}{{/inner}} {{who}}", data) == "S inner 1 outer")
    }

    @Test("inside a section on a value, {{.}} and the name both print the value")
    func valueAsContext() throws {
        #expect(try mustache("{{#code}}{{.}}={{code}}{{/code}}", ["code": "123456"]) == "123456=123456")
    }

    @Test("in nested lists every enclosing element stays reachable")
    func nestedListContexts() throws {
        let data: TemplateValue = ["groups": [
            ["g": ["short": "G"], "rows": [["r": "1", "cells": [["c": "a"], ["c": "b"]]], ["r": "2", "cells": []]]],
        ]]
        let template = "{{#groups}}{{#rows}}{{g.short}}{{r}}:{{#cells}}{{g.short}}{{r}}{{c}},{{/cells}};{{/rows}}{{/groups}}"
        #expect(try mustache(template, data) == "G1:G1a,G1b,;G2:;")
    }

    @Test("deeply nested sections see every level, the innermost first")
    func deepNesting() throws {
        let data: TemplateValue = ["p": ["x": "1"], "q": ["y": "2"], "r": ["z": "3", "x": "9"]]
        let template = """
            {{#p}}
            {{x}}
            {{#q}}
            {{x}}{{y}}
            {{#r}}
            {{x}}{{y}}{{z}}
            {{/r}}
            {{x}}{{y}}
            {{/q}}
            {{x}}
            {{/p}}

            """
        #expect(try mustache(template, data) == "1\n12\n923\n12\n1\n")
    }

    @Test("a list renders the body once per element, with the element as context")
    func list() throws {
        #expect(try mustache("{{#steps}}{{n}},{{/steps}}", ["steps": [["n": "1"], ["n": "2"], ["n": "3"]]]) == "1,2,3,")
    }

    @Test("an empty list renders nothing")
    func emptyList() throws {
        #expect(try mustache("<{{#steps}}x{{/steps}}>", ["steps": []]) == "<>")
    }

    @Test("the same section may appear several times")
    func repeated() throws {
        let template = "{{#on}}\n- a\n{{/on}}\n- {{mid}}\n{{#on}}\n- c\n{{/on}}\n"
        #expect(try mustache(template, ["on": true, "mid": "b"]) == "- a\n- b\n- c\n")
    }

    @Test("nested sections render when true and vanish whole when false")
    func nested() throws {
        let template = "[ {{#f}}1 {{#f}}2{{/f}} 3{{/f}} ]"
        #expect(try mustache(template, ["f": true]) == "[ 1 2 3 ]")
        #expect(try mustache(template, ["f": false]) == "[  ]")
    }

    @Test("{{.}} iterates a list of strings, integers or lists, escaping as the tag says")
    func implicitIterators() throws {
        #expect(try mustache("{{#l}}[{{.}}]{{/l}}", ["l": ["x", "y", "z"]]) == "[x][y][z]")
        #expect(try mustache("{{#l}}[{{.}}]{{/l}}", ["l": [.int(7), .int(8)]]) == "[7][8]")
        #expect(try mustache("{{#l}}({{#.}}{{.}}{{/.}}){{/l}}", ["l": [["1", "2"], ["a", "b", "c"]]]) == "(12)(abc)")
        let symbols: TemplateValue = ["l": ["<", "&", "\""]]
        #expect(try mustache("{{#l}}{{.}}{{/l}}", symbols) == "&lt;&amp;&quot;")
        #expect(try mustache("{{#l}}{{{.}}}{{/l}}", symbols) == "<&\"")
        #expect(try mustache("{{#l}}{{&.}}{{/l}}", symbols) == "<&\"")
    }

    @Test("{{#.}} iterates a list that is the whole context")
    func rootList() throws {
        #expect(try mustache("{{#.}}<{{id}}>{{/.}}", [["id": "a"], ["id": "b"]]) == "<a><b>")
    }

    @Test("dotted section names follow the chain; a broken chain is false")
    func dottedNames() throws {
        #expect(try mustache("<{{#a.b.c}}in{{/a.b.c}}>", ["a": ["b": ["c": true]]]) == "<in>")
        #expect(try mustache("<{{#a.b.c}}in{{/a.b.c}}>", ["a": ["b": ["c": false]]]) == "<>")
        #expect(try mustache("<{{#a.b.c}}in{{/a.b.c}}>", ["a": [:]]) == "<>")
    }

    @Test("whitespace around and inside an inline section is kept")
    func inlineWhitespace() throws {
        #expect(try mustache("a {{#on}}\t-\t{{/on}} b\n", Self.flags) == "a \t-\t b\n")
        #expect(try mustache("a {{#on}} {{! why }}\n {{/on}} b\n", Self.flags) == "a  \n  b\n")
        #expect(try mustache("  {{#on}}x{{/on}}\n  {{#on}}y{{/on}}\n", Self.flags) == "  x\n  y\n")
    }

    @Test("a section tag alone on its line takes the whole line, indentation and break included")
    func standaloneLines() throws {
        #expect(try mustache("<ul>\n{{#on}}\n<li>\n{{/on}}\n</ul>\n", Self.flags) == "<ul>\n<li>\n</ul>\n")
        #expect(try mustache("<ul>\n    {{#on}}\n<li>\n \t {{/on}}  \n</ul>\n", Self.flags) == "<ul>\n<li>\n</ul>\n")
        #expect(try mustache("a\r\n{{#on}}\r\n{{/on}}\r\nb", Self.flags) == "a\r\nb")
        // The first line has no line before it; the last may end without a line break.
        #expect(try mustache("  {{#on}}\nx{{/on}}\ny", Self.flags) == "x\ny")
        #expect(try mustache("x{{#on}}\ny\n  {{/on}}", Self.flags) == "x\ny\n")
        #expect(try mustache("x{{#on}}\ny\n  {{/on}} \t", Self.flags) == "x\ny\n")
    }

    @Test("only \\n and \\r\\n end a line: other control bytes after a tag are text")
    func otherBreaks() throws {
        #expect(try mustache("{{#on}}\rx{{/on}}", Self.flags) == "\rx")
        #expect(try mustache("{{#on}}\u{0B}x{{/on}}", Self.flags) == "\u{0B}x")
        #expect(try mustache("{{#on}}\u{0C}x{{/on}}", Self.flags) == "\u{0C}x")
    }

    @Test("spaces inside section tags around the name are ignored")
    func padding() throws {
        #expect(try mustache("<{{#  on  }}+{{/  on  }}>", Self.flags) == "<+>")
    }
}

@Suite("Mustache spec: inverted sections")
struct MustacheInvertedSpecTests {
    static let flags: TemplateValue = ["on": true, "off": false]

    @Test("false and a missing name render the body; true does not")
    func truthiness() throws {
        #expect(try mustache("({{^off}}a{{/off}})({{^gone}}b{{/gone}})({{^on}}c{{/on}})", Self.flags) == "(a)(b)()")
    }

    @Test("an object or a non-empty list is true; an empty list is false")
    func values() throws {
        #expect(try mustache("<{{^o}}x{{/o}}>", ["o": ["k": "v"]]) == "<>")
        #expect(try mustache("<{{^l}}{{n}}{{/l}}>", ["l": [["n": "1"], ["n": "2"]]]) == "<>")
        #expect(try mustache("<{{^l}}none yet{{/l}}>", ["l": []]) == "<none yet>")
    }

    @Test("the same inverted section may appear several times")
    func repeated() throws {
        let template = "{{^off}}\n- a\n{{/off}}\n- {{mid}}\n{{^off}}\n- c\n{{/off}}\n"
        #expect(try mustache(template, ["off": false, "mid": "b"]) == "- a\n- b\n- c\n")
    }

    @Test("nested inverted sections render when false and vanish whole when true")
    func nested() throws {
        let template = "[ {{^f}}1 {{^f}}2{{/f}} 3{{/f}} ]"
        #expect(try mustache(template, ["f": false]) == "[ 1 2 3 ]")
        #expect(try mustache(template, ["f": true]) == "[  ]")
    }

    @Test("dotted names follow the chain; a broken chain counts as false")
    func dottedNames() throws {
        #expect(try mustache("<{{^a.b.c}}in{{/a.b.c}}>", ["a": ["b": ["c": true]]]) == "<>")
        #expect(try mustache("<{{^a.b.c}}in{{/a.b.c}}>", ["a": ["b": ["c": false]]]) == "<in>")
        #expect(try mustache("<{{^a.b.c}}in{{/a.b.c}}>", ["a": [:]]) == "<in>")
    }

    @Test("whitespace around and inside an inline inverted section is kept")
    func inlineWhitespace() throws {
        #expect(try mustache("a {{^off}}\t-\t{{/off}} b\n", Self.flags) == "a \t-\t b\n")
        #expect(try mustache("a {{^off}} {{! why }}\n {{/off}} b\n", Self.flags) == "a  \n  b\n")
        #expect(try mustache("  {{^off}}x{{/off}}\n  {{^off}}y{{/off}}\n", Self.flags) == "  x\n  y\n")
    }

    @Test("an inverted section tag alone on its line takes the whole line")
    func standaloneLines() throws {
        #expect(try mustache("<p>\n{{^off}}\nnone\n{{/off}}\n</p>\n", Self.flags) == "<p>\nnone\n</p>\n")
        #expect(try mustache("<p>\n  {{^off}}\nnone\n\t{{/off}}\n</p>\n", Self.flags) == "<p>\nnone\n</p>\n")
        #expect(try mustache("a\r\n{{^off}}\r\n{{/off}}\r\nb", Self.flags) == "a\r\nb")
        #expect(try mustache("  {{^off}}\nx{{/off}}\ny", Self.flags) == "x\ny")
        #expect(try mustache("x{{^off}}\ny\n  {{/off}}", Self.flags) == "x\ny\n")
    }

    @Test("spaces inside inverted tags around the name are ignored")
    func padding() throws {
        #expect(try mustache("<{{^  off  }}+{{/  off  }}>", Self.flags) == "<+>")
    }
}

@Suite("Mustache spec: partials")
struct MustachePartialSpecTests {
    @Test("{{>name}} is replaced by the partial")
    func basic() throws {
        #expect(try mustache("[{{>note}}]", partials: ["note": "from the note"]) == "[from the note]")
    }

    @Test("a partial that does not exist renders nothing")
    func missing() throws {
        #expect(try mustache("[{{>absent}}]") == "[]")
    }

    @Test("a partial renders with the context stack where it is included")
    func context() throws {
        let partials = ["row": "<{{n}}/{{title}}>"]
        #expect(try mustache("{{#rows}}{{>row}}{{/rows}}", ["title": "T", "rows": [["n": "1"], ["n": "2"]]], partials: partials)
            == "<1/T><2/T>")
    }

    @Test("partials may include partials")
    func nested() throws {
        let partials = ["outer": "({{a}} {{>inner}})", "inner": "{{b}}."]
        #expect(try mustache("{{>outer}}", ["a": "A", "b": "B"], partials: partials) == "(A B.)")
    }

    @Test("whitespace around an inline partial is kept")
    func surroundingWhitespace() throws {
        #expect(try mustache("a {{>p}} b", partials: ["p": "\t.\t"]) == "a \t.\t b")
    }

    @Test("an inline partial is not indented: its later lines start at the left")
    func inlineIndentation() throws {
        #expect(try mustache("  {{v}}  {{>p}}\n", ["v": "V"], partials: ["p": "1\n2"]) == "  V  1\n2\n")
    }

    @Test("a standalone partial takes the tag's line, whatever the line ending")
    func standaloneLineEndings() throws {
        #expect(try mustache("x\r\n{{>p}}\r\ny", partials: ["p": "P"]) == "x\r\nPy")
        // The first line has no line before it; the last may end without a line break.
        #expect(try mustache("\t{{>p}}\nz", partials: ["p": "1\n2"]) == "\t1\n\t2z")
        #expect(try mustache("z\n\t{{>p}}", partials: ["p": "1\n2"]) == "z\n\t1\n\t2")
    }

    @Test("a standalone partial indents each of its lines, but not line breaks inside printed values")
    func standaloneIndentation() throws {
        let partials = ["items": "<li>\n{{{raw}}}\n</li>\n"]
        #expect(try mustache("<ul>\n  {{>items}}\n</ul>\n", ["raw": "a\nb"], partials: partials) == "<ul>\n  <li>\n  a\nb\n  </li>\n</ul>\n")
    }

    @Test("a standalone partial's lines ending in \\r\\n are indented too")
    func standaloneIndentationCRLF() throws {
        #expect(try mustache("  {{>p}}\r\nz", partials: ["p": "1\r\n2\r\n"]) == "  1\r\n  2\r\nz")
    }

    @Test("indentation accumulates through nested standalone partials")
    func nestedIndentation() throws {
        let partials = ["o": "o\n  {{>i}}\n", "i": "i1\ni2\n"]
        #expect(try mustache("  {{>o}}\nz\n", partials: partials) == "  o\n    i1\n    i2\nz\n")
    }

    @Test("a standalone partial that renders nothing leaves no line behind")
    func standaloneEmpty() throws {
        #expect(try mustache("x\n  {{>absent}}\ny\n") == "x\ny\n")
        #expect(try mustache("x\n  {{>empty}}\ny\n", partials: ["empty": ""]) == "x\ny\n")
    }

    @Test("spaces inside the tag around the partial's name are ignored")
    func padding() throws {
        #expect(try mustache("<{{>  p  }}>", partials: ["p": "P"]) == "<P>")
    }
}

@Suite("Mustache spec: comments")
struct MustacheCommentSpecTests {
    @Test("a comment renders nothing")
    func inline() throws {
        #expect(try mustache("ab{{! not shown }}cd") == "abcd")
    }

    @Test("a comment may span lines")
    func multiline() throws {
        #expect(try mustache("ab{{!\n  first\n  second\n}}cd\n") == "abcd\n")
    }

    @Test("a comment alone on its line takes the whole line, indentation and break included")
    func standalone() throws {
        #expect(try mustache("a\n{{! note }}\nb\n") == "a\nb\n")
        #expect(try mustache("a\n   {{! note }}\nb\n") == "a\nb\n")
        #expect(try mustache("a\n \t{{! note }} \t\nb\n") == "a\nb\n")
        #expect(try mustache("a\r\n{{! note }}\r\nb") == "a\r\nb")
        // The first line has no line before it; the last may end without a line break.
        #expect(try mustache("  {{! note }}\nb") == "b")
        #expect(try mustache("a\n  {{! note }}") == "a\n")
        #expect(try mustache("a\n  {{! note }}  ") == "a\n")
    }

    @Test("a comment spanning lines, alone on them, takes all its lines")
    func multilineStandalone() throws {
        #expect(try mustache("a\n{{!\nwhy\n}}\nb\n") == "a\nb\n")
        #expect(try mustache("a\n  {{!\n    why\n  }}\nb\n") == "a\nb\n")
    }

    @Test("a comment that shares its line keeps the whitespace on both sides")
    func inlineWhitespace() throws {
        #expect(try mustache("  a {{! note }}\n") == "  a \n")
        #expect(try mustache("a {{! note }} b") == "a  b")
        #expect(try mustache("  {{! note }} b\n") == "   b\n")
    }

    @Test("a comment prints nothing even when a value has its text as name")
    func nameCollision() throws {
        let data: TemplateValue = ["! note": "1", "! note ": "2", "!note": "3", "note": "4"]
        #expect(try mustache("[{{! note }}][{{!note}}]", data) == "[][]")
    }
}

@Suite("Mustache spec: text")
struct MustacheTextSpecTests {
    @Test("blanks at the very end of a template are kept")
    func trailingBlanks() throws {
        #expect(try mustache("a\n  ") == "a\n  ")
        #expect(try mustache("{{v}}\n\t", ["v": "x"]) == "x\n\t")
    }
}
