import AuthCrypto

extension ProjectSettings {
    /// A stable 12-digit "project number" derived from the project id, for the fields where
    /// Firebase returns the numeric project number (`project_id` of `v1/token`, `projectId` of
    /// `GET /v1/projects`; firebase-wire.md §1.7, §2.10, §2.13).
    public var projectNumber: String { ProjectSettings.projectNumber(for: id) }

    public static func projectNumber(for id: String) -> String {
        let d = Digest.sha256("gatehouse-project-number|" + id)
        var n: UInt64 = 0
        for b in d.prefix(8) { n = n << 8 | UInt64(b) }
        return String(100_000_000_000 + n % 900_000_000_000)
    }
}
