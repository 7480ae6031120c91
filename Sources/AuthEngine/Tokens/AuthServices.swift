/// The engine's long-lived services, made once per process by the composition root (the
/// `gatehouse` executable's `Runtime`) and used alike by the web layer and the command line:
/// one clock, one source of randomness, one key ring and the token service over it.
public final class AuthServices: @unchecked Sendable {
    public let clock: any Clock
    public let random: any RandomSource
    public let keyRing: KeyRing
    public let tokens: TokenService

    public init(clock: any Clock = SystemClock(), random: any RandomSource = SystemRandom()) {
        self.clock = clock
        self.random = random
        keyRing = KeyRing(clock: clock)
        tokens = TokenService(keyRing: keyRing, clock: clock)
    }
}
