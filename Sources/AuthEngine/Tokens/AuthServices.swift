/// The engine's long-lived services, made once per process by the composition root (the
/// `gatehouse` executable's `Runtime`) and used alike by the web layer and the command line:
/// one clock, one source of randomness, one key ring and the token service over it.
public final class AuthServices: @unchecked Sendable {
    public let clock: Clock
    public let random: RandomSource
    public let keyRing: KeyRing
    public let tokens: TokenService

    public init(clock: Clock = SystemClock(), random: RandomSource = SystemRandom()) {
        self.clock = clock
        self.random = random
        keyRing = KeyRing(clock: clock)
        tokens = TokenService(keyRing: keyRing, clock: clock)
    }
}
