import AuthCrypto
import AuthEngine
import Delivery
import JSONValue

/// `gatehouse apns send`: one probe push through the configured key and gateway, answered at
/// once, so an operator can check an app's APNs set-up end to end. The probe carries a receipt
/// nobody issued, so the app's SDK ignores it.
enum APNsCommand {
    static let spec = CommandSpec(name: "apns", abstract: "Silent-push (APNs) tools.", subcommands: [Send.spec])

    struct Send: Command {
        static let spec = Send.spec("send", "Send a probe silent push to a device and print the gateway's answer; exit 1 unless it is 200.",
                                    options: CommonOptions.options + [
                                        OptionSpec(name: "project", help: "Project id (default: the first project)."),
                                        OptionSpec(name: "bundle", help: "Bundle id of a registered iOS app with an apns section."),
                                        OptionSpec(name: "token", help: "The device's APNs token (hex)."),
                                        .flag("sandbox", help: "Use the development (sandbox) gateway."),
                                    ])
        let common: CommonOptions
        let project: String?
        let bundle: String
        let token: String
        let sandbox: Bool
        init(_ p: ParsedArguments) throws {
            common = CommonOptions(p); project = p.string("project")
            bundle = try p.required("bundle"); token = try p.required("token"); sandbox = p.flag("sandbox")
        }

        func run() throws {
            let config = try common.load()
            let pid = try config.projectID(project)
            guard let p = config.projects.first(where: { $0.id == pid }), let app = p.iosApp(bundleID: bundle) else {
                throw UsageError("\(bundle) is not a registered iOS app of project \(pid)")
            }
            guard let settings = app.apns else { throw UsageError("\(bundle) has no apns section (key_id, key_file) in project \(pid)") }
            guard let device = IOSClientVerification.deviceToken(token) else { throw UsageError("--token: expected hex of 32 to 100 bytes") }
            let key = try Config.loadAPNsKey(settings)
            let target = APNsSender.App(projectID: pid, bundleID: bundle, settings: settings, key: key)
            let sender = APNsSender(apps: [target])
            let now = SystemClock().now()
            let body = IOSClientVerification.payload(receipt: "probe." + SystemRandom().token(bytes: 16), secret: SystemRandom().token(bytes: 16))
            let message = OutboxMessage(projectID: pid, channel: .push, recipient: device, body: body.serialized(),
                                        metadata: JSON.obj(("bundleId", bundle), ("sandbox", sandbox), ("expiresAt", Int(now + 600_000))).serialized(),
                                        nextAttemptAt: now, createdAt: now)
            let gateway = settings.gatewayURL(sandbox: sandbox)
            let answer = try sender.push(message, to: try APNsSender.target(message), app: target)
            print("\(gateway): HTTP \(answer.status)" + (answer.reason.map { " \($0)" } ?? ""))
            if answer.status != 200 { throw ExitStatus(1) }
        }
    }
}
