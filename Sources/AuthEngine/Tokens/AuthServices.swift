/// The engine's long-lived services, made once per process by the composition root (the
/// `gatehouse` executable's `Runtime`) and used alike by the web layer and the command line:
/// one clock, one source of randomness, one key ring and the token service over it, and the
/// process's metrics (`Telemetry.off` unless a long-running responder records them) and log.
public final class AuthServices: Sendable {
    public let clock: any Clock
    public let random: any RandomSource
    public let keyRing: KeyRing
    public let tokens: TokenService
    public let telemetry: Telemetry
    public let log: Log

    public init(clock: any Clock = SystemClock(), random: any RandomSource = SystemRandom(), telemetry: Telemetry = .off,
                log: Log = Log()) {
        self.clock = clock
        self.random = random
        self.telemetry = telemetry
        self.log = log
        keyRing = KeyRing(clock: clock)
        tokens = TokenService(keyRing: keyRing, clock: clock, telemetry: telemetry, log: log)
    }
}
