import AuthEngine
import JSONValue

/// The two JSON lists an account row keeps: its providers' profiles and its second factors.
enum AccountJSON {
    static func encodeProviders(_ ps: [ProviderInfo]) -> String {
        JSON.array(ps.map { p in
            .obj(("providerId", p.providerID), ("rawId", p.rawID), ("email", p.email), ("phoneNumber", p.phoneNumber),
                 ("displayName", p.displayName), ("photoUrl", p.photoURL))
        }).serialized()
    }

    /// nil when the text is not a list of providers as `encodeProviders` writes them.
    static func decodeProviders(_ text: String) -> [ProviderInfo]? {
        decodeList(text) { p in
            guard let id = p["providerId"]?.stringValue, let raw = p["rawId"]?.stringValue else { return nil }
            return ProviderInfo(providerID: id, rawID: raw, email: p["email"]?.stringValue, phoneNumber: p["phoneNumber"]?.stringValue,
                                displayName: p["displayName"]?.stringValue, photoURL: p["photoUrl"]?.stringValue)
        }
    }

    /// A phone factor keeps `phoneInfo`; a TOTP factor `totp: {sealed, lastStep}` (the secret only
    /// ever sealed, see `TOTPFactor`).
    static func encodeMFA(_ es: [MFAEnrollment]) -> String {
        JSON.array(es.map { e in
            .obj(("mfaEnrollmentId", e.enrollmentID), ("phoneInfo", e.phoneNumber),
                 ("totp", e.totp.map { JSON.obj(("sealed", $0.sealedSecret), ("lastStep", $0.lastStep)) }),
                 ("displayName", e.displayName), ("enrolledAt", e.enrolledAt))
        }).serialized()
    }

    /// nil when the text is not a list of factors as `encodeMFA` writes them: a factor of a kind
    /// this build does not know is refused, never dropped (dropping it would sign its user in
    /// without it).
    static func decodeMFA(_ text: String) -> [MFAEnrollment]? {
        decodeList(text) { e in
            guard let id = e["mfaEnrollmentId"]?.stringValue, let at = e["enrolledAt"]?.int64Value else { return nil }
            let name = e["displayName"]?.stringValue
            if let phone = e["phoneInfo"]?.stringValue {
                return MFAEnrollment(enrollmentID: id, phoneNumber: phone, displayName: name, enrolledAt: at)
            }
            guard let t = e["totp"], let sealed = t["sealed"]?.stringValue, let step = t["lastStep"]?.int64Value else { return nil }
            return MFAEnrollment(enrollmentID: id, totp: TOTPFactor(sealedSecret: sealed, lastStep: step), displayName: name, enrolledAt: at)
        }
    }

    /// A JSON array whose every element `element` reads; nil if the text is not one or any element is unreadable.
    private static func decodeList<T>(_ text: String, _ element: (JSON) -> T?) -> [T]? {
        guard text != "[]" else { return [] }
        guard let arr = (try? JSONParser().parse(text))?.arrayValue else { return nil }
        var out: [T] = []
        out.reserveCapacity(arr.count)
        for e in arr {
            guard let v = element(e) else { return nil }
            out.append(v)
        }
        return out
    }






}
