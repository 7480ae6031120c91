import AuthEngine

/// `gatehouse dev` with the embedded configuration (`make dev`) has one operator, so the console
/// (`/__/auth/console/`) can be opened at once (docs/console.md "Dev mode"): `operator@example.com`
/// signs in with an email link, then the code sent by SMS to its second factor, +1 201-555-0123;
/// both arrive in the dev outbox (`/emulator/v1/projects/demo-gatehouse/oobCodes` and
/// `…/verificationCodes`). Made once, when absent; never in production mode, and not with a
/// configuration file of one's own (whose tests may count accounts).
enum DemoOperator {
    static let uid = "demo-operator"
    static let email = "operator@example.com"
    static let phone = "+12015550123"

    static func ensure(_ config: Config) throws {
        guard config.mode == .dev, config.source == "embedded dev default", let project = config.projects.first else { return }
        let store = try Runtime.open(config.store, migrate: true)
        let admin = AccountAdmin(store: store, clock: SystemClock(), random: SystemRandom(), actor: "cli")
        if try store.account(project: project.id, localID: uid) == nil {
            var c = AccountChanges()
            c.localID = uid
            c.email = email
            c.emailVerified = true
            c.displayName = "Demo operator"
            guard try store.account(project: project.id, email: email) == nil else { return }
            _ = try admin.create(project: project.id, c)
            var factor = AccountChanges()
            factor.localID = uid
            factor.mfaEnrollments = [.init(enrollmentID: nil, phoneNumber: phone, displayName: "Demo phone", enrolledAt: nil)]
            _ = try admin.update(project: project.id, factor)
        }
        try Operators.add(project: project.id, localID: uid, actor: "cli", store: store, at: SystemClock().now())
        config.log.info("dev: the console's demo operator is \(email) (email link, then the SMS code to \(phone); both in the dev outbox)")
    }
}
