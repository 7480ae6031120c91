import JSONValue
import Testing
@testable import AuthEngine

@Suite("Custom claims and per-location requirements")
struct CustomClaimsTests {
    @Test("claims longer than 1000 characters are CLAIMS_TOO_LARGE")
    func tooLarge() throws {
        let ok = #"{"k":""# + String(repeating: "a", count: 1000 - 8) + #""}"#
        #expect(ok.count == 1000)
        _ = try CustomClaims.validate(ok)
        let big = #"{"k":""# + String(repeating: "a", count: 1000 - 7) + #""}"#
        #expect(throws: AuthError(.claimsTooLarge)) { try CustomClaims.validate(big) }
    }

    @Test("claims must be a JSON object", arguments: ["[1,2]", #""admin""#, "42", "not json", "{\"a\":", "null"])
    func notAnObject(text: String) {
        #expect(throws: AuthError(.invalidClaims)) { try CustomClaims.validate(text) }
    }

    @Test("reserved names are FORBIDDEN_CLAIM with the name", arguments: ["iss", "aud", "sub", "exp", "auth_time", "firebase", "nonce", "c_hash"])
    func forbidden(name: String) {
        #expect(throws: AuthError(.forbiddenClaim, name)) { try CustomClaims.validate("{\"role\":\"x\",\"\(name)\":1}") }
        #expect(AuthError(.forbiddenClaim, name).message == "FORBIDDEN_CLAIM : \(name)")
    }

    @Test("an empty object clears the claims")
    func emptyClears() throws {
        #expect(try CustomClaims.validate("{}") == nil)
        #expect(try CustomClaims.validate(#"{"role":"admin"}"#) == #"{"role":"admin"}"#)
    }

    @Test("claims set by an admin appear in the next ID token and can be cleared")
    func inTokens() throws {
        let w = try SessionWorld()
        try w.user()
        var c = AccountChanges()
        c.localID = "user-1"
        c.customAttributes = #"{"role":"admin","level":3,"groups":["a","b"]}"#
        _ = try w.admin.update(project: SessionWorld.project, c)
        let claims = SessionWorld.claims(try w.signIn().idToken)
        #expect(claims["role"]?.stringValue == "admin")
        #expect(claims["level"]?.int64Value == 3)
        #expect(claims["groups"]?.arrayValue?.count == 2)
        c.customAttributes = "{}"
        _ = try w.admin.update(project: SessionWorld.project, c)
        #expect(try w.account().customAttributes == nil)
        #expect(SessionWorld.claims(try w.signIn().idToken)["role"] == nil)
    }

    @Test("an update with bad claims changes nothing")
    func atomic() throws {
        let w = try SessionWorld()
        try w.user()
        var c = AccountChanges()
        c.localID = "user-1"
        c.displayName = "Ada"
        c.customAttributes = #"{"sub":"evil"}"#
        #expect(throws: AuthError(.forbiddenClaim, "sub")) { try w.admin.update(project: SessionWorld.project, c) }
        #expect(try w.account().displayName == nil)
    }

    func identity(_ w: SessionWorld, claims: String?) throws -> SessionIdentity {
        var a = try w.account()
        a.customAttributes = claims
        return SessionIdentity(account: a, provider: "phone", authTime: 0, issuedAt: 0, expiresAt: 0, idleTimeoutSeconds: 0)
    }

    @Test("a location can require listed users or claims; anything unparsable allows nobody")
    func requirements() throws {
        let w = try SessionWorld()
        try w.user()
        let admin = try identity(w, claims: #"{"role":"admin","groups":["ops","dev"],"level":3,"beta":true}"#)
        let plain = try identity(w, claims: nil)
        #expect(SessionRequirements(users: nil, claims: nil).allows(plain))
        #expect(SessionRequirements(users: "", claims: "").allows(plain))
        #expect(SessionRequirements(users: "someone, user-1", claims: nil).allows(plain))
        #expect(!SessionRequirements(users: "someone,user-10", claims: nil).allows(plain))
        #expect(SessionRequirements(users: nil, claims: "role=admin").allows(admin))
        #expect(!SessionRequirements(users: nil, claims: "role=admin").allows(plain))
        #expect(SessionRequirements(users: nil, claims: "groups=dev, level=3, beta=true").allows(admin))
        #expect(!SessionRequirements(users: nil, claims: "groups=qa").allows(admin))
        #expect(SessionRequirements(users: nil, claims: "sign_in_provider=phone,phone_number=+33612345678").allows(plain))
        #expect(!SessionRequirements(users: nil, claims: "role").allows(admin))
        #expect(!SessionRequirements(users: " , ", claims: nil).allows(admin))
        #expect(!SessionRequirements(users: "user-1", claims: "role=admin").allows(plain))
    }
}
