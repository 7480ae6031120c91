import AuthEngine
import Foundation
import Testing

@Suite("Audit event names")
struct AuditEventNameTests {
    @Test("one naming style, `<subject>.<action>`, every name once, each listed in docs/operations.md")
    func names() throws {
        let names = AuditEventName.allCases.map(\.rawValue)
        #expect(Set(names).count == names.count)
        for name in names {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 == "_" || ("a"..."z").contains($0) } }, "\(name)")
        }
        let docs = String(#filePath.prefix(upTo: try #require(#filePath.range(of: "/Tests/")).lowerBound)) + "/docs/operations.md"
        let text = try String(contentsOfFile: docs, encoding: .utf8)
        for name in names { #expect(text.contains("`\(name)`"), "docs/operations.md does not list \(name)") }
    }
}
