import AuthEngine
@testable import AuthWeb
import HTTP
import Testing

@Suite("Web layer")
struct WebTests {
    @Test("continue URLs are accepted only as absolute http(s) URLs on authorized hosts", arguments: [
        ("https://app.example.com/after?x=1", true),
        ("http://localhost:3000/done", true),
        ("https://evil.example.net/", false),
        ("https://app.example.com@evil.example.net/", false),
        ("javascript:alert(1)", false),
        ("//app.example.com/x", false),
        ("https://app.example.com\\@evil.example.net", false),
        ("myapp://callback", false),
        ("https://sub.trusted.org/x", true),
        ("https://trusted.org.evil.net/", false),
    ])
    func continueURL(url: String, accepted: Bool) {
        let p = ProjectSettings(id: "p", authorizedDomains: ["app.example.com", "localhost", "*.trusted.org"])
        #expect((ContinueURL.safe(url, project: p) != nil) == accepted)
    }

    @Test("the locale comes from X-Firebase-Locale, then hl, then Accept-Language by quality, then the project default")
    func locale() throws {
        let dir = try #require(Templates.bundledDirectory)
        let t = try Templates(directory: dir)
        let l = t.locales
        #expect(Set(["en", "fr", "de", "pt", "id"]).isSubset(of: Set(l.supported)))
        #expect(l.resolve(header: "pt-BR", parameter: "fr", acceptLanguage: "de", projectDefault: "en") == "pt")
        #expect(l.resolve(header: nil, parameter: "fr", acceptLanguage: "de", projectDefault: "en") == "fr")
        #expect(l.resolve(header: "xx", parameter: nil, acceptLanguage: "ja;q=0.9, de;q=0.8, fr;q=0.1", projectDefault: "en") == "de")
        #expect(l.resolve(header: nil, parameter: nil, acceptLanguage: "ja", projectDefault: "id") == "id")
        #expect(l.resolve(header: nil, parameter: nil, acceptLanguage: nil, projectDefault: "xx") == "en")
    }

    @Test("every locale has every key English has")
    func localesComplete() throws {
        let t = try Templates(directory: try #require(Templates.bundledDirectory))
        let english = Set(t.locales.flat["en"]!.keys)
        for lang in t.locales.supported {
            let missing = english.subtracting(t.locales.flat[lang]!.keys)
            #expect(missing.isEmpty, "\(lang) lacks \(missing.sorted())")
        }
    }

    @Test("every route pattern is unique per method")
    func routes() {
        let r = RouteTable.build()
        var seen = Set<String>()
        for route in r.routes { #expect(seen.insert(route.method + " " + route.pattern.description).inserted, "\(route.pattern)") }
        #expect(r.routes.count > 40)
    }
}
