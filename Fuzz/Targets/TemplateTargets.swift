@testable import AuthWeb

/// The Mustache engine: a template (and, after a NUL byte, a partial `p` it may include or
/// extend) parsed, linked with the bundled layout and a few partials, specialised for a language
/// and rendered with values of every kind.
enum TemplateTargets {
    nonisolated(unsafe) static var partials: [String: [MustacheNode]] = [:]

    static let mustache = FuzzTarget(name: "mustache", setUp: {
        var sources: [String: String] = [
            "item": "<li>{{name}}</li>\n",
            "list": "<ul>\n  {{#items}}\n  {{>item}}\n  {{/items}}\n</ul>\n",
            "mid": "{{<layout}}{{$title}}Middle{{/title}}{{/layout}}",
        ]
        if let dir = Templates.bundledDirectory, let layout = ResourceFiles.text(dir + "/templates/layout.mustache") {
            sources["layout"] = layout
        } else {
            sources["layout"] = "<title>{{$title}}Default{{/title}}</title>\n{{$body}}no body{{/body}}\n"
        }
        for (name, text) in sources {
            if let nodes = try? MustacheParser.parse(text) { partials[name] = nodes }
        }
    }) { data in
        let parts = data.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        let main = String(decoding: parts[0], as: UTF8.self)
        guard let nodes = try? MustacheParser.parse(main) else { return }
        var all = partials
        all["main"] = nodes
        if parts.count > 1, let p = try? MustacheParser.parse(String(decoding: parts[1], as: UTF8.self)) { all["p"] = p }
        guard var linked = try? MustacheLinker.link(nodes, template: { all[$0] }) else { return }
        let fixed: [String: TemplateValue] = ["t": ["title": "T<", "x": ["y": "deep"]], "lang": "fr"]
        let values: [String: TemplateValue] = [
            "name": "a & b", "yes": true, "no": false, "empty": "", "none": [],
            "items": [["name": "one"], ["name": "<two>"]], "o": ["k": "v", "yes": false],
            "h": .html([Array("<b>".utf8)[...]]), "f": .fields([TemplateField("k", "first"), TemplateField("k", "second")]),
        ]
        let plain = MustacheRenderer.render(linked, stack: [.object(fixed), .object(values)])
        linked = MustacheLinker.specialize(linked, fixed: fixed)
        let special = MustacheRenderer.render(linked, stack: [.object(fixed), .object(values)])
        expect(plain == special, "specialising changed the output of \(main)")
    }
}
