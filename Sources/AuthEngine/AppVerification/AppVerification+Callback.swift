import JSONValue
import TextCoding

/// Where the verification page hands its result back to the app, decided on the server only
/// from registered apps (firebase-wire.md §4.4 for iOS, §4.5 for Android):
/// `<scheme>://firebaseauth/link?deep_link_id=<encoded https://<host>/__/auth/callback?…>` or an
/// Android `intent://firebase.auth/#Intent;scheme=recaptcha;package=…;end;` URL.
public struct AppCallback: Sendable, Equatable {
    /// How the page hands control back: a custom scheme (iOS, §4.4) or an Android intent (§4.5).
    public enum Destination: Sendable, Equatable {
        /// A custom URL scheme registered for the app (spelled as the SDK derives it).
        case scheme(String)
        /// The Android SDK's reCAPTCHA activity in `package`.
        case androidIntent(package: String)
    }

    /// Why the handler parameters were refused; raw values name the page's localized messages.
    public enum Problem: String, Error, Sendable {
        case unsupportedAuthType, invalidEventID, missingApp, unknownApp, missingClientIdentifier, unregisteredScheme
    }

    public static let authType = "verifyApp"

    public let destination: Destination
    /// The bundle id or package name the app token is bound to.
    public let app: String
    public let eventID: String

    public init(destination: Destination, app: String, eventID: String) {
        self.destination = destination; self.app = app; self.eventID = eventID
    }

    /// Validates the handler's parameters against the project's registered apps.
    /// iOS: `ibi` + (`clientId` → reversed client id | `appId` → `app-` + id with `:`→`-`);
    /// Android: `apn`, optionally with `clientId`/`appId` naming one of its registered schemes.
    public static func resolve(project: ProjectSettings, ibi: String?, apn: String?, clientID: String?, appID: String?,
                               eventID: String?) throws(Problem) -> AppCallback {
        guard let eventID, isValidEventID(eventID) else { throw .invalidEventID }
        let clientID = clientID.flatMap { $0.isEmpty ? nil : $0 }
        let appID = appID.flatMap { $0.isEmpty ? nil : $0 }
        let requested = clientID.map(IOSApp.scheme(forClientID:)) ?? appID.map(IOSApp.scheme(forAppID:))
        if let ibi, !ibi.isEmpty {
            guard let app = project.iosApp(bundleID: ibi) else { throw .unknownApp }
            guard let scheme = requested else { throw .missingClientIdentifier }
            guard isValidScheme(scheme), app.schemes.contains(scheme.lowercased()) else { throw .unregisteredScheme }
            return AppCallback(destination: .scheme(scheme), app: app.bundleID, eventID: eventID)
        }
        if let apn, !apn.isEmpty {
            guard let app = project.androidApp(packageName: apn) else { throw .unknownApp }
            guard let scheme = requested else {
                return AppCallback(destination: .androidIntent(package: app.packageName), app: app.packageName, eventID: eventID)
            }
            let registered = (app.extraSchemes + (app.appID.map { [IOSApp.scheme(forAppID: $0)] } ?? [])).map { $0.lowercased() }
            guard isValidScheme(scheme), registered.contains(scheme.lowercased()) else { throw .unregisteredScheme }
            return AppCallback(destination: .scheme(scheme), app: app.packageName, eventID: eventID)
        }
        throw .missingApp
    }

    /// The iOS SDK sends 10 upper-case letters; accept any short token of URL-safe characters.
    static func isValidEventID(_ s: String) -> Bool {
        (1...64).contains(s.utf8.count) && s.utf8.allSatisfy { PercentEncoding.isUnreserved($0) && $0 != UInt8(ascii: "~") && $0 != UInt8(ascii: ".") }
    }

    /// RFC 3986 scheme: a letter, then letters, digits, `+`, `-`, `.`.
    static func isValidScheme(_ s: String) -> Bool {
        guard let first = s.utf8.first, (1...200).contains(s.utf8.count), isLetter(first) else { return false }
        return s.utf8.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) || $0 == 43 || $0 == 45 || $0 == 46 }
    }

    static func isLetter(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }

    // MARK: - URLs

    /// Success: the inner callback URL carries `recaptchaToken` (firebase-wire.md §4.4).
    public func successURL(authority: String, token: String) -> String {
        wrap(AppCallback.callbackURL(authority: authority, [("authType", AppCallback.authType), ("recaptchaToken", token), ("eventId", eventID)]))
    }

    /// Failure: the inner callback URL carries `firebaseError` = JSON `{code, message}`, encoded
    /// once inside the inner URL and once more with it.
    public func failureURL(authority: String, code: String, message: String) -> String {
        let error = JSON.obj(("code", code), ("message", message)).serialized()
        return wrap(AppCallback.callbackURL(authority: authority, [("firebaseError", error), ("authType", AppCallback.authType), ("eventId", eventID)]))
    }

    /// `https://<authority>/__/auth/callback?k=v&…` with every value percent-encoded.
    static func callbackURL(authority: String, _ query: [(String, String)]) -> String {
        "https://" + authority + "/__/auth/callback?" + query.map { $0.0 + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
    }

    func wrap(_ inner: String) -> String {
        switch destination {
        case let .scheme(scheme):
            return scheme + "://firebaseauth/link?deep_link_id=" + PercentEncoding.encode(inner)
        case let .androidIntent(package):
            return "intent://firebase.auth/#Intent;scheme=recaptcha;package=" + package + ";S.authType=" + AppCallback.authType
                + ";S.eventId=" + eventID + ";S.link=" + PercentEncoding.encode(inner) + ";B.encryptionEnabled=false;end;"
        }
    }
}
