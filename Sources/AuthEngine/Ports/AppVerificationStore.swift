/// Storage port of this feature (filled in by the feature's flow).
public protocol AppVerificationStore: Transactional {}
