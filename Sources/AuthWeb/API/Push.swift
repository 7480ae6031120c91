import AuthEngine
import HTTP
import JSONValue

/// Silent-push app verification (firebase-wire.md §2.15): `accounts:verifyIosClient` (legacy
/// `relyingparty/verifyClient`), and the dev listing of the pushes it committed.
enum PushAPI {
    /// `{appToken, isSandbox?}` + `X-Ios-Bundle-Identifier` → `{receipt, suggestedTimeout}`; the
    /// push is in the outbox and the worker is woken.
    static func verifyIosClient(_ ctx: inout Context) throws -> Response {
        try PhoneAPI.rejectTenant(ctx)
        let flow = IOSClientVerification(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, project: ctx.project)
        let result = try flow.verify(.init(appToken: ctx.string("appToken"), isSandbox: ctx.bool("isSandbox"),
                                           bundleID: ctx.request.header("x-ios-bundle-identifier"),
                                           remoteAddress: ctx.request.remoteAddress))
        ctx.app.outboxNotifier()
        return .json(.obj(("receipt", result.receipt), ("suggestedTimeout", result.suggestedTimeout)))
    }

    /// `GET /emulator/v1/projects/{p}/pushNotifications` (dev mode): every push committed for the
    /// project, oldest first, as the app would receive it.
    static func emulatorPushNotifications(_ ctx: inout Context) throws -> Response {
        var pushes: [JSON] = []
        for m in try ctx.store.messages(project: ctx.project.id, channel: .push, limit: 1000) {
            guard let meta = try? JSONParser().parse(m.metadata), let payload = try? JSONParser().parse(m.body) else { continue }
            pushes.append(.obj(("deviceToken", m.recipient), ("bundleId", meta["bundleId"]?.stringValue),
                               ("sandbox", meta["sandbox"]?.boolValue ?? false), ("payload", payload)))
        }
        return .json(.obj(("pushNotifications", JSON.array(pushes))))
    }

    /// `iosReceipt` + `iosSecret` of a send's body (or of an MFA start's nested info); nil when
    /// neither was sent.
    static func credential(_ receipt: String?, _ secret: String?) -> IOSCredential? {
        let c = IOSCredential(receipt: receipt, secret: secret)
        return c.isGiven ? c : nil
    }
}
