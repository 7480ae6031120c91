import ArgumentParser
import AuthCrypto
import AuthEngine
import AuthStore

/// `gatehouse appverify …`: operator tools for the proof of work (docs/configuration-app-verification.md).
struct AppVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "appverify", abstract: "App verification (proof of work) tools.",
                                                    subcommands: [VerifyPayload.self, HMACKey.self])

    /// Checks a solution payload (signature, hash, expiry, scope) without redeeming it.
    struct VerifyPayload: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "verify-payload",
                                                        abstract: "Check a base64 ALTCHA v1 solution against this deployment's key without redeeming it.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The base64 payload (as POSTed to /__/auth/challenge).") var payload: String
        @Option(help: "Project id the challenge must be scoped to (default: the first project).") var project: String?
        @Option(name: .customLong("api-key"), help: "API key the challenge must be scoped to.") var apiKey: String?

        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let pid = project ?? runtime.config.projects[0].id
            let flow = AppVerification(store: try runtime.openStore(), clock: SystemClock(), random: SystemRandom())
            do {
                let expires = try flow.check(payload, project: pid, apiKey: apiKey)
                print("valid: expires at \(expires / 1000) (unix seconds); not redeemed")
            } catch let e as AuthError {
                print("invalid: \(e.message)")
                throw ExitCode(1)
            }
        }
    }

    /// Prints the shared HMAC key, for third-party compatibility tests. Dev mode only.
    struct HMACKey: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "hmac-key",
                                                        abstract: "Print the proof-of-work HMAC key in hex (dev mode only; refused in production).")
        @OptionGroup var common: CommonOptions

        func run() throws {
            let config = try common.load()
            guard config.mode == .dev else { throw ValidationError("hmac-key is a dev-mode tool; the production key never leaves the store") }
            let runtime = try Runtime(config: config)
            let flow = AppVerification(store: try runtime.openStore(), clock: SystemClock(), random: SystemRandom())
            print(Hex.encode(try flow.key()))
        }
    }
}
