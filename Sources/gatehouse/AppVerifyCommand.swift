import AuthCrypto
import AuthEngine
import AuthStore

/// `gatehouse appverify …`: operator tools for the proof of work (docs/configuration-app-verification.md).
enum AppVerifyCommand {
    static let spec = CommandSpec(name: "appverify", abstract: "App verification (proof of work) tools.",
                                  subcommands: [VerifyPayload.spec, HMACKey.spec])

    /// Checks a solution payload (signature, hash, expiry, scope) without redeeming it.
    struct VerifyPayload: Command {
        static let spec = VerifyPayload.spec(
            "verify-payload", "Check a base64 ALTCHA v1 solution against this deployment's key without redeeming it.",
            options: CommonOptions.options + [
                OptionSpec(name: "project", help: "Project id the challenge must be scoped to (default: the first project)."),
                OptionSpec(name: "api-key", help: "API key the challenge must be scoped to."),
            ],
            arguments: [ArgumentSpec(name: "payload", help: "The base64 payload (as POSTed to /__/auth/challenge).")])
        let common: CommonOptions
        let payload: String
        let project: String?
        let apiKey: String?

        init(_ p: ParsedArguments) throws {
            common = CommonOptions(p)
            payload = try p.required("payload")
            project = p.string("project")
            apiKey = p.string("api-key")
        }

        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let pid = try runtime.config.projectID(project)
            let flow = AppVerification(store: try runtime.openStore(), clock: SystemClock(), random: SystemRandom())
            do {
                let expires = try flow.check(payload, project: pid, apiKey: apiKey)
                print("valid: expires at \(expires / 1000) (unix seconds); not redeemed")
            } catch let e as AuthError {
                print("invalid: \(e.message)")
                throw ExitStatus(1)
            }
        }
    }

    /// Prints the shared HMAC key, for third-party compatibility tests. Dev mode only.
    struct HMACKey: Command {
        static let spec = HMACKey.spec("hmac-key", "Print the proof-of-work HMAC key in hex (dev mode only; refused in production).",
                                       options: CommonOptions.options)
        let common: CommonOptions
        init(_ p: ParsedArguments) { common = CommonOptions(p) }

        func run() throws {
            let config = try common.load()
            guard config.mode == .dev else { throw UsageError("hmac-key is a dev-mode tool; the production key never leaves the store") }
            let runtime = try Runtime(config: config)
            let flow = AppVerification(store: try runtime.openStore(), clock: SystemClock(), random: SystemRandom())
            print(Hex.encode(try flow.key()))
        }
    }
}
